//go:build !(amd64 || arm64) || !gc || purego

package asm

const (
	hasAVX2    = false
	hasAVX512  = false
	hasNEON    = false
	hasDotProd = false
	hasI8MM    = false
)
