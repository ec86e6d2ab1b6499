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

// The AVX2 kernels (packed_q50_avx2_amd64.s): gemv and gemm4 as the Q4_0
// ones, the fifth bits expanded to 16 (VPSHUFB, VPAND, VPCMPEQB, VPAND) and
// or'ed into the nibbles, the correction 16·Σa subtracted.

//go:noescape
func gemvQ5_0AVX2(out *float32, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemm4Q5_0AVX2(out *float32, ldo int, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemvQ5_0F16AVX2(out *float32, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemm4Q5_0F16AVX2(out *float32, ldo int, w *byte, ngroups int, nb int, act *byte)

// kernelSetsQ5AVX2 are the AVX2 Q5_0 kernels, [f16?].
var kernelSetsQ5AVX2 = [2]kernelSet{
	{gemvQ5_0AVX2, gemm4Q5_0AVX2, 4, 16, true, false},
	{gemvQ5_0F16AVX2, gemm4Q5_0F16AVX2, 4, 16, true, true},
}

// kernelSetsQ5 are the AVX-512 Q5_0 kernels, [f16?].
var kernelSetsQ5 = [2]kernelSet{
	{gemvQ5_0AVX512, gemm8Q5_0AVX512, 8, -16, false, false},
	{gemvQ5_0F16AVX512, gemm8Q5_0F16AVX512, 8, -16, false, true},
}

// PacksQ5_0 reports whether the active variant multiplies PackQ5_0's layout
// natively (AVX-512, AVX2); the others multiply Q5_0 fastest as Q8_0
// (Q5_0AsQ8_0).
func PacksQ5_0() bool { return active == AVX512 || active == AVX2 }

func packedMatMulQ5(out []float32, ldo int, w []byte, rows int, f16 bool, a []int8, da []float32, n, nb int) {
	switch active {
	case AVX512:
		packedRunSIMD(&kernelSetsQ5[b2i(f16)], q5layout{f16, nb}.group(), out, ldo, w, rows, a, da, n, nb)
	case AVX2:
		packedRunSIMD(&kernelSetsQ5AVX2[b2i(f16)], q5layout{f16, nb}.group(), out, ldo, w, rows, a, da, n, nb)
	default:
		packedQ5ViaQ8(out, ldo, w, rows, f16, a, da, n, nb)
	}
}
