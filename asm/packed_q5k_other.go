//go:build (!amd64 && !arm64) || !gc || purego

package asm

// PacksQ5_K is PacksQ4_K for PackQ5_K's layout: none here.
func PacksQ5_K() bool { return false }

func packedQ5KMatMul(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n, nb int) {
	packedQ5KRef(out, ldo, w, rows, a, da, bs, n, nb)
}
