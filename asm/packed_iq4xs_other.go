//go:build (!amd64 && !arm64) || !gc || purego

package asm

// PacksIQ4_XS is PacksQ4_K for PackIQ4_XS's layout: none here.
func PacksIQ4_XS() bool { return false }

func packedIQ4XSMatMul(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, n, nb int) {
	packedIQ4XSRef(out, ldo, w, rows, a, da, n, nb)
}
