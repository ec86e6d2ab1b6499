package infer

import (
	"math"
	"testing"
)

// TestSampleMasked: tokens with a -Inf logit (masked out by a grammar) are
// never drawn, whatever the options, even when they would be the most likely.
func TestSampleMasked(t *testing.T) {
	inf := float32(math.Inf(-1))
	logits := []float32{inf, 5, inf, 0.1, -3, inf}
	for _, o := range []SamplerOptions{{}, {Temp: 1}, {Temp: 2, TopK: 5}, {Temp: 1, TopP: 0.999999}, {Temp: 1.5, MinP: 0.0001}, {Temp: 1, RepeatPenalty: 1.3}} {
		for seed := range uint64(300) {
			o.Seed = seed
			s := NewSampler(o)
			s.Accept(0)
			if id := s.Sample(logits); logits[id] == inf {
				t.Fatalf("%+v: drew masked token %d", o, id)
			}
		}
	}
}
