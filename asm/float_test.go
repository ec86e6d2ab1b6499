package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestDotF32Exact checks small integer data, where every order gives the
// same exact sum, and the 8-lane tree on a case worked by hand.
func TestDotF32Exact(t *testing.T) {
	for _, n := range []int{1, 7, 8, 9, 33} {
		a := make([]float32, n)
		b := make([]float32, n)
		var want float32
		for i := range a {
			a[i], b[i] = float32(i%5-2), float32(i%3+1)
			want += a[i] * b[i]
		}
		if got := DotF32(a, b); got != want {
			t.Errorf("n=%d: got %v, want %v", n, got, want)
		}
	}
	// Lane 0 holds 2^24, lanes 2, 4 and 6 hold 1: v0 = 2^24+1 rounds to
	// 2^24, v2 = 2, r = 2^24+2 (a left-to-right sum gives 2^24).
	a := []float32{1 << 24, 0, 1, 0, 1, 0, 1, 0}
	b := []float32{1, 1, 1, 1, 1, 1, 1, 1}
	if got, want := DotF32(a, b), float32(1<<24+2); got != want {
		t.Errorf("order: got %v, want %v", got, want)
	}
}

func TestFloatKernelsMatchGeneric(t *testing.T) {
	variants(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 12))
		for n := 1; n <= 70; n++ {
			for _, kind := range xKinds {
				x := make([]float32, n)
				y := make([]float32, n)
				for i := range x {
					x[i], y[i] = genX(rng, kind), genX(rng, kind)
				}
				s := genX(rng, kind)
				name := fmt.Sprintf("n=%d/%s", n, kind)
				checkFloat(t, name, x, y, s, n%3)
			}
		}
	})
}

func checkFloat(t *testing.T, name string, x, y []float32, s float32, off int) {
	t.Helper()
	n := len(x)
	var wantDot float32
	wantY := append([]float32(nil), y...)
	generic(func() {
		wantDot = DotF32(x, y)
		AxpyF32(wantY, s, x)
	})
	xs, _ := guarded(n, off, float32(3))
	copy(xs, x)
	ys, checkY := guarded(n, off, float32(5))
	copy(ys, y)
	if got := DotF32(xs, ys); !sameFloat(got, wantDot) {
		t.Fatalf("%s DotF32: got %v, want %v", name, got, wantDot)
	}
	AxpyF32(ys, s, xs)
	checkY(t, name+" AxpyF32")
	for i := range ys {
		if !sameFloat(ys[i], wantY[i]) {
			t.Fatalf("%s AxpyF32: y[%d] got %v, want %v", name, i, ys[i], wantY[i])
		}
	}
}

// FuzzFloat compares the variants' DotF32 and AxpyF32 with generic on any
// float32 bits.
func FuzzFloat(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f, 0, 0, 0xc0, 0x7f, 1, 0, 0, 0}, uint8(13))
	f.Fuzz(func(t *testing.T, data []byte, nSel uint8) {
		n := 1 + int(nSel)%80
		x := make([]float32, n)
		y := make([]float32, n)
		for i := range x {
			x[i], y[i] = fuzzScale(data, 2*i), fuzzScale(data, 2*i+1)
		}
		s := fuzzScale(data, 2*n)
		if math.IsNaN(float64(s)) && nSel%2 == 0 {
			s = 1
		}
		variants(t, func(t *testing.T) { checkFloat(t, "fuzz", x, y, s, int(nSel)%3) })
	})
}

func TestStridedMatchGeneric(t *testing.T) {
	variants(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(13, 14))
		for _, m := range []int{1, 3, 7, 8, 9, 31, 32, 33, 64, 70, 128} {
			for _, n := range []int{1, 2, 3, 4, 5, 9} {
				for _, kind := range xKinds {
					stride := m + rng.IntN(5)
					q := make([]float32, m)
					for i := range q {
						q[i] = genX(rng, kind)
					}
					kv := make([]float32, (n-1)*stride+m)
					for i := range kv {
						kv[i] = genX(rng, kind)
					}
					w := make([]float32, n)
					for i := range w {
						w[i] = genX(rng, kind)
					}
					checkStrided(t, fmt.Sprintf("m=%d/n=%d/stride=%d/%s", m, n, stride, kind), q, kv, w, stride, rng.IntN(3))
				}
			}
		}
	})
}

func checkStrided(t *testing.T, name string, q, kv, w []float32, stride, off int) {
	t.Helper()
	m := len(q)
	wantY := append([]float32(nil), q...) // y starts as q
	generic(func() { AxpyF32Strided(wantY, w, kv, stride) })
	kvs, _ := guarded(len(kv), off, float32(2))
	copy(kvs, kv)
	y, checkY := guarded(m, off, float32(-1))
	copy(y, q)
	AxpyF32Strided(y, w, kvs, stride)
	checkY(t, name+" AxpyF32Strided")
	for i := range y {
		if !sameFloat(y[i], wantY[i]) {
			t.Fatalf("%s AxpyF32Strided: y[%d] got %v, want %v", name, i, y[i], wantY[i])
		}
	}
}

// FuzzStrided compares the variants' strided float kernels with generic.
func FuzzStrided(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f, 0, 0, 0xc0, 0x7f, 1, 0, 0, 0}, uint8(13), uint8(3), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, mSel, nSel, pad uint8) {
		m := 1 + int(mSel)%140
		n := 1 + int(nSel)%12
		stride := m + int(pad)%7
		q := make([]float32, m)
		for i := range q {
			q[i] = fuzzScale(data, i)
		}
		kv := make([]float32, (n-1)*stride+m)
		for i := range kv {
			kv[i] = fuzzScale(data, 3*i+1)
		}
		w := make([]float32, n)
		for i := range w {
			w[i] = fuzzScale(data, 5*i+2)
		}
		variants(t, func(t *testing.T) { checkStrided(t, "fuzz", q, kv, w, stride, int(pad)%3) })
	})
}

// TestSumScaleMatchGeneric compares SumF32, ScaleF32 and DivF32 of every
// variant with the Go twins, and SumF32 with DotF32 by ones.
func TestSumScaleMatchGeneric(t *testing.T) {
	variants(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(31, 32))
		for _, n := range []int{1, 3, 7, 8, 9, 16, 31, 100, 4097} {
			for _, kind := range xKinds {
				x := make([]float32, n)
				ones := make([]float32, n)
				for i := range x {
					x[i], ones[i] = genX(rng, kind), 1
				}
				var want, wantDot float32
				generic(func() { want, wantDot = SumF32(x), DotF32(x, ones) })
				if got := SumF32(x); !sameFloat(got, want) || !sameFloat(want, wantDot) {
					t.Fatalf("n=%d %s: SumF32 = %v, generic %v, DotF32 by ones %v", n, kind, got, want, wantDot)
				}
				s := genX(rng, "normal")
				for _, div := range []bool{false, true} {
					w := append([]float32(nil), x...)
					g := append([]float32(nil), x...)
					generic(func() { scaleF32(w, s, div) })
					scaleF32(g, s, div)
					for i := range w {
						if !sameFloat(g[i], w[i]) {
							t.Fatalf("n=%d %s div=%v: [%d] got %v, want %v", n, kind, div, i, g[i], w[i])
						}
					}
				}
			}
		}
	})
}

// TestMaxF32 compares MaxF32 of every variant with softmax's loop: the same
// value (a zero maximum may differ in sign), NaNs skipped unless first.
func TestMaxF32(t *testing.T) {
	variants(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(33, 34))
		for _, n := range []int{1, 2, 7, 8, 9, 16, 17, 64, 100, 4099} {
			for _, kind := range xKinds {
				x := make([]float32, n)
				for i := range x {
					x[i] = genX(rng, kind)
				}
				if kind == "negzero" && n > 3 {
					x[0], x[2] = float32(math.Copysign(0, -1)), 0
				}
				for _, first := range []bool{false, true} {
					if first {
						x[0] = float32(math.NaN())
					}
					want := x[0]
					for _, v := range x[1:] {
						if v > want {
							want = v
						}
					}
					got := MaxF32(x)
					if !sameFloat(got, want) && !(got == 0 && want == 0) {
						t.Fatalf("n=%d %s nanFirst=%v: MaxF32 = %v, want %v", n, kind, first, got, want)
					}
				}
			}
		}
	})
}

// TestAxpyStridedGenericMatchesRef: the pure-Go AxpyF32Strided, which keeps
// 8 elements of y in registers while the values go by, equals its
// definition (one axpyF32Generic per value, in order) bit for bit, for
// lengths around the 8-element step and every kind of value.
func TestAxpyStridedGenericMatchesRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, m := range []int{1, 7, 8, 9, 16, 23, 64, 72} {
		for _, n := range []int{1, 2, 5, 17} {
			for _, kind := range xKinds {
				stride := m + rng.IntN(5)
				v := make([]float32, (n-1)*stride+m)
				w := make([]float32, n)
				y := make([]float32, m)
				for i := range v {
					v[i] = genX(rng, kind)
				}
				for i := range w {
					w[i] = genX(rng, kind)
				}
				for i := range y {
					y[i] = genX(rng, kind)
				}
				want := append([]float32(nil), y...)
				for j, a := range w {
					axpyF32Generic(want, a, v[j*stride:j*stride+m])
				}
				axpyF32StridedGeneric(y, w, v, stride)
				for i := range y {
					if !sameFloat(y[i], want[i]) {
						t.Fatalf("m=%d n=%d %s: y[%d] = %v, want %v", m, n, kind, i, y[i], want[i])
					}
				}
			}
		}
	}
}
