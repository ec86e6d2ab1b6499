package asm

import (
	"math"
	"math/rand"
	"testing"
)

// TestDotsGGMLEqualDot: each row-times-batch product is, bit for bit, the
// single Dot… of the row with each activation row, for widths below, at
// and across the unpacking chunk (1, 16, 17, 33 superblocks), batch sizes 1,
// 2 and 5 and a strided output; weights random bytes with tame f16 scales,
// activations from QuantizeQ8_K of random floats.
func TestDotsGGMLEqualDot(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	type kind struct {
		name string
		bb   int
		dots func([]float32, int, []byte, []int8, []float32, []int16, int)
		dot  func([]byte, []int8, []float32, []int16) float32
		fix  func(blk []byte) // tame the scales
	}
	f16 := func(b []byte, v float32) { h := F32ToF16(v); b[0], b[1] = byte(h), byte(h>>8) }
	kinds := []kind{
		{"Q4_K", 144, DotsQ4_K, DotQ4_K, func(b []byte) { f16(b, 0.01*r.Float32()); f16(b[2:], 0.01*r.Float32()) }},
		{"Q5_K", 176, DotsQ5_K, DotQ5_K, func(b []byte) { f16(b, 0.01*r.Float32()); f16(b[2:], 0.01*r.Float32()) }},
		{"Q6_K", 210, DotsQ6_K, DotQ6_K, func(b []byte) { f16(b[208:], 0.01*r.Float32()) }},
		{"IQ4_XS", 136, DotsIQ4_XS, DotIQ4_XS, func(b []byte) { f16(b, 0.01*r.Float32()) }},
	}
	for _, k := range kinds {
		for _, nb := range []int{1, 16, 17, 33} {
			for _, n := range []int{1, 2, 5} {
				w := make([]byte, nb*k.bb)
				r.Read(w)
				for b := range nb {
					k.fix(w[b*k.bb : (b+1)*k.bb])
				}
				cols := nb * QK
				x := make([]float32, n*cols)
				for i := range x {
					x[i] = float32(r.NormFloat64())
				}
				a, da, bs := make([]int8, n*cols), make([]float32, n*nb), make([]int16, n*nb*16)
				QuantizeQ8_K(x, a, da, bs)
				const ldo = 3
				out := make([]float32, (n-1)*ldo+1)
				k.dots(out, ldo, w, a, da, bs, n)
				for i := range n {
					want := k.dot(w, a[i*cols:(i+1)*cols], da[i*nb:(i+1)*nb], bs[i*nb*16:(i+1)*nb*16])
					if math.Float32bits(out[i*ldo]) != math.Float32bits(want) {
						t.Fatalf("%s nb=%d n=%d row %d: %v, Dot %v", k.name, nb, n, i, out[i*ldo], want)
					}
					if want == 0 {
						t.Fatalf("%s: a zero product tests nothing", k.name)
					}
				}
			}
		}
	}
}
