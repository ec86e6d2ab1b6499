package quantize

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func gaussRows(rng *rand.Rand, rows, cols int) []float32 {
	w := make([]float32, rows*cols)
	for i := range w {
		w[i] = float32(rng.NormFloat64() * 0.02)
	}
	return w
}

func synthImportance(rng *rand.Rand, cols int) []float32 {
	imp := make([]float32, cols)
	for i := range imp {
		imp[i] = float32(math.Max(0.001, math.Exp(2*rng.NormFloat64())))
	}
	return imp
}

// TestImportanceNilIsPlain: nil and empty importance give the plain x² bytes, and
// Q8_0 and the round rule ignore importance.
func TestImportanceNilIsPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	rows, cols := 5, 128
	w := gaussRows(rng, rows, cols)
	imp := synthImportance(rng, cols)
	for _, c := range []struct {
		name string
		t    Type
		a, b Options
	}{
		{"q4 best nil vs empty", TypeQ4_0, Options{}, Options{Importance: []float32{}}},
		{"q4 round ignores importance", TypeQ4_0, Options{Q4Rule: Round}, Options{Q4Rule: Round, Importance: imp}},
		{"q8 ignores importance", TypeQ8_0, Options{}, Options{Importance: imp}},
	} {
		qa, sa, err := Matrix(c.t, w, rows, cols, c.a)
		if err != nil {
			t.Fatal(err)
		}
		qb, sb, err := Matrix(c.t, w, rows, cols, c.b)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(qa, qb) || !bytes.Equal(sa, sb) {
			t.Errorf("%s: bytes differ", c.name)
		}
	}
}

// TestImportanceLocal: importance changes a block only where it differs. Two
// importance vectors that differ only in block 2's columns give identical bytes for
// every other block; block 2 changes in some rows. Scaling importance by a power of
// two changes nothing.
func TestImportanceLocal(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	rows, cols := 64, 128
	w := gaussRows(rng, rows, cols)
	a := synthImportance(rng, cols)
	b := append([]float32(nil), a...)
	for c := 64; c < 96; c++ {
		b[c] = float32(math.Max(0.001, math.Exp(3*rng.NormFloat64())))
	}
	qa, sa, err := Matrix(TypeQ4_0, w, rows, cols, Options{Importance: a})
	if err != nil {
		t.Fatal(err)
	}
	qb, sb, err := Matrix(TypeQ4_0, w, rows, cols, Options{Importance: b})
	if err != nil {
		t.Fatal(err)
	}
	qp, sp, err := Matrix(TypeQ4_0, w, rows, cols, Options{})
	if err != nil {
		t.Fatal(err)
	}
	changed, plainDiff := 0, 0
	for blk := 0; blk < rows*cols/32; blk++ {
		same := bytes.Equal(qa[16*blk:16*blk+16], qb[16*blk:16*blk+16]) && bytes.Equal(sa[4*blk:4*blk+4], sb[4*blk:4*blk+4])
		if blk%4 != 2 && !same {
			t.Errorf("block %d (row %d, columns %d–%d): changed, want identical", blk, blk/4, 32*(blk%4), 32*(blk%4)+31)
		}
		if blk%4 == 2 && !same {
			changed++
		}
		if !bytes.Equal(qa[16*blk:16*blk+16], qp[16*blk:16*blk+16]) || !bytes.Equal(sa[4*blk:4*blk+4], sp[4*blk:4*blk+4]) {
			plainDiff++
		}
	}
	if changed == 0 {
		t.Errorf("block 2 unchanged in all %d rows, want some changed", rows)
	}
	if plainDiff == 0 {
		t.Errorf("importance changed no block against plain x² weighting")
	}
	t.Logf("block 2 changed in %d of %d rows; %d of %d blocks differ from plain x² weighting", changed, rows, plainDiff, rows*cols/32)

	scaled := make([]float32, cols)
	for i := range a {
		scaled[i] = a[i] * 8
	}
	q8, s8, err := Matrix(TypeQ4_0, w, rows, cols, Options{Importance: scaled})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(q8, qa) || !bytes.Equal(s8, sa) {
		t.Errorf("importance ×8: bytes differ, want identical")
	}
}

// TestImportanceReference checks the weighted fit against the independent model:
// weights imp·sqrt(s² + x²) with s² the row's mean square, the candidate search of
// refCandidates, and the fit's importance-weighted error never above the plain fit's.
func TestImportanceReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	rows, cols := 40, 256
	w := make([]float32, rows*cols)
	for i := range w {
		w[i] = float32(studentT(rng, 3) * 0.01)
	}
	imp := synthImportance(rng, cols)
	q, s, err := Matrix(TypeQ4_0, w, rows, cols, Options{Importance: imp})
	if err != nil {
		t.Fatal(err)
	}
	qp, sp, err := Matrix(TypeQ4_0, w, rows, cols, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, dp := DecodeScales(s, false), DecodeScales(sp, false)
	for r := 0; r < rows; r++ {
		row := w[r*cols : (r+1)*cols]
		var s2 float64
		for _, v := range row {
			s2 += float64(v) * float64(v)
		}
		s2 /= float64(cols)
		for bc := 0; bc < cols/32; bc++ {
			blk := r*cols/32 + bc
			x := row[32*bc : 32*bc+32]
			wt := make([]float64, 32)
			var sw float64
			for i, v := range x {
				wt[i] = float64(imp[32*bc+i]) * math.Sqrt(s2+float64(v)*float64(v))
				sw += wt[i] * float64(v) * float64(v)
			}
			qs, ds, errs := refCandidates(x, wt)
			minErr := math.Inf(1)
			for _, e := range errs {
				minErr = math.Min(minErr, e)
			}
			best := 0
			for errs[best] > minErr+1e-10*sw {
				best++
			}
			lv := levels(q, blk)
			if !slices.Equal(lv, qs[best]) || math.Abs(float64(d[blk])-ds[best]) > 1e-6*math.Abs(ds[best]) {
				t.Fatalf("row %d block %d: got d=%v %v, want candidate %d: d=%v %v", r, bc, d[blk], lv, best, ds[best], qs[best])
			}
			got := weightedErr(x, wt, float64(d[blk]), lv)
			plain := weightedErr(x, wt, float64(dp[blk]), levels(qp, blk))
			if got > plain+1e-6*sw {
				t.Fatalf("row %d block %d: weighted error %g above the plain fit's %g", r, bc, got, plain)
			}
		}
	}
}

// TestImportanceZero: a block whose importance is zero everywhere has no
// candidate with Σ w·q² > 0, so bestFit's rule gives d = 0 and every level 0
// (nibble 8), whatever the weights; the next block, with importance, is
// quantized as usual.
func TestImportanceZero(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	x := gaussRows(rng, 1, 64)
	imp := make([]float32, 64)
	for i := 32; i < 64; i++ {
		imp[i] = 1
	}
	q, s, err := Matrix(TypeQ4_0, x, 1, 64, Options{Importance: imp})
	if err != nil {
		t.Fatal(err)
	}
	d := DecodeScales(s, false)
	if d[0] != 0 || !bytes.Equal(q[:16], bytes.Repeat([]byte{0x88}, 16)) {
		t.Errorf("zero-importance block: d = %v, levels %v; want 0 and all 0", d[0], levels(q, 0))
	}
	if d[1] == 0 {
		t.Errorf("block with importance: d = 0")
	}
}
