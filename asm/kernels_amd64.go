//go:build amd64 && gc && !purego

package asm

import "golang.org/x/sys/cpu"

// The product kernels' .s files are written by the generator in _gen (its
// own module); TestGenerated checks they are its output.
//go:generate go -C _gen run . -out ..

// Product kernels (kernels_avx2_amd64.s, kernels_avx512_amd64.s): ngroups
// ≥ 1 groups of 16 rows of the packed layout from w, nb ≥ 1 blocks,
// activations packed by packAct (g = 1 for gemv, 4 for gemm4, 8 for
// gemm8). gemv writes out[16·j + r], gemm4 and gemm8 out[i·ldo + 16·j + r],
// for group j, row r, activation row i. The F16 kernels read the layout
// with binary16 scales (Packed.F16), widened exactly by VCVTPH2PS.

//go:noescape
func gemvQ8_0AVX2(out *float32, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemvQ4_0AVX2(out *float32, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemm4Q8_0AVX2(out *float32, ldo int, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemm4Q4_0AVX2(out *float32, ldo int, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemvQ8_0AVX512(out *float32, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemvQ4_0AVX512(out *float32, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemm8Q8_0AVX512(out *float32, ldo int, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemm8Q4_0AVX512(out *float32, ldo int, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemvQ8_0F16AVX2(out *float32, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemvQ4_0F16AVX2(out *float32, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemm4Q8_0F16AVX2(out *float32, ldo int, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemm4Q4_0F16AVX2(out *float32, ldo int, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemvQ8_0F16AVX512(out *float32, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemvQ4_0F16AVX512(out *float32, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemm8Q8_0F16AVX512(out *float32, ldo int, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemm8Q4_0F16AVX512(out *float32, ldo int, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemvIQ4_NLAVX512(out *float32, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemm8IQ4_NLAVX512(out *float32, ldo int, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemvIQ4_NLF16AVX512(out *float32, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemm8IQ4_NLF16AVX512(out *float32, ldo int, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemvIQ4_NLAVX2(out *float32, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemm4IQ4_NLAVX2(out *float32, ldo int, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemvIQ4_NLF16AVX2(out *float32, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemm4IQ4_NLF16AVX2(out *float32, ldo int, w *byte, ngroups int, nb int, act *byte)

// kernelSetsIQ4 are the IQ4_NL kernels, [f16?][AVX512?], over the Q4_0
// layout: AVX-512 looks the codebook + 128 up (correction −128·Σa), AVX2
// the codebook itself (no correction) and multiplies as Q8_0.
var kernelSetsIQ4 = [2][2]kernelSet{
	{
		{gemvIQ4_NLAVX2, gemm4IQ4_NLAVX2, 4, 0, true, false},
		{gemvIQ4_NLAVX512, gemm8IQ4_NLAVX512, 8, -128, true, false},
	},
	{
		{gemvIQ4_NLF16AVX2, gemm4IQ4_NLF16AVX2, 4, 0, true, true},
		{gemvIQ4_NLF16AVX512, gemm8IQ4_NLF16AVX512, 8, -128, true, true},
	},
}

// PacksIQ4_NL reports whether the active variant multiplies PackIQ4_NL's
// layout natively (AVX-512, AVX2); the others multiply IQ4_NL fastest as
// Q8_0 (IQ4_NLAsQ8_0).
func PacksIQ4_NL() bool { return active == AVX512 || active == AVX2 }

func packedMatMulIQ4(out []float32, ldo int, w []byte, rows int, f16 bool, a []int8, da []float32, n, nb int) {
	if !packedSIMD(f16) {
		packedIQ4Ref(out, ldo, w, rows, f16, a, da, n, nb)
		return
	}
	packedMatMulSIMD(&kernelSetsIQ4[b2i(f16)][b2i(active == AVX512)], out, ldo, w, rows, a, da, n, nb)
}

var kernelSets = [2][2][2]kernelSet{ // [f16?][AVX512?][q4?]
	{
		{{gemvQ8_0AVX2, gemm4Q8_0AVX2, 4, 0, false, false}, {gemvQ4_0AVX2, gemm4Q4_0AVX2, 4, 8, true, false}},
		{{gemvQ8_0AVX512, gemm8Q8_0AVX512, 8, -128, false, false}, {gemvQ4_0AVX512, gemm8Q4_0AVX512, 8, -8, true, false}},
	},
	{
		{{gemvQ8_0F16AVX2, gemm4Q8_0F16AVX2, 4, 0, false, true}, {gemvQ4_0F16AVX2, gemm4Q4_0F16AVX2, 4, 8, true, true}},
		{{gemvQ8_0F16AVX512, gemm8Q8_0F16AVX512, 8, -128, false, true}, {gemvQ4_0F16AVX512, gemm8Q4_0F16AVX512, 8, -8, true, true}},
	},
}

// quantizeQ8_0AVX512 is quantizeQ8_0Generic over nb ≥ 1 blocks.
//
//go:noescape
func quantizeQ8_0AVX512(x *float32, q *int8, d *float32, nb int)

// quantizeQ8_0AVX2 is quantizeQ8_0Generic over nb ≥ 1 blocks.
//
//go:noescape
func quantizeQ8_0AVX2(x *float32, q *int8, d *float32, nb int)

func quantizeQ8_0(x []float32, q []int8, d []float32) {
	switch active {
	case AVX512:
		quantizeQ8_0AVX512(&x[0], &q[0], &d[0], len(x)/BlockSize)
	case AVX2:
		quantizeQ8_0AVX2(&x[0], &q[0], &d[0], len(x)/BlockSize)
	default:
		quantizeQ8_0Generic(x, q, d)
	}
}

// packedSIMD reports whether the active variant has kernels for the packed
// Q8_0/Q4_0/IQ4_NL layouts, with binary16 scales if f16: not the generic
// one, nor an AVX2 CPU without F16C (no VCVTPH2PS).
func packedSIMD(f16 bool) bool {
	return active != Generic && !(f16 && active == AVX2 && !hasF16C)
}

func packedMatMul(out []float32, ldo int, w []byte, rows int, q4, f16 bool, a []int8, da []float32, n, nb int) {
	if !packedSIMD(f16) {
		packedMatMulGeneric(out, ldo, w, rows, q4, f16, a, da, n, nb)
		return
	}
	packedMatMulSIMD(&kernelSets[b2i(f16)][b2i(active == AVX512)][b2i(q4)], out, ldo, w, rows, a, da, n, nb)
}

// packAct writes g activation rows (quants a, scales da, nb blocks each) into
// dst in the kernels' activation layout: per block, the g rows' 32 quants,
// their g float32 scales, then g int32 corrections k·Σa (what the offset k of
// the kernel's unsigned weight operand adds).
func packAct(dst []byte, a []int8, da []float32, nb, g int, k int32) {
	packActAVX2(&dst[0], &a[0], &da[0], nb, g, int(k), nb*BlockSize)
}

// packActAVX2 is packActGeneric with g = ng (nb ≥ 1, ng ≥ 1, the rows of a and da at
// strides cols and nb).
//
//go:noescape
func packActAVX2(dst *byte, a *int8, da *float32, nb int, ng int, k int, cols int)

// dotF32AVX2 is dotF32Generic over n ≥ 1 elements.
//
//go:noescape
func dotF32AVX2(a *float32, b *float32, n int) float32

// axpyF32AVX2 is axpyF32Generic over n ≥ 1 elements.
//
//go:noescape
func axpyF32AVX2(y *float32, a float32, x *float32, n int)

// sumF32AVX2 is sumF32Generic over n ≥ 1 elements.
//
//go:noescape
func sumF32AVX2(x *float32, n int) float32

// scaleF32AVX2 is scaleF32Generic over n elements, n a multiple of 8, ≥ 8.
//
//go:noescape
func scaleF32AVX2(x *float32, s float32, n int, div bool)

// maxF32AVX2 is MaxF32 over n elements, n a multiple of 8, ≥ 8 (see there
// for the sign of a zero maximum).
//
//go:noescape
func maxF32AVX2(x *float32, n int) float32

func maxF32(x []float32) float32 {
	if active >= AVX2 {
		if n := len(x) &^ 7; n > 0 {
			return maxF32Generic(x[n:], maxF32AVX2(&x[0], n))
		}
	}
	return maxF32Generic(x[1:], x[0])
}

func sumF32(x []float32) float32 {
	if active >= AVX2 {
		return sumF32AVX2(&x[0], len(x))
	}
	return sumF32Generic(x)
}

func scaleF32(x []float32, s float32, div bool) {
	if active >= AVX2 {
		if n := len(x) &^ 7; n > 0 {
			scaleF32AVX2(&x[0], s, n, div)
			x = x[n:]
		}
	}
	scaleF32Generic(x, s, div)
}

func dotF32(a, b []float32) float32 {
	if active >= AVX2 {
		return dotF32AVX2(&a[0], &b[0], len(a))
	}
	return dotF32Generic(a, b)
}

func axpyF32(y []float32, a float32, x []float32) {
	if active >= AVX2 {
		axpyF32AVX2(&y[0], a, &x[0], len(y))
		return
	}
	axpyF32Generic(y, a, x)
}

// axpyF32StridedAVX2 is axpyF32StridedGeneric for n ≥ 1 values of m ≥ 1
// floats at stride floats.
//
//go:noescape
func axpyF32StridedAVX2(y *float32, w *float32, v *float32, n int, m int, stride int)

// axpyF32StridedAVX512 is axpyF32StridedGeneric for n ≥ 1 values of m ≥ 1
// floats at stride floats.
//
//go:noescape
func axpyF32StridedAVX512(y *float32, w *float32, v *float32, n int, m int, stride int)

// axpyF16StridedAVX512 is axpyF16StridedGeneric for n ≥ 1 values of m floats
// (m a multiple of 16, ≥ 16) at stride elements.
//
//go:noescape
func axpyF16StridedAVX512(y *float32, w *float32, v *uint16, n int, m int, stride int)

func axpyF32Strided(y, w, v []float32, stride int) {
	if active == AVX512 {
		axpyF32StridedAVX512(&y[0], &w[0], &v[0], len(w), len(y), stride)
		return
	}
	if active >= AVX2 {
		axpyF32StridedAVX2(&y[0], &w[0], &v[0], len(w), len(y), stride)
		return
	}
	axpyF32StridedGeneric(y, w, v, stride)
}

// expShiftF32AVX2 is expShiftF32Generic over n elements, n a multiple of 8, ≥ 8.
//
//go:noescape
func expShiftF32AVX2(x *float32, m float32, n int)

// siluMulF32AVX2 is siluMulF32Generic over n elements, n a multiple of 8, ≥ 8.
//
//go:noescape
func siluMulF32AVX2(gate *float32, up *float32, n int)

func expShiftF32(x []float32, m float32) {
	if active >= AVX512 {
		if n := len(x) &^ 15; n > 0 {
			expShiftF32AVX512(&x[0], m, n)
			x = x[n:]
		}
	}
	if active >= AVX2 {
		if n := len(x) &^ 7; n > 0 {
			expShiftF32AVX2(&x[0], m, n)
			x = x[n:]
		}
	}
	expShiftF32Generic(x, m)
}

func siluMulF32(g, u []float32) {
	if active >= AVX2 {
		if n := len(g) &^ 7; n > 0 {
			siluMulF32AVX2(&g[0], &u[0], n)
			g, u = g[n:], u[n:]
		}
	}
	siluMulF32Generic(g, u)
}

// hasF16C reports F16C (VCVTPH2PS, VCVTPS2PH), which the f16 kernels need.
var hasF16C = cpu.X86.HasAVX2 && cpu.X86.HasF16C

// putF16AVX2 is putF16Generic over n elements, n a multiple of 8, ≥ 8.
//
//go:noescape
func putF16AVX2(dst *uint16, x *float32, n int)

// roundF16AVX2 is roundF16Generic over n elements, n a multiple of 8, ≥ 8.
//
//go:noescape
func roundF16AVX2(x *float32, n int)

// axpyF16StridedAVX2 is axpyF16StridedGeneric for n ≥ 1 values of m floats (m
// a multiple of 8, ≥ 8) at stride elements.
//
//go:noescape
func axpyF16StridedAVX2(y *float32, w *float32, v *uint16, n int, m int, stride int)

func putF16(dst []uint16, x []float32) {
	if active >= AVX2 && hasF16C {
		if n := len(x) &^ 7; n > 0 {
			putF16AVX2(&dst[0], &x[0], n)
			dst, x = dst[n:], x[n:]
		}
	}
	putF16Generic(dst, x)
}

func roundF16(x []float32) {
	if active >= AVX2 && hasF16C {
		if n := len(x) &^ 7; n > 0 {
			roundF16AVX2(&x[0], n)
			x = x[n:]
		}
	}
	roundF16Generic(x)
}

func axpyF16Strided(y, w []float32, v []uint16, stride int) {
	if active == AVX512 && len(y)%16 == 0 {
		axpyF16StridedAVX512(&y[0], &w[0], &v[0], len(w), len(y), stride)
		return
	}
	if active >= AVX2 && hasF16C && len(y)%8 == 0 {
		axpyF16StridedAVX2(&y[0], &w[0], &v[0], len(w), len(y), stride)
		return
	}
	axpyF16StridedGeneric(y, w, v, stride)
}
