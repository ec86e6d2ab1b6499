package infer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/krafla/krafla/mlb/mlbtest"
)

// Tests written for the mutants of infer's session, generation, cache and
// batch code that a session-9 mutation pass (docs/RELIABILITY.md) found
// alive; each says which mutants it kills. Expected values come from the
// definitions (the cache layout's sizes counted by hand, the documented
// rules), never from the code under test.

// TestModelCacheBytes: Model.CacheBytes, computed without allocating, is the
// size of the caches counted by hand (the formulas of TestCacheSize: keys in
// whole blocks of 16 slots, values slot by slot, 4 bytes an element in f32,
// 2 in f16; a linear layer's convolution history and delta-rule states in
// f32 whatever the KV type), for f32 and f16, the default context and the
// context's edges 1 and max_seq; a context outside 1…max_seq and an unknown
// KV type are errors. Kills session.go cacheBytes's mutants (lines 100–105),
// which only the memory check of NewSession and serve's registry read.
func TestModelCacheBytes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ctx      int
		f32, f16 int64
	}{
		// q8: 2 full layers, kv_dim 32, max_seq 64 (ctx 0 means 64).
		{"q8", 0, 2 * 2 * 64 * 32 * 4, 2 * 2 * 64 * 32 * 2},
		{"q8", 64, 2 * 2 * 64 * 32 * 4, 2 * 2 * 64 * 32 * 2},
		{"q8", 10, 2 * (16 + 10) * 32 * 4, 2 * (16 + 10) * 32 * 2},
		{"q8", 1, 2 * (16 + 1) * 32 * 4, 2 * (16 + 1) * 32 * 2},
		{"q8", 17, 2 * (32 + 17) * 32 * 4, 2 * (32 + 17) * 32 * 2},
		// window 8 on both layers.
		{"sliding_all", 64, 2 * (16 + 8) * 32 * 4, 2 * (16 + 8) * 32 * 2},
		{"sliding_all", 5, 2 * (16 + 5) * 32 * 4, 2 * (16 + 5) * 32 * 2},
		// gemma2: layer 0 slides (8), layer 1 is full.
		{"gemma2", 64, ((16 + 8) + (64 + 64)) * 32 * 4, ((16 + 8) + (64 + 64)) * 32 * 2},
		// qwen35_linear: 3 linear layers (lin_conv 4: 3 rows of C = 96 inputs;
		// states 4 heads × 16 × 8), one full layer (kv_dim 64).
		{"qwen35_linear", 64, 3*(3*96+4*16*8)*4 + 2*64*64*4, 3*(3*96+4*16*8)*4 + 2*64*64*2},
	} {
		m, _ := openModel(t, mlbtest.CaseHeader(t, tc.name), 1)
		for _, kv := range []KVType{KVF32, KVF16} {
			want := tc.f32
			if kv == KVF16 {
				want = tc.f16
			}
			got, err := m.CacheBytes(tc.ctx, kv)
			if err != nil || got != want {
				t.Errorf("%s CacheBytes(%d, %v) = %d, %v; want %d", tc.name, tc.ctx, kv, got, err, want)
			}
		}
	}
	m, _ := openModel(t, mlbtest.Base(), 1)
	for _, ctx := range []int{-1, 65} {
		if _, err := m.CacheBytes(ctx, KVF32); err == nil {
			t.Errorf("CacheBytes(%d): no error (max_seq 64)", ctx)
		}
	}
	if _, err := m.CacheBytes(0, KVType(2)); err == nil {
		t.Errorf("CacheBytes(0, KVType(2)): no error")
	}
}

// rewindable is Rewind's rule from its definition: a session at pos can go
// back to n (0 ≤ n ≤ pos) when every layer still holds what position n
// attends to: a linear layer keeps only the state of pos (so only n = 0, a
// reset, or n = pos), an attention ring of slots positions holds
// max(0, pos−slots) … pos−1 and position n needs max(0, n−slots+1) … n−1.
func rewindable(pos, n int, linear bool, slots []int) bool {
	if n < 0 || n > pos {
		return false
	}
	if n == 0 || n == pos {
		return true
	}
	if linear {
		return false
	}
	for _, sl := range slots {
		for p := max(0, n-sl+1); p < n; p++ {
			if p < max(0, pos-sl) {
				return false
			}
		}
	}
	return true
}

// TestRewindRules: CanRewind and Rewind follow the rule of their definition
// (rewindable) for every n from −1 to pos+1, at positions below, at and past
// a sliding window of 8 (sliding_all: both layers; gemma2: layer 0 only), on
// a context equal to the window (nothing is ever lost), on full attention and
// on linear attention; a refused Rewind leaves the position, an accepted one
// continues with the bits of a fresh session fed the same tokens (the
// furthest rewind allowed, n = 0 included, which must clear a linear layer's
// state). TestRewind checks a refusal only against CanRewind itself, so a
// CanRewind refusing too much lived (rewind.go:14–29).
func TestRewindRules(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ctx    int
		linear bool
		slots  []int // the rings of the attention layers
	}{
		{"sliding_all", 0, false, []int{8, 8}},
		{"gemma2", 0, false, []int{8, 64}},
		{"sliding_all", 8, false, []int{8, 8}},
		{"q8", 0, false, []int{64, 64}},
		{"qwen35_linear", 0, true, []int{64}},
	} {
		h := mlbtest.CaseHeader(t, tc.name)
		m, _ := openModel(t, h, 3)
		r := rand.New(rand.NewSource(4))
		for _, pos := range []int{1, 2, 5, 7, 8, 9, 10, 12} {
			if tc.ctx > 0 && pos > tc.ctx {
				continue
			}
			what := fmt.Sprintf("%s ctx %d pos %d", tc.name, tc.ctx, pos)
			a := randTokens(r, pos, int(h.Vocab))
			s, err := m.NewSession(SessionOptions{Ctx: tc.ctx, Batch: 3})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Eval(a, false, nil); err != nil {
				t.Fatal(err)
			}
			furthest := pos
			for n := -1; n <= pos+1; n++ {
				want := rewindable(pos, n, tc.linear, tc.slots)
				if got := s.CanRewind(n); got != want {
					t.Errorf("%s: CanRewind(%d) = %v, want %v", what, n, got, want)
				}
				if want && n < furthest && n >= 0 {
					furthest = n
				}
			}
			// Refused: an error wrapping ErrRewind, the position unmoved.
			for _, n := range []int{-1, pos + 1, pos - 2} {
				if rewindable(pos, n, tc.linear, tc.slots) {
					continue
				}
				if err := s.Rewind(n); !errors.Is(err, ErrRewind) || s.Pos() != pos {
					t.Errorf("%s: Rewind(%d) = %v, Pos %d; want ErrRewind, Pos %d", what, n, err, s.Pos(), pos)
				}
			}
			if err := s.Rewind(furthest); err != nil || s.Pos() != furthest {
				t.Fatalf("%s: Rewind(%d) = %v, Pos %d", what, furthest, err, s.Pos())
			}
			more := randTokens(r, 4, int(h.Vocab))
			want := allLogits(t, m, SessionOptions{Ctx: tc.ctx, Threads: 1, Batch: 1}, append(a[:furthest:furthest], more...), 1)
			err = s.Eval(more, true, func(i int, l []float32) error {
				sameBits(t, what+fmt.Sprintf(", rewound to %d", furthest), l, want[furthest+i])
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
		}
	}
}

// TestSessionKV: Session.KV reports the cache type the session was made with
// (f32 for a model without attention layers would too, but every test model
// has one). Kills session.go:220 `ls.k16 != nil` → `==`.
func TestSessionKV(t *testing.T) {
	m, _ := openModel(t, mlbtest.CaseHeader(t, "qwen35_linear"), 1)
	for _, kv := range []KVType{KVF32, KVF16} {
		s, err := m.NewSession(SessionOptions{KV: kv})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.KV(); got != kv {
			t.Errorf("NewSession(KV %v).KV() = %v", kv, got)
		}
		s.Close()
	}
}

// firstMax is the index of the largest value, the lowest on ties (greedy
// sampling's definition), written here rather than taken from sample.go.
func firstMax(x []float32) int {
	b := 0
	for i, v := range x {
		if v > x[b] {
			b = i
		}
	}
	return b
}

// banConstraint forbids a set of tokens at every step, records what it is
// told to accept, reports Done after doneAfter accepted tokens (0: never) and
// fails Restrict or Accept with the errors given.
type banConstraint struct {
	ban                   map[int]bool
	accepted              []int
	doneAfter             int
	restrictErr, acceptEr error
}

func (c *banConstraint) Restrict(l []float32) error {
	for tok := range c.ban {
		l[tok] = float32(math.Inf(-1))
	}
	return c.restrictErr
}

func (c *banConstraint) Accept(tok int) error {
	c.accepted = append(c.accepted, tok)
	return c.acceptEr
}

func (c *banConstraint) Done() bool { return c.doneAfter > 0 && len(c.accepted) >= c.doneAfter }

// TestGenerateEdges: Generate's limits, stop reasons, step count, callbacks
// and constraint, each against what its documentation says, the tokens
// against greedy argmax of a fresh evaluation of the sequence so far.
// TestGenerate covers only a positive limit, a stop token and a full context.
func TestGenerateEdges(t *testing.T) {
	h := mlbtest.Base()
	m, _ := openModel(t, h, 4)
	prompt := []int{5, 9, 13}
	// greedy continues seq by n tokens, the banned ones never drawn.
	greedy := func(seq []int, n int, ban map[int]bool) []int {
		seq = slices.Clone(seq)
		var out []int
		for range n {
			lg := allLogits(t, m, SessionOptions{Threads: 1}, seq, 0)
			l := slices.Clone(lg[len(lg)-1])
			for tok := range ban {
				l[tok] = float32(math.Inf(-1))
			}
			tok := firstMax(l)
			out = append(out, tok)
			seq = append(seq, tok)
		}
		return out
	}
	gen := func(ctx context.Context, sctx int, opt GenerateOptions, emit func(int) error) (*GenerateResult, error) {
		s, err := m.NewSession(SessionOptions{Ctx: sctx, Threads: 2, Batch: 2})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		return Generate(ctx, s, prompt, opt, emit)
	}
	bg := context.Background()
	want := greedy(prompt, 6, nil)

	// MaxTokens 0: nothing generated, nothing emitted.
	r, err := gen(bg, 64, GenerateOptions{MaxTokens: 0}, func(int) error { t.Error("MaxTokens 0 emitted a token"); return nil })
	if err != nil || r.Reason != StopLimit || len(r.Tokens) != 0 || r.GeneratedSteps != 0 || r.PromptTokens != 3 {
		t.Errorf("MaxTokens 0: %+v, %v; want no tokens, token limit, 0 steps, 3 prompt tokens", r, err)
	}
	// MaxTokens 4: a forward pass after each token but the last.
	r, err = gen(bg, 64, GenerateOptions{MaxTokens: 4}, nil)
	if err != nil || r.Reason != StopLimit || !slices.Equal(r.Tokens, want[:4]) || r.GeneratedSteps != 3 {
		t.Errorf("MaxTokens 4: %v %v steps %d, %v; want %v token limit, 3 steps", r.Tokens, r.Reason, r.GeneratedSteps, err, want[:4])
	}
	// MaxTokens −1: until the context (8) is full: 5 evaluated + the last drawn.
	r, err = gen(bg, 8, GenerateOptions{MaxTokens: -1}, nil)
	if err != nil || r.Reason != StopContext || !slices.Equal(r.Tokens, want[:6]) || r.GeneratedSteps != 5 {
		t.Errorf("MaxTokens -1, ctx 8: %v %v steps %d, %v; want %v context full, 5 steps", r.Tokens, r.Reason, r.GeneratedSteps, err, want[:6])
	}
	// A prompt that fills the context exactly: one token, drawn from its logits.
	r, err = gen(bg, 3, GenerateOptions{MaxTokens: -1}, nil)
	if err != nil || r.Reason != StopContext || !slices.Equal(r.Tokens, want[:1]) || r.GeneratedSteps != 0 {
		t.Errorf("ctx 3 = prompt: %v %v steps %d, %v; want %v context full", r.Tokens, r.Reason, r.GeneratedSteps, err, want[:1])
	}
	// Logits sees every prompt position in order (the bits of a plain
	// evaluation), and the tokens are those drawn without it.
	plain := allLogits(t, m, SessionOptions{Threads: 1}, prompt, 0)
	seen := 0
	r, err = gen(bg, 64, GenerateOptions{MaxTokens: 3, Logits: func(i int, l []float32) error {
		if i != seen {
			t.Errorf("Logits called for position %d, want %d", i, seen)
		}
		sameBits(t, fmt.Sprintf("prompt logits %d", i), l, plain[i])
		seen++
		return nil
	}}, nil)
	if err != nil || seen != 3 || !slices.Equal(r.Tokens, want[:3]) {
		t.Errorf("with Logits: %v, %v, %d positions seen; want %v, 3 positions", r.Tokens, err, seen, want[:3])
	}
	errStop := errors.New("stop here")
	if _, err = gen(bg, 64, GenerateOptions{MaxTokens: 3, Logits: func(i int, l []float32) error { return errStop }}, nil); !errors.Is(err, errStop) {
		t.Errorf("Logits failing: %v, want its error", err)
	}
	// An emit error ends generation after that token.
	r, err = gen(bg, 64, GenerateOptions{MaxTokens: 5}, func(int) error { return errStop })
	if !errors.Is(err, errStop) || !slices.Equal(r.Tokens, want[:1]) {
		t.Errorf("emit failing: %v, %v; want its error after %v", r.Tokens, err, want[:1])
	}
	// A cancelled context: no token.
	cctx, cancel := context.WithCancel(bg)
	cancel()
	r, err = gen(cctx, 64, GenerateOptions{MaxTokens: 5}, nil)
	if err != nil || r.Reason != StopCancel || len(r.Tokens) != 0 {
		t.Errorf("cancelled: %v %v, %v; want no tokens, cancelled", r.Tokens, r.Reason, err)
	}
	// A constraint banning the unconstrained first token: every draw is the
	// argmax of the restricted logits, and the constraint accepts each.
	ban := map[int]bool{want[0]: true}
	wantBan := greedy(prompt, 4, ban)
	c := &banConstraint{ban: ban}
	r, err = gen(bg, 64, GenerateOptions{MaxTokens: 4, Constraint: c}, nil)
	if err != nil || r.Reason != StopLimit || !slices.Equal(r.Tokens, wantBan) || !slices.Equal(c.accepted, wantBan) {
		t.Errorf("constrained: %v (accepted %v), %v; want %v", r.Tokens, c.accepted, err, wantBan)
	}
	// Done after 2 accepted tokens: an end of sequence.
	c = &banConstraint{ban: ban, doneAfter: 2}
	r, err = gen(bg, 64, GenerateOptions{MaxTokens: 4, Constraint: c}, nil)
	if err != nil || r.Reason != StopToken || !slices.Equal(r.Tokens, wantBan[:2]) {
		t.Errorf("constraint done after 2: %v %v, %v; want %v end-of-sequence", r.Tokens, r.Reason, err, wantBan[:2])
	}
	// A failing Restrict or Accept: its error, no token.
	for _, c := range []*banConstraint{{restrictErr: errStop}, {acceptEr: errStop}} {
		r, err = gen(bg, 64, GenerateOptions{MaxTokens: 4, Constraint: c}, nil)
		if !errors.Is(err, errStop) || len(r.Tokens) != 0 {
			t.Errorf("constraint failing: %v, %v; want its error, no token", r.Tokens, err)
		}
	}
	// A stop token drawn first: nothing emitted, an end of sequence.
	r, err = gen(bg, 64, GenerateOptions{MaxTokens: 4, Stop: []int{99, want[0]}}, nil)
	if err != nil || r.Reason != StopToken || len(r.Tokens) != 0 {
		t.Errorf("stop token first: %v %v, %v", r.Tokens, r.Reason, err)
	}
	// A prompt longer than the context left: the error counts what is left.
	s, err := m.NewSession(SessionOptions{Ctx: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Eval([]int{1, 2}, false, nil); err != nil {
		t.Fatal(err)
	}
	_, err = Generate(bg, s, prompt, GenerateOptions{MaxTokens: 1}, nil)
	if msg := "the prompt has 3 tokens, more than the context of 2 "; !errors.Is(err, ErrContextFull) || !strings.Contains(fmt.Sprint(err), msg) {
		t.Errorf("prompt of 3 at position 2 of ctx 4: %v, want ErrContextFull with %q", err, msg)
	}
	if _, err := Generate(bg, s, nil, GenerateOptions{}, nil); err == nil {
		t.Errorf("empty prompt: no error")
	}
	for reason, s := range map[StopReason]string{StopLimit: "token limit", StopToken: "end-of-sequence token", StopContext: "context full", StopCancel: "cancelled"} {
		if reason.String() != s {
			t.Errorf("StopReason(%d).String() = %q, want %q", int(reason), reason.String(), s)
		}
	}
}

// TestImatrixProgress: Imatrix reports progress(done, total) once per chunk,
// done counting 1…total in order; a cancelled context returns its error and
// leaves the session collecting nothing (TakeImatrix gives nil). Kills
// imatrix.go's `progress(ci+1, …)` → `ci-1`, which no test reached.
func TestImatrixProgress(t *testing.T) {
	m, _ := openModel(t, mlbtest.Base(), 11)
	s, err := m.NewSession(SessionOptions{Ctx: 20, Batch: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tokens := randTokens(rand.New(rand.NewSource(12)), 45, 67)
	var calls [][2]int
	f, err := Imatrix(context.Background(), s, tokens, ChunkOptions{Chunk: 10, BOS: -1}, func(done, total int) {
		calls = append(calls, [2]int{done, total})
	})
	if err != nil || f == nil || f.LayerTokens != 40 {
		t.Fatalf("Imatrix: %v (file %v)", err, f)
	}
	if want := [][2]int{{1, 4}, {2, 4}, {3, 4}, {4, 4}}; !slices.Equal(calls, want) {
		t.Errorf("progress calls %v, want %v", calls, want)
	}
	if s.TakeImatrix() != nil {
		t.Errorf("after Imatrix the session still collects")
	}
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Imatrix(cctx, s, tokens, ChunkOptions{Chunk: 10, BOS: -1}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
	if s.TakeImatrix() != nil {
		t.Errorf("after a cancelled Imatrix the session still collects")
	}
}

// TestSessionTooLargeForMemory: a context whose caches exceed the machine's
// memory (Base with 16 layers and max_seq 2^24, mlb's limit: 16 layers ×
// (keys + values) × 2^24 slots × kv_dim 32 × 4 bytes = 64 GiB) is refused before anything is allocated, the message
// giving the cache's size and the machine's (MemTotal of /proc/meminfo, the
// same figure as sysinfo's totalram). Kills session.go:129 `mem > 0` →
// `mem <= 0` and the GiB arithmetic of the message (131), which no test
// reached.
func TestSessionTooLargeForMemory(t *testing.T) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Skip("no /proc/meminfo")
	}
	var kb int64
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	if kb <= 0 || kb*1024 >= 1<<36 {
		t.Skipf("MemTotal %d kB: not below 64 GiB", kb)
	}
	h := mlbtest.Base()
	h.NLayers, h.MaxSeq = 16, 1<<24
	m, _ := openModel(t, h, 1)
	_, err = m.NewSession(SessionOptions{Ctx: 1 << 24})
	want := fmt.Sprintf("a context of %d positions needs a 64.0 GiB cache, more than the machine's %.1f GiB of memory", 1<<24, float64(kb*1024)/(1<<30))
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("NewSession(ctx 2^24): %v, want an error containing %q", err, want)
	}
}

// TestKeyIndexLayout: keyIndex and blockLen against the key block layout
// built by counting: blocks of 16 slots in order, within a block channel by
// channel, within a channel the block's 16 slots (kv.go's comment). Every
// caller passes channel 0 and adds c·kvBlock itself, so the channel term of
// keyIndex (kv.go:63 `+ c*kvBlock` → `-`, `c/kvBlock`) was never checked.
func TestKeyIndexLayout(t *testing.T) {
	for _, kvd := range []int{1, 3, 32} {
		for _, n := range []int{1, 15, 16, 17, 40} {
			want := map[[2]int]int{}
			next := 0
			for b := 0; b*16 < n; b++ {
				for c := range kvd {
					for lane := range 16 {
						want[[2]int{b*16 + lane, c}] = next
						next++
					}
				}
			}
			if got := blockLen(n, kvd); got != next {
				t.Errorf("blockLen(%d, %d) = %d, want %d", n, kvd, got, next)
			}
			for s := range n {
				for c := range kvd {
					if got := keyIndex(s, c, kvd); got != want[[2]int{s, c}] {
						t.Fatalf("keyIndex(%d, %d, %d) = %d, want %d", s, c, kvd, got, want[[2]int{s, c}])
					}
				}
			}
		}
	}
}
