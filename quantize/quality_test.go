package quantize

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/krafla/krafla/internal/cputime"
)

// qualityRows returns rows×4096 weights: Gaussian, or heavy-tailed (Student t with
// ν = 3, whose rare large values resemble the outliers of real LLM weights).
func qualityRows(kind string, rows, cols int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 99))
	w := make([]float32, rows*cols)
	for i := range w {
		if kind == "gaussian" {
			w[i] = float32(rng.NormFloat64() * 0.02)
		} else {
			w[i] = float32(studentT(rng, 3) * 0.02)
		}
	}
	return w
}

// rmse is sqrt(Σ imp_c·(x − y)² / Σ imp_c) over the matrix (imp nil: plain RMSE).
func rmse(x, y []float32, cols int, imp []float32) float64 {
	var num, den float64
	for i := range x {
		wt := 1.0
		if imp != nil {
			wt = float64(imp[i%cols])
		}
		r := float64(x[i]) - float64(y[i])
		num += wt * r * r
		den += wt
	}
	return math.Sqrt(num / den)
}

func roundTrip(t testing.TB, tp Type, w []float32, rows, cols int, opt Options) []float32 {
	q, s, err := Matrix(tp, w, rows, cols, opt)
	if err != nil {
		t.Fatal(err)
	}
	return Dequantize(tp, q, DecodeScales(s, opt.F16Scales), rows, cols)
}

// TestQualityTable measures the round-trip error of each rule on 4096-column rows
// and the importance-weighted error of best fit with and without an importance
// vector; `go test -run TestQualityTable -v ./quantize` prints the table. It also
// asserts the orderings the rules promise.
func TestQualityTable(t *testing.T) {
	const rows, cols = 16, 4096
	var x2 [2][3]float64
	var x2ref [2]float64
	round8 := func(t testing.TB, w []float32) []float32 { return roundTrip(t, TypeQ8_0, w, rows, cols, Options{}) }
	t.Logf("%-46s %12s %12s %12s", "RMSE (relative to weight RMS)", "Q8_0", "Q4_0 round", "Q4_0 best")
	for i, kind := range []string{"gaussian", "heavy-tailed (t, ν=3)"} {
		w := qualityRows(kind, rows, cols, uint64(i+1))
		ref := rmse(w, make([]float32, len(w)), cols, nil)
		var got [3]float64
		for j, c := range []struct {
			t   Type
			opt Options
		}{{TypeQ8_0, Options{}}, {TypeQ4_0, Options{Q4Rule: Round}}, {TypeQ4_0, Options{}}} {
			got[j] = rmse(w, roundTrip(t, c.t, w, rows, cols, c.opt), cols, nil)
		}
		t.Logf("%-46s %12s %12s %12s", kind, cell(got[0], ref), cell(got[1], ref), cell(got[2], ref))
		x2[i] = [3]float64{rmseX2(w, round8(t, w)), rmseX2(w, roundTrip(t, TypeQ4_0, w, rows, cols, Options{Q4Rule: Round})),
			rmseX2(w, roundTrip(t, TypeQ4_0, w, rows, cols, Options{}))}
		x2ref[i] = rmseX2(w, make([]float32, len(w)))
		// Budgets: uniform rounding error is step/√12. A Gaussian block of 32 has
		// amax ≈ 2.1σ, so Q8_0's step amax/127 gives ≈ 0.48% of σ and Q4_0's step
		// ≈ amax/7.5 gives ≈ 8%; heavy tails widen amax and the error.
		budget := map[string][2]float64{"gaussian": {0.006, 0.095}, "heavy-tailed (t, ν=3)": {0.010, 0.145}}[kind]
		if got[0] > budget[0]*ref || got[1] > budget[1]*ref || got[2] > budget[1]*ref {
			t.Errorf("%s: relative RMSE %.4f %.4f %.4f over the budget %.3f (Q8_0), %.3f (Q4_0)", kind, got[0]/ref, got[1]/ref, got[2]/ref, budget[0], budget[1])
		}
		if !(got[0] < got[1]/4 && got[0] < got[2]/4) {
			t.Errorf("%s: Q8_0 RMSE %g not well below Q4_0's %g, %g", kind, got[0], got[1], got[2])
		}
	}

	t.Logf("")
	t.Logf("%-46s %12s %12s %12s", "x²-weighted RMSE (best fit's goal)", "Q8_0", "Q4_0 round", "Q4_0 best")
	for i, kind := range []string{"gaussian", "heavy-tailed (t, ν=3)"} {
		t.Logf("%-46s %12s %12s %12s", kind, cell(x2[i][0], x2ref[i]), cell(x2[i][1], x2ref[i]), cell(x2[i][2], x2ref[i]))
		if !(x2[i][2] < x2[i][1]) {
			t.Errorf("%s: best fit's x²-weighted error %g not below the round rule's %g", kind, x2[i][2], x2[i][1])
		}
	}

	t.Logf("")
	t.Logf("%-46s %14s %14s %14s", "importance-weighted RMSE", "Q4_0 round", "best, no imat", "best, imatrix")
	for _, sigma := range []float64{1, 2} {
		for i, kind := range []string{"gaussian", "heavy-tailed (t, ν=3)"} {
			w := qualityRows(kind, rows, cols, uint64(i+10))
			// synthetic importance: log-normal over channels, normalized to mean 1
			// with the floor of SPEC.md, as imatrix.File.Importance hands it over
			rng := rand.New(rand.NewPCG(uint64(sigma*100), 7))
			imp := make([]float32, cols)
			var sum float64
			raw := make([]float64, cols)
			for c := range raw {
				raw[c] = math.Exp(sigma * rng.NormFloat64())
				sum += raw[c]
			}
			for c := range imp {
				imp[c] = float32(math.Max(0.001, raw[c]/(sum/cols)))
			}
			ref := rmse(w, make([]float32, len(w)), cols, imp)
			round := rmse(w, roundTrip(t, TypeQ4_0, w, rows, cols, Options{Q4Rule: Round}), cols, imp)
			plain := rmse(w, roundTrip(t, TypeQ4_0, w, rows, cols, Options{}), cols, imp)
			weighted := rmse(w, roundTrip(t, TypeQ4_0, w, rows, cols, Options{Importance: imp}), cols, imp)
			t.Logf("%-46s %14s %14s %14s", fmt.Sprintf("%s, log-normal σ=%g", kind, sigma), cell(round, ref), cell(plain, ref), cell(weighted, ref))
			if !(weighted < plain) {
				t.Errorf("%s σ=%g: importance-weighted error with the imatrix %g, without %g: want lower", kind, sigma, weighted, plain)
			}
		}
	}
}

// rmseX2 is sqrt(Σ x²·(x − y)² / Σ x²): the error weighted as best fit weights it.
func rmseX2(x, y []float32) float64 {
	var num, den float64
	for i := range x {
		w := float64(x[i]) * float64(x[i])
		r := float64(x[i]) - float64(y[i])
		num += w * r * r
		den += w
	}
	return math.Sqrt(num / den)
}

func cell(v, ref float64) string { return fmt.Sprintf("%.3e (%.2f%%)", v, 100*v/ref) }

// BenchmarkMatrix quantizes a 64×4096 heavy-tailed matrix; the bytes per second
// count the float32 input (4 bytes per weight). Mweights/s is wall-clock throughput;
// Mweights/cpu-s divides by the CPU time the process used, which is what one core
// delivers when the machine is shared (with 2 threads on 2 idle cores, wall-clock
// throughput is about twice the per-CPU-second figure).
func BenchmarkMatrix(b *testing.B) {
	const rows, cols = 64, 4096
	w := qualityRows("heavy", rows, cols, 1)
	imp := synthImportance(rand.New(rand.NewPCG(1, 1)), cols)
	for _, c := range []struct {
		name string
		t    Type
		opt  Options
	}{
		{"q8_0", TypeQ8_0, Options{}},
		{"q8_0_f16", TypeQ8_0, Options{F16Scales: true}},
		{"q4_0_round", TypeQ4_0, Options{Q4Rule: Round}},
		{"q4_0_best", TypeQ4_0, Options{}},
		{"q4_0_best_imatrix", TypeQ4_0, Options{Importance: imp}},
	} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", c.name, threads), func(b *testing.B) {
				opt := c.opt
				opt.Threads = threads
				b.SetBytes(4 * rows * cols)
				b.ReportAllocs()
				c0 := cputime.Process()
				for b.Loop() {
					if _, _, err := Matrix(c.t, w, rows, cols, opt); err != nil {
						b.Fatal(err)
					}
				}
				weights := float64(rows*cols) * float64(b.N)
				b.ReportMetric(weights/b.Elapsed().Seconds()/1e6, "Mweights/s")
				if cpu := cputime.Process() - c0; cpu > 0 {
					b.ReportMetric(weights/cpu.Seconds()/1e6, "Mweights/cpu-s")
				}
			})
		}
	}
}

// BenchmarkQ8_0Activation is the activation quantizer on one 4096-float row.
func BenchmarkQ8_0Activation(b *testing.B) {
	x := qualityRows("gaussian", 1, 4096, 2)
	q, d := make([]int8, len(x)), make([]float32, len(x)/32)
	b.SetBytes(4 * int64(len(x)))
	for b.Loop() {
		Q8_0(x, q, d)
	}
}
