//go:build !(amd64 || arm64) || !gc || purego

package asm

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
