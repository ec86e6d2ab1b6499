package convert

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/gguf"
	"github.com/krafla/krafla/quantize"
)

// llamaQuantizeEnv names llama.cpp's llama-quantize for the tests that make
// their GGUF files with it (built as ../shared/PERF.md describes; not
// needed otherwise: those tests skip without it).
const llamaQuantizeEnv = "KRAFLA_LLAMA_QUANTIZE"

// llamaQuantize returns the llama-quantize binary $KRAFLA_LLAMA_QUANTIZE
// names, skipping the test when it is unset or not there.
func llamaQuantize(t *testing.T) string {
	t.Helper()
	lq := os.Getenv(llamaQuantizeEnv)
	if lq == "" {
		t.Skip("set " + llamaQuantizeEnv + " to llama.cpp's llama-quantize to test files it makes")
	}
	if fi, err := os.Stat(lq); err != nil || fi.IsDir() {
		t.Skipf("%s=%s: not a file (%v)", llamaQuantizeEnv, lq, err)
	}
	return lq
}

// llamaQuantizeTypes are llama-quantize's type names and a ggml type each
// output must hold (so that a fallback does not pass for the type).
var llamaQuantizeTypes = []struct {
	name string
	must gguf.Type
}{
	{"Q4_K_M", gguf.Q4_K}, {"Q4_K_S", gguf.Q4_K}, {"Q5_K_M", gguf.Q5_K}, {"Q5_K_S", gguf.Q5_K},
	{"Q6_K", gguf.Q6_K}, {"IQ4_NL", gguf.IQ4_NL}, {"IQ4_XS", gguf.IQ4_XS}, {"Q5_0", gguf.Q5_0},
	{"Q4_1", gguf.Q4_1},
}

// TestLlamaQuantizeKeep (opt-in: KRAFLA_LLAMA_QUANTIZE, and KRAFLA_LLAMACPP
// for the comparison with llama.cpp) quantizes a synthetic llama (the k256
// shape: every matrix whole superblocks wide) with llama.cpp's own
// llama-quantize to each type, imports the file with --type keep, checks
// that the export gives back every tensor byte for byte, and that krafla's
// greedy tokens and top log-probabilities agree with llama.cpp's on it.
func TestLlamaQuantizeKeep(t *testing.T) {
	lq := llamaQuantize(t)
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	if err := hfgen.Write(ck, "llama", hfgen.Options{Seed: 7, Shape: "k256"}); err != nil {
		t.Fatal(err)
	}
	q8 := filepath.Join(dir, "q8.mlb")
	if _, err := Convert(context.Background(), ck, Options{Out: q8, F16Scales: true}); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "q8.gguf")
	if _, err := ExportGGUF(q8, base, ExportOptions{}); err != nil {
		t.Fatal(err)
	}

	nlc := os.Getenv("KRAFLA_LLAMACPP")
	node, nodeErr := exec.LookPath("node")
	var link string
	if nlc != "" && nodeErr == nil {
		script, err := filepath.Abs(filepath.Join("..", "scripts", "llamacpp", "greedy.mjs"))
		if err != nil {
			t.Fatal(err)
		}
		link = filepath.Join(nlc, "krafla-greedy.mjs")
		if err := os.WriteFile(link, mustRead(t, script), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range llamaQuantizeTypes {
		t.Run(c.name, func(t *testing.T) {
			gg := filepath.Join(dir, c.name+".gguf")
			cmd := exec.Command(lq, "--allow-requantize", base, gg, c.name)
			cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+filepath.Dir(lq))
			if o, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("llama-quantize %s: %v\n%s", c.name, err, o)
			}
			src, err := gguf.Open(gg)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			types := map[gguf.Type]int{}
			for _, ti := range src.Tensors {
				types[ti.Type]++
			}
			if types[c.must] == 0 {
				t.Fatalf("llama-quantize %s wrote no %v tensor (types %v): the test would not test it", c.name, c.must, types)
			}
			t.Logf("%s: tensor types %v", c.name, types)

			out := filepath.Join(dir, c.name+".mlb")
			if _, err := ConvertGGUF(context.Background(), gg, Options{Out: out, Type: quantize.TypeKeep}); err != nil {
				t.Fatal(err)
			}
			back := filepath.Join(dir, c.name+".back.gguf")
			if _, err := ExportGGUF(out, back, ExportOptions{}); err != nil {
				t.Fatal(err)
			}
			bg, err := gguf.Open(back)
			if err != nil {
				t.Fatal(err)
			}
			defer bg.Close()
			got := map[string]gguf.Tensor{}
			for _, bt := range bg.Tensors {
				got[bt.Name] = bt
			}
			for _, st := range src.Tensors {
				bt, ok := got[st.Name]
				if !ok || bt.Type != st.Type || !bytes.Equal(bt.Data, st.Data) {
					t.Errorf("tensor %s: exported %v (%d bytes, found %v), llama-quantize wrote %v (%d bytes)",
						st.Name, bt.Type, len(bt.Data), ok, st.Type, len(st.Data))
				}
			}

			if link == "" {
				t.Skip("set KRAFLA_LLAMACPP (and have node) to compare with llama.cpp")
			}
			texts := filepath.Join(dir, "texts.json")
			if err := os.WriteFile(texts, []byte("[]"), 0o644); err != nil {
				t.Fatal(err)
			}
			const n = 24
			start := []int{1}
			r := runLlamaCpp(t, node, nlc, link, gg, n, joinInts(start), texts)
			r.Start = start
			k := kraflaRun(t, out, start, r.Tokens)
			agree, ties, diff := compareRunsTies(r, k)
			t.Logf("%s: %d of %d greedy tokens agree, %d more are near ties (krafla's top within %g of llama.cpp's token); max |Δ log p| of the top 8 = %.4g",
				c.name, agree, n, ties, nearTie, diff)
			if agree+ties != n || diff > llamaCppLogprobBound {
				t.Errorf("%d of %d greedy tokens agree (%d near ties), max |Δ log p| %.4g (bound %g)", agree, n, ties, diff, llamaCppLogprobBound)
			}
		})
	}
}

// nearTie is how far below krafla's most likely token llama.cpp's greedy
// token may be, in log-probability, for the step to count as a near tie:
// the two runs differ by design (see llamaCppLogprobBound), so two tokens
// within that of each other may swap.
const nearTie = 0.05

// compareRunsTies is compareRuns over every step (krafla follows
// llama.cpp's tokens, so the steps after a difference still compare): the
// steps whose greedy tokens agree, those where they differ by a near tie,
// and the largest log-probability difference of llama.cpp's top 8.
func compareRunsTies(r *llamaRun, k [][]float64) (agree, ties int, maxDiff float64) {
	for s, tok := range r.Tokens {
		for _, e := range r.top(s, 8) {
			maxDiff = math.Max(maxDiff, math.Abs(k[s][int(e[0])]-e[1]))
		}
		best := 0
		for j, x := range k[s] {
			if x > k[s][best] {
				best = j
			}
		}
		switch {
		case best == tok:
			agree++
		case k[s][best]-k[s][tok] < nearTie:
			ties++
		}
	}
	return agree, ties, maxDiff
}
