package infer

import (
	"errors"
	"math"
	"testing"

	"github.com/krafla/krafla/mlb/mlbtest"
)

// TestBatchBounds13 pins Batch's limits where a comparison decides
// (batch.go): Tokens 0 means DefaultBatch; a session whose context equals the
// batch's is accepted; tokens 0 and Vocab-1 are inside the vocabulary; exactly
// Tokens tokens in all, and exactly enough tokens to fill a session's context,
// are accepted, one token more is not; a session may appear twice when one of its items has no tokens.
func TestBatchBounds13(t *testing.T) {
	m, _ := openModel(t, mlbtest.Base(), 1) // vocab 67
	d, err := m.NewBatch(BatchOptions{Ctx: 16})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Tokens(); got != DefaultBatch {
		t.Errorf("Tokens with BatchOptions.Tokens 0: got %d, want %d", got, DefaultBatch)
	}
	d.Close()
	b, err := m.NewBatch(BatchOptions{Ctx: 16, Tokens: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s, _ := m.NewSession(SessionOptions{Ctx: 16}) // the batch's context
	defer s.Close()
	small, _ := m.NewSession(SessionOptions{Ctx: 4})
	defer small.Close()
	eval := func(name string, items []BatchItem, pos ...int) {
		t.Helper()
		if err := b.Eval(items, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, it := range items {
			if it.Session.Pos() != pos[i] {
				t.Fatalf("%s: item %d at position %d, want %d", name, i, it.Session.Pos(), pos[i])
			}
		}
	}
	eval("4 tokens, ids 0 and 66, context 16", []BatchItem{{Session: s, Tokens: []int{0, 66, 0, 1}}}, 4)
	eval("filling a context of 4", []BatchItem{{Session: small, Tokens: []int{5, 6, 7, 8}}}, 4)
	// Full: one more token is refused, though the batch has room for it.
	if err := b.Eval([]BatchItem{{Session: small, Tokens: []int{9}}}, nil); !errors.Is(err, ErrContextFull) || small.Pos() != 4 {
		t.Fatalf("a token past a full context: got %v at position %d, want ErrContextFull at 4", err, small.Pos())
	}
	eval("the session twice, the first item empty", []BatchItem{{Session: s}, {Session: s, Tokens: []int{2}}}, 5, 5)
	eval("the session twice, the second item empty", []BatchItem{{Session: s, Tokens: []int{3}}, {Session: s}}, 6, 6)
}

// TestSamplerMaskedAndTopP13 pins two sampler rules (sample.go): when every
// logit is -Inf (all masked), Sample falls back to greedy, whose tie rule
// gives the lowest id, 0, with top-k (3 of 4) or without; a +Inf logit is
// always drawn (with top-k or without, min-p off); and top-p keeps the
// most likely tokens first: of logits 0 and 1 (probabilities 1/(1+e) ≈ 0.27
// and e/(1+e) ≈ 0.73), top-p 0.5 keeps token 1 alone, so token 0 is never
// drawn.
func TestSamplerMaskedAndTopP13(t *testing.T) {
	inf := float32(math.Inf(-1))
	for _, tc := range []struct {
		name   string
		opt    SamplerOptions
		logits []float32
	}{
		{"all masked", SamplerOptions{Temp: 1, Seed: 1}, []float32{inf, inf, inf}},
		{"all masked, top-k 3 of 4", SamplerOptions{Temp: 1, TopK: 3, Seed: 2}, []float32{inf, inf, inf, inf}},
	} {
		if got := NewSampler(tc.opt).Sample(tc.logits); got != 0 {
			t.Errorf("%s: got token %d, want 0", tc.name, got)
		}
	}
	// A +Inf logit has all the probability (min-p off): it is always drawn.
	pinf := float32(math.Inf(1))
	for _, k := range []int{0, 2} {
		if c := draw(SamplerOptions{Temp: 1, TopK: k, Seed: 4}, []float32{0, pinf, 1}, 50); c[1] != 50 {
			t.Errorf("a +Inf logit, top-k %d: counts %v, want token 1 only", k, c)
		}
	}
	if c := draw(SamplerOptions{Temp: 1, TopP: 0.5, Seed: 3}, []float32{0, 1}, 400); c[0] != 0 {
		t.Errorf("top-p 0.5 of logits 0, 1: counts %v, want token 1 only", c)
	}
}
