package quantize

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"
)

// Tests written from the mutants of the K-quant and IQ4 quantizers
// (q50q.go, q6kq.go, qkq.go, iq4q.go) found alive by
// scripts/mutschema/mutschema.sh (docs/RELIABILITY.md, session 13). The
// weights are the files' documented rules written out again in float64, the
// dequantized values come from the gguf-py ports in ggml_test.go, and the
// checks are the documented rules: the levels are the nearest for the scales
// as stored (checked by trying every level), and the block's weighted error
// is no larger than that of any candidate the rule says is tried.

// wErr13 is Σ w·(x − y)² in float64.
func wErr13(x, y []float32, w []float64) float64 {
	var e float64
	for j := range x {
		r := float64(x[j]) - float64(y[j])
		e += w[j] * r * r
	}
	return e
}

// q50Weights13 is q50q.go's weight rule: qw·sqrt(σ² + x²), σ² = Σx²/32 of
// the block, or x² without importance.
func q50Weights13(x, qw []float32) []float64 {
	var s2 float64
	for _, v := range x {
		s2 += float64(v) * float64(v)
	}
	s2 /= 32
	w := make([]float64, len(x))
	for j, v := range x {
		w[j] = float64(v) * float64(v)
		if qw != nil {
			w[j] = float64(qw[j]) * math.Sqrt(s2+float64(v)*float64(v))
		}
	}
	return w
}

// q50Levels13 reads the 32 levels (−16…15) of a Q5_0 block from its bytes.
func q50Levels13(blk []byte) [32]int {
	qh := binary.LittleEndian.Uint32(blk[2:6])
	var l [32]int
	for i := range 32 {
		l[i] = int((blk[6+i%16]>>(4*(i/16)))&15|uint8((qh>>i)&1)<<4) - 16
	}
	return l
}

// nearestClamped13 is the level in [lo, hi] nearest to v/c, found by trying
// every one (the lower on a tie does not matter: the error is the same).
func nearestClamped13(v, c float32, lo, hi int) int {
	best, be := lo, math.Inf(1)
	for l := lo; l <= hi; l++ {
		if e := math.Abs(float64(v) - float64(float32(c*float32(l)))); e < be {
			best, be = l, e
		}
	}
	return best
}

// TestMutants13Q5_0Fit: Q5_0 on random rows with and without importance
// (some importance values zero). Every level is the nearest of all 32 to
// x/d for the d as stored, and each block's weighted error (weights of the
// file's rule, y from gguf-py's dequantizer) is no larger than that of any
// candidate the rule names: make_qx_quants' scale and the wide search's,
// each rounded to binary16 and its two neighbours, with the nearest levels.
func TestMutants13Q5_0Fit(t *testing.T) {
	r := rand.New(rand.NewSource(1301))
	const rows, cols = 4, 256
	x := testRows(r, rows, cols)
	imp := make([]float32, cols)
	for i := range imp {
		imp[i] = float32(math.Exp(2 * r.NormFloat64()))
		if i%11 == 0 {
			imp[i] = 0
		}
	}
	for _, im := range [][]float32{nil, imp} {
		q, err := QuantizeGGML(GGMLQ5_0, x, rows, cols, Options{Importance: im})
		if err != nil {
			t.Fatal(err)
		}
		for b := range len(x) / 32 {
			xb, blk := x[32*b:32*b+32], q[22*b:22*b+22]
			var qw []float32
			if im != nil {
				qw = im[(32*b)%cols : (32*b)%cols+32]
			}
			w := q50Weights13(xb, qw)
			d, lv := pyF16(blk), q50Levels13(blk)
			for j, v := range xb {
				if l := nearestClamped13(v, d, -16, 15); d != 0 && math.Abs(float64(v)-float64(d*float32(lv[j]))) > math.Abs(float64(v)-float64(d*float32(l)))+1e-6*float64(abs32(d)) {
					t.Fatalf("importance=%v block %d element %d: level %d for x/d = %v, nearest %d", im != nil, b, j, lv[j], v/d, l)
				}
			}
			e := wErr13(xb, pyQ5_0(blk), w)
			w32 := make([]float32, 32)
			for j := range w32 {
				w32[j] = float32(w[j])
			}
			var L [32]uint8
			for _, s := range []float32{makeQxN(xb, w32, L[:], 16), wideQxN(xb, w32, 16)} {
				for _, c := range f16Neighbours(s) {
					y := make([]float32, 32)
					for j, v := range xb {
						y[j] = c * float32(nearestClamped13(v, c, -16, 15))
					}
					if ec := wErr13(xb, y, w); e > ec*(1+1e-6)+1e-30 {
						t.Fatalf("importance=%v block %d: error %.8g (d = %v) above candidate d = %v's %.8g", im != nil, b, e, d, c, ec)
					}
				}
			}
		}
	}
}

// TestMutants13Q5_0ZeroImportance: a block whose importance is all zero has
// every candidate's error 0; the first candidate of the smallest error is
// kept, make_qx_quants' scale, which is 0 when Σw·l² = 0: d = 0 and the
// block dequantizes to zeros (not the binary16 neighbour 2^-24 of 0 with
// levels that are noise).
func TestMutants13Q5_0ZeroImportance(t *testing.T) {
	r := rand.New(rand.NewSource(1302))
	x := testRows(r, 1, 64)
	imp := make([]float32, 64)
	for i := 32; i < 64; i++ {
		imp[i] = 1
	}
	q, err := QuantizeGGML(GGMLQ5_0, x, 1, 64, Options{Importance: imp})
	if err != nil {
		t.Fatal(err)
	}
	if d := binary.LittleEndian.Uint16(q); d != 0 {
		t.Errorf("zero-importance block: d bits %#04x, want 0", d)
	}
	for j, v := range pyQ5_0(q[:22]) {
		if v != 0 {
			t.Errorf("zero-importance block: element %d dequantizes to %v", j, v)
		}
	}
	if pyF16(q[22:]) == 0 {
		t.Error("block with importance 1: d = 0")
	}
}
