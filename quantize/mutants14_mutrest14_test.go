package quantize

import (
	"math"
	"testing"
)

// Tests of session 14's mutation pass (mutrest14) over q4.go.

// specFit14 is bestFit's rule as its comment states it, written directly
// (no precomputed rounding offsets, no partial sums), for blocks whose
// largest magnitude is at least 1e-6 (not scaled) and zero importance:
// w_i = x_i², and for L = −6.0, −6.2, …, −8.4 (the float64 −(60+2k)/10)
// q_i = clamp(round-half-away(x_i · (L/xmax)), −8, 7) in float64, the product
// of x_i and the float64 quotient L/xmax; d_L = Σwxq/Σwq², the error
// Σw(x − d_L·q)² computed directly. It returns the first candidate's levels
// and d among those within 1e-10·Σwx² of the smallest error, and the
// smallest gap between that error and the error of a candidate with other
// levels (relative to Σwx²), to show the block is no near tie.
func specFit14(x []float32) (lv []int, d float64, gap float64) {
	var amax, xmax float64
	for _, v := range x {
		if a := math.Abs(float64(v)); a > amax {
			amax, xmax = a, float64(v)
		}
	}
	var sw float64
	for _, v := range x {
		sw += math.Pow(float64(v), 4)
	}
	var qs [][]int
	var ds, es []float64
	for k := 0; k < 13; k++ {
		L := -float64(60+2*k) / 10
		is := L / xmax
		q := make([]int, len(x))
		var sxq, sqq float64
		for i, v := range x {
			q[i] = int(math.Max(-8, math.Min(7, math.Round(float64(v)*is))))
			w := float64(v) * float64(v)
			sxq += w * float64(v) * float64(q[i])
			sqq += w * float64(q[i]*q[i])
		}
		dk := sxq / sqq
		var e float64
		for i, v := range x {
			r := float64(v) - dk*float64(q[i])
			e += float64(v) * float64(v) * r * r
		}
		qs, ds, es = append(qs, q), append(ds, dk), append(es, e)
	}
	minE := math.Inf(1)
	for _, e := range es {
		minE = math.Min(minE, e)
	}
	best := 0
	for es[best] > minE+1e-10*sw {
		best++
	}
	gap = math.Inf(1)
	for k := range es {
		same := true
		for i := range x {
			same = same && qs[k][i] == qs[best][i]
		}
		if !same {
			gap = math.Min(gap, (es[k]-es[best])/sw)
		}
	}
	return qs[best], ds[best], gap
}

// TestQ4BestFitOrder14: a block of an ordinary size is fitted unscaled, its
// levels rounded from x_i·(L/xmax) in float64, as the rule states; the
// tiny-block scaling (x_i/|xmax| times L) must not be applied to it
// (q4.go's `float64(amax) < tinyBlock`; `>=` scales every ordinary block,
// which changes only float64 rounding: no earlier test saw it).
//
// The blocks: xmax = X, the exact fits X·k/8 (levels k·sign at L = −8, the
// fit that wins), a tie X·(2n+1)/16 (exactly half-way at L = −8) and
// X·(m+0.49)/8 (level m·sign up to L = −8, m+1 from −8.2, so the candidates
// past −8 are worse). For these X, x·(−8/X) in float64 lands a rounding
// below the half, so the rule gives the tie the level nearer zero, and
// L = −7.6's levels win; with the scaling, x/|X| = (2n+1)/16 exactly, the
// tie is exact and rounds away, and L = −8 wins with other levels. The
// expected levels and d are specFit14's.
func TestQ4BestFitOrder14(t *testing.T) {
	for _, c := range []struct {
		xbits uint32
		n, m  int
	}{
		{0x3fe321ae, 0, 0}, {0xbfaab9dc, 0, 0}, {0xbffdcaf8, 1, 0}, {0x3f8fcef1, 0, 0}, {0xbfbcd8b6, 0, 0},
	} {
		X := math.Float32frombits(c.xbits)
		x := make([]float32, 32)
		x[0] = X
		for k := 1; k <= 8; k++ {
			x[k] = X * float32(k) / 8 // exact: a small integer over a power of two
		}
		x[9] = X * float32(2*c.n+1) / 16
		x[10] = float32(float64(X) * (float64(c.m) + 0.49) / 8)
		// the tie is exact, and the rule's float64 product misses it
		if float64(x[9])*16 != float64(X)*float64(2*c.n+1) {
			t.Fatalf("X %v: tie element %v not exact", X, x[9])
		}
		if tt := float64(x[9]) * (-8 / float64(X)); math.Abs(tt) >= float64(2*c.n+1)/2 {
			t.Fatalf("X %v: x·(−8/X) = %v, not below the half: the block does not test the order", X, tt)
		}
		want, wd, gap := specFit14(x)
		if gap < 1e-9 {
			t.Fatalf("X %v: a near tie (gap %g): the block does not decide", X, gap)
		}
		q, s, err := Matrix(TypeQ4_0, x, 1, 32, Options{})
		if err != nil {
			t.Fatal(err)
		}
		lv := levels(q, 0)
		d := float64(DecodeScales(s, false)[0])
		for i := range lv {
			if lv[i] != want[i] {
				t.Fatalf("X %v: levels %v, the rule gives %v", X, lv, want)
			}
		}
		if math.Abs(d-wd) > 1e-6*math.Abs(wd) {
			t.Errorf("X %v: d = %v, the rule gives %v", X, d, wd)
		}
	}
}
