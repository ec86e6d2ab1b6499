//go:build arm64 && gc && !purego

package asm

// The superblock sums of the K-quants and IQ4_XS, and the block sums of
// Q5_0, IQ4_NL and Q4_1, on arm64 (dot_ggml_arm64.s, written by
// _genarm64/ggml.py: run `python3 _genarm64/ggml.py > dot_ggml_arm64.s` in
// asm/), dispatched as dot_ggml_amd64.go dispatches the AVX2 ones: the ...K
// forms take a variant, so tests compare every variant the CPU has with the
// pure-Go twin. DotProd kernels use SDOT; I8MM CPUs have the dot product, so
// I8MM runs them too; NEON kernels use SMULL/SMLAL into int16 lanes that
// cannot overflow (the .s file says why for each). Each is its twin for any
// bytes, any int8 activations (−128 included) and any scales: the sub-block
// and block sums are exact, and the scaled sum is formed modulo 2^32 as the
// twin's int32 arithmetic forms it. Bounds are checked here, not in the
// kernels; no alignment is needed, nothing aliases, and only the block-sum
// kernels write (p).

//go:noescape
func q4kIsumDotProd(qs *byte, a *int8, sc *[8]int32) int32

//go:noescape
func q4kIsumNEON(qs *byte, a *int8, sc *[8]int32) int32

//go:noescape
func q6kIsumDotProd(ql, qh *byte, a *int8, sc *[16]int16) int32

//go:noescape
func q6kIsumNEON(ql, qh *byte, a *int8, sc *[16]int16) int32

//go:noescape
func iq4xsIsumDotProd(qs *byte, a *int8, sc *[8]int16) int32

//go:noescape
func iq4xsIsumNEON(qs *byte, a *int8, sc *[8]int16) int32

//go:noescape
func q5kIsumDotProd(qs, qh *byte, a *int8, sc *[8]int32) int32

//go:noescape
func q5kIsumNEON(qs, qh *byte, a *int8, sc *[8]int32) int32

func q4kIsum(qs []byte, a []int8, sc *[8]int32) int32 { return q4kIsumK(active, qs, a, sc) }

func q4kIsumK(k Kernel, qs []byte, a []int8, sc *[8]int32) int32 {
	qs, a = qs[:128:128], a[:256:256]
	switch k {
	case DotProd, I8MM:
		return q4kIsumDotProd(&qs[0], &a[0], sc)
	case NEON:
		return q4kIsumNEON(&qs[0], &a[0], sc)
	}
	return q4kIsumGeneric(qs, a, sc)
}

func q6kIsum(ql, qh []byte, a []int8, sc *[16]int16) int32 { return q6kIsumK(active, ql, qh, a, sc) }

func q6kIsumK(k Kernel, ql, qh []byte, a []int8, sc *[16]int16) int32 {
	ql, qh, a = ql[:128:128], qh[:64:64], a[:256:256]
	switch k {
	case DotProd, I8MM:
		return q6kIsumDotProd(&ql[0], &qh[0], &a[0], sc)
	case NEON:
		return q6kIsumNEON(&ql[0], &qh[0], &a[0], sc)
	}
	return q6kIsumGeneric(ql, qh, a, sc)
}

func iq4xsIsum(qs []byte, a []int8, sc *[8]int16) int32 { return iq4xsIsumK(active, qs, a, sc) }

func iq4xsIsumK(k Kernel, qs []byte, a []int8, sc *[8]int16) int32 {
	qs, a = qs[:128:128], a[:256:256]
	switch k {
	case DotProd, I8MM:
		return iq4xsIsumDotProd(&qs[0], &a[0], sc)
	case NEON:
		return iq4xsIsumNEON(&qs[0], &a[0], sc)
	}
	return iq4xsIsumGeneric(qs, a, sc)
}

func q5kIsum(qs, qh []byte, a []int8, sc *[8]int32) int32 { return q5kIsumK(active, qs, qh, a, sc) }

func q5kIsumK(k Kernel, qs, qh []byte, a []int8, sc *[8]int32) int32 {
	qs, qh, a = qs[:128:128], qh[:32:32], a[:256:256]
	switch k {
	case DotProd, I8MM:
		return q5kIsumDotProd(&qs[0], &qh[0], &a[0], sc)
	case NEON:
		return q5kIsumNEON(&qs[0], &qh[0], &a[0], sc)
	}
	return q5kIsumGeneric(qs, qh, a, sc)
}

// The block-sum kernels of the blocks of 32 (Q5_0, IQ4_NL, Q4_1) are their
// *SumsGeneric twins over nb ≥ 1 blocks: w points to nb blocks of the row
// (22, 18 or 20 bytes each), a to 32·nb activations (any int8), p to nb
// int32 (Q4_1: 2·nb, p then t per block), which they write.

//go:noescape
func q5_0SumsDotProd(w *byte, a *int8, nb int, p *int32)

//go:noescape
func q5_0SumsNEON(w *byte, a *int8, nb int, p *int32)

//go:noescape
func iq4nlSumsDotProd(w *byte, a *int8, nb int, p *int32)

//go:noescape
func iq4nlSumsNEON(w *byte, a *int8, nb int, p *int32)

//go:noescape
func q4_1SumsDotProd(w *byte, a *int8, nb int, pt *int32)

//go:noescape
func q4_1SumsNEON(w *byte, a *int8, nb int, pt *int32)

func q5_0Sums(w []byte, a []int8, p []int32)  { q5_0SumsK(active, w, a, p) }
func iq4nlSums(w []byte, a []int8, p []int32) { iq4nlSumsK(active, w, a, p) }
func q4_1Sums(w []byte, a []int8, pt []int32) { q4_1SumsK(active, w, a, pt) }

func q5_0SumsK(k Kernel, w []byte, a []int8, p []int32) {
	nb := sums32(w, a, p, 22, 1)
	if nb == 0 {
		return
	}
	switch k {
	case DotProd, I8MM:
		q5_0SumsDotProd(&w[0], &a[0], nb, &p[0])
	case NEON:
		q5_0SumsNEON(&w[0], &a[0], nb, &p[0])
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
	case DotProd, I8MM:
		iq4nlSumsDotProd(&w[0], &a[0], nb, &p[0])
	case NEON:
		iq4nlSumsNEON(&w[0], &a[0], nb, &p[0])
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
	case DotProd, I8MM:
		q4_1SumsDotProd(&w[0], &a[0], nb, &pt[0])
	case NEON:
		q4_1SumsNEON(&w[0], &a[0], nb, &pt[0])
	default:
		q4_1SumsGeneric(w, a, pt)
	}
}
