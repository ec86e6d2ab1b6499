//go:build arm64 && gc && !purego

package asm

// Kernels without an arm64 version yet run their pure-Go twins.

func maxF32(x []float32) float32 { return maxF32Generic(x[1:], x[0]) }
