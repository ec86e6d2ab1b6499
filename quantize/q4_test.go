package quantize

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// refRoundBlock models llama.cpp's quantize_row_q4_0_ref in float64 with each
// float32 operation rounded (see refQ8Block): the first element of largest
// magnitude is max, d = max/−8, id = 1/d, level = min(15, trunc(x·id + 8.5)) − 8.
func refRoundBlock(x []float32) (lv []int, d float32) {
	var amax, max float64
	for _, v := range x {
		if a := math.Abs(float64(v)); amax < a {
			amax, max = a, float64(v)
		}
	}
	d = float32(max / -8)
	id := 0.0
	if d != 0 {
		id = float64(float32(1 / float64(d)))
	}
	lv = make([]int, len(x))
	for i, v := range x {
		p := float32(float64(v) * id)
		s := float32(float64(p) + 8.5)
		if math.IsNaN(float64(s)) { // 0·Inf where id overflows: documented as level 0
			continue
		}
		lv[i] = int(math.Max(0, math.Min(15, math.Trunc(float64(s))))) - 8
	}
	return lv, d
}

// levels unpacks the nibbles of block b, independently of the code under test:
// element j is the low nibble of byte j, element j+16 the high nibble (SPEC.md).
func levels(q []byte, b int) []int {
	lv := make([]int, 32)
	for j := 0; j < 16; j++ {
		lv[j] = int(q[16*b+j]&0x0f) - 8
		lv[j+16] = int(q[16*b+j]>>4) - 8
	}
	return lv
}

func TestQ4RoundEdge(t *testing.T) {
	tests := []struct {
		name   string
		x      []float32
		wantLv map[int]int
		wantD  float32
	}{
		// max = 8: d = −1, id = −1; level = trunc(−x + 8.5) − 8
		{"ties", []float32{0: 8, 1: 2.5, 2: -2.5, 3: -7.5, 4: 0.5, 5: -0.5, 6: 7.9},
			map[int]int{0: -8, 1: -2, 2: 3, 3: 7, 4: 0, 5: 1, 6: -8, 7: 0}, -1},
		// equal magnitudes: the first one is max, so d = −3/−8 > 0
		{"first of equal magnitudes", []float32{0: -3, 1: 3, 2: 1.5},
			map[int]int{0: -8, 1: 7, 2: 4}, 0.375},
		{"zero block", nil, map[int]int{0: 0, 31: 0}, 0},
		{"negative zero and subnormal max", []float32{0: float32(math.Copysign(0, -1)), 1: math.Float32frombits(8)},
			map[int]int{0: 0, 1: -8}, -math.Float32frombits(1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := make([]float32, 32)
			copy(x, tc.x)
			q, s, err := Matrix(TypeQ4_0, x, 1, 32, Options{Q4Rule: Round})
			if err != nil {
				t.Fatal(err)
			}
			d := DecodeScales(s, false)[0]
			if d != tc.wantD {
				t.Errorf("d: got %v, want %v", d, tc.wantD)
			}
			lv := levels(q, 0)
			for i, w := range tc.wantLv {
				if lv[i] != w {
					t.Errorf("level %d (x=%v): got %d, want %d", i, x[i], lv[i], w)
				}
			}
			rl, rd := refRoundBlock(x)
			if rd != d {
				t.Errorf("d: got %v, want %v (reference)", d, rd)
			}
			for i := range rl {
				if lv[i] != rl[i] {
					t.Errorf("level %d (x=%v): got %d, want %d (reference)", i, x[i], lv[i], rl[i])
				}
			}
		})
	}
}

func TestQ4RoundRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 0; n < 3000; n++ {
		x := randBlock(rng, n)
		q, s, err := Matrix(TypeQ4_0, x, 1, 32, Options{Q4Rule: Round})
		if err != nil {
			t.Fatal(err)
		}
		d := DecodeScales(s, false)[0]
		rl, rd := refRoundBlock(x)
		if d != rd || !slices.Equal(levels(q, 0), rl) {
			t.Fatalf("block %v: got d=%v %v, want d=%v %v", x, d, levels(q, 0), rd, rl)
		}
		// f16 scales: the nibbles are those of the float32 d, d is stored rounded
		if math.Abs(float64(d)) > 65504 {
			continue
		}
		q16, s16, err := Matrix(TypeQ4_0, x, 1, 32, Options{Q4Rule: Round, F16Scales: true})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(q16, q) {
			t.Fatalf("block %v: f16 nibbles differ from f32 nibbles", x)
		}
		if got := DecodeScales(s16, true)[0]; got != refF16(d) {
			t.Fatalf("block %v: f16 d: got %v, want %v", x, got, refF16(d))
		}
	}
}

// randBlock returns test blocks of several kinds: Gaussian over a wide range of
// scales, heavy-tailed, exact half-steps that provoke ties, repeated values and
// blocks with one outlier.
func randBlock(rng *rand.Rand, n int) []float32 {
	x := make([]float32, 32)
	scale := math.Exp2(float64(rng.IntN(120) - 60))
	for i := range x {
		switch n % 5 {
		case 0, 1:
			x[i] = float32(rng.NormFloat64() * scale)
		case 2:
			x[i] = float32(studentT(rng, 3) * scale)
		case 3:
			x[i] = float32(rng.IntN(33)-16) / 2
		case 4:
			x[i] = float32(rng.NormFloat64())
		}
	}
	if n%5 == 4 {
		x[rng.IntN(32)] = float32(rng.NormFloat64() * 100)
	}
	if n%11 == 0 {
		for i := range x {
			x[i] = x[0]
		}
	}
	return x
}

func studentT(rng *rand.Rand, nu int) float64 {
	var c float64
	for i := 0; i < nu; i++ {
		g := rng.NormFloat64()
		c += g * g
	}
	return rng.NormFloat64() / math.Sqrt(c/float64(nu))
}

// refCandidates is an independent float64 model of SPEC-NOTES.md's candidate
// search: for L = −6.0 … −8.4, q_i = clamp(math.Round(x_i·L/xmax), −8, 7),
// d_L = Σwxq/Σwq², error_L = Σw(x − d_L·q)² computed directly.
func refCandidates(x []float32, w []float64) (qs [][]int, ds, errs []float64) {
	var amax, xmax float64
	for _, v := range x {
		if a := math.Abs(float64(v)); a > amax {
			amax, xmax = a, float64(v)
		}
	}
	for k := 0; k < 13; k++ {
		L := -6 - 0.2*float64(k)
		q := make([]int, len(x))
		var sxq, sqq float64
		for i, v := range x {
			q[i] = int(math.Max(-8, math.Min(7, math.Round(float64(v)*L/xmax))))
			sxq += w[i] * float64(v) * float64(q[i])
			sqq += w[i] * float64(q[i]*q[i])
		}
		d := sxq / sqq
		qs, ds, errs = append(qs, q), append(ds, d), append(errs, weightedErr(x, w, d, q))
	}
	return qs, ds, errs
}

func weightedErr(x []float32, w []float64, d float64, q []int) float64 {
	var e float64
	for i, v := range x {
		r := float64(v) - d*float64(q[i])
		e += w[i] * r * r
	}
	return e
}

func x2Weights(x []float32) []float64 {
	w := make([]float64, len(x))
	for i, v := range x {
		w[i] = float64(v) * float64(v)
	}
	return w
}

// TestQ4BestFitProperties checks the best fit against the independent model: it is
// one of the 13 candidates, the first with the smallest weighted error; its error is
// never above any candidate's nor above the round rule's.
func TestQ4BestFitProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	negative := 0
	for n := 0; n < 3000; n++ {
		x := randBlock(rng, n)
		q, s, err := Matrix(TypeQ4_0, x, 1, 32, Options{})
		if err != nil {
			t.Fatal(err)
		}
		d := float64(DecodeScales(s, false)[0])
		lv := levels(q, 0)
		w := x2Weights(x)
		qs, ds, errs := refCandidates(x, w)
		var sw float64
		for i := range x {
			sw += w[i] * float64(x[i]) * float64(x[i])
		}
		tol := 1e-6 * sw
		got := weightedErr(x, w, d, lv)
		minErr := math.Inf(1)
		for k := range errs {
			if got > errs[k]+tol {
				t.Fatalf("block %v: error %g above candidate %d's %g", x, got, k, errs[k])
			}
			minErr = math.Min(minErr, errs[k])
		}
		best := 0 // the first candidate whose error equals the minimum up to rounding
		for errs[best] > minErr+1e-10*sw {
			best++
		}
		if !slices.Equal(lv, qs[best]) || math.Abs(d-ds[best]) > 1e-6*math.Abs(ds[best]) {
			t.Fatalf("block %v: got d=%v %v, want candidate %d: d=%v %v", x, d, lv, best, ds[best], qs[best])
		}
		// f16 scales: the same nibbles, d rounded to the nearest f16
		if math.Abs(d) <= 65504 {
			q16, s16, err := Matrix(TypeQ4_0, x, 1, 32, Options{F16Scales: true})
			if err != nil {
				t.Fatal(err)
			}
			if d16 := DecodeScales(s16, true)[0]; !bytes.Equal(q16, q) || d16 != refF16(float32(d)) {
				t.Fatalf("block %v: f16: got d=%v %v, want d=%v %v", x, d16, levels(q16, 0), refF16(float32(d)), lv)
			}
		}
		rl, rd := refRoundBlock(x)
		if re := weightedErr(x, w, float64(rd), rl); got > re+tol {
			t.Fatalf("block %v: error %g above the round rule's %g", x, got, re)
		}
		if d < 0 {
			negative++
			// negative d decodes: every element is d·level, and the largest element
			// (positive, since d < 0) got a level of −6 to −8, so it decodes positive
			dq := Dequantize(TypeQ4_0, q, []float32{float32(d)}, 1, 32)
			im := 0
			for i := range x {
				if math.Abs(float64(x[i])) > math.Abs(float64(x[im])) {
					im = i
				}
				if want := float32(d * float64(lv[i])); dq[i] != want {
					t.Fatalf("block %v: element %d decodes to %v, want %v", x, i, dq[i], want)
				}
			}
			if x[im] <= 0 || lv[im] > -6 || dq[im] <= 0 {
				t.Fatalf("block %v: largest element %v has level %d and decodes to %v with d = %v", x, x[im], lv[im], dq[im], d)
			}
		}
	}
	if negative == 0 {
		t.Errorf("no block got a negative d; a positive largest element must give one")
	}
}

// TestQ4BestFitTies: when several candidates give the same levels, or exact-fit
// errors are equal, the earliest candidate wins.
func TestQ4BestFitTies(t *testing.T) {
	tests := []struct {
		name  string
		x     []float32
		wantD float32
		want  map[int]int
	}{
		// all equal: every candidate fits exactly; −6.0 is first: levels −6, d = −x/6
		{"constant block", []float32{0: 3, 1: 3, 2: 3, 3: 3}, -0.5, map[int]int{0: -6, 1: -6, 4: 0}},
		// one non-zero element: −6.0 first again
		{"single element", []float32{5: -12}, 2, map[int]int{5: -6, 0: 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := make([]float32, 32)
			copy(x, tc.x)
			if tc.name == "constant block" {
				for i := range x {
					x[i] = 3
				}
			}
			q, s, err := Matrix(TypeQ4_0, x, 1, 32, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d := DecodeScales(s, false)[0]; d != tc.wantD {
				t.Errorf("d: got %v, want %v", d, tc.wantD)
			}
			lv := levels(q, 0)
			for i, w := range tc.want {
				if tc.name == "constant block" {
					w = -6
				}
				if lv[i] != w {
					t.Errorf("level %d: got %d, want %d", i, lv[i], w)
				}
			}
		})
	}
}

// TestQ4BestFitTiny: blocks below 1e-6 (down to subnormals) are fitted as if scaled
// to 1: the levels equal those of the block scaled by an exact power of two, and d
// scales back.
func TestQ4BestFitTiny(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, e := range []int{-30, -60, -100, -126, -135} {
		for n := 0; n < 50; n++ {
			x := make([]float32, 32)
			big := make([]float32, 32)
			for i := range x {
				// values with at most 8 significant bits so that they stay exact as
				// subnormals
				m := float64(rng.IntN(256) - 128)
				x[i] = float32(math.Ldexp(m, e-8))
				big[i] = float32(math.Ldexp(m, -8))
			}
			q, s, err := Matrix(TypeQ4_0, x, 1, 32, Options{})
			if err != nil {
				t.Fatal(err)
			}
			qb, sb, err := Matrix(TypeQ4_0, big, 1, 32, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(q, qb) {
				t.Fatalf("2^%d block: levels %v, want those of the scaled block %v", e, levels(q, 0), levels(qb, 0))
			}
			d, db := float64(DecodeScales(s, false)[0]), float64(DecodeScales(sb, false)[0])
			want := math.Ldexp(db, e)
			if math.Abs(d-want) > 1e-6*math.Abs(want)+math.Ldexp(1, -149) {
				t.Fatalf("2^%d block: d got %g, want %g", e, d, want)
			}
		}
	}
}

// TestDequantizeAny: any d (negative, zero, subnormal, huge) and any nibbles or
// int8 bytes decode to the product, with the nibble layout of SPEC.md.
func TestDequantizeAny(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	ds := []float32{-1.5, 0, math.Float32frombits(3), -3e38, 1e-3, float32(math.Copysign(0, -1))}
	rows, cols := 2, 96
	nb := rows * cols / 32
	for _, tp := range []Type{TypeQ8_0, TypeQ4_0} {
		q := make([]byte, nb*tp.BlockBytes())
		for i := range q {
			q[i] = byte(rng.IntN(256))
		}
		d := make([]float32, nb)
		for i := range d {
			d[i] = ds[rng.IntN(len(ds))]
		}
		w := Dequantize(tp, q, d, rows, cols)
		for b := 0; b < nb; b++ {
			for i := 0; i < 32; i++ {
				var lv int
				if tp == TypeQ8_0 {
					lv = int(int8(q[32*b+i]))
				} else {
					lv = levels(q, b)[i]
				}
				want := float32(float64(lv) * float64(d[b]))
				if got := w[32*b+i]; got != want && !(math.IsNaN(float64(got)) && math.IsNaN(float64(want))) {
					t.Fatalf("%s block %d element %d: got %v, want %v", tp, b, i, got, want)
				}
			}
		}
	}
}

func TestMatrixErrors(t *testing.T) {
	good := make([]float32, 64)
	nan := make([]float32, 64*32)
	nan[17*32+5] = float32(math.NaN())
	nan[30*32+1] = float32(math.Inf(1))
	inf := make([]float32, 32)
	inf[31] = float32(math.Inf(-1))
	huge := make([]float32, 32)
	huge[0] = 65504 * 127 * 1.0001
	huge4 := make([]float32, 32)
	huge4[0] = 8 * 65505
	tests := []struct {
		name       string
		t          Type
		w          []float32
		rows, cols int
		opt        Options
		is         error
		msg        string
	}{
		{"nan row 17", TypeQ8_0, nan, 64, 32, Options{Name: "blk.3.wq", Threads: 4}, ErrNonFinite, `"blk.3.wq" row 17, column 5: NaN`},
		{"nan q4", TypeQ4_0, nan, 64, 32, Options{Name: "w2"}, ErrNonFinite, `"w2" row 17, column 5`},
		{"inf", TypeQ4_0, inf, 1, 32, Options{Name: "wcls", Q4Rule: Round}, ErrNonFinite, `"wcls" row 0, column 31: -Inf`},
		{"q8 scale above f16", TypeQ8_0, huge, 1, 32, Options{Name: "x", F16Scales: true}, ErrScale, `"x" row 0, block 0: scale`},
		{"q4 round scale above f16", TypeQ4_0, huge4, 1, 32, Options{Q4Rule: Round, F16Scales: true}, ErrScale, "above the f16 maximum 65504"},
		{"q4 best scale above f16", TypeQ4_0, huge4, 1, 32, Options{F16Scales: true}, ErrScale, "above the f16 maximum"},
		{"cols not multiple of 32", TypeQ8_0, good, 2, 32 + 0*16, Options{}, nil, ""},
		{"cols 48", TypeQ8_0, make([]float32, 96), 2, 48, Options{}, ErrShape, "multiple of 32"},
		{"length mismatch", TypeQ8_0, good, 3, 32, Options{}, ErrShape, "does not match 64 weights"},
		{"unknown type", Type(3), good, 2, 32, Options{}, ErrShape, "unknown type 3"},
		{"importance length", TypeQ4_0, good, 2, 32, Options{Importance: make([]float32, 31)}, ErrShape, "importance has 31 values for 32 columns"},
		{"importance nan", TypeQ4_0, good, 2, 32, Options{Importance: append(make([]float32, 31), float32(math.NaN()))}, ErrNonFinite, "importance of column 31"},
		{"importance negative", TypeQ4_0, good, 2, 32, Options{Importance: append(make([]float32, 31), -1)}, ErrNonFinite, "importance of column 31"},
		{"unknown rule", TypeQ4_0, good, 2, 32, Options{Q4Rule: 7}, ErrShape, "unknown Q4_0 rule"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Matrix(tc.t, tc.w, tc.rows, tc.cols, tc.opt)
			if tc.is == nil {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				return
			}
			if !errors.Is(err, tc.is) || !strings.Contains(fmtErr(err), tc.msg) {
				t.Fatalf("got %v, want %v containing %q", err, tc.is, tc.msg)
			}
		})
	}
	// the largest storable scale is accepted
	x := make([]float32, 32)
	x[0] = 65504 * 127
	if _, s, err := Matrix(TypeQ8_0, x, 1, 32, Options{F16Scales: true}); err != nil || DecodeScales(s, true)[0] != 65504 {
		t.Errorf("scale 65504: got %v, want no error and d = 65504", err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestLevel compares level with math.Round (half away from zero) on every
// half-integer and quarter value in range, their float64 neighbours and random values.
func TestLevel(t *testing.T) {
	var ts []float64
	for k := -20; k <= 20; k++ {
		v := float64(k) / 4
		ts = append(ts, v, math.Nextafter(v, 10), math.Nextafter(v, -10))
	}
	rng := rand.New(rand.NewPCG(19, 20))
	for i := 0; i < 10000; i++ {
		ts = append(ts, (rng.Float64()-0.5)*20)
	}
	for _, v := range ts {
		want := int8(math.Max(-8, math.Min(7, math.Round(v))))
		if got := level(v); got != want {
			t.Errorf("level(%v): got %d, want %d", v, got, want)
		}
	}
}
