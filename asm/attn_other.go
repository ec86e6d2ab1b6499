//go:build !amd64 || !gc || purego

package asm

func dotF32T(out []float32, ldo int, q []float32, nq, m int, kt []float32, nb, bstride int) {
	dotF32TGeneric(out, ldo, q, nq, m, kt, nb, bstride)
}

func dotF16T(out []float32, ldo int, q []float32, nq, m int, kt []uint16, nb, bstride int) {
	dotF16TGeneric(out, ldo, q, nq, m, kt, nb, bstride)
}
