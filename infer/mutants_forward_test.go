package infer

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlb/mlbtest"
)

// Tests written for the mutants of forward.go that gremlins (scripts/mutate.sh,
// session 8) found alive; each says which mutants it kills. Expected values
// come from the float64 reference (ref_test.go) or from paths the reference
// already checks (a token-by-token pass: one activation row, one chunk).

// sameLogits fails unless got and want hold the same float32 bits.
func sameLogits(t *testing.T, what string, got, want [][]float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d positions, want %d", what, len(got), len(want))
	}
	for i := range want {
		for j := range want[i] {
			if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
				t.Fatalf("%s: position %d logit %d = %v, want %v", what, i, j, got[i][j], want[i][j])
			}
		}
	}
}

// TestMixedWideChunks: the K-quant products of matrices two superblocks wide
// (dim 512: nb = 2 Q8_K blocks per activation row), with the activation rows
// in chunks of 1 and of 3, give the bits of a token-by-token pass (one row,
// one chunk), and the batched pass matches the float64 reference. The mixed
// cases of mixed_test.go are 256 wide, where nb = 1 and mulBlocked's
// `dk[i0*nb:(i0+m)*nb]`, `bk[i0*nb*16:(i0+m)*nb*16]` → `/nb` (forward.go:69,
// four mutants) change nothing.
func TestMixedWideChunks(t *testing.T) {
	h := mlbtest.Mixed(mlb.Q4_K, mlb.Q5_K, mlb.Q6_K, mlb.IQ4_XS)
	h.Dim, h.HiddenDim = 512, 512
	m, f := openModel(t, h, 7)
	tokens := randTokens(rand.New(rand.NewSource(8)), 11, int(h.Vocab))
	want := allLogits(t, m, SessionOptions{Batch: 1}, tokens, 0)
	refQ := newRef(f, true).logits(tokens)
	refF := newRef(f, false).logits(tokens)
	if dq, rms := maxDiff(want, refQ); dq > 0.5*maxDiff64(refQ, refF)+1e-4*rms {
		t.Fatalf("token by token: max |fast − refQ| = %.3g (rms %.3g)", dq, rms)
	}
	chunk := dotsChunkRows
	defer func() { dotsChunkRows = chunk }()
	for _, rows := range []int{1, 3, chunk} {
		dotsChunkRows = rows
		got := allLogits(t, m, SessionOptions{Batch: 16, Threads: 2}, tokens, 0)
		sameLogits(t, fmt.Sprintf("chunks of %d", rows), got, want)
	}
}

// TestL2Norm: l2norm divides by sqrt(Σx² + 1e-6), the epsilon inside the root
// (forward.go:633 `ss+1e-6` → `ss-1e-6` lived: with Σx² ≫ 1e-6 in every model
// of the tests the epsilon is below the tolerances). Expected values in float64
// from the definition, on vectors where the epsilon matters.
func TestL2Norm(t *testing.T) {
	for _, x := range [][]float32{{3e-4, 4e-4}, {1e-3}, {0.5, -0.5, 0.25, 1e-4}, {0, 0}} {
		ss := 0.0
		for _, v := range x {
			ss += float64(v) * float64(v)
		}
		want := make([]float64, len(x))
		for i, v := range x {
			want[i] = float64(v) / math.Sqrt(ss+1e-6)
		}
		got := append([]float32(nil), x...)
		l2norm(got)
		for i := range got {
			if d := math.Abs(float64(got[i]) - want[i]); !(d <= 1e-6*math.Abs(want[i])) {
				t.Errorf("l2norm(%v)[%d] = %v, want %.9g", x, i, got[i], want[i])
			}
		}
	}
}

// TestBatchMixedKV: a batch of an f32-cached and an f16-cached session (in
// both orders) gives each the bits of its evaluation alone: only the f16
// sequence's own rows of keys and values are rounded to f16 (forward.go:347,
// 348 `s.k[sq.off*kvd:…]` → `sq.off/kvd` lived: it also rounds the rows of
// the sequences before it, which only a batch mixing the cache types shows).
func TestBatchMixedKV(t *testing.T) {
	for _, name := range []string{"q8", "mistral_sliding_gqa"} {
		h := mlbtest.CaseHeader(t, name)
		m, _ := openModel(t, h, 5)
		r := rand.New(rand.NewSource(9))
		for _, kinds := range [][2]KVType{{KVF32, KVF16}, {KVF16, KVF32}} {
			var tokens [2][]int
			var want [2][][]float32
			var ss [2]*Session
			for k, kv := range kinds {
				tokens[k] = randTokens(r, 9+4*k, int(h.Vocab))
				want[k] = allLogits(t, m, SessionOptions{Threads: 1, KV: kv}, tokens[k], 0)
				s, err := m.NewSession(SessionOptions{Batch: 1, KV: kv})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				ss[k] = s
			}
			b, err := m.NewBatch(BatchOptions{Threads: 2, Tokens: 32})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			// Two passes: the prompts but their last 3 tokens, then those.
			for _, part := range [2]bool{false, true} {
				var items []BatchItem
				for k, s := range ss {
					n := len(tokens[k]) - 3
					tk := tokens[k][:n]
					if part {
						tk = tokens[k][n:]
					}
					items = append(items, BatchItem{Session: s, Tokens: tk, Logits: true})
				}
				err := b.Eval(items, func(i int, l []float32) error {
					sameBits(t, fmt.Sprintf("%s %v, sequence %d at %d", name, kinds, i, ss[i].Pos()), l, want[i][ss[i].Pos()-1])
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// TestSlidingLongRuns: a sliding window of 100 positions over 160, so that a
// query's keys come in runs of a whole attnKeyBlock (64) starting inside a
// key block (the window's first position, and the ring slot of the cache,
// are not multiples of kvBlock). The scores of such a run take 5 key blocks,
// more than attnKeyBlock: forward.go:415 `attnKeyBlock + 2*kvBlock` →
// `2/kvBlock` (the score rows' stride without the spare blocks) lived, as every
// run of the other tests is shorter than 49 or starts on a block. Batched
// and token by token, against the float64 reference as TestLongSequences.
func TestSlidingLongRuns(t *testing.T) {
	h := mlbtest.CaseHeader(t, "mistral_sliding_gqa")
	h.SlidingWindow, h.MaxSeq = 100, 160
	m, f := openModel(t, h, 5)
	tokens := randTokens(rand.New(rand.NewSource(6)), 160, int(h.Vocab))
	want := allLogits(t, m, SessionOptions{Threads: 1, Batch: 1}, tokens, 1)
	got := allLogits(t, m, SessionOptions{Threads: 2, Batch: 160}, tokens, 0)
	sameLogits(t, "one pass against token by token", got, want)
	ref := newRef(f, true).logits(tokens)
	refF := newRef(f, false).logits(tokens)
	dq, rms := maxDiff(want, ref)
	if tol := 0.5*maxDiff64(ref, refF) + 1e-4*rms; dq > tol {
		t.Errorf("max |fast − reference| = %.4g, want ≤ %.4g", dq, tol)
	}
}

// TestClassifierBound: with logits for every token, the classifier runs in
// passes of at most maxLogitBytes of logits, so the session's logits buffer
// holds at most that many (forward.go:247 `maxLogitBytes/(4*c.Vocab)` →
// `maxLogitBytes*(…)` lived: one pass of every row gives the same logits, only
// the memory bound is lost); the logits are those of one large pass.
func TestClassifierBound(t *testing.T) {
	h := mlbtest.Base()
	m, _ := openModel(t, h, 3)
	tokens := randTokens(rand.New(rand.NewSource(4)), 10, int(h.Vocab))
	want := allLogits(t, m, SessionOptions{Batch: 16}, tokens, 0)
	defer func(v int) { maxLogitBytes = v }(maxLogitBytes)
	maxLogitBytes = 3 * 4 * int(h.Vocab)
	s, err := m.NewSession(SessionOptions{Batch: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got [][]float32
	if err := s.Eval(tokens, true, func(i int, l []float32) error {
		got = append(got, append([]float32(nil), l...))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sameLogits(t, "passes of 3 rows", got, want)
	if n := len(s.logits); n > 3*int(h.Vocab) {
		t.Errorf("logits buffer of %d values, want at most 3 rows of %d", n, h.Vocab)
	}
}
