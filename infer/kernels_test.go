package infer

import (
	"math"
	"math/rand"
	"testing"
)

// TestFloatKernels compares the float kernels with float64 arithmetic over
// awkward lengths (tails of the 8-lane loops).
func TestFloatKernels(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for _, n := range []int{1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 130} {
		a, b := make([]float32, n), make([]float32, n)
		var dot, sum, ss float64
		for i := range a {
			a[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
			dot += float64(a[i]) * float64(b[i])
			sum += float64(a[i])
			ss += float64(a[i]) * float64(a[i])
		}
		tol := 1e-5 * math.Sqrt(float64(n)) * (1 + ss)
		if got := dotF32(a, b); math.Abs(float64(got)-dot) > tol {
			t.Errorf("n=%d: dotF32 got %v, want %v", n, got, dot)
		}
		if got := sumF32(a); math.Abs(float64(got)-sum) > tol {
			t.Errorf("n=%d: sumF32 got %v, want %v", n, got, sum)
		}
		g := make([]float32, n)
		for i := range g {
			g[i] = 1 + float32(i)/float32(n)
		}
		out := make([]float32, n)
		rmsNorm(out, a, g, 1e-6)
		s := 1 / math.Sqrt(ss/float64(n)+1e-6)
		for i := range out {
			if want := float64(a[i]) * s * float64(g[i]); math.Abs(float64(out[i])-want) > 1e-5*(1+math.Abs(want)) {
				t.Errorf("n=%d: rmsNorm[%d] got %v, want %v", n, i, out[i], want)
				break
			}
		}
		x := append([]float32(nil), a...)
		softmax(x)
		mx := math.Inf(-1)
		for _, v := range a {
			mx = math.Max(mx, float64(v))
		}
		z := 0.0
		for _, v := range a {
			z += math.Exp(float64(v) - mx)
		}
		for i := range x {
			if want := math.Exp(float64(a[i])-mx) / z; math.Abs(float64(x[i])-want) > 1e-6 {
				t.Errorf("n=%d: softmax[%d] got %v, want %v", n, i, x[i], want)
				break
			}
		}
	}
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"silu(1)", float64(silu(1)), 1 / (1 + math.Exp(-1))},
		{"silu(-3)", float64(silu(-3)), -3 / (1 + math.Exp(3))},
		{"gelu(1)", float64(gelu(1)), 0.8411919906082768}, // values from Python's math module
		{"gelu(-0.5)", float64(gelu(-0.5)), -0.15428599017485606},
		{"softplus(0)", float64(softplus(0)), math.Ln2},
		{"softplus(30)", float64(softplus(30)), 30},
		{"softcap(100, 30)", float64(softcap(100, 30)), 30 * math.Tanh(100.0/30)},
	} {
		if math.Abs(tc.got-tc.want) > 1e-6*(1+math.Abs(tc.want)) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

// TestPool checks that every item is handed out exactly once, each part as
// one range, in at most ceil(n/minChunk) parts, whatever the thread count and
// size.
func TestPool(t *testing.T) {
	for _, threads := range []int{1, 2, 3, 8} {
		p := newPool(threads)
		for _, n := range []int{0, 1, 5, 16, 17, 100} {
			seen := make([]int, n)
			calls := make([]int, threads)
			p.run(n, 4, func(part, lo, hi int) {
				calls[part]++
				for i := lo; i < hi; i++ {
					seen[i]++
				}
			})
			for i, c := range seen {
				if c != 1 {
					t.Fatalf("threads %d n %d: item %d handed out %d times, want 1", threads, n, i, c)
				}
			}
			used := 0
			for part, c := range calls {
				if c > 1 {
					t.Errorf("threads %d n %d: part %d called %d times, want at most 1", threads, n, part, c)
				}
				used += c
			}
			if want := (n + 3) / 4; used > want {
				t.Errorf("threads %d n %d: got %d parts, want at most %d (chunks of 4)", threads, n, used, want)
			}
		}
		p.close()
	}
}

func BenchmarkDotF32(b *testing.B) {
	x, y := make([]float32, 64), make([]float32, 64)
	for i := range x {
		x[i], y[i] = float32(i)*0.01, float32(64-i)*0.02
	}
	var s float32
	for b.Loop() {
		s += dotF32(x, y)
	}
	_ = s
}
