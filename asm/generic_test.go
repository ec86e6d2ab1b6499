package asm

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestQuantizeQ8_0Table(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	tests := []struct {
		name  string
		x     map[int]float32 // other elements 0
		wantD float32
		wantQ map[int]int8 // other quants 0
	}{
		// amax 1: d = 1/127, s = 127; 0.5·127+0.5 = 64, 0.25·127+0.5 = 32.25.
		{"unit", map[int]float32{0: 1, 1: -1, 2: 0.5, 3: -0.25, 31: 0.25}, float32(1) / 127,
			map[int]int8{0: 127, 1: -127, 2: 64, 3: -32, 31: 32}},
		// 127/127.5·127 rounds: x = 1 with amax 1 and halves: 1/254·127 = 0.5 → +0.5 = 1.
		{"half", map[int]float32{0: -2, 5: 1.0 / 127}, float32(2) / 127, map[int]int8{0: -127, 5: 1}},
		{"tiny block", map[int]float32{0: 1e-31, 1: -9e-31}, 0, nil},
		{"NaN ignored", map[int]float32{0: nan, 1: 1}, float32(1) / 127, map[int]int8{1: 127}},
		{"Inf", map[int]float32{0: inf, 1: 1}, inf, nil},
		{"negative zero", map[int]float32{0: float32(math.Copysign(0, -1)), 1: 2}, float32(2) / 127, map[int]int8{1: 127}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := make([]float32, 32)
			for i, v := range tt.x {
				x[i] = v
			}
			q := make([]int8, 32)
			for i := range q {
				q[i] = 99 // must be overwritten
			}
			d := []float32{99}
			QuantizeQ8_0(x, q, d)
			if math.Float32bits(d[0]) != math.Float32bits(tt.wantD) {
				t.Errorf("d: got %v, want %v", d[0], tt.wantD)
			}
			for i := range q {
				if q[i] != tt.wantQ[i] {
					t.Errorf("q[%d]: got %v, want %v", i, q[i], tt.wantQ[i])
				}
			}
		})
	}
}

// TestDotOrder pins the reduction with a case whose float32 result depends
// on it (worked by hand): block 0 (scale 1024) gives 4·64·64·1024 = 2^24,
// blocks 1 and 2 (scale 1) give 1 each. Added one at a time in block order,
// 2^24 + 1 rounds to 2^24 (ties to even) twice, so r = 2^24; any tree that
// adds the two ones first gives 2^24 + 2. Block 3 holds products 1 and −1 in
// different lanes: its exact integer sum is 0, and so is its contribution.
func TestDotOrder(t *testing.T) {
	w := make([]int8, 128)
	a := make([]int8, 128)
	for i := range 4 {
		w[i], a[i] = 64, 64
	}
	w[32], a[32] = 1, 1
	w[64+31], a[64+31] = 1, 1
	w[96], a[96] = 1, 1
	w[96+17], a[96+17] = -1, 1
	dw := []float32{1024, 1, 1, 1e30}
	da := []float32{1, 1, 1, 1}
	if got, want := DotQ8_0(w, dw, a, da), float32(1<<24); got != want {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestDotExact checks products whose float32 arithmetic is exact (scales
// powers of two, integer partial sums below 2^24) against an int64 sum.
func TestDotExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, nb := range []int{1, 2, 3, 7, 8, 15, 17, 33} {
		w := make([]int8, nb*32)
		a := make([]int8, nb*32)
		dw := make([]float32, nb)
		da := make([]float32, nb)
		var want float64
		for b := range nb {
			dw[b] = float32(math.Ldexp(1, rng.IntN(3)))
			da[b] = float32(math.Ldexp(1, rng.IntN(3)))
			var s int64
			for i := b * 32; i < (b+1)*32; i++ {
				w[i] = int8(rng.IntN(31) - 15)
				a[i] = int8(rng.IntN(31) - 15)
				s += int64(w[i]) * int64(a[i])
			}
			want += float64(s) * float64(dw[b]) * float64(da[b])
		}
		if got := DotQ8_0(w, dw, a, da); float64(got) != want {
			t.Errorf("nb=%d: got %v, want %v", nb, got, want)
		}
	}
}

// TestQ4MatchesQ8 checks SPEC.md's nibble order: byte j of a block holds
// element j low and element j+16 high, value nibble−8.
func TestQ4MatchesQ8(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, nb := range []int{1, 2, 3, 7, 8, 15, 17, 33} {
		w4 := make([]byte, nb*16)
		w8 := make([]int8, nb*32)
		for b := range nb {
			for j := range 16 {
				lo, hi := rng.IntN(16), rng.IntN(16)
				w4[b*16+j] = byte(lo | hi<<4)
				w8[b*32+j] = int8(lo - 8)
				w8[b*32+j+16] = int8(hi - 8)
			}
		}
		a, da := randActs(rng, 1, nb)
		dw := randScales(rng, nb)
		got, want := DotQ4_0(w4, dw, a, da), DotQ8_0(w8, dw, a, da)
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Errorf("nb=%d: got %v, want %v", nb, got, want)
		}
	}
}

func randActs(rng *rand.Rand, n, nb int) ([]int8, []float32) {
	x := make([]float32, n*nb*32)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	a := make([]int8, len(x))
	da := make([]float32, n*nb)
	QuantizeQ8_0(x, a, da)
	return a, da
}

func randScales(rng *rand.Rand, n int) []float32 {
	d := make([]float32, n)
	for i := range d {
		d[i] = float32(rng.NormFloat64() * 0.01)
	}
	return d
}
