package asm

import "testing"

// TestQuantizeQ8_KTieFirst: when two elements of a superblock share the
// largest magnitude with opposite signs, the scale comes from the first, as
// ggml's quantize_row_q8_K picks it (`ax > amax`): x = 3, −3, 0… gives
// d = −3/127 and q = −127, 127. Kills dot_ggml.go:52 `a > amax` → `>=`
// (which takes the last: d, q and bs negated).
func TestQuantizeQ8_KTieFirst(t *testing.T) {
	x := make([]float32, QK)
	x[0], x[1], x[2] = 3, -3, 1.5
	q := make([]int8, QK)
	d := make([]float32, 1)
	bs := make([]int16, 16)
	QuantizeQ8_K(x, q, d, bs)
	if want := 1 / (-127 / float32(3)); d[0] != want || q[0] != -127 || q[1] != 127 || q[2] != -64 || bs[0] != -64 {
		t.Fatalf("d = %v, q[:3] = %v, bs[0] = %d; want d = %v, q = [-127 127 -64], bs[0] = -64", d[0], q[:3], bs[0], want)
	}
}
