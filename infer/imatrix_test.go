package infer

import (
	"context"
	"math"
	"math/rand"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/krafla/krafla/imatrix"
	"github.com/krafla/krafla/mlb/mlbtest"
)

// TestImatrix collects statistics over two chunks and compares every slot with
// the squares of the matrix inputs the float64 reference saw, then checks that
// the MLI1 file round-trips.
func TestImatrix(t *testing.T) {
	for _, name := range []string{"q8", "qwen3_qknorm_headdim", "qwen35_linear", "qwen35_linear_q4_mask", "gemma2"} {
		t.Run(name, func(t *testing.T) {
			h := mlbtest.CaseHeader(t, name)
			m, f := openModel(t, h, 11)
			s, err := m.NewSession(SessionOptions{Ctx: 20, Threads: 2, Batch: 8})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			tokens := randTokens(rand.New(rand.NewSource(12)), 45, int(h.Vocab))
			opt := ChunkOptions{Chunk: 19, BOS: 1}
			got, err := Imatrix(context.Background(), s, tokens, opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			// Two chunks of BOS + 19 tokens; the last 7 tokens are left out.
			if got.LayerTokens != 40 || got.ClassifierTokens != 40 {
				t.Errorf("tokens: layers %d, classifier %d; want 40, 40", got.LayerTokens, got.ClassifierTokens)
			}
			ref := newRef(f, true)
			for c := 0; c < 2; c++ {
				ref.logits(append([]int{1}, tokens[c*19:(c+1)*19]...))
			}
			// The fast path rounds activations in float32, and a quant that rounds
			// the other way shifts a few later sums by up to a percent or so: the
			// median channel must agree to 1e-3 and every channel to 5%. A wrong
			// slot or a missed token is off by far more.
			cmp := func(what string, got, want []float64) {
				t.Helper()
				if len(want) == 0 {
					for i, v := range got {
						if v != 0 {
							t.Errorf("%s[%d] = %g, want 0 (no statistics)", what, i, v)
							return
						}
					}
					return
				}
				if len(got) != len(want) {
					t.Errorf("%s: %d sums, want %d", what, len(got), len(want))
					return
				}
				var rel []float64
				for i := range want {
					e := math.Abs(got[i]-want[i]) / (math.Abs(want[i]) + 1e-12)
					rel = append(rel, e)
					if e > 0.05 {
						t.Errorf("%s[%d] = %.6g, want %.6g", what, i, got[i], want[i])
						return
					}
				}
				slices.Sort(rel)
				if med := rel[len(rel)/2]; med > 1e-3 {
					t.Errorf("%s: median relative error %.3g, want ≤ 1e-3", what, med)
				}
			}
			cfg := m.Config()
			lin := cfg.LinVDim() == cfg.QDim
			for l := range int(h.NLayers) {
				p := "blk." + strconv.Itoa(l) + "."
				if h.LayerFlag(l)&8 != 0 {
					cmp(p+"lqkv input", got.Slot(l, imatrix.AttnIn), ref.sq[p+"lqkv"])
					var want []float64
					if lin {
						want = ref.sq[p+"lout"]
					}
					cmp(p+"lout input", got.Slot(l, imatrix.AttnOut), want)
				} else {
					cmp(p+"wq input", got.Slot(l, imatrix.AttnIn), ref.sq[p+"wq"])
					cmp(p+"wo input", got.Slot(l, imatrix.AttnOut), ref.sq[p+"wo"])
				}
				cmp(p+"w1 input", got.Slot(l, imatrix.FFNIn), ref.sq[p+"w1"])
				cmp(p+"w2 input", got.Slot(l, imatrix.FFNOut), ref.sq[p+"w2"])
			}
			cls := "wcls"
			if h.SharedClassifier != 0 {
				cls = "tok_emb"
			}
			cmp("classifier input", got.Classifier(), ref.sq[cls])

			path := filepath.Join(t.TempDir(), "x.imatrix")
			if err := got.Write(path); err != nil {
				t.Fatal(err)
			}
			back, err := imatrix.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if back.LayerTokens != got.LayerTokens || len(back.Sums) != len(got.Sums) {
				t.Fatalf("round trip: %d tokens, %d sums; want %d, %d", back.LayerTokens, len(back.Sums), got.LayerTokens, len(got.Sums))
			}
			for i := range got.Sums {
				if back.Sums[i] != got.Sums[i] {
					t.Fatalf("round trip: sum %d = %v, want %v", i, back.Sums[i], got.Sums[i])
				}
			}
		})
	}
}
