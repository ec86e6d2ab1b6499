//go:build amd64 && gc && !purego

package asm

// PacksQ4_K reports whether the active variant has kernels for PackQ4_K's
// layout (AVX-512); the others multiply Q4_K fastest by the row products
// (DotsRowsQ4_K).
func PacksQ4_K() bool { return false }

func packedQ4KMatMul(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n, nb int) {
	packedQ4KRef(out, ldo, w, rows, a, da, bs, n, nb)
}
