package infer

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/quantize"
)

// TestSyntheticDiscriminates checks that the float64 reference tests of the
// synthetic checkpoints can see a wrong multiplier: on the Q8_0 conversion
// TestConvertedArchitectures checks, a reference with embed_scale ×1.1,
// attn_scale ×2 or wo and w2 ×1.1 (a residual multiplier off by 10%; not
// with post norms, which undo it) must move the logits by at least twice
// that test's tolerance, and move the mean-pooled final states (what
// TestEmbeddingReference compares with cos ≥ 0.9999) to cos < 0.9998.
// Granite's and Gemma 1's synthetic weights once let all of these through.
func TestSyntheticDiscriminates(t *testing.T) {
	for _, arch := range hfgen.Archs {
		t.Run(arch, func(t *testing.T) {
			f, err := mlb.Open(convertArch(t, arch, quantize.TypeQ8_0, ""))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			tokens := randTokens(rand.New(rand.NewSource(9)), min(int(f.Header.MaxSeq), 48), int(f.Header.Vocab))
			run := func(fault func(r *refModel)) ([][]float64, []float64) {
				r := newRef(f, false)
				var h [][]float64
				r.hidden = &h
				if fault != nil {
					fault(r)
				}
				lg := r.logits(tokens)
				pool := make([]float64, len(h[0]))
				for _, row := range h {
					for i, x := range row {
						pool[i] += x
					}
				}
				return lg, pool
			}
			refQ := newRef(f, true).logits(tokens)
			ref, pool := run(nil)
			_, rms := maxDiff(toF32(ref), ref)
			tol := 2*maxDiff64(refQ, ref) + 1e-4*rms // TestConvertedArchitectures' bound
			h := f.Header
			es, as := h.EmbedScale, h.AttnScale
			if es == 0 {
				es = 1
			}
			if as == 0 {
				as = float32(1 / math.Sqrt(float64(h.HeadDimEff())))
			}
			faults := []struct {
				name  string
				apply func(r *refModel)
			}{
				{"embed_scale ×1.1", func(r *refModel) { r.h.EmbedScale = es * 1.1 }},
				{"attn_scale ×2", func(r *refModel) { r.h.AttnScale = as * 2 }},
			}
			if h.PostNorms == 0 {
				faults = append(faults, struct {
					name  string
					apply func(r *refModel)
				}{"wo, w2 ×1.1", func(r *refModel) {
					for name, w := range r.w {
						if strings.HasSuffix(name, ".wo") || strings.HasSuffix(name, ".w2") || strings.HasSuffix(name, ".lout") {
							for i := range w {
								w[i] *= 1.1
							}
						}
					}
				}})
			}
			for _, fl := range faults {
				lg, p := run(fl.apply)
				d, c := maxDiff64(lg, ref), cos64(p, pool)
				t.Logf("%s: logits move %.3g (%.2f× the tolerance %.3g), mean-pooled states to cos %.7f", fl.name, d, d/tol, tol, c)
				if d >= 2*tol && c < 0.9998 {
					continue
				}
				t.Errorf("%s: logits move %.3g, want ≥ %.3g (twice the tolerance); mean-pooled cos %.7f, want < 0.9998", fl.name, d, 2*tol, c)
			}
		})
	}
}

func toF32(x [][]float64) [][]float32 {
	out := make([][]float32, len(x))
	for i, r := range x {
		out[i] = make([]float32, len(r))
		for j, v := range r {
			out[i][j] = float32(v)
		}
	}
	return out
}

func cos64(a, b []float64) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += a[i] * b[i]
		aa += a[i] * a[i]
		bb += b[i] * b[i]
	}
	return ab / math.Sqrt(aa*bb)
}
