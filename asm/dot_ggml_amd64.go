//go:build amd64 && gc && !purego

package asm

import "golang.org/x/sys/cpu"

// The superblock and block sums of the ggml types, per variant: the
// dispatched q4kIsum etc. use the active variant; the ...K forms take one,
// so tests compare every variant the CPU has with the pure-Go twin. The
// kernels' preconditions are their twins' (and the lengths the slices give
// here: bounds are checked in Go, not in the kernels); nothing aliases, and
// only the block-sum kernels write (p).

// q4kIsumAVX2 and q4kIsumAVX512 are q4kIsumGeneric: qs points to 128 bytes
// of Q4_K nibbles, a to 256 int8 activations, sc to the 8 sub-block scales
// (each at most 63, but any int32 whose products do not overflow gives the
// generic result, since the sums are integers). No alignment needed.
//
//go:noescape
func q4kIsumAVX2(qs *byte, a *int8, sc *[8]int32) int32

//go:noescape
func q4kIsumAVX512(qs *byte, a *int8, sc *[8]int32) int32

func q4kIsum(qs []byte, a []int8, sc *[8]int32) int32 { return q4kIsumK(active, qs, a, sc) }

func q4kIsumK(k Kernel, qs []byte, a []int8, sc *[8]int32) int32 {
	qs, a = qs[:128:128], a[:256:256]
	switch k {
	case AVX512:
		return q4kIsumAVX512(&qs[0], &a[0], sc)
	case AVX2:
		return q4kIsumAVX2(&qs[0], &a[0], sc)
	}
	return q4kIsumGeneric(qs, a, sc)
}

// q6kIsumAVX2 and q6kIsumAVX512 are q6kIsumGeneric: ql points to 128 bytes
// of low nibbles, qh to 64 bytes of high bits, a to 256 int8 activations, sc
// to the 16 sub-block scales as int16 (int8 values).
//
//go:noescape
func q6kIsumAVX2(ql, qh *byte, a *int8, sc *[16]int16) int32

//go:noescape
func q6kIsumAVX512(ql, qh *byte, a *int8, sc *[16]int16) int32

func q6kIsum(ql, qh []byte, a []int8, sc *[16]int16) int32 { return q6kIsumK(active, ql, qh, a, sc) }

func q6kIsumK(k Kernel, ql, qh []byte, a []int8, sc *[16]int16) int32 {
	ql, qh, a = ql[:128:128], qh[:64:64], a[:256:256]
	switch k {
	case AVX512:
		return q6kIsumAVX512(&ql[0], &qh[0], &a[0], sc)
	case AVX2:
		return q6kIsumAVX2(&ql[0], &qh[0], &a[0], sc)
	}
	return q6kIsumGeneric(ql, qh, a, sc)
}

// iq4xsIsumAVX2 is iq4xsIsumGeneric for activations in [−127, 127] (it
// multiplies |K| by a·sign(K), and −128 has no negation); iq4xsIsumAVX512
// is it for any activations. qs points to 128 bytes of codebook indices, a
// to 256 int8 activations, sc to the 8 sub-block scales (ls − 32).
//
//go:noescape
func iq4xsIsumAVX2(qs *byte, a *int8, sc *[8]int16) int32

//go:noescape
func iq4xsIsumAVX512(qs *byte, a *int8, sc *[8]int16) int32

func iq4xsIsum(qs []byte, a []int8, sc *[8]int16) int32 { return iq4xsIsumK(active, qs, a, sc) }

func iq4xsIsumK(k Kernel, qs []byte, a []int8, sc *[8]int16) int32 {
	qs, a = qs[:128:128], a[:256:256]
	switch k {
	case AVX512:
		return iq4xsIsumAVX512(&qs[0], &a[0], sc)
	case AVX2:
		return iq4xsIsumAVX2(&qs[0], &a[0], sc)
	}
	return iq4xsIsumGeneric(qs, a, sc)
}

// q5kIsumAVX2 and q5kIsumAVX512 are q5kIsumGeneric: qs points to 128 bytes
// of nibbles, qh to the 32 high-bit bytes, a to 256 int8 activations, sc to
// the 8 sub-block scales.
//
//go:noescape
func q5kIsumAVX2(qs, qh *byte, a *int8, sc *[8]int32) int32

//go:noescape
func q5kIsumAVX512(qs, qh *byte, a *int8, sc *[8]int32) int32

func q5kIsum(qs, qh []byte, a []int8, sc *[8]int32) int32 { return q5kIsumK(active, qs, qh, a, sc) }

func q5kIsumK(k Kernel, qs, qh []byte, a []int8, sc *[8]int32) int32 {
	qs, qh, a = qs[:128:128], qh[:32:32], a[:256:256]
	switch k {
	case AVX512:
		return q5kIsumAVX512(&qs[0], &qh[0], &a[0], sc)
	case AVX2:
		return q5kIsumAVX2(&qs[0], &qh[0], &a[0], sc)
	}
	return q5kIsumGeneric(qs, qh, a, sc)
}

// The block-sum kernels of the blocks of 32 (Q5_0, IQ4_NL, Q4_1) are their
// *SumsGeneric twins over nb ≥ 1 blocks: w points to nb blocks of the row
// (22, 18 or 20 bytes each), a to 32·nb activations, p to nb int32 (Q4_1:
// 2·nb, p then t per block), which they write. iq4nlSumsAVX2 needs
// activations ≠ −128 (it multiplies |K| by a·sign(K)); iq4nlSumsAVX512
// takes any (Σ(K+128)·a − Σ128·a).

//go:noescape
func q5_0SumsAVX2(w *byte, a *int8, nb int, p *int32)

//go:noescape
func q5_0SumsAVX512(w *byte, a *int8, nb int, p *int32)

//go:noescape
func iq4nlSumsAVX2(w *byte, a *int8, nb int, p *int32)

//go:noescape
func iq4nlSumsAVX512(w *byte, a *int8, nb int, p *int32)

//go:noescape
func q4_1SumsAVX2(w *byte, a *int8, nb int, pt *int32)

//go:noescape
func q4_1SumsAVX512(w *byte, a *int8, nb int, pt *int32)

func q5_0Sums(w []byte, a []int8, p []int32)  { q5_0SumsK(active, w, a, p) }
func iq4nlSums(w []byte, a []int8, p []int32) { iq4nlSumsK(active, w, a, p) }
func q4_1Sums(w []byte, a []int8, pt []int32) { q4_1SumsK(active, w, a, pt) }

func q5_0SumsK(k Kernel, w []byte, a []int8, p []int32) {
	nb := sums32(w, a, p, 22, 1)
	if nb == 0 {
		return
	}
	switch k {
	case AVX512:
		q5_0SumsAVX512(&w[0], &a[0], nb, &p[0])
	case AVX2:
		q5_0SumsAVX2(&w[0], &a[0], nb, &p[0])
	default:
		q5_0SumsGeneric(w, a, p)
	}
}

func iq4nlSumsK(k Kernel, w []byte, a []int8, p []int32) {
	nb := sums32(w, a, p, 18, 1)
	if nb == 0 {
		return
	}
	switch k {
	case AVX512:
		iq4nlSumsAVX512(&w[0], &a[0], nb, &p[0])
	case AVX2:
		iq4nlSumsAVX2(&w[0], &a[0], nb, &p[0])
	default:
		iq4nlSumsGeneric(w, a, p)
	}
}

func q4_1SumsK(k Kernel, w []byte, a []int8, pt []int32) {
	nb := sums32(w, a, pt, 20, 2)
	if nb == 0 {
		return
	}
	switch k {
	case AVX512:
		q4_1SumsAVX512(&w[0], &a[0], nb, &pt[0])
	case AVX2:
		q4_1SumsAVX2(&w[0], &a[0], nb, &pt[0])
	default:
		q4_1SumsGeneric(w, a, pt)
	}
}

// dotsQ6KAVX512, dotsQ4KAVX512, dotsQ5KAVX512 and dotsIQ4XSAVX512 are
// DotsQ6_K, DotsQ4_K, DotsQ5_K and DotsIQ4_XS over nb ≥ 1 superblocks and n ≥ 1 activation rows, the
// activation rows' a, da and bs at strides sa, sd and sb bytes (256·nb, 4·nb,
// 32·nb). The IQ4_XS kernel uses bs as the sums of each 16 activations, which
// QuantizeQ8_K writes (Σ (K+128)·a − 128·Σ a).
//
//go:noescape
func dotsQ6KAVX512(out *float32, ldo int, w *byte, nb int, a *int8, da *float32, bs *int16, n int, sa, sd, sb, rows int)

//go:noescape
func dotsQ5KAVX512(out *float32, ldo int, w *byte, nb int, a *int8, da *float32, bs *int16, n int, sa, sd, sb, rows int)

//go:noescape
func dotsQ4KAVX512(out *float32, ldo int, w *byte, nb int, a *int8, da *float32, bs *int16, n int, sa, sd, sb, rows int)

// dotsIQ4XSAVX512 needs BMI2 (PDEP) besides AVX-512: hasBMI2.
//
//go:noescape
func dotsIQ4XSAVX512(out *float32, ldo int, w *byte, nb int, a *int8, da *float32, bs *int16, n int, sa, sd, sb, rows int)

// hasBMI2 reports BMI2 (PDEP), which every AVX-512 CPU has; checked anyway.
var hasBMI2 = cpu.X86.HasBMI2

// dotsSIMD runs the whole-product kernel of variant k for the rows of bb-byte
// superblocks (210 Q6_K, 144 Q4_K, 176 Q5_K, 136 IQ4_XS) and reports whether it had
// one; lengths are checked (checkDots).
func dotsSIMD(k Kernel, bb int, out []float32, ldo int, w []byte, a []int8, da []float32, bs []int16, n, nb int) bool {
	return dotsRowsSIMD(k, bb, out, ldo, w, 1, a, da, bs, n, nb)
}

// dotsRowsSIMD is dotsSIMD for rows ≥ 1 weight rows one after the other in
// w, row r's outputs out[i·ldo + r] (lengths checked by the caller).
func dotsRowsSIMD(k Kernel, bb int, out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n, nb int) bool {
	if k != AVX512 || n == 0 || nb == 0 || rows == 0 {
		return false
	}
	var kern func(*float32, int, *byte, int, *int8, *float32, *int16, int, int, int, int, int)
	switch bb {
	case 210:
		kern = dotsQ6KAVX512
	case 144:
		kern = dotsQ4KAVX512
	case 176:
		kern = dotsQ5KAVX512
	case 136:
		if !hasBMI2 {
			return false
		}
		kern = dotsIQ4XSAVX512
	default:
		return false
	}
	kern(&out[0], ldo, &w[0], nb, &a[0], &da[0], &bs[0], n, nb*QK, 4*nb, 32*nb, rows)
	return true
}

// quantizeQ8KAVX512 is quantizeQ8KGeneric over nb ≥ 1 superblocks.
//
//go:noescape
func quantizeQ8KAVX512(x *float32, q *int8, d *float32, bs *int16, nb int)

// quantizeQ8KAVX2 is quantizeQ8KAVX512 with 8 lanes.
//
//go:noescape
func quantizeQ8KAVX2(x *float32, q *int8, d *float32, bs *int16, nb int)

func quantizeQ8K(x []float32, q []int8, d []float32, bs []int16) { quantizeQ8KK(active, x, q, d, bs) }

func quantizeQ8KK(k Kernel, x []float32, q []int8, d []float32, bs []int16) {
	switch {
	case len(d) == 0:
	case k == AVX512:
		quantizeQ8KAVX512(&x[0], &q[0], &d[0], &bs[0], len(d))
		return
	case k == AVX2:
		quantizeQ8KAVX2(&x[0], &q[0], &d[0], &bs[0], len(d))
		return
	}
	quantizeQ8KGeneric(x, q, d, bs)
}
