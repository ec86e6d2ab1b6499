//go:build !(amd64 || arm64 || ppc64le)

package asm

// unalignedLE: see unaligned_le.go; here q4VecHalf shifts instead.
const unalignedLE = false
