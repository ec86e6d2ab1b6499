//go:build arm64 && gc && !purego

package asm

// The attention kernels (attn_arm64.s): scores of one query against 8 keys
// of a channel-major block, and the f16 axpy; the strided and N-query forms
// loop over them in Go, in the twins' order.

//go:noescape
func dotTF32NEON(out *float32, q *float32, m int, k *float32)

//go:noescape
func dotTF16NEON(out *float32, q *float32, m int, k *uint16)

//go:noescape
func axpyF16NEON(y *float32, a float32, x *uint16, n int)

func dotF32T(out []float32, ldo int, q []float32, nq, m int, kt []float32, nb, bstride int) {
	if active < NEON {
		dotF32TGeneric(out, ldo, q, nq, m, kt, nb, bstride)
		return
	}
	for r := range nq {
		for b := range nb {
			o := out[r*ldo+KeyBlock*b : r*ldo+KeyBlock*(b+1)]
			blk := kt[b*bstride : b*bstride+KeyBlock*m]
			dotTF32NEON(&o[0], &q[r*m], m, &blk[0])
			dotTF32NEON(&o[8], &q[r*m], m, &blk[8])
		}
	}
}

func dotF16T(out []float32, ldo int, q []float32, nq, m int, kt []uint16, nb, bstride int) {
	if active < NEON {
		dotF16TGeneric(out, ldo, q, nq, m, kt, nb, bstride)
		return
	}
	for r := range nq {
		for b := range nb {
			o := out[r*ldo+KeyBlock*b : r*ldo+KeyBlock*(b+1)]
			blk := kt[b*bstride : b*bstride+KeyBlock*m]
			dotTF16NEON(&o[0], &q[r*m], m, &blk[0])
			dotTF16NEON(&o[8], &q[r*m], m, &blk[8])
		}
	}
}

func axpyF16Strided(y, w []float32, v []uint16, stride int) {
	n := len(y) &^ 3
	if active < NEON || n == 0 {
		axpyF16StridedGeneric(y, w, v, stride)
		return
	}
	for j, a := range w {
		vj := v[j*stride : j*stride+len(y)]
		axpyF16NEON(&y[0], a, &vj[0], n)
		for i := n; i < len(y); i++ {
			y[i] = y[i] + float32(a*F16ToF32(vj[i]))
		}
	}
}

func axpyF32StridedN(y []float32, ldy, m, nq int, w []float32, ldw, n int, v []float32, stride int) {
	for r := range nq {
		axpyF32Strided(y[r*ldy:r*ldy+m], w[r*ldw:r*ldw+n], v, stride)
	}
}

func axpyF16StridedN(y []float32, ldy, m, nq int, w []float32, ldw, n int, v []uint16, stride int) {
	for r := range nq {
		axpyF16Strided(y[r*ldy:r*ldy+m], w[r*ldw:r*ldw+n], v, stride)
	}
}
