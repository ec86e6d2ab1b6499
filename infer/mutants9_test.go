package infer

import (
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
