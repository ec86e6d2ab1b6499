//go:build amd64 && gc && !purego

package asm

import "golang.org/x/sys/cpu"

// Set once from x/sys/cpu, which already checks that the OS saves the
// YMM/ZMM and mask registers.
var (
	hasAVX2   = cpu.X86.HasAVX2
	hasAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI
)

// The arm64 variants.
const (
	hasNEON    = false
	hasDotProd = false
	hasI8MM    = false
)
