//go:build amd64 && gc && !purego

package asm

// The channel-major score kernels (attn_amd64.s, attn_avx512_amd64.s), for
// nq ≥ 1 queries of m floats (m a multiple of 8, ≥ 8) and nb ≥ 1 blocks;
// ldo and bstride in elements. The AVX-512 ones take three queries and their
// output rows (a repeated pointer for fewer: same bits, written twice).

//go:noescape
func dotF32TAVX2(out *float32, ldo int, q *float32, nq int, m int, kt *float32, nb int, bstride int)

//go:noescape
func dotF16TAVX2(out *float32, ldo int, q *float32, nq int, m int, kt *uint16, nb int, bstride int)

//go:noescape
func dotF32TAVX512(o0, o1, o2 *float32, q0, q1, q2 *float32, m int, kt *float32, nb int, bstride int)

//go:noescape
func dotF16TAVX512(o0, o1, o2 *float32, q0, q1, q2 *float32, m int, kt *uint16, nb int, bstride int)

func dotF32T(out []float32, ldo int, q []float32, nq, m int, kt []float32, nb, bstride int) {
	switch {
	case m%8 != 0 || active < AVX2:
		dotF32TGeneric(out, ldo, q, nq, m, kt, nb, bstride)
	case active >= AVX512:
		for r := 0; r < nq; r += 3 {
			o0, o1, o2, q0, q1, q2 := rows3(out, ldo, q, nq, m, r)
			dotF32TAVX512(o0, o1, o2, q0, q1, q2, m, &kt[0], nb, bstride)
		}
	default:
		dotF32TAVX2(&out[0], ldo, &q[0], nq, m, &kt[0], nb, bstride)
	}
}

func dotF16T(out []float32, ldo int, q []float32, nq, m int, kt []uint16, nb, bstride int) {
	switch {
	case m%8 != 0 || active < AVX2 || !hasF16C:
		dotF16TGeneric(out, ldo, q, nq, m, kt, nb, bstride)
	case active >= AVX512:
		for r := 0; r < nq; r += 3 {
			o0, o1, o2, q0, q1, q2 := rows3(out, ldo, q, nq, m, r)
			dotF16TAVX512(o0, o1, o2, q0, q1, q2, m, &kt[0], nb, bstride)
		}
	default:
		dotF16TAVX2(&out[0], ldo, &q[0], nq, m, &kt[0], nb, bstride)
	}
}

// rows3 returns the output rows and queries r, r+1, r+2, the last one
// repeated where fewer than three remain.
func rows3(out []float32, ldo int, q []float32, nq, m, r int) (o0, o1, o2, q0, q1, q2 *float32) {
	r1, r2 := min(r+1, nq-1), min(r+2, nq-1)
	return &out[r*ldo], &out[r1*ldo], &out[r2*ldo], &q[r*m], &q[r1*m], &q[r2*m]
}

// The three-query weighted sums (axpyn_avx512_amd64.s): AxpyF32Strided for
// y rows y, y+ldy, y+2·ldy with weights w, w+ldw, w+2·ldw over the same n ≥ 1
// values of m floats (m a multiple of 16, ≥ 16); ldy, ldw and stride in
// elements.

//go:noescape
func axpyF32S3AVX512(y *float32, ldy int, w *float32, ldw int, v *float32, n int, m int, stride int)

//go:noescape
func axpyF16S3AVX512(y *float32, ldy int, w *float32, ldw int, v *uint16, n int, m int, stride int)

func axpyF32StridedN(y []float32, ldy, m, nq int, w []float32, ldw, n int, v []float32, stride int) {
	r := 0
	if active >= AVX512 && m%16 == 0 {
		for ; r+3 <= nq; r += 3 {
			axpyF32S3AVX512(&y[r*ldy], ldy, &w[r*ldw], ldw, &v[0], n, m, stride)
		}
	}
	for ; r < nq; r++ {
		axpyF32Strided(y[r*ldy:r*ldy+m], w[r*ldw:r*ldw+n], v, stride)
	}
}

func axpyF16StridedN(y []float32, ldy, m, nq int, w []float32, ldw, n int, v []uint16, stride int) {
	r := 0
	if active >= AVX512 && m%16 == 0 {
		for ; r+3 <= nq; r += 3 {
			axpyF16S3AVX512(&y[r*ldy], ldy, &w[r*ldw], ldw, &v[0], n, m, stride)
		}
	}
	for ; r < nq; r++ {
		axpyF16Strided(y[r*ldy:r*ldy+m], w[r*ldw:r*ldw+n], v, stride)
	}
}
