//go:build arm64 && gc && !purego

package asm

// Kernels without an arm64 version yet run their pure-Go twins.

func expShiftF32(x []float32, m float32) { expShiftF32Generic(x, m) }

func siluMulF32(g, u []float32) { siluMulF32Generic(g, u) }

func putF16(dst []uint16, x []float32) { putF16Generic(dst, x) }

func roundF16(x []float32) { roundF16Generic(x) }

func axpyF16Strided(y, w []float32, v []uint16, stride int) { axpyF16StridedGeneric(y, w, v, stride) }

func maxF32(x []float32) float32 { return maxF32Generic(x[1:], x[0]) }

func dotF32T(out []float32, ldo int, q []float32, nq, m int, kt []float32, nb, bstride int) {
	dotF32TGeneric(out, ldo, q, nq, m, kt, nb, bstride)
}

func dotF16T(out []float32, ldo int, q []float32, nq, m int, kt []uint16, nb, bstride int) {
	dotF16TGeneric(out, ldo, q, nq, m, kt, nb, bstride)
}

func axpyF32StridedN(y []float32, ldy, m, nq int, w []float32, ldw, n int, v []float32, stride int) {
	axpyF32StridedNGeneric(y, ldy, m, nq, w, ldw, n, v, stride)
}

func axpyF16StridedN(y []float32, ldy, m, nq int, w []float32, ldw, n int, v []uint16, stride int) {
	axpyF16StridedNGeneric(y, ldy, m, nq, w, ldw, n, v, stride)
}
