package quantize

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/x448/float16"
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

// qxCands13 lists make_qx_quants' 19 candidate level sets for x (levels in
// [−nmax, nmax−1]): iscale = −(nmax + 0.1·is)/max for is = −9…9, max the
// (first) element of the largest magnitude, each level the nearest integer
// (half to even) to iscale·x, clamped; the float32 arithmetic the rule names.
func qxCands13(x []float32, nmax int) [][]int {
	var mx, amax float32
	for _, v := range x {
		if a := float32(math.Abs(float64(v))); a > amax {
			amax, mx = a, v
		}
	}
	var out [][]int
	for is := -9; is <= 9; is++ {
		iscale := -(float32(nmax) + float32(0.1*float32(is))) / mx
		l := make([]int, len(x))
		for i, v := range x {
			l[i] = max(-nmax, min(nmax-1, int(math.RoundToEven(float64(float32(iscale*v))))))
		}
		out = append(out, l)
	}
	return out
}

// lsq13 returns Σw·x·l and Σw·l² in float64.
func lsq13(x []float32, w []float64, l []int) (sxl, sl2 float64) {
	for i, v := range x {
		sxl += w[i] * float64(v) * float64(l[i])
		sl2 += w[i] * float64(l[i]) * float64(l[i])
	}
	return sxl, sl2
}

// testWeights13 gives n weights: x² (imp false) or positive random values.
func testWeights13(r *rand.Rand, x []float32, imp bool) ([]float32, []float64) {
	w32, w := make([]float32, len(x)), make([]float64, len(x))
	for i, v := range x {
		w32[i] = float32(v * v)
		if imp {
			w32[i] = float32(math.Exp(r.NormFloat64()))
		}
		w[i] = float64(w32[i])
	}
	return w32, w
}

// TestMutants13MakeQx: make_qx_quants (makeQxN) on random blocks of 16
// (nmax 32, Q6_K's) and 32 (nmax 16, Q5_0's): its levels are one of the 19
// candidate sets, the one of the largest (Σwxl)²/Σwl² (the smallest
// least-squares error), and the scale is that set's least-squares scale
// Σwxl/Σwl²; a block of magnitude below 1e-15 gets scale 0, one of exactly
// float32(1e-15) does not.
func TestMutants13MakeQx(t *testing.T) {
	r := rand.New(rand.NewSource(1303))
	for _, c := range []struct{ n, nmax int }{{16, 32}, {32, 16}} {
		for k := range 600 {
			x := testRows(r, 1, c.n)
			w32, w := testWeights13(r, x, k%2 == 1)
			L := make([]uint8, c.n)
			s := makeQxN(x, w32, L, c.nmax)
			got := make([]int, c.n)
			for i := range L {
				got[i] = int(L[i]) - c.nmax
			}
			best, found := math.Inf(-1), false
			for _, l := range qxCands13(x, c.nmax) {
				sxl, sl2 := lsq13(x, w, l)
				if sl2 > 0 {
					best = max(best, sxl*sxl/sl2)
				}
				same := true
				for i := range l {
					same = same && l[i] == got[i]
				}
				found = found || same
			}
			sxl, sl2 := lsq13(x, w, got)
			if !found || !(sxl*sxl/sl2 >= best*(1-1e-5)) {
				t.Fatalf("n %d case %d: levels %v (one of the candidates: %v) criterion %.8g, best %.8g", c.n, k, got, found, sxl*sxl/sl2, best)
			}
			if want := sxl / sl2; math.Abs(float64(s)-want) > 1e-5*math.Abs(want) {
				t.Fatalf("n %d case %d: scale %v, least squares of its levels %v", c.n, k, s, want)
			}
		}
		one := make([]float32, c.n)
		for i := range one {
			one[i] = 1
		}
		L := make([]uint8, c.n)
		x := make([]float32, c.n)
		x[3] = float32(1e-15)
		if s := makeQxN(x, one, L, c.nmax); !(s < 0) || L[3] != 0 {
			t.Errorf("n %d, max float32(1e-15): scale %v, level %d, want −1e-15/%d and 0 (−nmax)", c.n, s, L[3], c.nmax)
		}
		x[3] = math.Nextafter32(float32(1e-15), 0)
		if s := makeQxN(x, one, L, c.nmax); s != 0 {
			t.Errorf("n %d, max below 1e-15: scale %v, want 0", c.n, s)
		}
	}
}

// wideCands13 lists the wide search's scales (wideQxN's comment): for k in
// −40…40, levels nearest to x·id with id = −(nmax + 0.05k)/max, the
// least-squares scale s of those (float64 sums, stored float32), then id =
// 1/s, three scales per k; and errError13 is the error of a scale with the
// nearest levels, as the rule measures it.
func wideCands13(x []float32, w []float64, nmax int) []float32 {
	var mx, amax float32
	for _, v := range x {
		if a := float32(math.Abs(float64(v))); a > amax {
			amax, mx = a, v
		}
	}
	var out []float32
	for k := -40; k <= 40; k++ {
		id := -(float32(nmax) + float32(0.05*float32(k))) / mx
		for range 3 {
			l := make([]int, len(x))
			for i, v := range x {
				l[i] = max(-nmax, min(nmax-1, int(math.RoundToEven(float64(float32(id*v))))))
			}
			sxl, sl2 := lsq13(x, w, l)
			if !(sl2 > 0) {
				break
			}
			s := float32(sxl / sl2)
			out = append(out, s)
			id = 1 / s
		}
	}
	return out
}

func scaleErr13(x []float32, w []float64, s float32, nmax int) float64 {
	var e float64
	for i, v := range x {
		l := float32(max(-nmax, min(nmax-1, int(math.RoundToEven(float64(float32(v/s)))))))
		r := float64(v) - float64(float32(s*l))
		e += w[i] * r * r
	}
	return e
}

// TestMutants13WideQx: the wide search returns one of its candidate scales
// and no candidate has a smaller error; an all-zero block gives 0.
func TestMutants13WideQx(t *testing.T) {
	r := rand.New(rand.NewSource(1304))
	for _, c := range []struct{ n, nmax int }{{16, 32}, {32, 16}} {
		for k := range 302 {
			x := testRows(r, 1, c.n)
			w32, w := testWeights13(r, x, k%2 == 1)
			if k >= 300 {
				// Blocks whose best candidate is only reached from k = 40
				// (its largest element has a small weight): found by a
				// random search with k = 40 left out.
				x, w32 = make([]float32, c.n), make([]float32, c.n)
				for i := range w32 {
					w32[i] = 1
				}
				if c.n == 16 {
					copy(x, []float32{1.2103535, 0.9803106, 0.059636004})
					copy(w32, []float32{0.0064797774, 1, 0.8286062})
					if k == 301 {
						copy(x, []float32{1.2245243, -0.59508646, -0.100124784})
						copy(w32, []float32{0.010971361, 0.8739355, 1})
					}
				} else {
					copy(x, []float32{-0.872534, 1.2543199, -0.53399897, 0.21300064})
					copy(w32, []float32{0.07347914, 0.00060150796, 0.16524057, 1})
				}
				for i := range w {
					w[i] = float64(w32[i])
				}
			}
			s := wideQxN(x, w32, c.nmax)
			e, found := scaleErr13(x, w, s, c.nmax), false
			for _, cs := range wideCands13(x, w, c.nmax) {
				found = found || cs == s
				if ec := scaleErr13(x, w, cs, c.nmax); e > ec*(1+1e-9) {
					t.Fatalf("n %d case %d: scale %v error %.10g, candidate %v's %.10g", c.n, k, s, e, cs, ec)
				}
			}
			if !found {
				t.Fatalf("n %d case %d: scale %v is none of the candidates", c.n, k, s)
			}
		}
		if s := wideQxN(make([]float32, c.n), make([]float32, c.n), c.nmax); s != 0 {
			t.Errorf("zero block: %v", s)
		}
		one := make([]float32, c.n)
		for i := range one {
			one[i] = 1
		}
		x := make([]float32, c.n)
		x[5] = float32(1e-15)
		if s := wideQxN(x, one, c.nmax); !(s < 0) {
			t.Errorf("n %d, max float32(1e-15): scale %v, want negative", c.n, s)
		}
		x[5] = math.Nextafter32(float32(1e-15), 0)
		if s := wideQxN(x, one, c.nmax); s != 0 {
			t.Errorf("n %d, max below 1e-15: scale %v, want 0", c.n, s)
		}
	}
}

// f16Near13 is a scale rounded to binary16 and the binary16 values of the
// next smaller and next larger magnitude (itself at 0 and at 65504 or Inf),
// found from the float16 package's conversion, not from f16Neighbours.
func f16Near13(d float32) []float32 {
	h := float16.Fromfloat32(d).Bits()
	out := []float32{float16.Frombits(h).Float32()}
	if m := h & 0x7fff; m < 0x7c00 {
		if m > 0 {
			out = append(out, float16.Frombits(h-1).Float32())
		}
		if m < 0x7bff {
			out = append(out, float16.Frombits(h+1).Float32())
		}
	}
	return out
}

// maxSigned13 is the first value of the largest magnitude.
func maxSigned13(s []float32) float32 {
	var m, am float32
	for _, v := range s {
		if a := float32(math.Abs(float64(v))); a > am {
			am, m = a, v
		}
	}
	return m
}

// q6Sub13 is one Q6_K sub-block's error for sub-scale dd with the nearest
// levels in [−32, 31].
func q6Sub13(x []float32, w []float64, dd float32) float64 {
	y := make([]float32, len(x))
	if dd != 0 {
		for i, v := range x {
			y[i] = float32(dd * float32(nearestClamped13(v, dd, -32, 31)))
		}
	}
	return wErr13(x, y, w)
}

// checkNearest13 fails unless every y_i = dd_i·l_i has the level nearest to
// x_i of [lo, hi] (tried one by one) for its sub-scale dd_i.
func checkNearest13(t *testing.T, what string, x, y, dd []float32, lo, hi int) {
	t.Helper()
	for i, v := range x {
		if dd[i] == 0 {
			if y[i] != 0 {
				t.Fatalf("%s element %d: %v with scale 0", what, i, y[i])
			}
			continue
		}
		l := nearestClamped13(v, dd[i], lo, hi)
		if math.Abs(float64(v)-float64(y[i])) > math.Abs(float64(v)-float64(float32(dd[i]*float32(l))))+1e-6*math.Abs(float64(dd[i])) {
			t.Fatalf("%s element %d: %v for %v, level %d (%v) is nearer", what, i, y[i], v, l, dd[i]*float32(l))
		}
	}
}

// q6Scales13 reads d·sc per element of a Q6_K superblock.
func q6Scales13(blk []byte) []float32 {
	d := pyF16(blk[208:210])
	dd := make([]float32, 256)
	for i := range dd {
		dd[i] = float32(d * float32(int8(blk[192+i/16])))
	}
	return dd
}

// TestMutants13Q6K: the three Q6_K fits on random superblocks, with the
// weights (qw, or x²) written out again. llama.cpp's (q6kLlama): d =
// binary16(max/−128) for the make_qx_quants sub-scale of the largest
// magnitude, each sub-scale min(127, nearest(−128·s/max)), the levels the
// nearest for d·sc. The wide one (q6kWide): no error above the best of its
// candidates (d from the wide sub-scales' largest over −128, −127.5, −127,
// binary16 and neighbours; per sub-block the nearest sub-scale and its two
// neighbours, the levels the nearest), levels the nearest. q6kBlock: the
// smaller error of the two, llama.cpp's bytes on a tie.
func TestMutants13Q6K(t *testing.T) {
	r := rand.New(rand.NewSource(1305))
	for k := range 12 {
		x := testRows(r, 1, 256)
		if k < 2 {
			// Sub-blocks 0 and 1 the largest, mirror images of each other
			// (the same weights): their sub-scales are s and −s, and the
			// first, s, sets d.
			for i := range 16 {
				x[i] *= 10
				x[16+i] = -x[i]
			}
		}
		w32, w := testWeights13(r, x, k%2 == 1)
		if k < 2 {
			copy(w32[16:32], w32[:16])
			copy(w[16:32], w[:16])
		}
		var ls, ws [16]float32
		var L [16]uint8
		for ib := range 16 {
			ls[ib] = makeQx(x[16*ib:16*ib+16], w32[16*ib:16*ib+16], L[:])
			ws[ib] = wideQx(x[16*ib:16*ib+16], w32[16*ib:16*ib+16])
		}
		ll := make([]byte, 210)
		q6kLlama(x, w32, ll)
		m := maxSigned13(ls[:])
		is := float32(-128) / m
		if d := pyF16(ll[208:]); d != float16.Fromfloat32(1/is).Float32() {
			t.Fatalf("case %d: llama d %v, want binary16(%v)", k, d, 1/is)
		}
		for ib := range 16 {
			if sc, want := int8(ll[192+ib]), min(127, int(math.RoundToEven(float64(float32(is*ls[ib]))))); int(sc) != want {
				t.Fatalf("case %d sub-block %d: llama sub-scale %d, want %d", k, ib, sc, want)
			}
		}
		checkNearest13(t, "llama", x, pyQ6_K(ll), q6Scales13(ll), -32, 31)

		wd := make([]byte, 210)
		q6kWide(x, w32, wd)
		mw, best := maxSigned13(ws[:]), math.Inf(1)
		for _, top := range []float32{128, 127.5, 127} {
			for _, d := range f16Near13(mw / -top) {
				var total float64
				for ib := range 16 {
					s0 := int(math.RoundToEven(float64(float32(ws[ib] / d))))
					be := math.Inf(1)
					for s := s0 - 1; s <= s0+1; s++ {
						be = min(be, q6Sub13(x[16*ib:16*ib+16], w[16*ib:16*ib+16], float32(d*float32(max(-128, min(127, s))))))
					}
					total += be
				}
				best = min(best, total)
			}
		}
		if d, ok := pyF16(wd[208:]), false; true {
			for _, top := range []float32{128, 127.5, 127} {
				for _, c := range f16Near13(mw / -top) {
					ok = ok || c == d
				}
			}
			if !ok {
				t.Fatalf("case %d: wide d %v is none of binary16(%v/−top) and neighbours", k, d, mw)
			}
		}
		ew := wErr13(x, pyQ6_K(wd), w)
		if ew > best*(1+1e-9) {
			t.Fatalf("case %d: wide fit's error %.10g above its best candidate's %.10g", k, ew, best)
		}
		checkNearest13(t, "wide", x, pyQ6_K(wd), q6Scales13(wd), -32, 31)

		blk := make([]byte, 210)
		var qw []float32
		if k%2 == 1 {
			qw = w32
		}
		q6kBlock(x, qw, blk)
		el := wErr13(x, pyQ6_K(ll), w)
		want := ll
		if ew < el {
			want = wd
		}
		if string(blk) != string(want) {
			t.Fatalf("case %d: q6kBlock kept neither the smaller-error fit (llama %.10g, wide %.10g)", k, el, ew)
		}
	}
}

// qkWeights13 is qkq.go's weight rule: with importance qw·sqrt(σ² + x²), σ²
// = 2Σx²/256 over the superblock; without, the sub-block of 32's
// sqrt(Σx²/32) + |x|.
func qkWeights13(x, qw []float32) []float64 {
	w := make([]float64, len(x))
	var s2 float64
	for _, v := range x {
		s2 += float64(v) * float64(v)
	}
	s2 *= 2.0 / 256
	for ib := 0; ib < len(x); ib += 32 {
		var sb float64
		for _, v := range x[ib : ib+32] {
			sb += float64(v) * float64(v)
		}
		for j := ib; j < ib+32; j++ {
			v := float64(x[j])
			if qw != nil {
				w[j] = float64(qw[j]) * math.Sqrt(s2+v*v)
			} else {
				w[j] = math.Sqrt(sb/32) + math.Abs(v)
			}
		}
	}
	return w
}

// fitCands13 lists fitScaleMin's candidates (its comment and qkq.go's):
// lo = min(min x, 0), hi = max x; for k = 0…40 the scale 1/is, is = (nmax −
// 1 + 0.05k)/(hi − lo), and the min −lo; three times: levels the nearest of
// [0, nmax] to (x + m)/s, then the weighted least-squares line x ≈ ts·l +
// tm (tm > 0 refitted with tm = 0), stopping at a singular fit or ts ≤ 0;
// each (ts, tm) with its error on those levels. All in float64 but for the
// float32 scale and min the next round starts from.
func fitCands13(x []float32, w []float64, nmax int) (ts, tm, e []float64) {
	lo, hi := float32(0), x[0]
	for _, v := range x {
		lo, hi = min(lo, v), max(hi, v)
	}
	var sw, sx float64
	for j, v := range x {
		sw += w[j]
		sx += w[j] * float64(v)
	}
	for k := 0; k <= 40; k++ {
		is := (float32(nmax) + (-1 + float32(0.05*float32(k)))) / (hi - lo)
		cs, cm := 1/is, -lo
		for range 3 {
			var sl, sl2, sxl float64
			L := make([]float64, len(x))
			for j, v := range x {
				L[j] = float64(max(0, min(nmax, int(math.RoundToEven(float64(float32(float32(v+cm)/cs)))))))
				sl += w[j] * L[j]
				sl2 += w[j] * L[j] * L[j]
				sxl += w[j] * L[j] * float64(v)
			}
			D := sw*sl2 - sl*sl
			if !(D > 0) {
				break
			}
			a, b := (sw*sxl-sx*sl)/D, (sl2*sx-sl*sxl)/D
			if b > 0 {
				a, b = sxl/sl2, 0
			}
			if !(a > 0) {
				break
			}
			var ee float64
			for j, v := range x {
				r := float64(v) - (a*L[j] + b)
				ee += w[j] * r * r
			}
			ts, tm, e = append(ts, a), append(tm, b), append(e, ee)
			cs, cm = float32(a), float32(-b)
		}
	}
	return ts, tm, e
}

// TestMutants13QKWeights: qkWeights against the rule, with and without
// importance.
func TestMutants13QKWeights(t *testing.T) {
	r := rand.New(rand.NewSource(1306))
	x := testRows(r, 1, 256)
	qw := make([]float32, 256)
	for i := range qw {
		qw[i] = float32(math.Exp(r.NormFloat64()))
	}
	for _, im := range [][]float32{nil, qw} {
		w := make([]float32, 256)
		qkWeights(x, im, w)
		for j, want := range qkWeights13(x, im) {
			if math.Abs(float64(w[j])-want) > 1e-6*want {
				t.Fatalf("importance=%v element %d: weight %v, want %v", im != nil, j, w[j], want)
			}
		}
	}
}

// fitHard13 are sub-blocks (x, weights) on which fitScaleMin's degenerate
// cases matter: weights 0 or spread over many binades, so the float64 sums
// are inexact and a least-squares intercept of exactly 0, a determinant of
// exactly 0 with a nonzero numerator, or a slope of exactly 0 occurs.
// Found by a random search comparing the rule with each changed case.
var fitHard13 = [][2][]float32{
	{{0, 0.2, 0.2, 0.1, 0.2, 0, 0.1, 0.2, 0.1, 0, 0, 0.2, 0.1, 0, 0.2, 0, 0.1, 0, 0, 0, 0.2, 0.1, 0, 0.2, 0.2, 0, 0, 0.2, 0.1, 0.1, 0, 0},
		{5.1259635e-15, 1.346122e-05, 0, 0, 0, 0, 0, 0, 0, 4.814539e-05, 0, 0, 0, 0, 0, 0, 0, 0, 0.0006897308, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
	{{0.2, 0, 0.1, 0, 0, 0.2, 0.1, 0, 0, 0.2, 0.1, 0, 0, 0.1, 0.1, 0.1, 0.2, 0.1, 0, 0.2, 0.2, 0.2, 0.1, 0, 0.2, 0.2, 0, 0.2, 0, 0, 0.2, 0},
		{5.5311853e-06, 0, 0, 0, 0, 1.3899704e-06, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1.7789013e-13, 0, 0, 6.9265993e-09, 0, 0, 2.199556e-09, 0, 0, 0, 0}},
	{{0.1, 0.2, 0.1, 0, 0.2, 0, 0.2, 0.1, 0.2, 0.2, 0.1, 0, 0.2, 0, 0, 0.1, 0.1, 0, 0.1, 0.2, 0.2, 0, 0, 0.1, 0.2, 0.2, 0.2, 0.1, 0.1, 0.2, 0, 0.1},
		{4.2227752e-17, 6.358487e-18, 1.5587976e-16, 0, 0, 0, 0, 0, 0, 4.623727e-09, 0, 0, 0.42339087, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
}

// TestMutants13FitScaleMin: fitScaleMin on random sub-blocks (nmax 15 and
// 31, random positive weights, and fitHard13's) returns the scale and min of its
// smallest-error candidate (with none, the min/max fit (hi − lo)/nmax, −lo);
// a constant non-positive block gives (0, −x).
func TestMutants13FitScaleMin(t *testing.T) {
	r := rand.New(rand.NewSource(1307))
	for _, nmax := range []int{15, 31} {
		for k := range 300 {
			x := testRows(r, 1, 32)
			if k%3 == 0 {
				for j := range x {
					x[j] = abs32(x[j]) + 0.001 // all positive: the min is clamped at 0
				}
			}
			w32, w := testWeights13(r, x, true)
			if nmax == 31 && k < len(fitHard13) {
				x, w32 = fitHard13[k][0], fitHard13[k][1]
				for j := range w {
					w[j] = float64(w32[j])
				}
			}
			s, mn := fitScaleMin(x, w32, nmax)
			ts, tm, e := fitCands13(x, w, nmax)
			best := math.Inf(1)
			for _, v := range e {
				best = min(best, v)
			}
			ok := false
			for i := range e {
				ok = ok || e[i] <= best*(1+1e-9) && s == float32(ts[i]) && mn == float32(-tm[i])
			}
			if len(e) == 0 { // no line: the min/max fit
				lo, hi := float32(0), x[0]
				for _, v := range x {
					lo, hi = min(lo, v), max(hi, v)
				}
				ok = s == (hi-lo)/float32(nmax) && mn == -lo
			}
			if !ok {
				t.Fatalf("nmax %d case %d: (s, mn) = (%v, %v), not a smallest-error candidate (error %.10g)", nmax, k, s, mn, best)
			}
		}
		for _, c := range []float32{-0.5, 0} {
			x := make([]float32, 32)
			for j := range x {
				x[j] = c
			}
			if s, mn := fitScaleMin(x, x, nmax); s != 0 || mn != -c {
				t.Errorf("constant %v: (%v, %v), want (0, %v)", c, s, mn, -c)
			}
		}
	}
}

// TestMutants13QK: Q4_K and Q5_K superblocks (random, with and without
// importance): every level is the nearest of [0, nmax] for the sub-block's
// d·sc and dmin·m as stored, and the error (rule's weights, gguf-py's
// dequantizer) is no larger than the best the rule's search can reach: d and
// dmin each binary16(max/63) or a neighbour (d not negative, not 0 unless
// every sub-scale is, dmin not negative), per sub-block sc and m the
// nearest of s/d and mn/dmin or a neighbour (clamped to [0, 63]), levels the
// nearest, with the sub-block fits of fitScaleMin (checked above).
func TestMutants13QK(t *testing.T) {
	r := rand.New(rand.NewSource(1308))
	for k := range 8 {
		five := k%4 >= 2
		nmax, bb := 15, 144
		if five {
			nmax, bb = 31, 176
		}
		x := testRows(r, 1, 256)
		var qw []float32
		if k%2 == 1 {
			qw = make([]float32, 256)
			for i := range qw {
				qw[i] = float32(math.Exp(r.NormFloat64()))
			}
		}
		w := qkWeights13(x, qw)
		w32 := make([]float32, 256)
		qkWeights(x, qw, w32)
		var ss, ms [8]float32
		var maxS, maxM float32
		for ib := range 8 {
			ss[ib], ms[ib] = fitScaleMin(x[32*ib:32*ib+32], w32[32*ib:32*ib+32], nmax)
			maxS, maxM = max(maxS, ss[ib]), max(maxM, ms[ib])
		}
		best := math.Inf(1)
		for _, d := range f16Near13(maxS / 63) {
			if d < 0 || maxS > 0 && d == 0 {
				continue
			}
			for _, dmin := range f16Near13(maxM / 63) {
				if dmin < 0 {
					continue
				}
				var total float64
				for ib := range 8 {
					s0, m0 := 0, 0
					if d > 0 {
						s0 = int(math.RoundToEven(float64(float32(ss[ib] / d))))
					}
					if dmin > 0 {
						m0 = int(math.RoundToEven(float64(float32(ms[ib] / dmin))))
					}
					be := math.Inf(1)
					for sc := s0 - 1; sc <= s0+1; sc++ {
						for m := m0 - 1; m <= m0+1; m++ {
							d1, m1 := float32(d*float32(max(0, min(63, sc)))), float32(dmin*float32(max(0, min(63, m))))
							y := make([]float32, 32)
							for j, v := range x[32*ib : 32*ib+32] {
								l := 0
								if d1 > 0 {
									l = nearestClamped13(v+m1, d1, 0, nmax)
								}
								y[j] = float32(d1*float32(l)) - m1
							}
							be = min(be, wErr13(x[32*ib:32*ib+32], y, w[32*ib:32*ib+32]))
						}
					}
					total += be
				}
				best = min(best, total)
			}
		}
		q, err := QuantizeGGML(map[bool]GGMLType{false: GGMLQ4_K, true: GGMLQ5_K}[five], x, 1, 256, Options{Importance: qw})
		if err != nil || len(q) != bb {
			t.Fatal(err, len(q))
		}
		y := pyQK(q, five)
		if e := wErr13(x, y, w); e > best*(1+1e-9) {
			t.Fatalf("case %d (five %v): error %.10g above the search's best %.10g", k, five, e, best)
		}
		d, dmin := pyF16(q[0:2]), pyF16(q[2:4])
		sc, mn := pyScaleMin(q[4:16])
		for j, v := range x {
			d1, m1 := float32(d*float32(sc[j/32])), float32(dmin*float32(mn[j/32]))
			if d1 == 0 {
				if y[j] != -m1 {
					t.Fatalf("case %d element %d: %v with sub-scale 0", k, j, y[j])
				}
				continue
			}
			l := nearestClamped13(v+m1, d1, 0, nmax)
			if math.Abs(float64(v)-float64(y[j])) > math.Abs(float64(v)-float64(float32(float32(d1*float32(l))-m1)))+1e-6*float64(d1) {
				t.Fatalf("case %d (five %v) element %d: %v for %v, level %d is nearer", k, five, j, y[j], v, l)
			}
		}
	}
}

// TestMutants13MakeQxTies: make_qx_quants keeps the first candidate of the
// best criterion in its order (the base iscale −nmax/max, then is = −9…9,
// a candidate replacing the best only when (Σwxl)² > best·Σwl² in float32):
// two blocks where several candidates tie exactly and differ only at an
// element of weight 0, whose level then shows which was kept.
func TestMutants13MakeQxTies(t *testing.T) {
	// One weighted element, x0 = −1: every candidate's criterion is l0²/l0²,
	// exactly the base's (best = (1/32)·32 = 1), so none replaces it; x1
	// (weight 0) keeps the base level round(0.9·32) = 29.
	x, w := make([]float32, 16), make([]float32, 16)
	x[0], x[1] = -1, 0.9
	w[0] = 1
	L := make([]uint8, 16)
	makeQxN(x, w, L, 32)
	if L[1] != 29+32 {
		t.Errorf("single weighted element: level %d at the weight-0 element, want 29 (the base's)", int(L[1])-32)
	}
	// x = (−1, 0.3, 0.496), weights (1, 1, 0): levels (l0, l1) are (−32, 10)
	// for the base and is ≥ −3, (−32, 9) for is = −5, −4 and (−31, 9), the
	// best, for is = −9…−6, four candidates of the same sums; the weight-0
	// element's level round(0.496·(32 + 0.1·is)) is 15 for is = −9, −8 and
	// 16 for −7, −6. Which is kept: is = −9's, unless (with the float32 sums
	// of the set) a tie counts as better, when the last, is = −6's.
	x, w = make([]float32, 16), make([]float32, 16)
	x[0], x[1], x[2] = -1, 0.3, 0.496
	w[0], w[1] = 1, 1
	sumlx := float32(31) + float32(float32(0.3)*9)
	suml2 := float32(961 + 81)
	best := float32(float32(sumlx/suml2) * sumlx)
	want := 15
	if float32(sumlx*sumlx) > float32(best*suml2) {
		want = 16
	}
	makeQxN(x, w, L, 32)
	if got := [3]int{int(L[0]) - 32, int(L[1]) - 32, int(L[2]) - 32}; got != [3]int{-31, 9, want} {
		t.Errorf("tied candidates: levels %v, want [-31 9 %d]", got, want)
	}
}

// TestMutants13WideQxTies: x = (−1, 0, …), weights 1: the candidates are
// s = 1/30 (k = −40…−11: id = 30…31.45 gives level −30 or −31, so 1/30 or
// 1/31), 1/31 and 1/32, and each reproduces −1 exactly in float32 (checked
// here), so all errors are 0; the first candidate in k's order is kept.
func TestMutants13WideQxTies(t *testing.T) {
	for _, l := range []float32{30, 31, 32} {
		if s := float32(1 / float64(l)); float32(s*-l) != -1 {
			t.Fatalf("precondition: float32(1/%v)·−%v = %v", l, l, s*-l)
		}
	}
	x, w := make([]float32, 16), make([]float32, 16)
	x[0] = -1
	for i := range w {
		w[i] = 1
	}
	if s := wideQxN(x, w, 32); s != float32(1.0/30) {
		t.Errorf("scale %v, want the first candidate's 1/30", s)
	}
}

// TestMutants13Q6KTies: q6kBlock keeps llama.cpp's bytes when the wide fit's
// error is the same. x = (−0.9375, 0, …): llama.cpp's sub-scale is
// 0.9375/32 = 15/512 (level −32), d = −15/65536 (exact in binary16), sc =
// −128; the wide search's first candidate (id = 30/0.9375 = 32, level −30)
// is 1/32, d = −2^-12, sc −128, level −30: both reproduce x exactly.
func TestMutants13Q6KTies(t *testing.T) {
	x := make([]float32, 256)
	x[0] = -0.9375
	q, err := QuantizeGGML(GGMLQ6_K, x, 1, 256, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d, sc, y := pyF16(q[208:]), int8(q[192]), pyQ6_K(q); d != -15.0/65536 || sc != -128 || y[0] != -0.9375 {
		t.Errorf("d %v, sub-scale %d, y0 %v; want −15/65536, −128, −0.9375", d, sc, y[0])
	}
}

// TestMutants13Q6KEps: llama.cpp writes a superblock as zeros only when its
// largest sub-scale is below GROUP_MAX_EPS = 1e-15; one of exactly
// float32(1e-15) (x0 = −32·1e-15, level −32, weights 1) is written with
// its sub-scale byte nearest(−128·s/s) = −128.
func TestMutants13Q6KEps(t *testing.T) {
	x, w := make([]float32, 256), make([]float32, 256)
	x[0] = -32 * float32(1e-15)
	for i := range w {
		w[i] = 1
	}
	var L [16]uint8
	if s := makeQx(x[:16], w[:16], L[:]); s != float32(1e-15) {
		t.Fatalf("precondition: sub-scale %v, want float32(1e-15)", s)
	}
	blk := make([]byte, 210)
	q6kLlama(x, w, blk)
	if sc := int8(blk[192]); sc != -128 {
		t.Errorf("sub-scale byte %d, want −128", sc)
	}
}

// TestMutants13Q6KWideTies: the wide Q6_K search keeps the first of equally
// good choices. x = (−30·127·2^-12, 0, …), weights 1: the wide sub-scale
// is s = 127·2^-12 (k = −40: level −30, exact); d = s/−128 = −127·2^-19
// (top 128, the first) and s/−127 = −2^-12 (top 127) are both exact in
// binary16 and reproduce x0 with sub-scale −128 or −127, error 0, and the
// first is kept; each zero sub-block's three sub-scales −1, 0, 1 all give
// error 0, and −1, the first, is kept.
func TestMutants13Q6KWideTies(t *testing.T) {
	x, w := make([]float32, 256), make([]float32, 256)
	x[0] = -30 * 127.0 / 4096
	for i := range w {
		w[i] = 1
	}
	if s := wideQx(x[:16], w[:16]); s != 127.0/4096 {
		t.Fatalf("precondition: wide sub-scale %v, want 127/4096", s)
	}
	blk := make([]byte, 210)
	q6kWide(x, w, blk)
	if d := pyF16(blk[208:]); d != -127.0/524288 {
		t.Errorf("d %v, want −127·2^-19", d)
	}
	for ib := range 16 {
		if sc, want := int8(blk[192+ib]), int8(map[bool]int8{true: -128, false: -1}[ib == 0]); sc != want {
			t.Errorf("sub-block %d: sub-scale %d, want %d", ib, sc, want)
		}
	}
	if y := pyQ6_K(blk); y[0] != x[0] {
		t.Errorf("y0 %v, want %v", y[0], x[0])
	}
	// The wide search too clears a superblock only below 1e-15: x0 = −30·
	// float32(1e-15) has the wide sub-scale float32(1e-15) exactly.
	clear(x)
	x[0] = -30 * float32(1e-15)
	if s := wideQx(x[:16], w[:16]); s != float32(1e-15) {
		t.Fatalf("precondition: wide sub-scale %v, want float32(1e-15)", s)
	}
	q6kWide(x, w, blk)
	if string(blk) == string(make([]byte, 210)) {
		t.Error("largest sub-scale exactly 1e-15: all-zero block")
	}
}

// TestMutants13FitScaleMinEdges: fitScaleMin's first exact fit is kept and
// its min/max fallback is returned when no least-squares line exists. x =
// (a, 0, …), a = 210·2^-8, weights 1, nmax 15: the candidates' levels for
// a are 14 (k = 0…10: 14 + 0.05k up to 14.5, half to even) or 15, and the
// lines a/14 and a/15 through (0, 0) both reproduce x exactly; the first,
// a/14 = 15·2^-8, is kept. With one weighted element (the rest weight 0)
// every candidate's Σw·Σwl² − (Σwl)² is 0: (hi − lo)/nmax and −lo.
func TestMutants13FitScaleMinEdges(t *testing.T) {
	x, w := make([]float32, 32), make([]float32, 32)
	x[0] = 210.0 / 256
	for i := range w {
		w[i] = 1
	}
	if s, mn := fitScaleMin(x, w, 15); s != 15.0/256 || mn != 0 {
		t.Errorf("exact fits: (%v, %v), want (15/256, 0)", s, mn)
	}
	r := rand.New(rand.NewSource(1309))
	x = testRows(r, 1, 32)
	clear(w)
	w[3] = 1
	lo, hi := float32(0), x[0]
	for _, v := range x {
		lo, hi = min(lo, v), max(hi, v)
	}
	for _, nmax := range []int{15, 31} {
		if s, mn := fitScaleMin(x, w, nmax); s != (hi-lo)/float32(nmax) || mn != -lo {
			t.Errorf("nmax %d, one weighted element: (%v, %v), want (%v, %v)", nmax, s, mn, (hi-lo)/float32(nmax), -lo)
		}
	}
}

// TestMutants13QKExact: two Q4_K superblocks the format holds exactly, and
// where several choices are exact the first is kept. x_j = (j mod 16)·
// 63·2^-12: every sub-block's fit is s = 63·2^-12, min 0, so d = s/63 =
// 2^-12, every sc 63 and m 0; dmin candidates 0 and its neighbour 2^-24
// (m 0 or 1: any m·dmin that is 0) are all exact, and dmin 0, m 0, the
// first, are kept. x = −63·2^-7 everywhere: every sub-scale is 0, so d's
// candidates are 0 and 2^-24, both exact with sc 0; d = 0, the first, is
// kept, dmin = 2^-7 and m = 63.
func TestMutants13QKExact(t *testing.T) {
	for _, c := range []struct {
		x       func(j int) float32
		d, dmin uint16
		sc, m   uint8
		what    string
	}{
		{func(j int) float32 { return float32(j%16) * 63 / 4096 }, 0x0c00, 0, 63, 0, "ramp"},
		{func(int) float32 { return -63.0 / 128 }, 0, 0x2000, 0, 63, "negative constant"},
	} {
		x := make([]float32, 256)
		for j := range x {
			x[j] = c.x(j)
		}
		q, err := QuantizeGGML(GGMLQ4_K, x, 1, 256, Options{})
		if err != nil {
			t.Fatal(err)
		}
		d, dmin := binary.LittleEndian.Uint16(q), binary.LittleEndian.Uint16(q[2:])
		sc, mn := pyScaleMin(q[4:16])
		if d != c.d || dmin != c.dmin || sc != [8]uint8{c.sc, c.sc, c.sc, c.sc, c.sc, c.sc, c.sc, c.sc} || mn != [8]uint8{c.m, c.m, c.m, c.m, c.m, c.m, c.m, c.m} {
			t.Errorf("%s: d %#04x dmin %#04x sc %v m %v; want %#04x %#04x %d %d", c.what, d, dmin, sc, mn, c.d, c.dmin, c.sc, c.m)
		}
		for j, v := range pyQK(q, false) {
			if v != x[j] {
				t.Fatalf("%s: element %d is %v, want %v", c.what, j, v, x[j])
			}
		}
	}
}

// kv13 is ggml's kvalues_iq4nl, written out again.
var kv13 = [16]float32{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// nearestK13 is the codebook index nearest to v, the upper one at a
// midpoint (best_index_int8), by trying all 16.
func nearestK13(v float32) int {
	best := 0
	for i := 1; i < 16; i++ {
		if math.Abs(float64(v-kv13[i])) <= math.Abs(float64(v-kv13[best])) {
			best = i
		}
	}
	return best
}

// iq4W13 is iq4q.go's weight rule: qw·sqrt(σ² + x²), σ² = 2Σx²/n over the
// n weights of the superblock, or x².
func iq4W13(x, qw []float32) []float64 {
	var s2 float64
	for _, v := range x {
		s2 += float64(v) * float64(v)
	}
	s2 *= 2 / float64(len(x))
	w := make([]float64, len(x))
	for j, v := range x {
		w[j] = float64(v) * float64(v)
		if qw != nil {
			w[j] = float64(qw[j]) * math.Sqrt(s2+float64(v)*float64(v))
		}
	}
	return w
}

// kErr13 is Σw(x − dl·K[nearest])² with the levels the nearest for dl.
func kErr13(x []float32, w []float64, dl float32) float64 {
	y := make([]float32, len(x))
	if dl != 0 {
		for j, v := range x {
			y[j] = float32(dl * kv13[nearestK13(float32(v*float32(1/dl)))])
		}
	}
	return wErr13(x, y, w)
}

// checkNearestK13 fails unless each y_j = dl_j·K[i] uses the codebook
// value nearest to x_j for its scale (every index tried).
func checkNearestK13(t *testing.T, what string, x, y, dl []float32) {
	t.Helper()
	for j, v := range x {
		be := math.Inf(1)
		for i := range 16 {
			be = min(be, math.Abs(float64(v)-float64(float32(dl[j]*kv13[i]))))
		}
		if math.Abs(float64(v)-float64(y[j])) > be+1e-6*math.Abs(float64(dl[j])) {
			t.Fatalf("%s element %d: %v for %v with scale %v, %v is nearer", what, j, y[j], v, dl[j], be)
		}
	}
}

// TestMutants13IQ4Weights: iq4Weights against the rule, n = 32 and 256.
func TestMutants13IQ4Weights(t *testing.T) {
	r := rand.New(rand.NewSource(1310))
	for _, n := range []int{32, 256} {
		x := testRows(r, 1, n)
		qw := make([]float32, n)
		for i := range qw {
			qw[i] = float32(math.Exp(r.NormFloat64()))
		}
		for _, im := range [][]float32{nil, qw} {
			w := make([]float32, n)
			iq4Weights(x, im, w)
			for j, want := range iq4W13(x, im) {
				if math.Abs(float64(w[j])-want) > 1e-6*want {
					t.Fatalf("n %d importance=%v element %d: %v, want %v", n, im != nil, j, w[j], want)
				}
			}
		}
	}
}

// TestMutants13LlamaSubScale: llama.cpp's IQ4 scale search on random
// sub-blocks of 32: the scale is the least-squares Σwqx/Σwq² of a candidate
// level set of the largest (Σwqx)²/Σwq² — candidates the levels nearest to
// x/d for d = max/127 (max: the first element of the largest magnitude) and
// x·(itry − 127)/max for itry = −7…7 — and L holds the first's levels; a
// block below 1e-15 gives 0.
func TestMutants13LlamaSubScale(t *testing.T) {
	r := rand.New(rand.NewSource(1311))
	for k := range 400 {
		x := testRows(r, 1, 32)
		w32, w := testWeights13(r, x, k%2 == 1)
		var L [32]uint8
		d := llamaSubScale(x, w32, L[:])
		mx := maxSigned13(x)
		ids := []float32{1 / (-mx / -127)}
		for itry := -7; itry <= 7; itry++ {
			ids = append(ids, (float32(itry)-127)/mx)
		}
		var scale, crit []float64
		for c, id := range ids {
			var sqx, sq2 float64
			for j, v := range x {
				i := nearestK13(float32(id * v))
				if c == 0 && int(L[j]) != i {
					t.Fatalf("case %d element %d: L %d, want the first candidate's %d", k, j, L[j], i)
				}
				sqx += w[j] * float64(kv13[i]) * float64(v)
				sq2 += w[j] * float64(kv13[i]) * float64(kv13[i])
			}
			scale, crit = append(scale, sqx/sq2), append(crit, sqx*sqx/sq2)
		}
		best := slices.Max(crit)
		ok := false
		for c := range crit {
			ok = ok || crit[c] >= best*(1-1e-5) && math.Abs(float64(d)-scale[c]) <= 1e-5*math.Abs(scale[c])
		}
		if !ok {
			t.Fatalf("case %d: scale %v is not the least-squares scale of a best candidate", k, d)
		}
	}
	x := make([]float32, 32)
	x[4] = math.Nextafter32(float32(1e-15), 0)
	var L [32]uint8
	if d := llamaSubScale(x, x, L[:]); d != 0 {
		t.Errorf("block below 1e-15: %v", d)
	}
	x[4] = float32(1e-15)
	one := make([]float32, 32)
	for i := range one {
		one[i] = 1
	}
	if d := llamaSubScale(x, one, L[:]); d == 0 {
		t.Errorf("max float32(1e-15): %v, want a scale", d)
	}
}

// wideSubCands13 lists the wide IQ4 search's scales (wideSubScale's
// comment): for h = −28…28 the levels nearest to x·(h/2 − 127)/max, then up
// to four times the least-squares scale d of the levels, whose error is
// measured on those levels, and the levels nearest to x/d, stopping when
// they repeat. Each candidate with its error.
func wideSubCands13(x []float32, w []float64) (ds []float32, es []float64) {
	mx := maxSigned13(x)
	for h := -28; h <= 28; h++ {
		id := (float32(h)/2 - 127) / mx
		L := make([]int, len(x))
		for j, v := range x {
			L[j] = nearestK13(float32(id * v))
		}
		for range 4 {
			var sqx, sq2 float64
			for j, v := range x {
				sqx += w[j] * float64(kv13[L[j]]) * float64(v)
				sq2 += w[j] * float64(kv13[L[j]]) * float64(kv13[L[j]])
			}
			if !(sq2 > 0) {
				break
			}
			d := float32(sqx / sq2)
			y := make([]float32, len(x))
			for j := range x {
				y[j] = float32(d * kv13[L[j]])
			}
			ds, es = append(ds, d), append(es, wErr13(x, y, w))
			same, nl := true, make([]int, len(x))
			for j, v := range x {
				nl[j] = nearestK13(float32(v * float32(1/d)))
				same = same && nl[j] == L[j]
			}
			if same {
				break
			}
			L = nl
		}
	}
	return ds, es
}

// TestMutants13WideSubScale: the wide IQ4 search returns one of its
// candidates and none has a smaller error; an all-zero block gives 0.
func TestMutants13WideSubScale(t *testing.T) {
	r := rand.New(rand.NewSource(1312))
	for k := range 200 {
		x := testRows(r, 1, 32)
		w32, w := testWeights13(r, x, k%2 == 1)
		d := wideSubScale(x, w32)
		ds, es := wideSubCands13(x, w)
		best, be := -1, math.Inf(1)
		for i := range ds {
			if es[i] < be {
				best, be = i, es[i]
			}
		}
		ok := false
		for i := range ds {
			ok = ok || math.Abs(float64(ds[i]-d)) <= 1e-5*math.Abs(float64(d)) && es[i] <= be*(1+1e-6)
		}
		if !ok {
			t.Fatalf("case %d: scale %v, best candidate %v (error %.10g)", k, d, ds[best], be)
		}
	}
	if d := wideSubScale(make([]float32, 32), make([]float32, 32)); d != 0 {
		t.Errorf("zero block: %v", d)
	}
}

// TestMutants13F16Neighbours: the binary16 value and its neighbours below
// and above in magnitude, itself at 0, at 65504 and at Inf.
func TestMutants13F16Neighbours(t *testing.T) {
	r := rand.New(rand.NewSource(1313))
	ds := []float32{0, float32(math.Copysign(0, -1)), 65504, -65504, 1e6, float32(math.Inf(1)), float32(math.Inf(-1)), 1, -1, 6.1e-5, 5.96e-8, -5.96e-8, 3e-8, 1e-9, 65519, 65520}
	for range 200 {
		ds = append(ds, float32(r.NormFloat64()*math.Pow(10, float64(r.Intn(9)-6))))
	}
	for _, d := range ds {
		c, want := f16Neighbours(d), f16Near13(d)
		for len(want) < 3 {
			want = append(want, want[0])
		}
		if m := float16.Fromfloat32(d).Bits() & 0x7fff; m == 0 {
			want = []float32{want[0], want[0], want[1]}
		} else if len(f16Near13(d)) == 2 && m == 0x7bff {
			want = []float32{want[0], want[1], want[0]}
		}
		if c[0] != want[0] || c[1] != want[1] || c[2] != want[2] || math.Signbit(float64(c[1])) != math.Signbit(float64(want[1])) {
			t.Errorf("f16Neighbours(%v) = %v, want %v", d, c, want)
		}
	}
}

// iq4Idx13 reads the 4-bit indices of n elements from IQ4 level bytes.
func iq4Idx13(qs []byte, n int) []int {
	idx := make([]int, n)
	for j := range idx {
		idx[j] = int(qs[32*(j/32)/2+j%16] >> (4 * ((j % 32) / 16)) & 15)
	}
	return idx
}

// TestMutants13IQ4NL: the IQ4_NL fits on random blocks. llama.cpp's
// (iq4nlLlama): d = binary16 of its scale search, the levels the nearest
// for the unrounded scale. The wide one: no error above any candidate of
// the rule (llama.cpp's scale and the wide search's, binary16 and
// neighbours, nearest levels), levels the nearest for d as stored.
// iq4nlBlock: the smaller error, llama.cpp's bytes on a tie.
func TestMutants13IQ4NL(t *testing.T) {
	r := rand.New(rand.NewSource(1314))
	for k := range 200 {
		x := testRows(r, 1, 32)
		var qw []float32
		if k%2 == 1 {
			qw = make([]float32, 32)
			for i := range qw {
				qw[i] = float32(math.Exp(r.NormFloat64()))
			}
		}
		w, w32 := iq4W13(x, qw), make([]float32, 32)
		iq4Weights(x, qw, w32)
		var L [32]uint8
		dl, dw := llamaSubScale(x, w32, L[:]), wideSubScale(x, w32)
		ll := make([]byte, 18)
		iq4nlLlama(x, w32, ll)
		if d := pyF16(ll); d != float16.Fromfloat32(dl).Float32() {
			t.Fatalf("case %d: llama d %v, want binary16(%v)", k, d, dl)
		}
		for j, i := range iq4Idx13(ll[2:], 32) {
			if want := nearestK13(float32(x[j] * float32(1/dl))); dl != 0 && i != want {
				t.Fatalf("case %d element %d: llama index %d, want %d", k, j, i, want)
			}
		}
		wd := make([]byte, 18)
		iq4nlWide(x, w32, wd)
		ew := wErr13(x, pyIQ4_NL(wd), w)
		for _, s := range []float32{dl, dw} {
			for _, c := range f16Near13(s) {
				if ec := kErr13(x, w, c); ew > ec*(1+1e-9) {
					t.Fatalf("case %d: wide error %.10g above candidate %v's %.10g", k, ew, c, ec)
				}
			}
		}
		dd := make([]float32, 32)
		for j := range dd {
			dd[j] = pyF16(wd)
		}
		checkNearestK13(t, "wide", x, pyIQ4_NL(wd), dd)
		blk := make([]byte, 18)
		iq4nlBlock(x, qw, blk)
		want := ll
		if ew < wErr13(x, pyIQ4_NL(ll), w) {
			want = wd
		}
		if string(blk) != string(want) {
			t.Fatalf("case %d: iq4nlBlock kept neither the smaller-error fit", k)
		}
	}
}

// xsScales13 reads an IQ4_XS superblock's d·(ls − 32) per element.
func xsScales13(blk []byte) ([8]int, []float32) {
	d, sh, sl := pyF16(blk), binary.LittleEndian.Uint16(blk[2:]), blk[4:8]
	var ls [8]int
	dl := make([]float32, 256)
	for ib := range 8 {
		ls[ib] = int((sl[ib/2]>>(4*(ib%2)))&15|uint8(sh>>(2*ib))&3<<4) - 32
		for j := range 32 {
			dl[32*ib+j] = float32(d * float32(ls[ib]))
		}
	}
	return ls, dl
}

// TestMutants13IQ4XS: the IQ4_XS fits on random superblocks (two with
// mirror-image largest sub-blocks, whose first sets d). llama.cpp's
// (iq4xsLlama): d = binary16(−max/32) of its sub-scales (the first of the
// largest magnitude), l = nearest(s/d) clamped to −32…31 for the unrounded
// d, the levels the nearest for the unrounded d·l. The wide one: d one of
// binary16(−max/div) and neighbours (div 32, 31, 33, from either set of
// sub-scales), no error above the best of the rule's candidates (per
// sub-block nearest(s/d) and its neighbours, nearest levels), levels the
// nearest for d·l as stored. iq4xsBlock: the smaller error, llama.cpp's on a
// tie.
func TestMutants13IQ4XS(t *testing.T) {
	r := rand.New(rand.NewSource(1315))
	for k := range 12 {
		x := testRows(r, 1, 256)
		var qw []float32
		if k%2 == 1 {
			qw = make([]float32, 256)
			for i := range qw {
				qw[i] = float32(math.Exp(r.NormFloat64()))
			}
		}
		if k < 2 {
			for i := range 32 {
				x[i] *= 10
				x[32+i] = -x[i]
				if qw != nil {
					qw[32+i] = qw[i]
				}
			}
		}
		w, w32 := iq4W13(x, qw), make([]float32, 256)
		iq4Weights(x, qw, w32)
		var ls, ws [8]float32
		var L [32]uint8
		for ib := range 8 {
			ls[ib] = llamaSubScale(x[32*ib:32*ib+32], w32[32*ib:32*ib+32], L[:])
			ws[ib] = wideSubScale(x[32*ib:32*ib+32], w32[32*ib:32*ib+32])
		}
		ll := make([]byte, 136)
		iq4xsLlama(x, &ls, ll)
		d := -maxSigned13(ls[:]) / 32
		if got := pyF16(ll); got != float16.Fromfloat32(d).Float32() {
			t.Fatalf("case %d: llama d %v, want binary16(%v)", k, got, d)
		}
		sub, _ := xsScales13(ll)
		idx := iq4Idx13(ll[8:], 256)
		for ib := range 8 {
			l := max(-32, min(31, int(math.RoundToEven(float64(float32(float32(1/d)*ls[ib]))))))
			if sub[ib] != l {
				t.Fatalf("case %d sub-block %d: llama sub-scale %d, want %d", k, ib, sub[ib], l)
			}
			dl := float32(d * float32(l))
			for j := 32 * ib; j < 32*ib+32; j++ {
				if want := nearestK13(float32(x[j] * float32(1/dl))); dl != 0 && idx[j] != want {
					t.Fatalf("case %d element %d: llama index %d, want %d", k, j, idx[j], want)
				}
			}
		}
		wd := make([]byte, 136)
		iq4xsWide(x, w32, &ls, &ws, wd)
		best, dOK := math.Inf(1), false
		for _, s := range [][8]float32{ls, ws} {
			m := maxSigned13(s[:])
			for _, div := range []float32{32, 31, 33} {
				for _, c := range f16Near13(-m / div) {
					dOK = dOK || c == pyF16(wd)
					var total float64
					for ib := range 8 {
						l0 := 0
						if c != 0 {
							l0 = int(math.RoundToEven(float64(float32(s[ib] / c))))
						}
						be := math.Inf(1)
						for l := l0 - 1; l <= l0+1; l++ {
							be = min(be, kErr13(x[32*ib:32*ib+32], w[32*ib:32*ib+32], float32(c*float32(max(-32, min(31, l))))))
						}
						total += be
					}
					best = min(best, total)
				}
			}
		}
		ew := wErr13(x, pyIQ4_XS(wd), w)
		if !dOK || ew > best*(1+1e-9) {
			t.Fatalf("case %d: wide d %v (a candidate: %v), error %.10g, best candidate %.10g", k, pyF16(wd), dOK, ew, best)
		}
		_, dl := xsScales13(wd)
		checkNearestK13(t, "wide", x, pyIQ4_XS(wd), dl)
		blk := make([]byte, 136)
		iq4xsBlock(x, qw, blk)
		want := ll
		if ew < wErr13(x, pyIQ4_XS(ll), w) {
			want = wd
		}
		if string(blk) != string(want) {
			t.Fatalf("case %d: iq4xsBlock kept neither the smaller-error fit", k)
		}
	}
}

// TestMutants13IQ4Ties: the IQ4 searches keep the first of equally good
// choices, and the blocks llama.cpp's on a tie.
func TestMutants13IQ4Ties(t *testing.T) {
	// wideSubScale: x0 = −127/128 alone weighted; h = −28…22 give index 0
	// (−127), d = 1/128, h = 23…28 index 1 (−104), d = x0/−104, and both
	// reproduce x0 exactly in float32 (checked): the first, 1/128, is kept.
	x, w := make([]float32, 32), make([]float32, 32)
	x[0], w[0] = -127.0/128, 1
	if d := float32(float32(-104*x[0]) / (104 * 104)); float32(d*-104) != x[0] {
		t.Fatalf("precondition: x0/−104 = %v does not reproduce x0", d)
	}
	if d := wideSubScale(x, w); d != 1.0/128 {
		t.Errorf("wideSubScale: %v, want 1/128", d)
	}

	// Zero importance: every fit's error is 0.
	r := rand.New(rand.NewSource(1316))
	xs := testRows(r, 1, 512)
	imp := make([]float32, 512)
	for i := 256; i < 512; i++ {
		imp[i] = 1
	}
	// IQ4_NL: llama.cpp's fit is kept: its scale 0 (Σwq² = 0) and the
	// levels of its first candidate, the nearest to x·127/max.
	q, err := QuantizeGGML(GGMLIQ4_NL, xs, 1, 512, Options{Importance: imp})
	if err != nil {
		t.Fatal(err)
	}
	xb := xs[:32]
	id := float32(1 / float32(maxSigned13(xb)/127))
	if d := binary.LittleEndian.Uint16(q); d != 0 {
		t.Errorf("IQ4_NL zero importance: d bits %#04x, want 0", d)
	}
	for j, i := range iq4Idx13(q[2:18], 32) {
		if want := nearestK13(float32(xb[j] * id)); i != want {
			t.Fatalf("IQ4_NL zero importance: element %d index %d, want %d", j, i, want)
		}
	}
	// iq4nlWide alone: the first candidate, scale 0 with the levels cleared.
	blk := make([]byte, 18)
	iq4nlWide(xb, make([]float32, 32), blk)
	if string(blk) != string(make([]byte, 18)) {
		t.Errorf("iq4nlWide, zero weights: % x, want zeros", blk)
	}
	// IQ4_XS: llama.cpp's fit: d = −0/32 = −0 (bits 0x8000), every
	// sub-scale 0 (stored 32: low nibbles 0, high bits 2), levels the
	// nearest to 0, index 8 (the value 1).
	q, err = QuantizeGGML(GGMLIQ4_XS, xs, 1, 512, Options{Importance: imp})
	if err != nil {
		t.Fatal(err)
	}
	want := append([]byte{0x00, 0x80, 0xaa, 0xaa, 0, 0, 0, 0}, bytes.Repeat([]byte{0x88}, 128)...)
	if string(q[:136]) != string(want) {
		t.Errorf("IQ4_XS zero importance: % x, want % x", q[:8], want[:8])
	}
	// iq4xsWide alone: the first super-scale, −0 from llama.cpp's sub-scales
	// over 32, and in each sub-block the first of l = −1, 0, 1 (stored 31:
	// low nibbles 15, high bits 1), levels cleared.
	var zs [8]float32
	xw := make([]byte, 136)
	iq4xsWide(xs[:256], make([]float32, 256), &zs, &zs, xw)
	want = append([]byte{0x00, 0x80, 0x55, 0x55, 0xff, 0xff, 0xff, 0xff}, make([]byte, 128)...)
	if string(xw) != string(want) {
		t.Errorf("iq4xsWide, zero weights: % x, want % x", xw[:8], want[:8])
	}
}

// TestMutants13LlamaSubScaleTies: llama.cpp's IQ4 scale search replaces its
// best only on a larger (Σwqx)²/Σwq² in float32. x0 = 2^-12 alone weighted:
// the first candidate (x·127/max = 127: index 15, q = 113) gives d =
// 113·x0/113², every other (itry − 127 ≤ −120: q = −127) the same
// criterion x0², so (in float32, computed here) the first is kept unless
// the tie rounds to larger. Also the wide search's 1e-15 bound.
func TestMutants13LlamaSubScaleTies(t *testing.T) {
	x, w := make([]float32, 32), make([]float32, 32)
	x[0], w[0] = 1.0/4096, 1
	sqx, sq2 := float32(113*x[0]), float32(113*113)
	want := sqx / sq2
	best := float32(want * sqx)
	if sqx2, sq22 := float32(-127*x[0]), float32(127*127); float32(sqx2*sqx2) > float32(best*sq22) {
		want = sqx2 / sq22
	}
	var L [32]uint8
	if d := llamaSubScale(x, w, L[:]); d != want {
		t.Errorf("llamaSubScale: %v, want %v", d, want)
	}
	for i := range w {
		w[i] = 1
	}
	x[0] = float32(1e-15)
	if d := wideSubScale(x, w); d == 0 {
		t.Error("wideSubScale, max float32(1e-15): 0")
	}
	x[0] = math.Nextafter32(float32(1e-15), 0)
	if d := wideSubScale(x, w); d != 0 {
		t.Errorf("wideSubScale, max below 1e-15: %v", d)
	}
}

// TestMutants13QuantizeGGMLShapes: 0 rows or 0 columns are a valid, empty
// matrix; rows·cols past MaxInt is a shape error (not a wrapped product);
// a NaN in column 0 is found like any other.
func TestMutants13QuantizeGGMLShapes(t *testing.T) {
	for _, c := range []struct{ rows, cols int }{{0, 256}, {3, 0}} {
		if q, err := QuantizeGGML(GGMLIQ4_NL, nil, c.rows, c.cols, Options{}); err != nil || len(q) != 0 {
			t.Errorf("%d×%d: %d bytes, %v; want none and no error", c.rows, c.cols, len(q), err)
		}
	}
	if _, err := QuantizeGGML(GGMLIQ4_NL, nil, 1<<62, 256, Options{}); !errors.Is(err, ErrShape) {
		t.Errorf("2^62×256: %v, want ErrShape", err)
	}
	x := make([]float32, 2*32)
	x[32] = float32(math.NaN())
	if _, err := QuantizeGGML(GGMLIQ4_NL, x, 2, 32, Options{Name: "w"}); !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "row 1, column 0: NaN") {
		t.Errorf("NaN at row 1, column 0: %v", err)
	}
}
