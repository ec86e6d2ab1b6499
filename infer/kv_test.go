package infer

import (
	"math"
	"math/rand"
	"testing"

	"github.com/krafla/krafla/asm"
	"github.com/krafla/krafla/mlb/mlbtest"
)

// TestKVF16 checks the f16 cache: batches, thread counts and kernel variants
// give the same bits (each pass rounds its own keys and values as the cache
// will hold them), the cache takes half the bytes, and the logits stay as
// close to the float64 reference as the f32 cache's must.
func TestKVF16(t *testing.T) {
	orig := asm.Variant()
	defer asm.Use(orig)
	for _, c := range mlbtest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			m, f := openModel(t, c.Header, 5)
			tokens := randTokens(rand.New(rand.NewSource(6)), min(int(c.Header.MaxSeq), 33), int(c.Header.Vocab))
			f16 := SessionOptions{Threads: 1, Batch: 64, KV: KVF16}
			want := allLogits(t, m, f16, tokens, 0)
			for _, k := range asm.AvailableKernels() {
				if err := asm.Use(k); err != nil {
					t.Fatal(err)
				}
				for _, tc := range []struct{ threads, batch, step int }{{1, 1, 1}, {2, 5, 0}, {3, 64, 0}} {
					got := allLogits(t, m, SessionOptions{Threads: tc.threads, Batch: tc.batch, KV: KVF16}, tokens, tc.step)
					for i := range want {
						for j := range want[i] {
							if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
								t.Fatalf("%s, threads %d batch %d step %d: position %d logit %d: got %v, want %v",
									k, tc.threads, tc.batch, tc.step, i, j, got[i][j], want[i][j])
							}
						}
					}
				}
			}
			asm.Use(orig)
			// The float64 reference's tolerance of TestForwardMatchesReference
			// holds with the f16 cache too.
			refQ := newRef(f, true).logits(tokens)
			refF := newRef(f, false).logits(tokens)
			quantEffect := maxDiff64(refQ, refF)
			df, rms := maxDiff(want, refF)
			t.Logf("max |f16 cache − float64 reference| = %.3g (rms %.3g), activation rounding moves the reference by %.3g", df, rms, quantEffect)
			if tol := 1.5*quantEffect + 1e-4*rms; df > tol {
				t.Errorf("max |f16 cache − float64 reference| = %.4g, want ≤ %.4g", df, tol)
			}
			s32, err := m.NewSession(SessionOptions{Ctx: min(64, int(c.Header.MaxSeq))})
			if err != nil {
				t.Fatal(err)
			}
			defer s32.Close()
			s16, err := m.NewSession(SessionOptions{Ctx: min(64, int(c.Header.MaxSeq)), KV: KVF16})
			if err != nil {
				t.Fatal(err)
			}
			defer s16.Close()
			var states int64
			for _, ls := range s32.layers {
				states += 4 * int64(len(ls.conv)+len(ls.s))
			}
			if a, b := s32.CacheBytes()-states, s16.CacheBytes()-states; a != 2*b {
				t.Errorf("attention cache bytes: f32 %d, f16 %d, want half", a, b)
			}
		})
	}
}

func TestParseKVType(t *testing.T) {
	for _, s := range []string{"f32", "f16"} {
		k, err := ParseKVType(s)
		if err != nil || k.String() != s {
			t.Errorf("ParseKVType(%q) = %v, %v", s, k, err)
		}
	}
	if _, err := ParseKVType("q8"); err == nil {
		t.Error("ParseKVType(q8): no error")
	}
	if _, err := (&Model{}).NewSession(SessionOptions{KV: 7}); err == nil {
		t.Error("NewSession with KV 7: no error")
	}
}
