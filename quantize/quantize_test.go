package quantize

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// refQ8Block is an independent model of SPEC.md's Q8_0 rule: every float32
// operation is done in float64 and rounded to float32 after it. Float64 holds the
// exact product or sum of two float32 values closely enough that this rounding gives
// the correctly rounded float32 result, so it models IEEE float32 arithmetic without
// relying on the code under test. dq is the scale to quantize against (nil: amax/127).
func refQ8Block(x []float32, f16 bool) (q []int8, d float32) {
	q = make([]int8, len(x))
	amax := 0.0
	for _, v := range x {
		amax = math.Max(amax, math.Abs(float64(v)))
	}
	if amax < 1e-30 {
		return q, 0
	}
	d = float32(amax / 127)
	is := float32(127 / amax)
	if f16 {
		d = refF16(d)
		if d == 0 {
			return q, 0
		}
		is = float32(1 / float64(d))
	}
	for i, v := range x {
		p := float32(float64(v) * float64(is))
		t := float32(float64(p) + math.Copysign(0.5, float64(v)))
		r := math.Trunc(float64(t))
		q[i] = int8(math.Max(-127, math.Min(127, r)))
	}
	return q, d
}

// refF16 rounds to the nearest f16 (ties to even) by searching the f16 grid in
// float64: an independent model of IEEE binary16 rounding for |v| ≤ 65504.
func refF16(v float32) float32 {
	a := math.Abs(float64(v))
	if a == 0 {
		return v
	}
	// spacing of f16 values around a: 2^(e-10) for normal, 2^-24 for subnormal
	e := math.Floor(math.Log2(a))
	if e < -14 {
		e = -14
	}
	ulp := math.Exp2(e - 10)
	r := math.RoundToEven(a/ulp) * ulp
	return float32(math.Copysign(r, float64(v)))
}

func TestQ8_0Edge(t *testing.T) {
	sub := math.Float32frombits(1)               // smallest subnormal
	below := math.Nextafter32(float32(1e-30), 0) // largest float32 below 1e-30
	at := float32(1e-30)                         // quantizes (≥ 1e-30)
	tests := []struct {
		name  string
		x     []float32
		wantQ map[int]int8 // indices checked by hand; the rest checked against refQ8Block
		wantD float32
	}{
		{"zero block", nil, map[int]int8{0: 0}, 0},
		{"amax below 1e-30", []float32{0: below, 5: -below}, map[int]int8{0: 0, 5: 0}, 0},
		{"subnormals", []float32{0: sub, 1: -sub * 3}, map[int]int8{0: 0, 1: 0}, 0},
		{"amax at 1e-30", []float32{0: at, 1: -at}, map[int]int8{0: 127, 1: -127}, at / 127},
		{"exact ties", []float32{0: 127, 1: 63.5, 2: -63.5, 3: 0.5, 4: -0.5, 5: 126.5, 6: 0.25, 7: -1.5},
			map[int]int8{0: 127, 1: 64, 2: -64, 3: 1, 4: -1, 5: 127, 6: 0, 7: -2}, 1},
		{"negative zero", []float32{0: float32(math.Copysign(0, -1)), 1: -2, 2: 2},
			map[int]int8{0: 0, 1: -127, 2: 127}, float32(2.0 / 127)},
		{"one huge value", []float32{0: 1e30, 1: 1, 2: -3e27, 3: 4e27},
			map[int]int8{0: 127, 1: 0, 2: 0, 3: 1}, float32(1e30 / 127.0)},
		{"float max", []float32{0: math.MaxFloat32, 1: -math.MaxFloat32},
			map[int]int8{0: 127, 1: -127}, float32(math.MaxFloat32 / 127)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := make([]float32, 32)
			copy(x, tc.x)
			q := make([]int8, 32)
			d := make([]float32, 1)
			Q8_0(x, q, d)
			if d[0] != tc.wantD {
				t.Errorf("d: got %v, want %v", d[0], tc.wantD)
			}
			for i, w := range tc.wantQ {
				if q[i] != w {
					t.Errorf("q[%d] (x=%v): got %v, want %v", i, x[i], q[i], w)
				}
			}
			rq, rd := refQ8Block(x, false)
			if rd != d[0] {
				t.Errorf("d: got %v, want %v (reference)", d[0], rd)
			}
			for i := range q {
				if q[i] != rq[i] {
					t.Errorf("q[%d] (x=%v): got %v, want %v (reference)", i, x[i], q[i], rq[i])
				}
			}
		})
	}
}

// TestQ8_0Clamp: with f16 scales d is rounded first. A normal f16 is within 2^-11
// of d, too little to push x/d past 127.5, but an f16 subnormal d can be far below
// amax/127: amax/127 = 1.4·2^-24 rounds to 2^-24, so x/d = 177.8 must clamp to 127.
func TestQ8_0Clamp(t *testing.T) {
	amax := float32(127 * 1.4 * math.Exp2(-24))
	x := make([]float32, 32)
	x[0], x[1], x[2] = amax, -amax, amax/2 // amax/2/2^-24 = 88.9
	q, s, err := Matrix(TypeQ8_0, x, 1, 32, Options{F16Scales: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := DecodeScales(s, true)[0]; d != float32(math.Exp2(-24)) {
		t.Fatalf("f16 d: got %v, want 2^-24", d)
	}
	if got := []int8{int8(q[0]), int8(q[1]), int8(q[2])}; !slices.Equal(got, []int8{127, -127, 89}) {
		t.Errorf("quants: got %v, want [127 -127 89]", got)
	}
}

func TestQ8_0Random(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 2000; n++ {
		x := make([]float32, 32)
		scale := math.Exp2(float64(rng.IntN(200) - 100))
		for i := range x {
			x[i] = float32(rng.NormFloat64() * scale)
		}
		if n%7 == 0 { // exact ties: multiples of amax/254
			for i := range x {
				x[i] = float32(rng.IntN(255)-127) / 2
			}
		}
		for _, f16 := range []bool{false, true} {
			rq, rd := refQ8Block(x, f16)
			if f16 && math.Abs(float64(rd)) > 65504 {
				continue
			}
			q, s, err := Matrix(TypeQ8_0, x, 1, 32, Options{F16Scales: f16})
			if err != nil {
				t.Fatal(err)
			}
			if d := DecodeScales(s, f16)[0]; d != rd {
				t.Fatalf("f16=%v block %v: d: got %v, want %v", f16, x, d, rd)
			}
			for i := range rq {
				if int8(q[i]) != rq[i] {
					t.Fatalf("f16=%v x[%d]=%v: got %d, want %d", f16, i, x[i], int8(q[i]), rq[i])
				}
			}
			if !f16 { // the activation quantizer is the same rule
				q2, d2 := make([]int8, 32), make([]float32, 1)
				Q8_0(x, q2, d2)
				if d2[0] != rd || !slices.Equal(q2, rq) {
					t.Fatalf("Q8_0(%v): got %v %v, want %v %v", x, q2, d2[0], rq, rd)
				}
			}
		}
	}
}

func TestThreadsIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rows, cols := 37, 256
	w := make([]float32, rows*cols)
	for i := range w {
		w[i] = float32(rng.NormFloat64())
	}
	imp := make([]float32, cols)
	for i := range imp {
		imp[i] = float32(0.001 + rng.ExpFloat64())
	}
	cases := []struct {
		name string
		t    Type
		opt  Options
	}{
		{"q8_0", TypeQ8_0, Options{}},
		{"q8_0 f16", TypeQ8_0, Options{F16Scales: true}},
		{"q4_0 best", TypeQ4_0, Options{}},
		{"q4_0 best imatrix f16", TypeQ4_0, Options{Importance: imp, F16Scales: true}},
		{"q4_0 round", TypeQ4_0, Options{Q4Rule: Round}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q1, s1, err := Matrix(c.t, w, rows, cols, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{2, 3, 8, 64} {
				o := c.opt
				o.Threads = n
				q2, s2, err := Matrix(c.t, w, rows, cols, o)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(q1, q2) || !bytes.Equal(s1, s2) {
					t.Errorf("threads=%d: bytes differ from threads=1", n)
				}
			}
		})
	}
}
