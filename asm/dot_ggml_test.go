package asm_test

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"

	"github.com/krafla/krafla/asm"
	"github.com/krafla/krafla/quantize"
	"github.com/x448/float16"
)

// The oracles here take each block's integers from quantize.DequantizeGGML
// (itself checked bit for bit against gguf-py's quants.py) run on a copy of
// the block whose binary16 scales are replaced by 1 and 0: with d = 1 and
// dmin = 0 a Q4_K weight is exactly sc·n, with d = 0 and dmin = 1 exactly −m.
// The integer sums are then formed in int64 and the float steps written out as
// the doc comments of asm's functions state them. Nothing of asm's unpacking
// is used.

var f16One, f16Zero = float16.Fromfloat32(1).Bits(), uint16(0)

// intWeights returns the integer weights of the blocks w of type t with the
// binary16 fields at offsets offs set to vals (1 or 0).
func intWeights(t *testing.T, typ quantize.GGMLType, w []byte, offs []int, vals []uint16) []int64 {
	t.Helper()
	c := append([]byte(nil), w...)
	bb := typ.BlockBytes()
	for b := 0; b < len(c)/bb; b++ {
		for k, o := range offs {
			binary.LittleEndian.PutUint16(c[b*bb+o:], vals[k])
		}
	}
	y := make([]float32, len(c)/bb*typ.BlockElems())
	if err := quantize.DequantizeGGML(typ, c, y); err != nil {
		t.Fatal(err)
	}
	out := make([]int64, len(y))
	for i, v := range y {
		if v != float32(math.Trunc(float64(v))) || math.Abs(float64(v)) > 1<<20 {
			t.Fatalf("%v weight %d = %v is not an integer", typ, i, v)
		}
		out[i] = int64(v)
	}
	return out
}

func f16at(b []byte) float32 { return float16.Frombits(binary.LittleEndian.Uint16(b)).Float32() }

// refQ8_K is ggml's quantize_row_q8_K_ref written again from the C source,
// with nearest_int as math.RoundToEven in float64 (exact for these values).
func refQ8_K(x []float32) (q []int8, d []float32, bs []int16) {
	for b := 0; b < len(x)/256; b++ {
		xb := x[256*b : 256*b+256]
		var max, amax float32
		for _, v := range xb {
			if ax := float32(math.Abs(float64(v))); ax > amax {
				amax, max = ax, v
			}
		}
		qb := make([]int8, 256)
		if amax == 0 {
			q, d = append(q, qb...), append(d, 0)
			bs = append(bs, make([]int16, 16)...)
			continue
		}
		iscale := float32(-127) / max
		for j, v := range xb {
			r := math.RoundToEven(float64(iscale * v))
			qb[j] = int8(math.Min(127, r))
		}
		for j := 0; j < 16; j++ {
			s := 0
			for _, v := range qb[16*j : 16*j+16] {
				s += int(v)
			}
			bs = append(bs, int16(s))
		}
		q, d = append(q, qb...), append(d, 1/iscale)
	}
	return
}

func TestQuantizeQ8_K(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	x := make([]float32, 256*6)
	for i := range x {
		x[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.Intn(8)-4)))
	}
	clear(x[256:512]) // an all-zero superblock
	x[600] = -50      // the largest magnitude negative
	// Ties: with max 127 the iscale is −1, and x = 2.5 rounds to even (−2).
	for i := 1024; i < 1280; i++ {
		x[i] = float32(i%7) - 3.5
	}
	x[1024] = 127
	q, d, bs := make([]int8, len(x)), make([]float32, 6), make([]int16, 6*16)
	asm.QuantizeQ8_K(x, q, d, bs)
	wq, wd, wbs := refQ8_K(x)
	for i := range q {
		if q[i] != wq[i] {
			t.Fatalf("q[%d] = %d, want %d (x %v)", i, q[i], wq[i], x[i])
		}
	}
	for i := range d {
		if math.Float32bits(d[i]) != math.Float32bits(wd[i]) {
			t.Fatalf("d[%d] = %v, want %v", i, d[i], wd[i])
		}
	}
	for i := range bs {
		if bs[i] != wbs[i] {
			t.Fatalf("bs[%d] = %d, want %d", i, bs[i], wbs[i])
		}
	}
	if d[4] != -1 || q[1030] != 2 || q[1024] != -127 {
		t.Errorf("tie block: d %v, q %d %d; want −1, 2 (−(−2.5) to even), −127", d[4], q[1030], q[1024])
	}
}

// ggmlActs returns random activation rows quantized both ways.
func ggmlActs(r *rand.Rand, n int) (x []float32, a8 []int8, d8 []float32, aK []int8, dK []float32, bs []int16) {
	x = make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	a8, d8 = make([]int8, n), make([]float32, n/32)
	asm.QuantizeQ8_0(x, a8, d8)
	aK, dK, bs = make([]int8, n), make([]float32, n/256), make([]int16, n/16)
	asm.QuantizeQ8_K(x, aK, dK, bs)
	return
}

func randomBlocks(r *rand.Rand, typ quantize.GGMLType, n int, offs []int) []byte {
	b := make([]byte, n*typ.BlockBytes())
	r.Read(b)
	for i := 0; i < n; i++ {
		for _, o := range offs {
			v := float32(r.NormFloat64() * 0.01)
			binary.LittleEndian.PutUint16(b[i*typ.BlockBytes()+o:], float16.Fromfloat32(v).Bits())
		}
	}
	return b
}

// TestDotGGMLDefinition checks every ggml dot product bit for bit against
// its definition computed from independently unpacked integers, and loosely
// against the float64 dot product of the dequantized weights.
func TestDotGGMLDefinition(t *testing.T) {
	r := rand.New(rand.NewSource(24))
	const n = 256 * 4
	for it := 0; it < 30; it++ {
		x, a8, d8, aK, dK, bs := ggmlActs(r, n)
		_ = x
		check := func(typ quantize.GGMLType, got, want float32, w []byte, kAct bool) {
			t.Helper()
			if math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("%v: got %v (%#x), definition %v (%#x)", typ, got, math.Float32bits(got), want, math.Float32bits(want))
			}
			y := make([]float32, n)
			quantize.DequantizeGGML(typ, w, y)
			var f, mag float64
			for i := range y {
				ai := float64(a8[i]) * float64(d8[i/32])
				if kAct {
					ai = float64(aK[i]) * float64(dK[i/256])
				}
				f += float64(y[i]) * ai
				mag += math.Abs(float64(y[i]) * ai)
			}
			if math.Abs(f-float64(got)) > 1e-5*mag+1e-30 {
				t.Fatalf("%v: got %v, float64 dequantized %v", typ, got, f)
			}
		}
		sum := func(w []int64, a []int8, lo, hi int) int64 {
			var s int64
			for i := lo; i < hi; i++ {
				s += w[i] * int64(a[i])
			}
			return s
		}
		// Q4_K and Q5_K: isum from d=1, dmin=0; msum from d=0, dmin=1 (−m per weight).
		for _, typ := range []quantize.GGMLType{quantize.GGMLQ4_K, quantize.GGMLQ5_K} {
			w := randomBlocks(r, typ, n/256, []int{0, 2})
			iw := intWeights(t, typ, w, []int{0, 2}, []uint16{f16One, f16Zero})
			mw := intWeights(t, typ, w, []int{0, 2}, []uint16{f16Zero, f16One})
			var want float32
			for b := 0; b < n/256; b++ {
				isum := sum(iw, aK, 256*b, 256*b+256)
				msum := -sum(mw, aK, 256*b, 256*b+256)
				blk := w[b*typ.BlockBytes():]
				want = want + float32(float32(f16at(blk)*dK[b])*float32(isum))
				want = want - float32(float32(f16at(blk[2:])*dK[b])*float32(msum))
			}
			got := asm.DotQ4_K
			if typ == quantize.GGMLQ5_K {
				got = asm.DotQ5_K
			}
			check(typ, got(w, aK, dK, bs), want, w, true)
		}
		// Q6_K (d at 208) and IQ4_XS (d at 0): isum from d = 1.
		for _, c := range []struct {
			typ quantize.GGMLType
			off int
			dot func([]byte, []int8, []float32, []int16) float32
		}{{quantize.GGMLQ6_K, 208, asm.DotQ6_K}, {quantize.GGMLIQ4_XS, 0, asm.DotIQ4_XS}} {
			w := randomBlocks(r, c.typ, n/256, []int{c.off})
			iw := intWeights(t, c.typ, w, []int{c.off}, []uint16{f16One})
			var want float32
			for b := 0; b < n/256; b++ {
				isum := sum(iw, aK, 256*b, 256*b+256)
				want = want + float32(float32(f16at(w[b*c.typ.BlockBytes()+c.off:])*dK[b])*float32(isum))
			}
			check(c.typ, c.dot(w, aK, dK, bs), want, w, true)
		}
		// Q5_0, IQ4_NL: p from d = 1; Q4_1: p from d=1, m=0 and t = Σ a.
		for _, c := range []struct {
			typ quantize.GGMLType
			dot func([]byte, []int8, []float32) float32
		}{{quantize.GGMLQ5_0, asm.DotQ5_0}, {quantize.GGMLIQ4_NL, asm.DotIQ4_NL}, {quantize.GGMLQ4_1, asm.DotQ4_1}} {
			offs := []int{0}
			vals := []uint16{f16One}
			if c.typ == quantize.GGMLQ4_1 {
				offs, vals = []int{0, 2}, []uint16{f16One, f16Zero}
			}
			w := randomBlocks(r, c.typ, n/32, offs)
			iw := intWeights(t, c.typ, w, offs, vals)
			var want float32
			for b := 0; b < n/32; b++ {
				blk := w[b*c.typ.BlockBytes():]
				p := sum(iw, a8, 32*b, 32*b+32)
				want = want + float32(float32(p)*float32(f16at(blk)*d8[b]))
				if c.typ == quantize.GGMLQ4_1 {
					var s int64
					for _, v := range a8[32*b : 32*b+32] {
						s += int64(v)
					}
					want = want + float32(float32(s)*float32(f16at(blk[2:])*d8[b]))
				}
			}
			check(c.typ, c.dot(w, a8, d8), want, w, false)
		}
	}
}
