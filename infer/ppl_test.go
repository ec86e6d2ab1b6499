package infer

import (
	"context"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/krafla/krafla/mlb/mlbtest"
)

// TestPerplexity recomputes the perplexity of two chunks from the logits of
// plain evaluations, and checks KL divergence: zero against the same model,
// positive against a different one.
func TestPerplexity(t *testing.T) {
	h := mlbtest.Base()
	m, _ := openModel(t, h, 1)
	s, err := m.NewSession(SessionOptions{Ctx: 32, Batch: 5, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tokens := randTokens(rand.New(rand.NewSource(3)), 50, int(h.Vocab))
	const chunk = 20
	var nll float64
	var n int
	for c := 0; c < 2; c++ {
		in := append([]int{2}, tokens[c*chunk:(c+1)*chunk]...)
		lg := allLogits(t, m, SessionOptions{Ctx: 32}, in, 0)
		for i := 0; i+1 < len(in); i++ {
			// log-softmax written out in float64.
			mx := math.Inf(-1)
			for _, v := range lg[i] {
				mx = math.Max(mx, float64(v))
			}
			z := 0.0
			for _, v := range lg[i] {
				z += math.Exp(float64(v) - mx)
			}
			nll += -(float64(lg[i][in[i+1]]) - mx - math.Log(z))
			n++
		}
	}
	want := math.Exp(nll / float64(n))
	r, err := Perplexity(context.Background(), s, nil, tokens, ChunkOptions{Chunk: chunk, BOS: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Scored != 40 || r.Chunks != 2 {
		t.Errorf("scored %d in %d chunks, want 40 in 2", r.Scored, r.Chunks)
	}
	if math.Abs(r.PPL-want) > 1e-9*want {
		t.Errorf("perplexity %v, want %v", r.PPL, want)
	}

	same, _ := openModel(t, h, 1)
	bs, _ := same.NewSession(SessionOptions{Ctx: 32, Batch: 5})
	defer bs.Close()
	r, err = Perplexity(context.Background(), s, bs, tokens, ChunkOptions{Chunk: chunk, BOS: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.KLD > 1e-12 || r.Top1 != 1 || r.BasePPL != r.PPL {
		t.Errorf("against itself: KLD %g, top-1 %g, base ppl %g vs %g; want 0, 1, equal", r.KLD, r.Top1, r.BasePPL, r.PPL)
	}
	other, _ := openModel(t, h, 2)
	os, _ := other.NewSession(SessionOptions{Ctx: 32, Batch: 7})
	defer os.Close()
	r, err = Perplexity(context.Background(), s, os, tokens, ChunkOptions{Chunk: chunk, BOS: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !(r.KLD > 0.01) || r.Top1 == 1 {
		t.Errorf("against another model: KLD %g, top-1 %g; want > 0.01 and < 1", r.KLD, r.Top1)
	}

	if _, err := Perplexity(context.Background(), s, nil, tokens[:19], ChunkOptions{Chunk: chunk, BOS: 2}, nil); err == nil {
		t.Errorf("19 tokens for a chunk of 20: got no error")
	}
	if _, err := Perplexity(context.Background(), s, nil, tokens, ChunkOptions{Chunk: 32, BOS: 2}, nil); err == nil {
		t.Errorf("chunk 32 + BOS in ctx 32: got no error")
	}
}

// TestGenerate checks greedy generation against argmax of full evaluations,
// the stop tokens and the stop at a full context.
func TestGenerate(t *testing.T) {
	h := mlbtest.Base()
	m, _ := openModel(t, h, 4)
	prompt := []int{5, 9, 13}
	run := func(ctx, n int, stop []int) *GenerateResult {
		s, err := m.NewSession(SessionOptions{Ctx: ctx, Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var emitted []int
		r, err := Generate(context.Background(), s, prompt, GenerateOptions{MaxTokens: n, Stop: stop}, func(tok int) error {
			emitted = append(emitted, tok)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(emitted, r.Tokens) {
			t.Errorf("emitted %v, result %v", emitted, r.Tokens)
		}
		return r
	}
	r := run(64, 10, nil)
	if r.Reason != StopLimit || len(r.Tokens) != 10 {
		t.Fatalf("got %d tokens (%v), want 10 (token limit)", len(r.Tokens), r.Reason)
	}
	// Greedy: each token is the argmax of the logits of the sequence so far.
	seq := slices.Clone(prompt)
	for _, tok := range r.Tokens {
		lg := allLogits(t, m, SessionOptions{}, seq, 0)
		if want := argmax(lg[len(lg)-1]); tok != want {
			t.Fatalf("after %v: generated %d, want argmax %d", seq, tok, want)
		}
		seq = append(seq, tok)
	}
	// Stop at the fourth token.
	r2 := run(64, 10, []int{r.Tokens[3]})
	first := slices.Index(r.Tokens, r.Tokens[3])
	if r2.Reason != StopToken || !slices.Equal(r2.Tokens, r.Tokens[:first]) {
		t.Errorf("stop token %d: got %v (%v), want %v (end-of-sequence)", r.Tokens[3], r2.Tokens, r2.Reason, r.Tokens[:first])
	}
	// A context of 8 holds the prompt and 5 generated tokens (the last
	// sampled token is emitted without being evaluated).
	r3 := run(8, 100, nil)
	if r3.Reason != StopContext || len(r3.Tokens) != 6 {
		t.Errorf("ctx 8: got %d tokens (%v), want 6 (context full)", len(r3.Tokens), r3.Reason)
	}
	s, _ := m.NewSession(SessionOptions{Ctx: 2})
	defer s.Close()
	if _, err := Generate(context.Background(), s, prompt, GenerateOptions{MaxTokens: 1}, nil); err == nil {
		t.Errorf("prompt of 3 in ctx 2: got no error")
	}
}
