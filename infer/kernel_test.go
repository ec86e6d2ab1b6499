package infer

import (
	"math"
	"math/rand"
	"testing"

	"github.com/krafla/krafla/asm"
	"github.com/krafla/krafla/mlb/mlbtest"
)

// TestKernelVariants checks that every kernel variant this CPU runs gives the
// logits of the pure-Go kernels bit for bit, through a whole model (Q8_0 and
// Q4_0 matrices, batched and single-token products).
func TestKernelVariants(t *testing.T) {
	orig := asm.Variant()
	defer asm.Use(orig)
	for _, name := range []string{"q8", "q4_mask_all_f16", "q4", "qwen35_linear_q4_mask"} {
		h := mlbtest.CaseHeader(t, name)
		m, _ := openModel(t, h, 21)
		tokens := randTokens(rand.New(rand.NewSource(22)), min(int(h.MaxSeq), 40), int(h.Vocab))
		if err := asm.Use(asm.Generic); err != nil {
			t.Fatal(err)
		}
		want := allLogits(t, m, SessionOptions{Batch: 16}, tokens, 0)
		for _, k := range asm.AvailableKernels() {
			if k == asm.Generic {
				continue
			}
			if err := asm.Use(k); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s", name, k.Description())
			got := allLogits(t, m, SessionOptions{Batch: 16, Threads: 2}, tokens, 0)
			for i := range want {
				for j := range want[i] {
					if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
						t.Fatalf("%s, %s: position %d logit %d: got %v, want %v (pure Go)", name, k, i, j, got[i][j], want[i][j])
					}
				}
			}
		}
	}
}
