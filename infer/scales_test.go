package infer

import (
	"math"
	"math/rand"
	"testing"

	"github.com/krafla/krafla/mlb/mlbtest"
)

// TestF16ScaleLayout checks that a model whose file holds f16 scales is
// packed with binary16 scales (2 bytes each in memory, WeightBytes counting
// them so) and gives, batched and one token at a time, 1 and 2 threads, the
// logits bit for bit of the same model packed with float32 scales.
func TestF16ScaleLayout(t *testing.T) {
	for _, name := range []string{"q8_f16", "q4_f16"} {
		h := mlbtest.CaseHeader(t, name)
		m16, _ := openModel(t, h, 51)
		m32, _ := openModel(t, h, 51)
		var b16, b32, nscales int64
		for _, w := range m32.mats() {
			if !w.f16 {
				t.Fatalf("%s: a %d×%d matrix of an f16-scale file is not packed with f16 scales", name, w.rows, w.cols)
			}
			b16 += w.bytes()
			w.f16 = false // m32 packs with float32 scales on first use
			b32 += w.bytes()
			nscales += int64(w.rows * w.cols / 32)
		}
		if m16.WeightBytes() != b16 || b32-b16 != 2*nscales {
			t.Fatalf("%s: WeightBytes %d, matrices %d bytes with f16 scales, %d with f32, %d scales", name, m16.WeightBytes(), b16, b32, nscales)
		}
		tokens := randTokens(rand.New(rand.NewSource(52)), min(int(h.MaxSeq), 20), int(h.Vocab))
		for _, opt := range []SessionOptions{{Batch: 8}, {Batch: 8, Threads: 2}} {
			for _, step := range []int{0, 1} {
				want := allLogits(t, m32, opt, tokens, step)
				got := allLogits(t, m16, opt, tokens, step)
				for i := range want {
					for j := range want[i] {
						if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
							t.Fatalf("%s %+v step %d: position %d logit %d: f16 scales %v, f32 scales %v", name, opt, step, i, j, got[i][j], want[i][j])
						}
					}
				}
			}
		}
		for i, w := range m16.mats() {
			if !w.pk.F16() || m32.mats()[i].pk.F16() {
				t.Fatalf("%s: matrix %d×%d packed with f16 scales %v, in the f32 model %v", name, w.rows, w.cols, w.pk.F16(), m32.mats()[i].pk.F16())
			}
		}
	}
}
