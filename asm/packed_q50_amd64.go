//go:build amd64 && gc && !purego

package asm

// The AVX-512 kernels of the packed Q5_0 layout (packed_q50_avx512_amd64.s,
// written by _gen): gemv and gemm8 as the Q4_0 ones (kernels_amd64.go), the
// fifth bits added to the nibbles as 16 (merge-masked VPADDB), the
// correction −16·Σa.

//go:noescape
func gemvQ5_0AVX512(out *float32, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemm8Q5_0AVX512(out *float32, ldo int, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemvQ5_0F16AVX512(out *float32, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemm8Q5_0F16AVX512(out *float32, ldo int, w *byte, ngroups int, nb int, act *byte)

// kernelSetsQ5 are the AVX-512 Q5_0 kernels, [f16?].
var kernelSetsQ5 = [2]kernelSet{
	{gemvQ5_0AVX512, gemm8Q5_0AVX512, 8, -16, false, false},
	{gemvQ5_0F16AVX512, gemm8Q5_0F16AVX512, 8, -16, false, true},
}

// PacksQ5_0 reports whether the active variant multiplies PackQ5_0's layout
// natively (AVX-512); the others multiply Q5_0 fastest as Q8_0
// (Q5_0AsQ8_0).
func PacksQ5_0() bool { return active == AVX512 }

func packedMatMulQ5(out []float32, ldo int, w []byte, rows int, f16 bool, a []int8, da []float32, n, nb int) {
	if active != AVX512 {
		packedQ5ViaQ8(out, ldo, w, rows, f16, a, da, n, nb)
		return
	}
	packedRunSIMD(&kernelSetsQ5[b2i(f16)], q5layout{f16, nb}.group(), out, ldo, w, rows, a, da, n, nb)
}
