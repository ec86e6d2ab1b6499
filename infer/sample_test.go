package infer

import (
	"math"
	"testing"
)

func TestGreedy(t *testing.T) {
	for _, tc := range []struct {
		logits []float32
		want   int
	}{
		{[]float32{0, 3, 1}, 1},
		{[]float32{2, 2, 1}, 0}, // ties: lowest id
		{[]float32{-5, -4, -4.5}, 1},
	} {
		if got := NewSampler(SamplerOptions{}).Sample(tc.logits); got != tc.want {
			t.Errorf("greedy %v: got %d, want %d", tc.logits, got, tc.want)
		}
	}
}

func draw(opt SamplerOptions, logits []float32, n int) []int {
	s := NewSampler(opt)
	counts := make([]int, len(logits))
	for range n {
		counts[s.Sample(logits)]++
	}
	return counts
}

func TestSamplerDistribution(t *testing.T) {
	logits := []float32{float32(math.Log(0.5)), float32(math.Log(0.3)), float32(math.Log(0.15)), float32(math.Log(0.05))}
	const n = 20000
	for _, tc := range []struct {
		name string
		opt  SamplerOptions
		want []float64 // expected probabilities
	}{
		{"plain", SamplerOptions{Temp: 1, Seed: 1}, []float64{0.5, 0.3, 0.15, 0.05}},
		{"top_k2", SamplerOptions{Temp: 1, TopK: 2, Seed: 2}, []float64{0.625, 0.375, 0, 0}},
		// top-p 0.7: 0.5 < 0.7 ≤ 0.8 keeps two tokens.
		{"top_p", SamplerOptions{Temp: 1, TopP: 0.7, Seed: 3}, []float64{0.625, 0.375, 0, 0}},
		// min-p 0.25: keep p ≥ 0.125.
		{"min_p", SamplerOptions{Temp: 1, MinP: 0.25, Seed: 4}, []float64{0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0}},
		// temperature 0.5 squares the probabilities.
		{"temp", SamplerOptions{Temp: 0.5, Seed: 5}, []float64{0.25 / 0.3650, 0.09 / 0.3650, 0.0225 / 0.3650, 0.0025 / 0.3650}},
	} {
		counts := draw(tc.opt, logits, n)
		for i, p := range tc.want {
			got := float64(counts[i]) / n
			// 5 standard deviations of a binomial proportion.
			if tol := 5*math.Sqrt(p*(1-p)/n) + 1e-9; math.Abs(got-p) > tol {
				t.Errorf("%s: token %d frequency %.4f, want %.4f ± %.4f", tc.name, i, got, p, tol)
			}
		}
	}
}

func TestSamplerSeed(t *testing.T) {
	logits := make([]float32, 100)
	for i := range logits {
		logits[i] = float32(i%7) * 0.3
	}
	seq := func(seed uint64) []int {
		s := NewSampler(SamplerOptions{Temp: 1, Seed: seed})
		var out []int
		for range 50 {
			out = append(out, s.Sample(logits))
		}
		return out
	}
	a, b, c := seq(7), seq(7), seq(8)
	same := func(x, y []int) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Errorf("seed 7 twice: got %v and %v, want equal", a, b)
	}
	if same(a, c) {
		t.Errorf("seeds 7 and 8 drew the same 50 tokens %v", a)
	}
}

func TestRepeatPenalty(t *testing.T) {
	s := NewSampler(SamplerOptions{RepeatPenalty: 1.5})
	s.Accept(0)
	logits := []float32{2, 1.9, -1}
	if got := s.Sample(logits); got != 1 {
		t.Errorf("penalized token 0 (2/1.5 < 1.9): got %d, want 1", got)
	}
	if logits[0] != 2 {
		t.Errorf("Sample modified the logits: %v", logits)
	}
	s = NewSampler(SamplerOptions{RepeatPenalty: 1.5})
	s.Accept(1)
	if got := s.Sample([]float32{-1, -0.8, -1.1}); got != 0 {
		t.Errorf("penalized negative logit -0.8·1.5 = -1.2: got %d, want 0", got)
	}
}
