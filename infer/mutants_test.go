package infer

import (
	"context"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/krafla/krafla/mlb/mlbtest"
)

// Tests written for the mutants that gremlins (scripts/mutate.sh) found alive
// in infer; each says which mutant it kills. Expected values come from the
// documented rules, not from the code under test.

// TestBatchDefaultTokens: BatchOptions.Tokens 0 (and below) means DefaultBatch
// tokens, and a batch of that many evaluates (batch.go `n <= 0` → `n < 0`
// left a batch of 0 tokens that refuses every Eval).
func TestBatchDefaultTokens(t *testing.T) {
	m, _ := openModel(t, mlbtest.Base(), 1)
	for _, n := range []int{0, -3} {
		b, err := m.NewBatch(BatchOptions{Tokens: n})
		if err != nil {
			t.Fatal(err)
		}
		if got := b.Tokens(); got != DefaultBatch {
			t.Errorf("Tokens %d: a batch of %d tokens, want DefaultBatch %d", n, got, DefaultBatch)
		}
		s, err := m.NewSession(SessionOptions{Ctx: 16})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Eval([]BatchItem{{Session: s, Tokens: []int{1, 2, 3}, Logits: true}}, nil); err != nil {
			t.Errorf("Tokens %d: Eval of 3 tokens: %v", n, err)
		}
		s.Close()
		b.Close()
	}
}

// TestChunksEdges checks the cutting rule of ChunkOptions at its edges (ppl.go
// chunks: `Chunk < 2`, `BOS >= 0`, `in > ctxLen`, `len(tokens) < Chunk` and the
// loop's `i+Chunk <= len(tokens)`, each → the other boundary): the smallest
// chunk is 2, token 0 is a valid BOS, a chunk plus BOS may fill the context
// exactly, a text of exactly one chunk (or k chunks) gives one (k) chunks, and a
// remainder shorter than a chunk is dropped.
func TestChunksEdges(t *testing.T) {
	seq := func(n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = 10 + i
		}
		return s
	}
	for _, tc := range []struct {
		name   string
		opt    ChunkOptions
		tokens int
		ctx    int
		want   [][]int // nil: an error
	}{
		{"chunk 1", ChunkOptions{Chunk: 1, BOS: -1}, 4, 8, nil},
		{"chunk 2", ChunkOptions{Chunk: 2, BOS: -1}, 4, 8, [][]int{{10, 11}, {12, 13}}},
		{"BOS 0", ChunkOptions{Chunk: 2, BOS: 0}, 2, 8, [][]int{{0, 10, 11}}},
		{"BOS fills the context", ChunkOptions{Chunk: 3, BOS: 1}, 3, 4, [][]int{{1, 10, 11, 12}}},
		{"BOS one past the context", ChunkOptions{Chunk: 4, BOS: 1}, 4, 4, nil},
		{"BOS 0 one past the context", ChunkOptions{Chunk: 4, BOS: 0}, 4, 4, nil},
		{"chunk fills the context", ChunkOptions{Chunk: 4, BOS: -1}, 4, 4, [][]int{{10, 11, 12, 13}}},
		{"one token short", ChunkOptions{Chunk: 4, BOS: -1}, 3, 8, nil},
		{"exactly two chunks", ChunkOptions{Chunk: 3, BOS: -1}, 6, 8, [][]int{{10, 11, 12}, {13, 14, 15}}},
		{"remainder dropped", ChunkOptions{Chunk: 3, BOS: -1}, 8, 8, [][]int{{10, 11, 12}, {13, 14, 15}}},
	} {
		got, err := tc.opt.chunks(seq(tc.tokens), tc.ctx)
		switch {
		case tc.want == nil && err == nil:
			t.Errorf("%s: got chunks %v, want an error", tc.name, got)
		case tc.want != nil && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != nil && !slices.EqualFunc(got, tc.want, slices.Equal):
			t.Errorf("%s: chunks %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestBatchEmptyItemSameSession: an item without tokens is skipped, so a
// session may appear twice when one of its items is empty, in either order
// (batch.go:95, the two `len(...Tokens) > 0` → `>= 0`, refused it); its
// position advances by the tokens of the other item only.
func TestBatchEmptyItemSameSession(t *testing.T) {
	m, _ := openModel(t, mlbtest.Base(), 1)
	b, err := m.NewBatch(BatchOptions{Ctx: 16, Tokens: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s, err := m.NewSession(SessionOptions{Ctx: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, items := range [][]BatchItem{
		{{Session: s, Tokens: []int{1, 2}}, {Session: s}},
		{{Session: s}, {Session: s, Tokens: []int{3}}},
	} {
		before := s.Pos()
		if err := b.Eval(items, nil); err != nil {
			t.Fatalf("a session twice, once without tokens: %v", err)
		}
		if want := before + len(items[0].Tokens) + len(items[1].Tokens); s.Pos() != want {
			t.Errorf("position %d after the batch, want %d", s.Pos(), want)
		}
	}
}

// TestSamplerEdges pins the sampler's rules where a comparison decides
// (sample.go): top-k among tied logits keeps the lowest ids (`worse`'s id
// order); min-p keeps a token whose probability equals MinP × the top one
// (`p >= lim`); top-p stops at the first token whose cumulative probability
// reaches TopP of the total (`cum >= tp·total`); the repetition penalty covers
// the last RepeatLastN accepted tokens only, however many were accepted, and
// ignores tokens outside the vocabulary.
func TestSamplerEdges(t *testing.T) {
	const n = 400
	only := func(name string, opt SamplerOptions, logits []float32, allowed ...int) []int {
		t.Helper()
		counts := draw(opt, logits, n)
		for id, c := range counts {
			if c > 0 && !slices.Contains(allowed, id) {
				t.Errorf("%s: drew token %d %d times, want only %v", name, id, c, allowed)
			}
		}
		return counts
	}
	// Three tokens tie for the top logit; top-2 keeps ids 0 and 1 (equal logit:
	// the lower id ranks higher), whose probabilities are equal.
	tied := []float32{1, 1, 1, 0}
	c := only("top-k 2 of three tied", SamplerOptions{Temp: 1, TopK: 2, Seed: 1}, tied, 0, 1)
	if c[0] < n/4 || c[1] < n/4 {
		t.Errorf("top-k 2 of three tied: counts %v, want about %d each for tokens 0 and 1", c, n/2)
	}
	only("top-k 1 of three tied", SamplerOptions{Temp: 1, TopK: 1, Seed: 2}, tied, 0)
	only("top-k 1, the tie last", SamplerOptions{Temp: 1, TopK: 1, Seed: 3}, []float32{0, 2, 1, 2}, 1)
	// Min-p 1: keep the tokens whose probability equals the top one.
	c = only("min-p 1", SamplerOptions{Temp: 1, MinP: 1, Seed: 4}, []float32{0, 3, -1, 3}, 1, 3)
	if c[1] < n/4 || c[3] < n/4 {
		t.Errorf("min-p 1: counts %v, want about %d each for tokens 1 and 3", c, n/2)
	}
	// Top-p 0.5 over two equal tokens: the first (lower id) reaches exactly half.
	only("top-p 0.5 of two equal", SamplerOptions{Temp: 1, TopP: 0.5, Seed: 5}, []float32{0, 0}, 0)
	only("top-p 0.25 of four equal", SamplerOptions{Temp: 1, TopP: 0.25, Seed: 6}, []float32{5, 5, 5, 5}, 0)
	c = only("top-p 0.75 of four equal", SamplerOptions{Temp: 1, TopP: 0.75, Seed: 7}, []float32{5, 5, 5, 5}, 0, 1, 2)
	if c[2] == 0 {
		t.Errorf("top-p 0.75 of four equal: counts %v, want tokens 0, 1 and 2", c)
	}

	// Repetition penalty over the last 2 of many accepted tokens: token 0 was
	// accepted long ago (not penalized, it wins greedily); token 1 is recent.
	s := NewSampler(SamplerOptions{RepeatPenalty: 2, RepeatLastN: 2})
	s.Accept(0)
	for i := range 30 {
		s.Accept(3 + i%2)
	}
	s.Accept(1)
	if got := s.Sample([]float32{2, 3, 1.9, 0.5, 0.5}); got != 0 {
		t.Errorf("penalty of the last 2 tokens: got %d, want 0 (token 0 is older, token 1's 3/2 < 2)", got)
	}
	if got := s.Sample([]float32{1, 1.5, 0.1, 0.6, 0.5}); got != 0 {
		t.Errorf("penalty of the last 2 tokens: got %d, want 0 (1.5/2 < 1)", got)
	}
	// Tokens outside the vocabulary (-1, len(logits)) are not penalized and do
	// not fault.
	s = NewSampler(SamplerOptions{RepeatPenalty: 2})
	s.Accept(-1)
	s.Accept(3)
	if got := s.Sample([]float32{0, 2, 1}); got != 1 {
		t.Errorf("tokens -1 and 3 accepted, 3 logits: got %d, want 1", got)
	}
}

// TestPerplexityBaseContext: the base model's session must hold a whole chunk
// (BOS included) and may hold exactly that (ppl.go `len(chunks[0]) > base.ctx`
// → `>=` refused it); a base of another vocabulary is refused.
func TestPerplexityBaseContext(t *testing.T) {
	h := mlbtest.Base()
	m, _ := openModel(t, h, 1)
	s, err := m.NewSession(SessionOptions{Ctx: 32})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tokens := randTokens(rand.New(rand.NewSource(4)), 20, int(h.Vocab))
	opt := ChunkOptions{Chunk: 20, BOS: 1}
	for _, tc := range []struct {
		ctx int
		ok  bool
	}{{21, true}, {20, false}} {
		b, err := m.NewSession(SessionOptions{Ctx: tc.ctx})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Perplexity(context.Background(), s, b, tokens, opt, nil)
		b.Close()
		switch {
		case tc.ok && err != nil:
			t.Errorf("base context %d for a chunk of 20 + BOS: %v", tc.ctx, err)
		case tc.ok && (r.KLD > 1e-12 || r.Top1 != 1):
			t.Errorf("base context %d, the same model: KLD %g, top-1 %g; want 0, 1", tc.ctx, r.KLD, r.Top1)
		case !tc.ok && err == nil:
			t.Errorf("base context %d for a chunk of 20 + BOS: got no error", tc.ctx)
		}
	}
	h2 := mlbtest.Base()
	h2.Vocab++
	m2, _ := openModel(t, h2, 1)
	b, err := m2.NewSession(SessionOptions{Ctx: 32})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := Perplexity(context.Background(), s, b, tokens, opt, nil); err == nil || !strings.Contains(err.Error(), "vocab") {
		t.Errorf("a base of vocabulary %d against %d: error %v, want one naming the vocab", h2.Vocab, h.Vocab, err)
	}
}

// TestRopeLlama3LowFactor: llama3 scaling with low_freq_factor ≠ 1 (the real
// configs all have 1, where orig/low = orig·low: rope.go's `orig/lo` → `orig*lo`
// lived), against transformers' formula (hfLlama3 in rope_test.go), on a case
// whose pairs fall in all three regions.
func TestRopeLlama3LowFactor(t *testing.T) {
	const theta, dim, factor, low, high, orig = 1e4, 32, 4, 2, 8, 512
	want, region := hfLlama3(theta, dim, factor, low, high, orig)
	n := map[byte]int{}
	for _, r := range region {
		n[r]++
	}
	if n['m'] < 2 || n['h'] == 0 || n['l'] == 0 {
		t.Fatalf("regions %q: the case must cross the band", region)
	}
	c := &Config{RotDim: dim, RopeTheta: theta, RopeType: ropeLlama3, RopeFactor: factor,
		RopeLow: low, RopeHigh: high, RopeOrigMaxSeq: orig, RopeAttnFactor: 1}
	checkInv(t, newRope(c, false).inv, want)
}
