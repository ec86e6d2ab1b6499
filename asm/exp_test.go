package asm

import (
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"testing"
)

// expInputs returns the awkward arguments of the exponential kernels: zeros,
// infinities, NaNs with payloads, subnormals, the largest floats, the clamp
// and overflow boundaries and their neighbours, random bit patterns and
// random values in the range where the results are finite.
func expInputs(r *rand.Rand) []float32 {
	bits := []uint32{
		0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0xff812345,
		0x7fbfffff, 1, 0x80000001, 0x007fffff, 0x807fffff, 0x7f7fffff, 0xff7fffff,
	}
	var xs []float32
	for _, b := range bits {
		xs = append(xs, math.Float32frombits(b))
	}
	for _, v := range []float32{-110, -104, -103.97, -103.28, -87.33, 88.72, 88.7228, 88.73, 100, 709, 709.79, 710, -708, -745.2, 0.5, -0.5, 1, -1} {
		for d := -3; d <= 3; d++ {
			xs = append(xs, math.Float32frombits(uint32(int32(math.Float32bits(v))+int32(d))))
		}
	}
	for range 1 << 15 {
		xs = append(xs, math.Float32frombits(r.Uint32()))
		xs = append(xs, float32(r.Float64()*240-120))
		xs = append(xs, float32(r.NormFloat64()*4))
	}
	return xs
}

func sameBits(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }

// TestExpKernelsMatchGeneric checks ExpShiftF32 and SiLUMulF32 of every
// variant against their pure-Go definitions (ExpF32) bit for bit, on every
// length from 0 to 13 at every offset and on awkward values, with guard
// elements around the output left untouched.
func TestExpKernelsMatchGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	xs := expInputs(r)
	us := make([]float32, len(xs))
	for i := range us {
		us[i] = float32(r.NormFloat64())
	}
	us[0], us[1] = float32(math.Inf(1)), 0
	const guard = 3
	const sentinel = float32(-12345.5)
	for _, k := range AvailableKernels() {
		for _, m := range []float32{0, 1.5, -3, 88, float32(math.Inf(1))} {
			for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 13, len(xs)} {
				for off := 0; off+n <= len(xs) && off < 8*13; off += max(1, n) {
					src, u := xs[off:off+n], us[off:off+n]
					want := append([]float32(nil), src...)
					wantS := append([]float32(nil), src...)
					// The definitions, element by element (not through the
					// exported functions: a wrapper that skipped its work would
					// give both sides the same untouched slice).
					for j, v := range src {
						want[j] = ExpF32(v - m)
						wantS[j] = float32(v/float32(1+ExpF32(-v))) * u[j]
					}
					buf := make([]float32, n+2*guard)
					bufS := make([]float32, n+2*guard)
					for i := range buf {
						buf[i], bufS[i] = sentinel, sentinel
					}
					copy(buf[guard:], src)
					copy(bufS[guard:], src)
					withKernel(k, func() {
						ExpShiftF32(buf[guard:guard+n], m)
						SiLUMulF32(bufS[guard:guard+n], u)
					})
					for i := range buf {
						if i < guard || i >= guard+n {
							if buf[i] != sentinel || bufS[i] != sentinel {
								t.Fatalf("%s n=%d: guard element %d overwritten", k, n, i)
							}
							continue
						}
						j := i - guard
						if !sameBits(buf[i], want[j]) {
							t.Fatalf("%s: ExpShiftF32(%v (%#x) - %v): got %v (%#x), want %v (%#x)", k, src[j], math.Float32bits(src[j]), m, buf[i], math.Float32bits(buf[i]), want[j], math.Float32bits(want[j]))
						}
						if !sameBits(bufS[i], wantS[j]) {
							t.Fatalf("%s: SiLUMulF32(%v (%#x), %v): got %v (%#x), want %v (%#x)", k, src[j], math.Float32bits(src[j]), u[j], bufS[i], math.Float32bits(bufS[i]), wantS[j], math.Float32bits(wantS[j]))
						}
					}
					if n == len(xs) {
						break
					}
				}
			}
		}
	}
}

// withKernel runs f with variant k active.
func withKernel(k Kernel, f func()) {
	defer func(old Kernel) { active = old }(active)
	active = k
	f()
}

// TestExpExhaustive compares ExpShiftF32 (m = 0) of the best variant with
// the pure-Go ExpF32 on all 2^32 float32 bit patterns, and checks that every
// finite result lies within 2 ulp of math.Exp. All of them take about a minute
// of two cores, so that runs only with KRAFLA_EXHAUSTIVE=1; otherwise every
// 4093rd pattern (a prime stride: about a million inputs covering every
// exponent and sign, NaNs and infinities included).
func TestExpExhaustive(t *testing.T) {
	stride := uint64(4093)
	if os.Getenv("KRAFLA_EXHAUSTIVE") == "1" {
		stride = 1
	} else {
		t.Log("every 4093rd bit pattern; KRAFLA_EXHAUSTIVE=1 runs all 2^32")
	}
	const chunk = 1 << 16
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	bad := 0
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := make([]float32, chunk)
			for c := uint64(w); c*chunk*stride < 1<<32; c += uint64(workers) {
				bits := func(i int) uint32 { return uint32((c*chunk + uint64(i)) * stride) }
				for i := range x {
					x[i] = math.Float32frombits(bits(i))
				}
				ExpShiftF32(x, 0)
				for i, v := range x {
					in := math.Float32frombits(bits(i))
					want := ExpF32(in)
					if !sameBits(v, want) || expULP(in, v) > 2 {
						mu.Lock()
						if bad++; bad <= 10 {
							t.Errorf("exp(%v (%#x)): got %#x, want %#x (%d ulp from math.Exp)", in, math.Float32bits(in), math.Float32bits(v), math.Float32bits(want), expULP(in, v))
						}
						mu.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
	if bad > 0 {
		t.Errorf("%d inputs (every %d of 2^32) differ", bad, stride)
	}
}

// expULP is the distance in float32 steps between got and e^x rounded to
// float32 (0 for NaN inputs).
func expULP(x, got float32) int64 {
	if x != x {
		return 0
	}
	want := float32(math.Exp(float64(x)))
	d := int64(math.Float32bits(got)) - int64(math.Float32bits(want))
	return max(d, -d)
}

// TestExpF32Accuracy checks ExpF32 against math.Exp on a dense sample of the
// range where results are finite and nonzero, the overflow and underflow
// ends, and NaN quieting.
func TestExpF32Accuracy(t *testing.T) {
	worst := int64(0)
	for _, r := range [][2]float32{{0, 88.72}, {float32(math.Copysign(0, -1)), -103.9}} {
		for b := math.Float32bits(r[0]); b <= math.Float32bits(r[1]); b += 997 {
			x := math.Float32frombits(b)
			worst = max(worst, expULP(x, ExpF32(x)))
		}
	}
	if worst > 2 {
		t.Errorf("ExpF32: %d ulp from math.Exp, want ≤ 2", worst)
	}
	t.Logf("worst: %d ulp", worst)
	for _, tc := range []struct{ x, want float32 }{
		{89, float32(math.Inf(1))}, {float32(math.Inf(1)), float32(math.Inf(1))},
		{-105, 0}, {float32(math.Inf(-1)), 0}, {0, 1},
	} {
		if got := ExpF32(tc.x); got != tc.want {
			t.Errorf("ExpF32(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
	if got := math.Float32bits(ExpF32(math.Float32frombits(0x7f800001))); got != 0x7fc00001 {
		t.Errorf("ExpF32(signalling NaN) = %#x, want the quiet %#x", got, 0x7fc00001)
	}
}

// FuzzExp checks ExpShiftF32 and SiLUMulF32 of the active variant against the
// pure-Go definitions on arbitrary bit patterns.
func FuzzExp(f *testing.F) {
	f.Add(uint32(0x42b17218), uint32(0), uint32(0x3f800000), 5)
	f.Add(uint32(0xc2dc0000), uint32(0x7f800000), uint32(0x80000000), 7)
	f.Fuzz(func(t *testing.T, xb, mb, ub uint32, n int) {
		n = n&15 + 1
		x := make([]float32, n)
		u := make([]float32, n)
		for i := range x {
			x[i] = math.Float32frombits(xb + uint32(i)*0x01000193)
			u[i] = math.Float32frombits(ub ^ uint32(i)<<3)
		}
		m := math.Float32frombits(mb)
		want, wantS := append([]float32(nil), x...), append([]float32(nil), x...)
		generic(func() {
			ExpShiftF32(want, m)
			SiLUMulF32(wantS, u)
		})
		got, gotS := append([]float32(nil), x...), append([]float32(nil), x...)
		ExpShiftF32(got, m)
		SiLUMulF32(gotS, u)
		for i := range x {
			if !sameBits(got[i], want[i]) || !sameBits(gotS[i], wantS[i]) {
				t.Fatalf("x=%#x m=%#x u=%#x: exp got %#x want %#x, silu got %#x want %#x", math.Float32bits(x[i]), mb, math.Float32bits(u[i]),
					math.Float32bits(got[i]), math.Float32bits(want[i]), math.Float32bits(gotS[i]), math.Float32bits(wantS[i]))
			}
		}
	})
}

// TestExpSweep compares every variant's ExpShiftF32 and SiLUMulF32 with the
// pure-Go ones bit for bit over every 65521st float32 bit pattern (NaNs,
// infinities, subnormals and both clamps included): a cheap slice of
// TestExpExhaustive that always runs, under qemu too.
func TestExpSweep(t *testing.T) {
	var x []float32
	for u := uint64(0); u < 1<<32; u += 65521 {
		x = append(x, math.Float32frombits(uint32(u)))
	}
	u := make([]float32, len(x))
	for i := range u {
		u[i] = float32(i%7) - 3
	}
	want, wantS := append([]float32(nil), x...), append([]float32(nil), x...)
	generic(func() {
		ExpShiftF32(want, 0.5)
		SiLUMulF32(wantS, u)
	})
	variants(t, func(t *testing.T) {
		got, gotS := append([]float32(nil), x...), append([]float32(nil), x...)
		ExpShiftF32(got, 0.5)
		SiLUMulF32(gotS, u)
		for i := range x {
			if !sameFloat(got[i], want[i]) || !sameFloat(gotS[i], wantS[i]) {
				t.Fatalf("x = %#08x: exp %#08x silu %#08x, want %#08x %#08x", math.Float32bits(x[i]),
					math.Float32bits(got[i]), math.Float32bits(gotS[i]), math.Float32bits(want[i]), math.Float32bits(wantS[i]))
			}
		}
	})
}
