package infer_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"

	"github.com/krafla/krafla/convert"
	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/embed"
	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlt"
	"github.com/krafla/krafla/quantize"
)

// headLessArchs are the hfgen architectures with a head-less (*Model) form.
var headLessArchs = []string{"llama", "mistral", "qwen2", "qwen3", "smollm3", "gemma", "gemma2", "gemma3", "phi3", "granite"}

// refPool pools float64 reference states as sentence-transformers does
// (the first skip rows, the prompt's, left out of mean and max) and
// L2-normalizes.
func refPool(h [][]float64, pooling uint8, skip int) []float64 {
	v := make([]float64, len(h[0]))
	switch pooling {
	case mlt.PoolMean:
		for _, r := range h[skip:] {
			for i, x := range r {
				v[i] += x / float64(len(h)-skip)
			}
		}
	case mlt.PoolMax:
		for i := range v {
			v[i] = math.Inf(-1)
		}
		for _, r := range h[skip:] {
			for i, x := range r {
				v[i] = math.Max(v[i], x)
			}
		}
	case mlt.PoolCLS:
		copy(v, h[0])
	case mlt.PoolLast:
		copy(v, h[len(h)-1])
	}
	var n float64
	for _, x := range v {
		n += x * x
	}
	for i := range v {
		v[i] /= math.Sqrt(n)
	}
	return v
}

func cos(a []float32, b []float64) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * b[i]
		aa += float64(a[i]) * float64(a[i])
		bb += b[i] * b[i]
	}
	return ab / math.Sqrt(aa*bb)
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// TestEmbeddingReference converts a synthetic head-less checkpoint of every
// family (hfgen with Embedding: sentence-transformers files, and for last
// pooling Qwen3-Embedding's EOS template) to Q8_0, embeds texts of different
// lengths in one batch, and checks each vector against the float64
// reference of the same file pooled the same way (cos ≥ 0.9999), and that
// each vector is bit-identical to the input embedded alone.
func TestEmbeddingReference(t *testing.T) {
	texts := []string{"the quick brown fox", "hello", "and the sands of time run out, slowly, over the dunes of the world"}
	for _, arch := range headLessArchs {
		for _, pool := range hfgen.EmbeddingPoolings {
			t.Run(arch+"/"+pool, func(t *testing.T) {
				dir := t.TempDir()
				src := filepath.Join(dir, "hf")
				if err := hfgen.Write(src, arch, hfgen.Options{Seed: 5, Embedding: pool}); err != nil {
					t.Fatal(err)
				}
				out := filepath.Join(dir, "m.mlb")
				if _, err := convert.Convert(context.Background(), src, convert.Options{Out: out, Type: quantize.TypeQ8_0}); err != nil {
					t.Fatal(err)
				}
				f, err := mlb.Open(out)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if f.Header.SharedClassifier == 0 {
					t.Error("a head-less checkpoint converted without a shared classifier")
				}
				m, err := infer.FromFile(f)
				if err != nil {
					t.Fatal(err)
				}
				tok, err := mlt.Open(convert.TokenizerPath(out))
				if err != nil {
					t.Fatal(err)
				}
				if tok.Embed == nil || mlt.PoolName(tok.Embed.Pooling) != pool || !tok.Embed.Normalize {
					t.Fatalf("embedding section %+v, want %s pooling, normalized", tok.Embed, pool)
				}
				// A pass of 7 tokens: the long text spans several, the
				// others share them.
				e, err := embed.New(m, tok, embed.Options{Threads: 2, Tokens: 7})
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				var inputs [][]int
				for _, s := range texts {
					ids, err := e.Tokenize("", s)
					if err != nil {
						t.Fatal(err)
					}
					if pool == "last" && ids[len(ids)-1] != hfgen.EOS {
						t.Fatalf("%q: the template did not append EOS: %v", s, ids)
					}
					inputs = append(inputs, ids)
				}
				got, err := e.Embed(inputs)
				if err != nil {
					t.Fatal(err)
				}
				worst := 1.0
				for i, in := range inputs {
					ref := refPool(infer.RefHidden(f, false, in), tok.Embed.Pooling, 0)
					c := cos(got[i], ref)
					worst = min(worst, c)
					if !(c >= 0.9999) {
						t.Errorf("input %d (%d tokens): cos with the float64 reference %.6f, want ≥ 0.9999", i, len(in), c)
					}
					alone, err := e.Embed([][]int{in})
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(f32bytes(alone[0]), f32bytes(got[i])) {
						t.Errorf("input %d: embedded alone differs from embedded in the batch", i)
					}
				}
				t.Logf("lowest cos with the float64 reference: %.7f", worst)
			})
		}
	}
}

// TestEmbeddingReferenceExcludePrompt: checkpoints whose Pooling module says
// include_prompt false (hfgen's ExcludePrompt) pool queries without the
// query prompt's tokens. The count left out is sentence-transformers' (the
// prompt encoded alone with the special tokens, less a final special one:
// hfgen's tokenizers add no BOS, so the prompt's own tokens); each vector
// matches the float64 reference pooled over the rows after the prompt (cos
// ≥ 0.9999) and has the same bits alone as in the batch. Mean and max
// vectors differ from those pooling every token; last-token ones do not.
func TestEmbeddingReferenceExcludePrompt(t *testing.T) {
	texts := []string{"the quick brown fox", "hello", "and the sands of time run out, slowly, over the dunes of the world"}
	for _, arch := range headLessArchs {
		for _, pool := range []string{"last", "mean", "max"} {
			t.Run(arch+"/"+pool, func(t *testing.T) {
				dir := t.TempDir()
				src := filepath.Join(dir, "hf")
				if err := hfgen.Write(src, arch, hfgen.Options{Seed: 9, Embedding: pool, ExcludePrompt: true}); err != nil {
					t.Fatal(err)
				}
				out := filepath.Join(dir, "m.mlb")
				if _, err := convert.Convert(context.Background(), src, convert.Options{Out: out, Type: quantize.TypeQ8_0}); err != nil {
					t.Fatal(err)
				}
				f, err := mlb.Open(out)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				m, err := infer.FromFile(f)
				if err != nil {
					t.Fatal(err)
				}
				tok, err := mlt.Open(convert.TokenizerPath(out))
				if err != nil {
					t.Fatal(err)
				}
				if tok.Embed == nil || !tok.Embed.ExcludePrompt || mlt.PoolName(tok.Embed.Pooling) != pool {
					t.Fatalf("embedding section %+v, want %s pooling excluding the prompt", tok.Embed, pool)
				}
				e, err := embed.New(m, tok, embed.Options{Threads: 2, Tokens: 7})
				if err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				prompt, err := e.Prompt("query", "")
				if err != nil {
					t.Fatal(err)
				}
				want := len(tok.Encode(prompt, false))
				skip := e.PromptTokens(prompt)
				if skip != want || want < 5 {
					t.Fatalf("PromptTokens(%q) = %d, want the prompt's %d tokens", prompt, skip, want)
				}
				var inputs [][]int
				var skips []int
				for _, s := range texts {
					ids, _ := e.Tokenize(prompt, s)
					inputs = append(inputs, ids)
					skips = append(skips, skip)
				}
				// A document: no prompt, nothing left out.
				doc, _ := e.Tokenize("", texts[0])
				inputs = append(inputs, doc)
				skips = append(skips, e.PromptTokens(""))
				got, err := e.EmbedSkip(inputs, skips)
				if err != nil {
					t.Fatal(err)
				}
				all, err := e.Embed(inputs)
				if err != nil {
					t.Fatal(err)
				}
				worst := 1.0
				for i, in := range inputs {
					ref := refPool(infer.RefHidden(f, false, in), tok.Embed.Pooling, skips[i])
					c := cos(got[i], ref)
					worst = min(worst, c)
					if !(c >= 0.9999) {
						t.Errorf("input %d (%d tokens, %d left out): cos with the float64 reference %.6f, want ≥ 0.9999", i, len(in), skips[i], c)
					}
					alone, err := e.EmbedSkip([][]int{in}, []int{skips[i]})
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(f32bytes(alone[0]), f32bytes(got[i])) {
						t.Errorf("input %d: embedded alone differs from embedded in the batch", i)
					}
					same := bytes.Equal(f32bytes(all[i]), f32bytes(got[i]))
					if wantSame := pool == "last" || skips[i] == 0; same != wantSame {
						t.Errorf("input %d: vector pooling every token equal to the one leaving %d out: %v, want %v", i, skips[i], same, wantSame)
					}
				}
				t.Logf("%d prompt tokens left out; lowest cos with the float64 reference: %.7f", skip, worst)
			})
		}
	}
}
