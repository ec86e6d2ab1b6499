//go:build !amd64 || !gc || purego

package asm

func q4kIsum(qs []byte, a []int8, sc *[8]int32) int32 { return q4kIsumGeneric(qs, a, sc) }
