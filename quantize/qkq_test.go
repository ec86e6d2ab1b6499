package quantize

import (
	"bytes"
	"math"
	"math/rand"
	"testing"
)

// naiveQK is a plain min/max Q4_K or Q5_K rule written here as a baseline
// (not llama.cpp's): per sub-block s = (max − min)/nmax, mn = −min, the
// 6-bit scales rounded against the largest, levels rounded.
func naiveQK(x []float32, five bool) []float32 {
	nmax := float32(15)
	if five {
		nmax = 31
	}
	y := make([]float32, len(x))
	for b := 0; b < len(x); b += 256 {
		var ss, ms [8]float32
		var mxs, mxm float32
		for ib := range 8 {
			lo, hi := float32(0), float32(0)
			for _, v := range x[b+32*ib : b+32*ib+32] {
				lo, hi = min(lo, v), max(hi, v)
			}
			ss[ib], ms[ib] = (hi-lo)/nmax, -lo
			mxs, mxm = max(mxs, ss[ib]), max(mxm, ms[ib])
		}
		d, dm := mxs/63, mxm/63
		for ib := range 8 {
			sc := float32(math.Round(float64(ss[ib] / d)))
			m := float32(math.Round(float64(ms[ib] / dm)))
			for j := b + 32*ib; j < b+32*ib+32; j++ {
				l := float32(math.Max(0, math.Min(float64(nmax), math.Round(float64((x[j]+dm*m)/(d*sc))))))
				y[j] = d*sc*l - dm*m
			}
		}
	}
	return y
}

// TestQuantizeQK: Q4_K and Q5_K on random matrices with outliers, with and
// without importance: the relative RMSE is in the 4- (5-) bit range and
// below the naive rule's, importance lowers the importance-weighted error,
// the bytes are the same for 1 and 2 threads, and DequantizeGGML's view
// agrees with what the quantizer fitted (the scale packing round-trips:
// every block's error is finite and small).
func TestQuantizeQK(t *testing.T) {
	r := rand.New(rand.NewSource(23))
	const rows, cols = 16, 512
	x := testRows(r, rows, cols)
	imp := make([]float32, cols)
	for i := range imp {
		imp[i] = float32(math.Exp(2 * r.NormFloat64()))
	}
	for _, c := range []struct {
		t      GGMLType
		five   bool
		lo, hi float64
	}{{GGMLQ4_K, false, 0.03, 0.12}, {GGMLQ5_K, true, 0.015, 0.06}} {
		var impErr [2]float64
		for k, im := range [][]float32{nil, imp} {
			q, err := QuantizeGGML(c.t, x, rows, cols, Options{Importance: im, Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			q2, err := QuantizeGGML(c.t, x, rows, cols, Options{Importance: im, Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(q, q2) {
				t.Fatalf("%v: 1 and 2 threads differ", c.t)
			}
			y := make([]float32, len(x))
			if err := DequantizeGGML(c.t, q, y); err != nil {
				t.Fatal(err)
			}
			base := naiveQK(x, c.five)
			var sx, se, sb float64
			for i := range x {
				sx += float64(x[i]) * float64(x[i])
				se += float64(x[i]-y[i]) * float64(x[i]-y[i])
				sb += float64(x[i]-base[i]) * float64(x[i]-base[i])
				impErr[k] += float64(imp[i%cols]) * float64(x[i]-y[i]) * float64(x[i]-y[i])
			}
			rel, relB := math.Sqrt(se/sx), math.Sqrt(sb/sx)
			t.Logf("%v importance=%v: relative RMSE %.4f (naive rule %.4f)", c.t, im != nil, rel, relB)
			if !(rel > c.lo && rel < c.hi) {
				t.Errorf("%v: relative RMSE %.4f outside [%g, %g]", c.t, rel, c.lo, c.hi)
			}
			if im == nil && !(rel < relB) {
				t.Errorf("%v: relative RMSE %.4f not below the naive rule's %.4f", c.t, rel, relB)
			}
		}
		t.Logf("%v: importance-weighted error %.4g without importance, %.4g with", c.t, impErr[0], impErr[1])
		if !(impErr[1] < impErr[0]) {
			t.Errorf("%v: importance did not lower the importance-weighted error (%.4g vs %.4g)", c.t, impErr[1], impErr[0])
		}
	}
}

// TestQuantizeQKEdges: all-zero, constant negative, all-positive and tiny
// superblocks dequantize to finite values close to the input.
func TestQuantizeQKEdges(t *testing.T) {
	for _, typ := range []GGMLType{GGMLQ4_K, GGMLQ5_K, GGMLQ6_K} {
		for name, f := range map[string]func(i int) float32{
			"zero": func(int) float32 { return 0 }, "negconst": func(int) float32 { return -0.5 },
			"positive": func(i int) float32 { return float32(i%9) * 0.01 }, "tiny": func(i int) float32 { return float32(i%5-2) * 1e-7 },
		} {
			x := make([]float32, 256)
			for i := range x {
				x[i] = f(i)
			}
			q, err := QuantizeGGML(typ, x, 1, 256, Options{})
			if err != nil {
				t.Fatal(err)
			}
			y := make([]float32, 256)
			if err := DequantizeGGML(typ, q, y); err != nil {
				t.Fatal(err)
			}
			var sx, se float64
			for i := range x {
				if math.IsNaN(float64(y[i])) || math.IsInf(float64(y[i]), 0) {
					t.Fatalf("%v %s: element %d = %v", typ, name, i, y[i])
				}
				sx += float64(x[i]) * float64(x[i])
				se += float64(x[i]-y[i]) * float64(x[i]-y[i])
			}
			if se > 0.02*sx+1e-30 {
				t.Errorf("%v %s: squared error %.3g of %.3g", typ, name, se, sx)
			}
		}
	}
}

// TestQuantizeQ5_0: relative RMSE in the 5-bit range and x²-weighted error
// (what it minimizes without importance) below ggml's reference rule's
// (quantize_row_q5_0_ref: d = max/−16, levels rounded, written out here);
// threads identical.
func TestQuantizeQ5_0(t *testing.T) {
	r := rand.New(rand.NewSource(24))
	const rows, cols = 8, 256
	x := testRows(r, rows, cols)
	q, err := QuantizeGGML(GGMLQ5_0, x, rows, cols, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	q2, _ := QuantizeGGML(GGMLQ5_0, x, rows, cols, Options{Threads: 2})
	if !bytes.Equal(q, q2) {
		t.Fatal("1 and 2 threads differ")
	}
	y := make([]float32, len(x))
	if err := DequantizeGGML(GGMLQ5_0, q, y); err != nil {
		t.Fatal(err)
	}
	var sx, se, sr, we, wr float64
	for b := 0; b < len(x); b += 32 {
		var mx, amax float32
		for _, v := range x[b : b+32] {
			if a := float32(math.Abs(float64(v))); a > amax {
				amax, mx = a, v
			}
		}
		d := roundF16(mx / -16)
		for j := b; j < b+32; j++ {
			l := 0.0
			if d != 0 {
				l = math.Min(31, math.Trunc(float64(x[j]/d)+16.5)) - 16
			}
			ref := float64(d) * l
			sx += float64(x[j]) * float64(x[j])
			se += float64(x[j]-y[j]) * float64(x[j]-y[j])
			sr += (float64(x[j]) - ref) * (float64(x[j]) - ref)
			w := float64(x[j]) * float64(x[j])
			we += w * float64(x[j]-y[j]) * float64(x[j]-y[j])
			wr += w * (float64(x[j]) - ref) * (float64(x[j]) - ref)
		}
	}
	rel, relR := math.Sqrt(se/sx), math.Sqrt(sr/sx)
	t.Logf("Q5_0: relative RMSE %.4f (reference rule %.4f); x²-weighted error %.4g vs %.4g", rel, relR, we, wr)
	if !(rel > 0.01 && rel < 0.08) || !(we < wr) {
		t.Errorf("relative RMSE %.4f (reference %.4f), weighted error %.4g (reference %.4g)", rel, relR, we, wr)
	}
}
