//go:build !amd64 || !gc || purego

package asm

const (
	hasAVX2   = false
	hasAVX512 = false
)
