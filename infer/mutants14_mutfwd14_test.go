package infer

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/krafla/krafla/asm"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlb/mlbtest"
)

// Tests for forward.go's mutants that session 8 listed as equivalent but that
// change something a test can see: the attention's tiling rule, the size of
// its score scratch, the reuse of the scratch buffers, and mulBlocked's
// chunking on the pure-Go kernels (where the K-quant matrices are not packed).

// evalOnce evaluates tokens in one pass of a new session of m and returns the
// session (closed at the end of the test).
func evalOnce(t *testing.T, m *Model, opt SessionOptions, tokens []int) *Session {
	t.Helper()
	s, err := m.NewSession(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.Eval(tokens, true, func(int, []float32) error { return nil }); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAttnTiles14: the attention's work items are tiles of up to 4 rows of
// the sequence times the heads sharing a KV head, or times one head when the
// threads are several and there would be fewer than 4 tiles per thread (the
// rule of forward.go's comment); rows r0 … r1−1 cover the sequence once,
// heads h0 … h1−1 every head once. Expected tiles built here by counting.
// Kills forward.go:391's ten mutants (the tile count's arithmetic, `threads >
// 1`, `tiles < 4*threads`) and 396 `r0 < sq.n` → `<=` (an empty last tile),
// which change only how the work is split.
func TestAttnTiles14(t *testing.T) {
	h := mlbtest.Base() // 4 heads, 2 KV heads
	h.MaxSeq = 32
	m, _ := openModel(t, h, 3)
	nh, nkv := int(h.NHeads), int(h.NKVHeads)
	group := nh / nkv
	if group < 2 {
		t.Fatalf("test model has group %d, want > 1", group)
	}
	r := rand.New(rand.NewSource(5))
	for _, threads := range []int{1, 2, 3} {
		for n := 1; n <= 20; n++ {
			s := evalOnce(t, m, SessionOptions{Threads: threads, Batch: 32}, randTokens(r, n, int(h.Vocab)))
			rowTiles := 0
			for r0 := 0; r0 < n; r0 += 4 {
				rowTiles++
			}
			hpt := group
			if threads > 1 && nkv*rowTiles < 4*threads {
				hpt = 1
			}
			var want []attnTile
			for r0 := 0; r0 < n; r0 += 4 {
				for h0 := 0; h0 < nh; h0 += hpt {
					want = append(want, attnTile{seq: 0, r0: r0, r1: min(r0+4, n), h0: h0, h1: h0 + hpt})
				}
			}
			if fmt.Sprint(s.tiles) != fmt.Sprint(want) {
				t.Fatalf("threads %d, %d rows: tiles %v, want %v", threads, n, s.tiles, want)
			}
		}
	}
}

// slidingScoresModel is a model whose every layer has a sliding window of 5
// (mistral_sliding_gqa: 4 heads sharing 1 KV head), so that the tiles of a
// 16-token pass attend to 8 positions at most.
func slidingScoresModel(t *testing.T) (*Model, mlb.Header) {
	h := mlbtest.CaseHeader(t, "mistral_sliding_gqa")
	h.SlidingWindow = 5
	m, _ := openModel(t, h, 4)
	return m, h
}

// TestAttnScoresSpan14: a tile's scores hold, for each of its queries, the
// positions the tile's queries attend to: from the window's start for the
// tile's first row to its last row, no more. On one thread, in a 16-token
// pass with window 5, the score scratch ends as long as the largest tile
// needs (16 queries × 8 positions), or as allocated if that is longer.
// Kills forward.go:415 `pos0+tl.r0` → `pos0-tl.r0` and 416 `last - first`
// → `last + first` (twice), which only enlarge the scratch.
func TestAttnScoresSpan14(t *testing.T) {
	m, h := slidingScoresModel(t)
	const n, w = 16, 5
	s0, err := m.NewSession(SessionOptions{Threads: 1, Batch: n})
	if err != nil {
		t.Fatal(err)
	}
	initial := len(s0.scores[0])
	s0.Close()
	nh := int(h.NHeads)
	group := nh / int(h.NKVHeads)
	need := 0
	for r0 := 0; r0 < n; r0 += 4 {
		r1 := min(r0+4, n)
		lo := max(0, r0-w+1) // the first row's window
		need = max(need, (r1-r0)*group*(r1-lo))
	}
	if need != 16*8 {
		t.Fatalf("need %d, the arithmetic above is wrong", need)
	}
	s := evalOnce(t, m, SessionOptions{Threads: 1, Batch: n}, randTokens(rand.New(rand.NewSource(7)), n, int(h.Vocab)))
	if got, want := len(s.scores[0]), max(initial, need); got != want {
		t.Errorf("scores scratch of %d, want %d (allocated %d, largest tile %d)", got, want, initial, need)
	}
}

// TestScratchReused14: a pass of the same shape as an earlier one allocates
// no new logits, scores or attention-tile buffers: those of the first pass
// are exactly large enough and are reused. Kills forward.go:276 `len(s.logits)
// < nl*c.Vocab`, 418 `len(s.scores[part]) < nq*span` and 434
// `len(s.attnBuf[part]) < nq*(hd+ldo)` → `<=` (a new buffer of the same size
// on every pass).
func TestScratchReused14(t *testing.T) {
	m, h := slidingScoresModel(t)
	const n = 16
	tokens := randTokens(rand.New(rand.NewSource(8)), n, int(h.Vocab))
	s := evalOnce(t, m, SessionOptions{Threads: 1, Batch: n}, tokens)
	logits, scores, buf := &s.logits[0], &s.scores[0][0], &s.attnBuf[0][0]
	if err := s.Rewind(0); err != nil {
		t.Fatal(err)
	}
	if err := s.Eval(tokens, true, func(int, []float32) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if &s.logits[0] != logits {
		t.Error("logits buffer reallocated")
	}
	if &s.scores[0][0] != scores {
		t.Error("scores scratch reallocated")
	}
	if &s.attnBuf[0][0] != buf {
		t.Error("attention tile buffer reallocated")
	}
}

// TestGenericWideChunks14: TestMixedWideChunks on the pure-Go kernels, where
// the K-quant matrices stay in the file's layout and go through mulBlocked's
// DotsRows chunks (on an AVX-512 machine the other tests' mixed models are
// packed, so only row chunks starting at 0 reached that path): 512 wide (2
// superblocks per row), 11 tokens in chunks of 1, 3 and 16 rows give the bits
// of a token-by-token pass (one row, one chunk starting at 0). Kills
// forward.go:86 `n-i0` → `n+i0` (twice: a last chunk of 3 rows where 2 are
// left writes a row past the exactly sized logits) and 87's `i0*nb`,
// `(i0+m)*nb` → `/nb` (the scales of another row).
func TestGenericWideChunks14(t *testing.T) {
	orig, chunk := asm.Variant(), dotsChunkRows
	defer asm.Use(orig)
	defer func() { dotsChunkRows = chunk }()
	if err := asm.Use(asm.Generic); err != nil {
		t.Fatal(err)
	}
	h := mlbtest.Mixed(mlb.Q4_K, mlb.Q5_K, mlb.Q6_K, mlb.IQ4_XS)
	h.Dim, h.HiddenDim = 512, 512
	m, _ := openModel(t, h, 7)
	tokens := randTokens(rand.New(rand.NewSource(8)), 11, int(h.Vocab))
	want := allLogits(t, m, SessionOptions{Batch: 1}, tokens, 0)
	if m.wcls.k4 || m.wcls.k5 || m.wcls.k6 || m.wcls.kx || m.layers[0].w1.k4 {
		t.Fatal("matrices packed on the generic kernels: the test does not reach DotsRows")
	}
	for _, rows := range []int{1, 3, 16} {
		dotsChunkRows = rows
		got := allLogits(t, m, SessionOptions{Batch: 16}, tokens, 0)
		sameLogits(t, fmt.Sprintf("chunks of %d", rows), got, want)
	}
}
