//go:build !amd64 || !gc || purego

package asm

// PacksQ5_0 reports whether the active variant multiplies PackQ5_0's layout
// natively: none here (Q5_0AsQ8_0 and the Q8_0 layout are the fast way).
func PacksQ5_0() bool { return false }

func packedMatMulQ5(out []float32, ldo int, w []byte, rows int, f16 bool, a []int8, da []float32, n, nb int) {
	packedQ5ViaQ8(out, ldo, w, rows, f16, a, da, n, nb)
}
