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

// TestAsQ8_0EqualDot: a Q5_0 or IQ4_NL row written as Q8_0 by Q5_0AsQ8_0 /
// IQ4_NLAsQ8_0 multiplies, through the Q8_0 definition and through the
// packed kernels of every variant, to DotQ5_0's / DotIQ4_NL's bits, for
// random blocks with tame and with wild binary16 scales (subnormal, NaN,
// Inf).
func TestAsQ8_0EqualDot(t *testing.T) {
	r := rand.New(rand.NewSource(12))
	type kind struct {
		name string
		bb   int
		as   func([]byte, []int8, []float32)
		dot  func([]byte, []int8, []float32) float32
	}
	kinds := []kind{{"Q5_0", 22, Q5_0AsQ8_0, DotQ5_0}, {"IQ4_NL", 18, IQ4_NLAsQ8_0, DotIQ4_NL}}
	const rows, nb = 19, 7
	cols := nb * BlockSize
	for _, k := range kinds {
		for _, wild := range []bool{false, true} {
			w := make([]byte, rows*nb*k.bb)
			r.Read(w)
			for b := range rows * nb {
				h := F32ToF16(0.01 * float32(r.NormFloat64()))
				if wild {
					h = []uint16{0x0001, 0x7c00, 0xfe00, 0x8000, uint16(r.Uint32())}[r.Intn(5)]
				}
				w[b*k.bb], w[b*k.bb+1] = byte(h), byte(h>>8)
			}
			const n = 9 // gemm steps of 4 or 8 and a remainder
			x := make([]float32, n*cols)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			a, da := make([]int8, n*cols), make([]float32, n*nb)
			QuantizeQ8_0(x, a, da)
			q, d := make([]int8, rows*cols), make([]float32, rows*nb)
			k.as(w, q, d)
			f16 := ScalesFitF16(d)
			pk := PackQ8_0(make([]byte, PackedSize(false, f16, rows, cols)), q, d, rows, cols, f16)
			for _, kern := range ggmlKernels() {
				func() {
					defer func(v Kernel) { active = v }(active)
					active = kern
					out := make([]float32, n*rows)
					pk.MatMul(out, rows, 0, rows, a, da, n)
					for i := range n {
						ai, dai := a[i*cols:(i+1)*cols], da[i*nb:(i+1)*nb]
						for rr := range rows {
							want := k.dot(w[rr*nb*k.bb:(rr+1)*nb*k.bb], ai, dai)
							def := dotQ8_0Generic(q[rr*cols:(rr+1)*cols], d[rr*nb:(rr+1)*nb], ai, dai)
							if got := out[i*rows+rr]; !sameFloat(def, want) || !sameFloat(got, want) {
								t.Fatalf("%s wild=%v %v act %d row %d: Q8_0 definition %v, packed %v, Dot %v", k.name, wild, kern, i, rr, def, got, want)
							}
						}
					}
				}()
			}
		}
	}
}
