package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The fast pure-Go packed product (packedMatMulGeneric) against its
// definition (packedMatMulRef), bit for bit, on the values that reach the
// bounds its integer tricks rely on (packed_generic.go): every Q8_0 quant
// −128 or 127, every Q4_0 nibble 0 or 15, activations ±127 (every product
// at its largest, "max", and at its most negative, "neg"), and random ones;
// both scale layouts, awkward block and row counts, many activation rows.

// genericCase builds a packed matrix and activations; kind picks the values.
func genericCase(rng *rand.Rand, q4, f16 bool, rows, nb, n int, kind string) (Packed, []int8, []float32) {
	cols := nb * BlockSize
	w8 := make([]int8, rows*cols)
	w4 := make([]byte, rows*cols/2)
	dw := make([]float32, rows*nb)
	a := make([]int8, n*cols)
	da := make([]float32, n*nb)
	for i := range w8 {
		switch kind {
		case "max", "neg":
			w8[i] = -128
		case "min":
			w8[i] = 127
		case "alt":
			w8[i] = int8([2]int{-128, 127}[i%2])
		default:
			w8[i] = int8(rng.Uint32())
		}
	}
	for i := range w4 {
		switch kind {
		case "max", "neg":
			w4[i] = 0x00 // every weight −8
		case "min":
			w4[i] = 0xff // every weight 7
		case "alt":
			w4[i] = 0x0f
		default:
			w4[i] = byte(rng.Uint32())
		}
	}
	for i := range a {
		switch kind {
		case "max":
			a[i] = -127
		case "min", "alt", "neg":
			a[i] = 127
		default:
			a[i] = int8(rng.IntN(255) - 127)
		}
	}
	for i := range dw {
		dw[i] = genScale(rng, "normal")
		if f16 {
			dw[i] = F16ToF32(F32ToF16(dw[i]))
		}
	}
	for i := range da {
		da[i] = genScale(rng, "normal")
	}
	p := pack(make([]byte, PackedSize(q4, f16, rows, cols)), q4, f16, w8, w4, dw, rows, cols)
	return p, a, da
}

// runPacked calls kernel on the whole of p into an out of ldo > rows.
func runPacked(kernel func([]float32, int, []byte, int, bool, bool, []int8, []float32, int, int), p Packed, a []int8, da []float32, n int) []float32 {
	ldo := p.rows + 3
	out := make([]float32, n*ldo)
	for i := range out {
		out[i] = float32(math.NaN()) // the padding between rows must stay untouched
	}
	kernel(out, ldo, p.data, p.rows, p.q4, p.f16, a, da, n, p.cols/BlockSize)
	return out
}

func TestPackedGenericMatchesRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 4))
	for _, kind := range []string{"random", "max", "min", "alt", "neg"} {
		for _, q4 := range []bool{false, true} {
			for _, f16 := range []bool{false, true} {
				for _, nb := range []int{1, 2, 3, 7, 8, 15, 17, 33} {
					for _, shape := range []struct{ rows, n int }{{1, 1}, {16, 1}, {17, 3}, {37, 5}, {48, 9}} {
						name := fmt.Sprintf("%s/q4=%v/f16=%v/nb=%d/%dx%d", kind, q4, f16, nb, shape.rows, shape.n)
						p, a, da := genericCase(rng, q4, f16, shape.rows, nb, shape.n, kind)
						want := runPacked(packedMatMulRef, p, a, da, shape.n)
						got := runPacked(packedMatMulGeneric, p, a, da, shape.n)
						for i := range want {
							if !sameFloat(got[i], want[i]) {
								t.Fatalf("%s: out[%d] = %v, want %v", name, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

// TestPackedGenericIntegerSums checks the block sums alone, against sums
// computed here in int64 from the plain quants: with dw = da = 1 and one
// block, the output is float32 of the exact integer sum (|sum| < 2²⁴).
func TestPackedGenericIntegerSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, q4 := range []bool{false, true} {
		for trial := range 200 {
			const rows = 16
			w8 := make([]int8, rows*32)
			w4 := make([]byte, rows*16)
			a := make([]int8, 32)
			for i := range w8 {
				w8[i] = int8(rng.Uint32())
				if trial%3 == 0 {
					w8[i] = -128
				}
			}
			for i := range w4 {
				w4[i] = byte(rng.Uint32())
			}
			for i := range a {
				a[i] = int8(rng.IntN(255) - 127)
				if trial%5 == 0 {
					a[i] = -127
				}
			}
			dw := make([]float32, rows)
			for i := range dw {
				dw[i] = 1
			}
			p := pack(make([]byte, PackedSize(q4, false, rows, 32)), q4, false, w8, w4, dw, rows, 32)
			got := runPacked(packedMatMulGeneric, p, a, []float32{1}, 1)
			for r := range rows {
				var want int64
				for j := range 32 {
					if q4 {
						v := w4[r*16+j%16]
						if j < 16 {
							want += (int64(v&15) - 8) * int64(a[j])
						} else {
							want += (int64(v>>4) - 8) * int64(a[j])
						}
					} else {
						want += int64(w8[r*32+j]) * int64(a[j])
					}
				}
				if got[r] != float32(want) {
					t.Fatalf("q4=%v trial %d row %d: %v, want %d", q4, trial, r, got[r], want)
				}
			}
		}
	}
}

// FuzzPackedGeneric compares packedMatMulGeneric with packedMatMulRef on
// quants, scales (any bits: NaN, Inf, subnormals) and shapes from the fuzzer.
func FuzzPackedGeneric(f *testing.F) {
	f.Add([]byte{0x80, 0x7f, 0, 0xff, 1}, uint8(1), uint8(1), uint8(1), false, false)
	f.Add([]byte{0xff, 0x00, 0x81, 0x7f, 0x80, 0x80, 0x80}, uint8(17), uint8(37), uint8(3), true, true)
	f.Add([]byte{0x0f, 0xf0, 0x88, 0x77}, uint8(8), uint8(16), uint8(9), true, false)
	f.Fuzz(func(t *testing.T, data []byte, nbSel, rowsSel, nSel uint8, q4, f16 bool) {
		nb := 1 + int(nbSel)%40
		rows := 1 + int(rowsSel)%40
		n := 1 + int(nSel)%9
		cols := nb * BlockSize
		w8 := make([]int8, rows*cols)
		w4 := make([]byte, rows*cols/2)
		for i := range w8 {
			w8[i] = int8(fuzzByte(data, i))
		}
		for i := range w4 {
			w4[i] = fuzzByte(data, i+3)
		}
		a := make([]int8, n*cols)
		for i := range a {
			a[i] = max(int8(fuzzByte(data, i+5)), -127) // the kernels' precondition
		}
		dw := make([]float32, rows*nb)
		for i := range dw {
			dw[i] = fuzzScale(data, i)
			if f16 {
				dw[i] = F16ToF32(uint16(math.Float32bits(dw[i])))
			}
		}
		da := make([]float32, n*nb)
		for i := range da {
			da[i] = fuzzScale(data, i+11)
		}
		p := pack(make([]byte, PackedSize(q4, f16, rows, cols)), q4, f16, w8, w4, dw, rows, cols)
		want := runPacked(packedMatMulRef, p, a, da, n)
		got := runPacked(packedMatMulGeneric, p, a, da, n)
		for i := range want {
			if !sameFloat(got[i], want[i]) {
				t.Fatalf("q4=%v f16=%v nb=%d rows=%d n=%d: out[%d] = %v, want %v", q4, f16, nb, rows, n, i, got[i], want[i])
			}
		}
	})
}

// BenchmarkPackedGeneric times the fast pure-Go kernel against its
// definition on the 135M shape's FFN matrix (1536×576) in CPU time.
func BenchmarkPackedGeneric(b *testing.B) {
	const rows, cols = 1536, 576
	for _, typ := range benchTypes {
		for _, n := range []int{1, 64} {
			w8, w4, dw, a, da := benchData(rows, cols, n)
			p, bytes := benchPack(typ, w8, w4, dw, rows, cols)
			out := make([]float32, n*rows)
			for _, k := range []struct {
				name string
				f    func([]float32, int, []byte, int, bool, bool, []int8, []float32, int, int)
			}{{"ref", packedMatMulRef}, {"fast", packedMatMulGeneric}} {
				b.Run(fmt.Sprintf("%s/n=%d/%s", typ, n, k.name), func(b *testing.B) {
					b.ReportAllocs()
					ops := 2 * float64(rows) * float64(cols) * float64(n)
					c := startCPU()
					for b.Loop() {
						k.f(out, rows, p.data, rows, p.q4, p.f16, a, da, n, cols/BlockSize)
					}
					c.report(b, float64(bytes)*float64(n), ops)
				})
			}
		}
	}
}

// TestGroupScaleBitsAll widens every binary16 value with groupScaleBits (a
// group of 4096 blocks whose header holds the 65536 values in order) and
// checks the float32 bits against F16ToF32 (itself checked against its
// definition in f16_test.go), so that the written-out normal-value path and
// its range test are exact.
func TestGroupScaleBitsAll(t *testing.T) {
	l := layout{true, true, 1 << 16 / GroupRows}
	grp := make([]byte, l.group())
	for h := range 1 << 16 {
		grp[2*h], grp[2*h+1] = byte(h), byte(h>>8)
	}
	scb := make([]byte, 4<<16)
	groupScaleBits(scb, grp, l)
	for h := range 1 << 16 {
		got := uint32(scb[4*h]) | uint32(scb[4*h+1])<<8 | uint32(scb[4*h+2])<<16 | uint32(scb[4*h+3])<<24
		if want := math.Float32bits(F16ToF32(uint16(h))); got != want {
			t.Fatalf("binary16 %#04x widened to %#08x, want %#08x", h, got, want)
		}
	}
}
