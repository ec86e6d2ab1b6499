//go:build amd64 && gc && !purego

package asm

// expShiftF32AVX512 is expShiftF32Generic over n elements, n a multiple of
// 16, ≥ 16 (exp_avx512_amd64.s).
//
//go:noescape
func expShiftF32AVX512(x *float32, m float32, n int)
