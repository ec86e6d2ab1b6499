package infer

import (
	"math"
	"testing"
)

// TestSamplerInfiniteAndMinPAboveOne: a +Inf logit takes all the
// probability (the +Inf tokens share it), with every filter on, and a min-p
// above 1, which no token's probability reaches, keeps the most likely one
// (lowest id on ties) instead of leaving nothing to draw from.
func TestSamplerInfiniteAndMinPAboveOne(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, o := range []SamplerOptions{
		{Temp: 1, MinP: 0.05},
		{Temp: 0.7, TopK: 3, TopP: 0.9, MinP: 0.1},
		{Temp: 1},
	} {
		for seed := range uint64(20) {
			o.Seed = seed
			if got := NewSampler(o).Sample([]float32{1, 2, inf, 0}); got != 2 {
				t.Fatalf("%+v: drew %d from logits with +Inf at 2", o, got)
			}
			if got := NewSampler(o).Sample([]float32{inf, 2, inf, 0}); got != 0 && got != 2 {
				t.Fatalf("%+v: drew %d, want one of the +Inf tokens 0 and 2", o, got)
			}
		}
	}
	for seed := range uint64(20) {
		o := SamplerOptions{Temp: 1, MinP: 2, Seed: seed}
		if got := NewSampler(o).Sample([]float32{0.5, 3, 1, 3}); got != 1 {
			t.Fatalf("min-p 2: drew %d, want 1 (the most likely, lowest id)", got)
		}
		// Through top-k the candidates are in heap order (1, 3, 2, 0 here),
		// a lower id after the most likely one.
		o.TopK = 4
		if got := NewSampler(o).Sample([]float32{1, 0.1, 3, 0.5, -1}); got != 2 {
			t.Fatalf("top-k 4, min-p 2: drew %d, want 2 (the most likely)", got)
		}
	}
}
