package quantize

import (
	"bytes"
	"errors"
	"math"
	"math/rand"
	"testing"
)

// iq4WeightedErr is Σ w·(x − y)² with the weights written out once more from
// llama.cpp's rule (quantize_row_iq4_nl_impl: qw·sqrt(σ² + x²), σ² = 2Σx²/n
// per superblock of n; x² without importance), in float64, y from
// DequantizeGGML of the bytes.
func iq4WeightedErr(t *testing.T, typ GGMLType, q []byte, x, imp []float32) float64 {
	t.Helper()
	y := make([]float32, len(x))
	if err := DequantizeGGML(typ, q, y); err != nil {
		t.Fatal(err)
	}
	n := typ.BlockElems()
	var e float64
	for b := 0; b < len(x); b += n {
		var s2 float64
		for _, v := range x[b : b+n] {
			s2 += float64(v) * float64(v)
		}
		s2 *= 2 / float64(n)
		for j := b; j < b+n; j++ {
			wt := float64(x[j]) * float64(x[j])
			if imp != nil {
				wt = float64(imp[j%len(imp)]) * math.Sqrt(s2+float64(x[j])*float64(x[j]))
			}
			r := float64(x[j]) - float64(y[j])
			e += wt * r * r
		}
	}
	return e
}

// llamaOnly quantizes with the port of llama.cpp's algorithm alone.
func llamaOnly(typ GGMLType, x, imp []float32, cols int) []byte {
	n, bb := typ.BlockElems(), typ.BlockBytes()
	out := make([]byte, len(x)/n*bb)
	for b := range len(x) / n {
		xb := x[b*n : (b+1)*n]
		var qw []float32
		if imp != nil {
			qw = imp[(b*n)%cols : (b*n)%cols+n]
		}
		w := make([]float32, n)
		iq4Weights(xb, qw, w)
		blk := out[b*bb : (b+1)*bb]
		if typ == GGMLIQ4_NL {
			iq4nlLlama(xb, w, blk)
		} else {
			var s [8]float32
			var L [32]uint8
			for ib := range 8 {
				s[ib] = llamaSubScale(xb[32*ib:32*ib+32], w[32*ib:32*ib+32], L[:])
			}
			iq4xsLlama(xb, &s, blk)
		}
	}
	return out
}

func testRows(r *rand.Rand, rows, cols int) []float32 {
	x := make([]float32, rows*cols)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 0.02)
		if r.Intn(50) == 0 {
			x[i] *= 8 // outliers, as real weights have
		}
	}
	return x
}

// TestQuantizeIQ4 quantizes random matrices (with outliers) to IQ4_NL and
// IQ4_XS, with and without importance, and checks: every block's weighted
// error (computed here from the dequantized bytes) is no larger than the
// llama.cpp algorithm's, and the matrix's is smaller; the relative RMSE is
// in the range 4-bit codes give; 1 and 3 threads give the same bytes.
func TestQuantizeIQ4(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	const rows, cols = 24, 512
	x := testRows(r, rows, cols)
	imp := make([]float32, cols)
	for i := range imp {
		imp[i] = float32(math.Exp(r.NormFloat64()))
	}
	for _, typ := range []GGMLType{GGMLIQ4_NL, GGMLIQ4_XS} {
		for _, im := range [][]float32{nil, imp} {
			q, err := QuantizeGGML(typ, x, rows, cols, Options{Importance: im, Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			q3, err := QuantizeGGML(typ, x, rows, cols, Options{Importance: im, Threads: 3})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(q, q3) {
				t.Fatalf("%v: 1 and 3 threads differ", typ)
			}
			ref := llamaOnly(typ, x, im, cols)
			n, bb := typ.BlockElems(), typ.BlockBytes()
			var ours, theirs float64
			better := 0
			for b := range len(x) / n {
				xb := x[b*n : (b+1)*n]
				var ib []float32
				if im != nil {
					ib = im[(b*n)%cols : (b*n)%cols+n]
				}
				eo := iq4WeightedErr(t, typ, q[b*bb:(b+1)*bb], xb, ib)
				el := iq4WeightedErr(t, typ, ref[b*bb:(b+1)*bb], xb, ib)
				if eo > el {
					t.Fatalf("%v importance=%v block %d: error %.6g above llama.cpp's algorithm's %.6g", typ, im != nil, b, eo, el)
				}
				if eo < el {
					better++
				}
				ours += eo
				theirs += el
			}
			var sx, se float64
			y := make([]float32, len(x))
			if err := DequantizeGGML(typ, q, y); err != nil {
				t.Fatal(err)
			}
			for i := range x {
				sx += float64(x[i]) * float64(x[i])
				se += float64(x[i]-y[i]) * float64(x[i]-y[i])
			}
			rel := math.Sqrt(se / sx)
			t.Logf("%v importance=%v: weighted error %.4g vs llama.cpp's algorithm %.4g (%.2f%% less; %d of %d blocks better); relative RMSE %.4f",
				typ, im != nil, ours, theirs, 100*(1-ours/theirs), better, len(x)/n, rel)
			if !(ours < theirs) {
				t.Errorf("%v: matrix error %.6g not below llama.cpp's algorithm's %.6g", typ, ours, theirs)
			}
			if !(rel > 0.03 && rel < 0.15) {
				t.Errorf("%v: relative RMSE %.4f outside 4-bit range", typ, rel)
			}
		}
	}
}

// TestQuantizeIQ4Zero: all-zero blocks quantize to blocks that dequantize to
// zeros; tiny and huge magnitudes stay finite.
func TestQuantizeIQ4Zero(t *testing.T) {
	for _, typ := range []GGMLType{GGMLIQ4_NL, GGMLIQ4_XS} {
		for _, scale := range []float32{0, 1e-30, 1e3} {
			x := make([]float32, 256)
			for i := range x {
				x[i] = scale * float32(i%7-3)
			}
			q, err := QuantizeGGML(typ, x, 1, 256, Options{})
			if err != nil {
				t.Fatal(err)
			}
			y := make([]float32, 256)
			if err := DequantizeGGML(typ, q, y); err != nil {
				t.Fatal(err)
			}
			for i, v := range y {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || scale == 0 && v != 0 {
					t.Fatalf("%v scale %g: element %d = %v", typ, scale, i, v)
				}
			}
		}
	}
}

// TestQuantizeGGMLErrors: bad shapes, importance and NaN weights are
// errors naming the tensor, row and column.
func TestQuantizeGGMLErrors(t *testing.T) {
	x := make([]float32, 2*256)
	if _, err := QuantizeGGML(GGMLIQ4_XS, x[:2*96], 2, 96, Options{Name: "w"}); !errors.Is(err, ErrShape) {
		t.Errorf("cols 96 for IQ4_XS: %v", err)
	}
	if _, err := QuantizeGGML(GGMLQ4_1, x, 2, 256, Options{}); !errors.Is(err, ErrShape) {
		t.Errorf("Q4_1: %v", err)
	}
	if _, err := QuantizeGGML(GGMLIQ4_NL, x, 2, 256, Options{Importance: make([]float32, 3)}); !errors.Is(err, ErrShape) {
		t.Errorf("short importance: %v", err)
	}
	x[256+7] = float32(math.NaN())
	_, err := QuantizeGGML(GGMLIQ4_NL, x, 2, 256, Options{Name: "blk.0.wq", Threads: 2})
	if !errors.Is(err, ErrNonFinite) || err.Error() != `quantize: NaN or Inf: "blk.0.wq" row 1, column 7: NaN` {
		t.Errorf("NaN: %v", err)
	}
}

// BenchmarkQuantizeIQ4: weights per second of one thread.
func BenchmarkQuantizeIQ4(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	x := testRows(r, 4, 2048)
	for _, typ := range []GGMLType{GGMLIQ4_NL, GGMLIQ4_XS} {
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(int64(len(x)))
			for range b.N {
				if _, err := QuantizeGGML(typ, x, 4, 2048, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestIQ4IndexTable: the table form of best_index_int8 equals ggml's binary
// search on every midpoint, every level, their float32 neighbours, a fine
// grid and random values (NaN gives 15 in both).
func TestIQ4IndexTable(t *testing.T) {
	var vs []float32
	for i := range 16 {
		k := float32(KValues[i])
		vs = append(vs, k, math.Nextafter32(k, -200), math.Nextafter32(k, 200))
		if i < 15 {
			m := (k + float32(KValues[i+1])) / 2
			vs = append(vs, m, math.Nextafter32(m, -200), math.Nextafter32(m, 200))
		}
	}
	for v := float32(-140); v < 130; v += 0.125 {
		vs = append(vs, v)
	}
	r := rand.New(rand.NewSource(3))
	for range 100000 {
		vs = append(vs, float32(r.NormFloat64()*80))
	}
	vs = append(vs, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)))
	for _, v := range vs {
		if a, b := iq4Index(v), iq4IndexSearch(v); a != b {
			t.Fatalf("v = %v: table %d, search %d", v, a, b)
		}
	}
}
