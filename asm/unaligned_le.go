//go:build amd64 || arm64 || ppc64le

package asm

// unalignedLE: this architecture is little-endian and loads 8 bytes from any
// address at the cost of an aligned load, so q4VecHalf reads a chunk's
// second quant word with one load (the comment above q4VecHalf).
const unalignedLE = true
