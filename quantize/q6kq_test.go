package quantize

import (
	"bytes"
	"math"
	"math/rand"
	"testing"
)

// q6Err is Σ w·(x − y)² with llama.cpp's Q6_K weights written out again
// (the importance values as they are, or x²), y from DequantizeGGML.
func q6Err(t *testing.T, q []byte, x, imp []float32) float64 {
	t.Helper()
	y := make([]float32, len(x))
	if err := DequantizeGGML(GGMLQ6_K, q, y); err != nil {
		t.Fatal(err)
	}
	var e float64
	for j := range x {
		wt := float64(x[j]) * float64(x[j])
		if imp != nil {
			wt = float64(imp[j])
		}
		r := float64(x[j]) - float64(y[j])
		e += wt * r * r
	}
	return e
}

// TestNearestInt: ggml's float trick is round half to even.
func TestNearestInt(t *testing.T) {
	for _, c := range []struct {
		v float32
		n int
	}{{0.5, 0}, {1.5, 2}, {2.5, 2}, {-0.5, 0}, {-1.5, -2}, {-2.49, -2}, {31.7, 32}, {-127.5, -128}, {0, 0}} {
		if g := nearestInt(c.v); g != c.n {
			t.Errorf("nearestInt(%v) = %d, want %d", c.v, g, c.n)
		}
	}
}

// TestQuantizeQ6K: as TestQuantizeIQ4 for Q6_K: no superblock worse than
// the llama.cpp algorithm's port, the matrix better, 6-bit error range,
// thread counts give the same bytes.
func TestQuantizeQ6K(t *testing.T) {
	r := rand.New(rand.NewSource(22))
	const rows, cols = 16, 512
	x := testRows(r, rows, cols)
	imp := make([]float32, cols)
	for i := range imp {
		imp[i] = float32(math.Exp(r.NormFloat64()))
	}
	for _, im := range [][]float32{nil, imp} {
		q, err := QuantizeGGML(GGMLQ6_K, x, rows, cols, Options{Importance: im, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		q2, err := QuantizeGGML(GGMLQ6_K, x, rows, cols, Options{Importance: im, Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(q, q2) {
			t.Fatal("1 and 2 threads differ")
		}
		var ours, theirs float64
		better := 0
		for b := range len(x) / 256 {
			xb := x[b*256 : (b+1)*256]
			var ib []float32
			if im != nil {
				ib = im[(b*256)%cols : (b*256)%cols+256]
			}
			w := make([]float32, 256)
			q6Weights(xb, ib, w)
			ref := make([]byte, 210)
			q6kLlama(xb, w, ref)
			eo, el := q6Err(t, q[b*210:(b+1)*210], xb, ib), q6Err(t, ref, xb, ib)
			if eo > el {
				t.Fatalf("importance=%v superblock %d: error %.6g above llama.cpp's algorithm's %.6g", im != nil, b, eo, el)
			}
			if eo < el {
				better++
			}
			ours += eo
			theirs += el
		}
		y := make([]float32, len(x))
		if err := DequantizeGGML(GGMLQ6_K, q, y); err != nil {
			t.Fatal(err)
		}
		var sx, se float64
		for i := range x {
			sx += float64(x[i]) * float64(x[i])
			se += float64(x[i]-y[i]) * float64(x[i]-y[i])
		}
		rel := math.Sqrt(se / sx)
		t.Logf("Q6_K importance=%v: weighted error %.4g vs llama.cpp's algorithm %.4g (%.2f%% less; %d of %d better); relative RMSE %.4f",
			im != nil, ours, theirs, 100*(1-ours/theirs), better, len(x)/256, rel)
		if !(ours < theirs) {
			t.Errorf("matrix error %.6g not below llama.cpp's algorithm's %.6g", ours, theirs)
		}
		if !(rel > 0.005 && rel < 0.05) {
			t.Errorf("relative RMSE %.4f outside 6-bit range", rel)
		}
	}
	// An all-zero superblock is all zero bytes, as llama.cpp writes it.
	q, err := QuantizeGGML(GGMLQ6_K, make([]float32, 256), 1, 256, Options{})
	if err != nil || !bytes.Equal(q, make([]byte, 210)) {
		t.Errorf("zero superblock: %v %x", err, q)
	}
}
