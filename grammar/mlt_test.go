package grammar

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/krafla/krafla/internal/testenv"
	"github.com/krafla/krafla/mlt"
)

func sharedTokenizer(t testing.TB, name string) (*Vocab, [][]byte, []bool, []int) {
	t.Helper()
	base := os.Getenv("KRAFLA_SHARED")
	if base == "" {
		base = filepath.Join(filepath.Dir(testenv.RepoRoot(t)), "shared")
	}
	p := filepath.Join(base, "tokenizers", name, "tokenizer.json")
	if strings.Contains(name, "/") { // tokenizers-next/gptoss
		p = filepath.Join(base, name, "tokenizer.json")
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s not found", p)
	}
	tk, err := mlt.FromHF(p)
	if err != nil {
		t.Fatal(err)
	}
	toks, ctl := tk.TokenBytes()
	stops := tk.StopTokens()
	v, err := NewVocab(toks, ctl, stops)
	if err != nil {
		t.Fatal(err)
	}
	return v, toks, ctl, stops
}

const benchSchema = `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0,"maximum":150},
"tags":{"type":"array","items":{"type":"string","maxLength":12},"maxItems":4},"born":{"type":"string","format":"date"},
"kind":{"enum":["cat","dog","bird"]}},"required":["name","age","kind"],"additionalProperties":false}`

// TestRealVocab runs random-weight generation over real tokenizers'
// vocabularies (SentencePiece byte fallback, byte-level BPE) and checks the
// mask against the per-token check at several steps; outputs are validated.
func TestRealVocab(t *testing.T) {
	for _, name := range []string{"llama2", "qwen3"} {
		t.Run(name, func(t *testing.T) {
			v, toks, ctl, stops := sharedTokenizer(t, name)
			g := mustSchema(t, benchSchema)
			r := rand.New(rand.NewPCG(9, 9))
			sv, _ := decodeAny([]byte(benchSchema))
			done := 0
			for run := 0; run < 6; run++ {
				st := g.NewState()
				mask := make([]uint64, v.Words())
				var out []byte
				for step := 0; step < 200; step++ {
					if err := st.Mask(v, mask); err != nil {
						t.Fatalf("after %q: %v", out, err)
					}
					if step%25 == 0 && run < 2 {
						for id := range toks {
							want := !ctl[id] && len(toks[id]) > 0 && st.Clone().Accept(toks[id]) == nil
							for _, s := range stops {
								if s == id {
									want = st.Accepting()
								}
							}
							if got := mask[id>>6]>>(id&63)&1 == 1; got != want {
								t.Fatalf("after %q token %d %q: mask %v, per-token check %v", out, id, toks[id], got, want)
							}
						}
					}
					best, bl := -1, -1e9
					for id := range toks {
						if mask[id>>6]>>(id&63)&1 == 1 {
							l := r.NormFloat64()
							if v.IsStop(id) {
								l += float64(step) / 20
							}
							if l > bl {
								best, bl = id, l
							}
						}
					}
					if v.IsStop(best) {
						ov, err := decodeAny(out)
						if err != nil {
							t.Fatalf("%q: %v", out, err)
						}
						if why := (&validator{sv}).check(sv, ov, 0); why != "" {
							t.Fatalf("%s invalid: %s", out, why)
						}
						done++
						break
					}
					if err := st.AcceptToken(v, best); err != nil {
						t.Fatal(err)
					}
					out = append(out, toks[best]...)
				}
			}
			if done == 0 {
				t.Fatal("no run ended with a stop")
			}
		})
	}
}

// maskStates: states inside the benchmark schema's output (after these
// prefixes), the first inside a free string (most of the vocabulary alive).
var maskPrefixes = []string{`{"name":"Jo`, `{"name":"x","age":1`, `{`, `{"name":"x","age":3,"tags":["ab`}

func benchVocab(b *testing.B, name string) {
	v, toks, _, _ := sharedTokenizer(b, name)
	g := mustSchema(b, benchSchema)
	mask := make([]uint64, v.Words())
	for i, p := range maskPrefixes {
		st := g.NewState()
		if err := st.Accept([]byte(p)); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("state%d/trie", i), func(b *testing.B) {
			for b.Loop() {
				st.d.mask = nil // the walk itself, not the cached mask
				g.masks = 0
				if err := st.Mask(v, mask); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("state%d/cached", i), func(b *testing.B) {
			for b.Loop() {
				st.Mask(v, mask)
			}
		})
		if i == 0 {
			b.Run(fmt.Sprintf("state%d/naive", i), func(b *testing.B) {
				for b.Loop() {
					for id := range toks {
						if len(toks[id]) > 0 {
							st.Clone().Accept(toks[id])
						}
					}
				}
			})
		}
	}
}

func BenchmarkMask32k(b *testing.B)  { benchVocab(b, "llama2") }
func BenchmarkMask128k(b *testing.B) { benchVocab(b, "llama3") }
func BenchmarkMask151k(b *testing.B) { benchVocab(b, "qwen3") }
func BenchmarkMask200k(b *testing.B) { benchVocab(b, "tokenizers-next/gptoss") }
func BenchmarkMask262k(b *testing.B) { benchVocab(b, "gemma3") }

var _ = json.Valid
var _ = time.Now

// BenchmarkGenerate: the mask time per generated token over whole random-
// weight generations of the benchmark schema (fresh grammar each run, so
// the DFA and mask caches start cold), at 32k, 128k, 151k and 262k tokens.
func BenchmarkGenerate(b *testing.B) {
	for _, name := range []string{"llama2", "llama3", "qwen3", "tokenizers-next/gptoss", "gemma3"} {
		b.Run(filepath.Base(name), func(b *testing.B) {
			v, toks, _, _ := sharedTokenizer(b, name)
			r := rand.New(rand.NewPCG(4, 4))
			mask := make([]uint64, v.Words())
			var spent, cpu time.Duration
			n := 0
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for b.Loop() {
				g := mustSchema(b, benchSchema)
				st := g.NewState()
				for step := 0; step < 120; step++ {
					t0, c0 := time.Now(), threadCPU()
					if err := st.Mask(v, mask); err != nil {
						b.Fatal(err)
					}
					spent += time.Since(t0)
					cpu += threadCPU() - c0
					n++
					best, bl := -1, -1e9
					for id := range toks {
						if mask[id>>6]>>(id&63)&1 == 1 {
							if l := r.NormFloat64() + float64(len(toks[id]))/4; l > bl {
								best, bl = id, l
							}
						}
					}
					if v.IsStop(best) {
						break
					}
					st.AcceptToken(v, best)
				}
			}
			b.ReportMetric(float64(spent.Microseconds())/float64(n), "µs-mask/token")
			b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(n), threadCPUName)
			b.ReportMetric(float64(n)/float64(b.N), "tokens/run")
		})
	}
}
