package asm

import (
	"math/rand"
	"testing"
)

// BenchmarkPackedKMemory times the packed K-quant gemvs (one activation row)
// on a 16384 × 8192 matrix, larger than any L3 here, so that the weights
// stream from memory as in a generated token: GB/s against "sum", SumF32
// reading 128 MiB, the plain stream on the same machine (docs/SPEED.md,
// session 16). Thread CPU time, as the other kernel benchmarks.
func BenchmarkPackedKMemory(b *testing.B) {
	const rows, cols = 16384, 8192
	nb := cols / QK
	r := rand.New(rand.NewSource(1))
	a, da, bs := q8kAct(r, 1, nb, false)
	out := make([]float32, rows)
	run := func(name string, bytes, ops int, mul func()) {
		b.Run(name, func(b *testing.B) {
			c := startCPU()
			for range b.N {
				mul()
			}
			c.report(b, float64(bytes), float64(ops))
		})
	}
	q4 := PackQ4_K(make([]byte, PackedQ4KSize(rows, cols)), randQ4K(r, rows, nb, false), rows, cols)
	run("q4k", q4.Bytes(), rows*cols, func() { q4.MatMul(out, rows, 0, rows, a, da, bs, 1) })
	q4 = PackedQ4K{}
	q5 := PackQ5_K(make([]byte, PackedQ5KSize(rows, cols)), randQ5K(r, rows, nb, false), rows, cols)
	run("q5k", q5.Bytes(), rows*cols, func() { q5.MatMul(out, rows, 0, rows, a, da, bs, 1) })
	q5 = PackedQ5K{}
	q6 := PackQ6_K(make([]byte, PackedQ6KSize(rows, cols)), randQ6K(r, rows, nb, false), rows, cols)
	run("q6k", q6.Bytes(), rows*cols, func() { q6.MatMul(out, rows, 0, rows, a, da, bs, 1) })
	q6 = PackedQ6K{}
	x := PackIQ4_XS(make([]byte, PackedIQ4XSSize(rows, cols)), randIQ4XS(r, rows, nb, false), rows, cols)
	run("iq4xs", x.Bytes(), rows*cols, func() { x.MatMul(out, rows, 0, rows, a, da, bs, 1) })
	x = PackedIQ4XS{}
	src := make([]float32, 32<<20)
	for i := range src {
		src[i] = float32(i & 7)
	}
	var s float32
	run("sum", 4*len(src), 0, func() { s += SumF32(src) })
	_ = s
}
