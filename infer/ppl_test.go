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
	// The same numbers recomputed here from both models' logits, in float64:
	// KL(base ‖ model) = Σ p_b (log p_b − log p_m), base perplexity, top-1.
	var wkl, wmax, wbnll float64
	var wagree int
	for c := 0; c < 2; c++ {
		in := append([]int{2}, tokens[c*chunk:(c+1)*chunk]...)
		lm := allLogits(t, m, SessionOptions{Ctx: 32}, in, 0)
		lb := allLogits(t, other, SessionOptions{Ctx: 32}, in, 0)
		for i := 0; i+1 < len(in); i++ {
			pm, pb := softmax64(lm[i]), softmax64(lb[i])
			k := 0.0
			for j := range pb {
				k += pb[j] * math.Log(pb[j]/pm[j])
			}
			wkl += k
			wmax = math.Max(wmax, k)
			wbnll -= math.Log(pb[in[i+1]])
			if slices.Index(pb, slices.Max(pb)) == slices.Index(pm, slices.Max(pm)) {
				wagree++
			}
		}
	}
	if math.Abs(r.KLD-wkl/40) > 1e-9*wkl/40 || math.Abs(r.MaxKLD-wmax) > 1e-9*wmax {
		t.Errorf("against another model: KLD %.12g, max %.12g; want %.12g, %.12g (KL of base to model)", r.KLD, r.MaxKLD, wkl/40, wmax)
	}
	if wb := math.Exp(wbnll / 40); math.Abs(r.BasePPL-wb) > 1e-9*wb || r.Top1 != float64(wagree)/40 {
		t.Errorf("against another model: base ppl %.12g, top-1 %g; want %.12g, %g", r.BasePPL, r.Top1, wb, float64(wagree)/40)
	}

	if _, err := Perplexity(context.Background(), s, nil, tokens[:19], ChunkOptions{Chunk: chunk, BOS: 2}, nil); err == nil {
		t.Errorf("19 tokens for a chunk of 20: got no error")
	}
	if _, err := Perplexity(context.Background(), s, nil, tokens, ChunkOptions{Chunk: 32, BOS: 2}, nil); err == nil {
		t.Errorf("chunk 32 + BOS in ctx 32: got no error")
	}
}

// softmax64 returns the probabilities of logits in float64.
func softmax64(logits []float32) []float64 {
	mx := math.Inf(-1)
	for _, v := range logits {
		mx = math.Max(mx, float64(v))
	}
	p := make([]float64, len(logits))
	z := 0.0
	for i, v := range logits {
		p[i] = math.Exp(float64(v) - mx)
		z += p[i]
	}
	for i := range p {
		p[i] /= z
	}
	return p
}

// TestKLDivKnown checks klDiv and LogSoftmax on small distributions whose KL
// divergence is known in closed form, in both directions (they differ).
func TestKLDivKnown(t *testing.T) {
	for _, tc := range []struct {
		name    string
		base, m []float64 // probabilities
		want    float64
	}{
		// 0.9·ln(0.9/0.5) + 0.1·ln(0.1/0.5)
		{"p||uniform", []float64{0.9, 0.1}, []float64{0.5, 0.5}, 0.9*math.Log(1.8) + 0.1*math.Log(0.2)},
		// 0.5·ln(0.5/0.9) + 0.5·ln(0.5/0.1)
		{"uniform||p", []float64{0.5, 0.5}, []float64{0.9, 0.1}, 0.5*math.Log(0.5/0.9) + 0.5*math.Log(5)},
		// 0.5·ln(0.5/0.25) + 0.5·ln(0.5/0.25) + 0 (a zero base probability adds nothing)
		{"zero-base", []float64{0.5, 0.5, 0}, []float64{0.25, 0.25, 0.5}, math.Log(2)},
		{"equal", []float64{0.2, 0.3, 0.5}, []float64{0.2, 0.3, 0.5}, 0},
	} {
		logs := func(p []float64) []float64 {
			l := make([]float64, len(p))
			for i, v := range p {
				l[i] = math.Log(v)
			}
			return l
		}
		if got := klDiv(logs(tc.base), logs(tc.m)); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: KL %.15g, want %.15g", tc.name, got, tc.want)
		}
	}
	// LogSoftmax of logits ln 9, ln 1 (+ any constant) is ln 0.9, ln 0.1.
	out := make([]float64, 2)
	LogSoftmax(out, []float32{float32(math.Log(9)) + 3, 3})
	if math.Abs(out[0]-math.Log(0.9)) > 1e-6 || math.Abs(out[1]-math.Log(0.1)) > 1e-6 {
		t.Errorf("LogSoftmax(ln 9, 0) = %v, want ln 0.9, ln 0.1", out)
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
