//go:build arm64 && gc && !purego

package asm

// Kernels without an arm64 version yet run their pure-Go twins.

func expShiftF32(x []float32, m float32) { expShiftF32Generic(x, m) }

func siluMulF32(g, u []float32) { siluMulF32Generic(g, u) }

func maxF32(x []float32) float32 { return maxF32Generic(x[1:], x[0]) }
