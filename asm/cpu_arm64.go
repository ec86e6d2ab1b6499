//go:build arm64 && gc && !purego

package asm

import "golang.org/x/sys/cpu"

// Set once from x/sys/cpu (HWCAP on Linux, sysctl on Darwin). Advanced SIMD
// is part of every arm64 CPU Go runs on; the dot-product (ARMv8.2 SDOT) and
// int8 matrix-multiply (ARMv8.6 SMMLA) extensions are optional.
var (
	hasNEON    = true
	hasDotProd = cpu.ARM64.HasASIMDDP
	hasI8MM    = cpu.ARM64.HasASIMDDP && cpu.ARM64.HasI8MM
)

// The amd64 variants.
const (
	hasAVX2   = false
	hasAVX512 = false
)
