//go:build (!amd64 && !arm64) || !gc || purego

package asm

// PacksQ4_K reports whether the active variant has kernels for PackQ4_K's
// layout: none here (the row products, DotsRowsQ4_K, are the fast way).
func PacksQ4_K() bool { return false }

func packedQ4KMatMul(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n, nb int) {
	packedQ4KRef(out, ldo, w, rows, a, da, bs, n, nb)
}

// PacksQ6_K is PacksQ4_K for PackQ6_K's layout: none here.
func PacksQ6_K() bool { return false }

func packedQ6KMatMul(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n, nb int) {
	packedQ6KRef(out, ldo, w, rows, a, da, bs, n, nb)
}
