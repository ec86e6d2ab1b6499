package infer

import (
	"errors"
	"math"
	"math/rand"
	"testing"

	"github.com/krafla/krafla/mlb/mlbtest"
)

// TestLongSequences runs sliding-window, local-RoPE and linear-attention models
// far past their window (8) over 200 positions: logits follow the reference,
// and the ring and recurrent states give the same bits token by token as in
// batches that straddle the ring's wrap-around.
func TestLongSequences(t *testing.T) {
	for _, name := range []string{"sliding_all", "gemma3_local_rope", "qwen35_linear", "qwen35_linear_q4_mask"} {
		t.Run(name, func(t *testing.T) {
			h := mlbtest.CaseHeader(t, name)
			h.MaxSeq = 200
			m, f := openModel(t, h, 5)
			tokens := randTokens(rand.New(rand.NewSource(6)), 200, int(h.Vocab))
			want := allLogits(t, m, SessionOptions{Threads: 1, Batch: 1}, tokens, 1)
			got := allLogits(t, m, SessionOptions{Threads: 2, Batch: 13}, tokens, 50)
			for i := range want {
				for j := range want[i] {
					if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
						t.Fatalf("position %d logit %d: batched %v, token by token %v", i, j, got[i][j], want[i][j])
					}
				}
			}
			ref := newRef(f, true).logits(tokens)
			refF := newRef(f, false).logits(tokens)
			dq, rms := maxDiff(got, ref)
			qe := maxDiff64(ref, refF)
			t.Logf("rms %.3g, |fast−refQ| %.3g, rounding effect %.3g", rms, dq, qe)
			if tol := 0.5*qe + 1e-4*rms; dq > tol {
				t.Errorf("max |fast − reference| = %.4g, want ≤ %.4g", dq, tol)
			}
		})
	}
}

// TestCacheSize checks that sliding-window layers keep only their window and
// linear-attention layers only their state, and that --ctx bounds the rest.
func TestCacheSize(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  int
		want int64
	}{
		// 2 layers × (k, v) × ctx × kv_dim 32 floats, the keys in whole
		// blocks of 16 slots (keyIndex).
		{"q8", 64, 2 * 2 * 64 * 32 * 4},
		{"q8", 10, 2 * (16 + 10) * 32 * 4},
		// window 8 on every layer: 8 slots whatever the context.
		{"sliding_all", 64, 2 * (16 + 8) * 32 * 4},
		{"sliding_all", 5, 2 * (16 + 5) * 32 * 4},
		// gemma2: layer 0 slides (8), layer 1 is full; kv_dim 32.
		{"gemma2", 64, ((16 + 8) + (64 + 64)) * 32 * 4},
		// qwen35_linear: 3 linear layers (conv 3 × C = 2·2·16 + 4·8 = 96, state 4 × 16 × 8), one
		// full layer (kv_dim 2 × 32).
		{"qwen35_linear", 64, 3*(3*96+4*16*8)*4 + 2*64*64*4},
	} {
		m, _ := openModel(t, mlbtest.CaseHeader(t, tc.name), 1)
		s, err := m.NewSession(SessionOptions{Ctx: tc.ctx})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.CacheBytes(); got != tc.want {
			t.Errorf("%s ctx %d: CacheBytes %d, want %d", tc.name, tc.ctx, got, tc.want)
		}
		s.Close()
	}
}

func TestSessionErrors(t *testing.T) {
	m, _ := openModel(t, mlbtest.Base(), 1)
	if _, err := m.NewSession(SessionOptions{Ctx: 65}); err == nil {
		t.Errorf("ctx 65 above max_seq 64: got no error")
	}
	s, err := m.NewSession(SessionOptions{Ctx: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Eval(make([]int, 9), false, nil); !errors.Is(err, ErrContextFull) {
		t.Errorf("9 tokens in ctx 8: got %v, want ErrContextFull", err)
	}
	if err := s.Eval([]int{67}, false, nil); err == nil {
		t.Errorf("token 67 with vocab 67: got no error")
	}
	if err := s.Eval([]int{-1}, false, nil); err == nil {
		t.Errorf("token -1: got no error")
	}
	if s.Pos() != 0 {
		t.Errorf("after refused evals: Pos %d, want 0", s.Pos())
	}
}
