package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestF16Table(t *testing.T) {
	tests := []struct {
		x    float32
		want uint16
	}{
		{1, 0x3c00},
		{-2, 0xc000},
		{65504, 0x7bff},                            // largest finite
		{65519.996, 0x7bff},                        // below the halfway point to 65536
		{65520, 0x7c00},                            // halfway: ties to even, which is Inf
		{float32(math.Inf(-1)), 0xfc00},            // -Inf
		{float32(math.Ldexp(1, -14)), 0x0400},      // smallest normal
		{float32(math.Ldexp(1, -24)), 0x0001},      // smallest subnormal
		{float32(math.Ldexp(1, -25)), 0x0000},      // halfway to it: ties to even (0)
		{float32(math.Ldexp(1.5, -25)), 0x0001},    // above halfway
		{float32(math.Ldexp(3, -25)), 0x0002},      // 1.5 units: ties to even (2)
		{float32(math.Ldexp(1023.5, -24)), 0x0400}, // rounds up into the smallest normal
		{1 + float32(math.Ldexp(1, -11)), 0x3c00},  // halfway between 1 and next: even (1)
		{1 + float32(math.Ldexp(3, -11)), 0x3c02},  // halfway between next and next+1: even
		{float32(math.Copysign(0, -1)), 0x8000},    // -0
		{math.Float32frombits(0x7fc00000), 0x7e00}, // quiet NaN
		{math.Float32frombits(0x7f802000), 0x7e01}, // signalling NaN: quieted, payload top bits kept
		{math.Float32frombits(0x00000001), 0x0000}, // f32 subnormal
	}
	for _, tt := range tests {
		if got := F32ToF16(tt.x); got != tt.want {
			t.Errorf("F32ToF16(%v = %#08x) = %#04x, want %#04x", tt.x, math.Float32bits(tt.x), got, tt.want)
		}
	}
}

// TestF16RoundTrip widens every binary16 value and rounds it back.
func TestF16RoundTrip(t *testing.T) {
	for h := range 1 << 16 {
		x := F16ToF32(uint16(h))
		want := uint16(h)
		if x != x {
			want |= 0x0200 // NaNs come back quiet
		}
		if got := F32ToF16(x); got != want {
			t.Fatalf("%#04x → %v → %#04x", h, x, got)
		}
		if h&0x7c00 != 0x7c00 && h&0x7fff != 0 {
			// The value itself, from the encoding's definition.
			e, m := int(h>>10&0x1f), float64(h&0x3ff)
			v := math.Ldexp(m, -24)
			if e > 0 {
				v = math.Ldexp(1024+m, e-25)
			}
			if h&0x8000 != 0 {
				v = -v
			}
			if float64(x) != v {
				t.Fatalf("F16ToF32(%#04x) = %v, want %v", h, x, v)
			}
		}
	}
}

// TestF16Nearest checks on random float32 values that the rounding is to the
// nearest binary16, ties to even.
func TestF16Nearest(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for range 200000 {
		x := math.Float32frombits(rng.Uint32())
		if x != x || math.Abs(float64(x)) >= 65520 {
			continue
		}
		h := F32ToF16(x)
		d := math.Abs(float64(x) - float64(F16ToF32(h)))
		for _, n := range []uint16{h + 1, h - 1} {
			if n&0x7c00 == 0x7c00 || (h&0x7fff == 0 && n == h-1) {
				continue
			}
			dn := math.Abs(float64(x) - float64(F16ToF32(n)))
			if dn < d || dn == d && h&1 == 1 {
				t.Fatalf("F32ToF16(%v) = %#04x (off by %g), but %#04x is off by %g", x, h, d, n, dn)
			}
		}
	}
}

func genF16Input(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch rng.IntN(10) {
		case 0:
			x[i] = math.Float32frombits(rng.Uint32())
		case 1:
			x[i] = float32(rng.NormFloat64() * 70000)
		case 2:
			x[i] = float32(rng.NormFloat64() * 1e-6)
		default:
			x[i] = float32(rng.NormFloat64())
		}
	}
	return x
}

func TestF16KernelsMatchGeneric(t *testing.T) {
	variants(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(13, 14))
		for _, m := range []int{1, 7, 8, 16, 24, 32, 40, 64, 72, 128} {
			for _, n := range []int{1, 2, 3, 4, 5, 9} {
				stride := m + rng.IntN(3)*8
				x := genF16Input(rng, (n-1)*stride+m)
				q := make([]float32, m)
				for i := range q {
					q[i] = float32(rng.NormFloat64())
				}
				w := make([]float32, n)
				for j := range w {
					w[j] = float32(rng.Float64())
				}
				checkF16(t, fmt.Sprintf("m=%d n=%d stride=%d", m, n, stride), x, q, w, stride)
			}
		}
	})
}

// FuzzF16 compares the variants' f16 kernels with generic on values from the
// fuzzer (every float32 class: NaNs, infinities, subnormals, overflow).
func FuzzF16(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f, 0, 0, 0xc0, 0x7f, 1, 0, 0x80, 0x47, 0xff, 0xff, 0x7f, 0x7f}, uint8(13), uint8(3), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, mSel, nSel, pad uint8) {
		m := 1 + int(mSel)%140
		n := 1 + int(nSel)%12
		stride := m + int(pad)%7
		x := make([]float32, (n-1)*stride+m)
		for i := range x {
			x[i] = fuzzScale(data, i)
		}
		q := make([]float32, m)
		for i := range q {
			q[i] = fuzzScale(data, 3*i+1)
		}
		w := make([]float32, n)
		for i := range w {
			w[i] = fuzzScale(data, 5*i+2)
		}
		variants(t, func(t *testing.T) { checkF16(t, "fuzz", x, q, w, stride) })
	})
}

// checkF16 checks PutF16 and RoundF16 of x against generic, and the strided
// f16 weighted sum of x by w onto q (len(x) = (len(w)−1)·stride + len(q))
// against the f32 one on the widened values.
func checkF16(t *testing.T, name string, x, q, w []float32, stride int) {
	t.Helper()
	want := make([]uint16, len(x))
	generic(func() { PutF16(want, x) })
	got := make([]uint16, len(x))
	PutF16(got, x)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: PutF16(%#08x) got %#04x, want %#04x", name, math.Float32bits(x[i]), got[i], want[i])
		}
	}
	r := append([]float32(nil), x...)
	RoundF16(r)
	for i := range r {
		if w := F16ToF32(want[i]); !sameFloat(r[i], w) {
			t.Fatalf("%s: RoundF16: [%d] got %v, want %v", name, i, r[i], w)
		}
	}
	wide := make([]float32, len(want))
	for i, h := range want {
		wide[i] = F16ToF32(h)
	}
	yW := append([]float32(nil), q...)
	generic(func() { AxpyF32Strided(yW, w, wide, stride) })
	y := append([]float32(nil), q...)
	AxpyF16Strided(y, w, want, stride)
	for i := range y {
		if !sameFloat(y[i], yW[i]) {
			t.Fatalf("%s: AxpyF16Strided [%d] got %v, want %v", name, i, y[i], yW[i])
		}
	}
}

// TestF16Sweep runs every variant's PutF16 and RoundF16 over a sweep of
// float32 bit patterns (every 4099th, plus every NaN payload boundary and
// subnormal edge nearby) and compares them bit for bit with F32ToF16.
func TestF16Sweep(t *testing.T) {
	var x []float32
	for u := uint64(0); u < 1<<32; u += 4099 {
		x = append(x, math.Float32frombits(uint32(u)))
	}
	for _, u := range []uint32{0x7f800001, 0x7fc00000, 0x7f802000, 0x7f801fff, 0xffbfffff, 0x33000000, 0x33000001, 0x387fe000, 0x387ff000, 0x477ff000, 0x477fefff} {
		x = append(x, math.Float32frombits(u))
	}
	x = x[:len(x)&^7]
	variants(t, func(t *testing.T) {
		dst := make([]uint16, len(x))
		PutF16(dst, x)
		r := append([]float32(nil), x...)
		RoundF16(r)
		for i, v := range x {
			if want := F32ToF16(v); dst[i] != want {
				t.Fatalf("PutF16(%#08x) = %#04x, want %#04x", math.Float32bits(v), dst[i], want)
			}
			if want := F16ToF32(F32ToF16(v)); math.Float32bits(r[i]) != math.Float32bits(want) {
				t.Fatalf("RoundF16(%#08x) = %#08x, want %#08x", math.Float32bits(v), math.Float32bits(r[i]), math.Float32bits(want))
			}
		}
	})
}
