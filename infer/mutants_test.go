package infer

import (
	"slices"
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
