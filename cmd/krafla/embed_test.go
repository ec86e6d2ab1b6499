package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/krafla/krafla/convert"
	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/embed"
	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/mlt"
)

// embedModel converts a synthetic Qwen3-Embedding-style checkpoint (last
// pooling, EOS template, query prompt) and returns the .mlb path.
func embedModel(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "hf")
	if err := hfgen.Write(src, "qwen3", hfgen.Options{Seed: 2, Embedding: "last"}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "e.mlb")
	if _, err := convert.Convert(context.Background(), src, convert.Options{Out: out}); err != nil {
		t.Fatal(err)
	}
	return out
}

func runEmbedCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errw bytes.Buffer
	code := execute(context.Background(), append([]string{"embed"}, args...), strings.NewReader("first line\nsecond line\n"), &out, &errw)
	return out.String(), errw.String(), code
}

// TestEmbedCommand: the plain and JSON outputs hold the library's vectors
// (exact float32 values), -f reads a line per input, --query puts the
// model's prompt (with the task) before each text, --dimensions truncates
// and renormalizes.
func TestEmbedCommand(t *testing.T) {
	path := embedModel(t)
	m, err := infer.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tok, err := mlt.Open(convert.TokenizerPath(path))
	if err != nil {
		t.Fatal(err)
	}
	e, err := embed.New(m, tok, embed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	want := func(prompt string, texts ...string) [][]float32 {
		var in [][]int
		for _, s := range texts {
			ids, _ := e.Tokenize(prompt, s)
			in = append(in, ids)
		}
		v, err := e.Embed(in)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	parsePlain := func(s string) [][]float32 {
		var out [][]float32
		for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
			var v []float32
			for _, f := range strings.Fields(line) {
				x, err := strconv.ParseFloat(f, 32)
				if err != nil {
					t.Fatal(err)
				}
				v = append(v, float32(x))
			}
			out = append(out, v)
		}
		return out
	}
	same := func(what string, got, want [][]float32) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d vectors, want %d", what, len(got), len(want))
		}
		for i := range got {
			if len(got[i]) != len(want[i]) {
				t.Fatalf("%s: vector %d has %d values, want %d", what, i, len(got[i]), len(want[i]))
			}
			for k := range got[i] {
				if math.Float32bits(got[i][k]) != math.Float32bits(want[i][k]) {
					t.Fatalf("%s: vector %d value %d = %v, want %v", what, i, k, got[i][k], want[i][k])
				}
			}
		}
	}
	out, errs, code := runEmbedCLI(t, path, "hello world", "the fox")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	same("plain", parsePlain(out), want("", "hello world", "the fox"))
	// Any pass size gives the same bits.
	out, _, _ = runEmbedCLI(t, path, "--batch-tokens", "3", "-v", "hello world", "the fox")
	same("--batch-tokens 3", parsePlain(out), want("", "hello world", "the fox"))

	out, errs, code = runEmbedCLI(t, path, "--json", "-f", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var j struct {
		Embeddings [][]float32
		Tokens     []int
		Pooling    string
		Normalized bool
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	same("--json -f -", j.Embeddings, want("", "first line", "second line"))
	if j.Pooling != "last" || !j.Normalized || len(j.Tokens) != 2 {
		t.Errorf("json header: %+v", j)
	}

	q := "Instruct: Find the fox\nQuery:"
	out, _, _ = runEmbedCLI(t, path, "--query", "Find the fox", "the fox")
	same("--query TASK", parsePlain(out), want(q, "the fox"))
	own, _ := tok.Embed.Prompt("query")
	out, _, _ = runEmbedCLI(t, path, "the fox", "--prompt", "query")
	same("--prompt query", parsePlain(out), want(own, "the fox"))

	// --pooling overrides the model's mode.
	mx, err := embed.New(m, tok, embed.Options{Pooling: embed.Max})
	if err != nil {
		t.Fatal(err)
	}
	defer mx.Close()
	ids, _ := mx.Tokenize("", "the fox")
	wantMax, err := mx.Embed([][]int{ids})
	if err != nil {
		t.Fatal(err)
	}
	out, _, _ = runEmbedCLI(t, path, "--pooling", "max", "the fox")
	same("--pooling max", parsePlain(out), wantMax)
	if w := want("", "the fox"); math.Float32bits(w[0][0]) == math.Float32bits(wantMax[0][0]) && math.Float32bits(w[0][1]) == math.Float32bits(wantMax[0][1]) {
		t.Error("max pooling gave the last token's vector")
	}

	out, _, _ = runEmbedCLI(t, path, "--dimensions", "8", "the fox")
	full := want("", "the fox")[0]
	same("--dimensions 8", parsePlain(out), [][]float32{embed.Truncate(full, 8)})

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{path}, "no input"},
		{[]string{path, "--pooling", "weightedmean", "x"}, `pooling "weightedmean"`},
		{[]string{path, "--prompt", "nope", "x"}, `no "nope" prompt`},
		{[]string{path, "--dimensions", "100000", "x"}, "the model's vectors have 64"},
		{[]string{path, "--batch-tokens", "0", "x"}, "--batch-tokens 0"},
	} {
		_, errs, code := runEmbedCLI(t, tc.args...)
		if code == 0 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want a failure saying %q", tc.args, code, errs, tc.want)
		}
	}
}

// TestInspectEmbeddingSections: inspect shows the post-processor template
// and the embedding section of a converted embedding model, in text and JSON.
func TestInspectEmbeddingSections(t *testing.T) {
	path := convert.TokenizerPath(embedModel(t))
	var out bytes.Buffer
	if err := runInspect(path, inspectOptions{}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`post single  $A "<|endoftext|>"`, `post pair    $A "<|endoftext|>" $B "<|endoftext|>"`,
		"embedding    last pooling, L2-normalized", `prompt       query: "Instruct: Given a web search query`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := runInspect(path, inspectOptions{JSON: true}, &out); err != nil {
		t.Fatal(err)
	}
	var j struct {
		Post      struct{ Single, Pair string } `json:"post_processor"`
		Embedding struct {
			Pooling   string
			Normalize bool
			Prompts   map[string]string
		}
	}
	if err := json.Unmarshal(out.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if j.Post.Single != `$A "<|endoftext|>"` || j.Embedding.Pooling != "last" || !j.Embedding.Normalize || j.Embedding.Prompts["document"] != "" || len(j.Embedding.Prompts) != 2 {
		t.Errorf("inspect --json: %+v", j)
	}
}

// embedPoolCases are the pooling modes of the synthetic checkpoints, and
// the ones whose Pooling module says include_prompt false.
var embedPoolCases = []struct {
	pool    string
	exclude bool
}{{"last", false}, {"mean", false}, {"cls", false}, {"max", false}, {"last", true}, {"mean", true}, {"max", true}}

// TestEmbedPoolings: krafla embed pools as the converted checkpoint's
// sentence-transformers files say, for every mode: its vectors of prompted
// (--prompt query) and plain texts have the bits of the library's with the
// first P tokens left out, P counted here independently (hfgen's tokenizer
// adds no BOS: the prompt's own tokens) where include_prompt is false and 0
// otherwise; --json names the mode. Mean and max vectors that leave the
// prompt out differ from those pooling it.
func TestEmbedPoolings(t *testing.T) {
	texts := []string{"the fox", "a longer line of text, with a comma"}
	for _, tc := range embedPoolCases {
		name := tc.pool
		if tc.exclude {
			name += "/exclude-prompt"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "hf")
			if err := hfgen.Write(src, "qwen3", hfgen.Options{Seed: 3, Embedding: tc.pool, ExcludePrompt: tc.exclude}); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "e.mlb")
			if _, err := convert.Convert(context.Background(), src, convert.Options{Out: path}); err != nil {
				t.Fatal(err)
			}
			m, err := infer.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			tok, err := mlt.Open(convert.TokenizerPath(path))
			if err != nil {
				t.Fatal(err)
			}
			e, err := embed.New(m, tok, embed.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			// inspect shows the mode and whether the prompt is pooled.
			var ib bytes.Buffer
			if err := runInspect(convert.TokenizerPath(path), inspectOptions{}, &ib); err != nil {
				t.Fatal(err)
			}
			line := "embedding    " + tc.pool + " pooling, L2-normalized\n"
			if tc.exclude {
				line = "embedding    " + tc.pool + " pooling, L2-normalized, prompt tokens not pooled\n"
			}
			if !strings.Contains(ib.String(), line) {
				t.Errorf("inspect output lacks %q:\n%s", line, ib.String())
			}
			ib.Reset()
			if err := runInspect(convert.TokenizerPath(path), inspectOptions{JSON: true}, &ib); err != nil {
				t.Fatal(err)
			}
			var ij struct {
				Embedding struct {
					Pooling       string
					ExcludePrompt bool `json:"exclude_prompt"`
				}
			}
			if err := json.Unmarshal(ib.Bytes(), &ij); err != nil || ij.Embedding.Pooling != tc.pool || ij.Embedding.ExcludePrompt != tc.exclude {
				t.Errorf("inspect --json: %+v, %v; want pooling %q, exclude_prompt %v", ij, err, tc.pool, tc.exclude)
			}
			for _, prompted := range []bool{false, true} {
				args := []string{path, "--json"}
				prompt, skip := "", 0
				if prompted {
					args = append(args, "--prompt", "query")
					prompt, _ = tok.Embed.Prompt("query")
					if tc.exclude {
						skip = len(tok.Encode(prompt, false))
					}
				}
				out, errs, code := runEmbedCLI(t, append(args, texts...)...)
				if code != 0 {
					t.Fatalf("%v: exit %d: %s", args, code, errs)
				}
				var j struct {
					Embeddings [][]float32
					Pooling    string
				}
				if err := json.Unmarshal([]byte(out), &j); err != nil {
					t.Fatal(err)
				}
				if j.Pooling != tc.pool || len(j.Embeddings) != len(texts) {
					t.Fatalf("%v: pooling %q, %d vectors; want %q, %d", args, j.Pooling, len(j.Embeddings), tc.pool, len(texts))
				}
				var in [][]int
				var skips []int
				for _, s := range texts {
					ids, _ := e.Tokenize(prompt, s)
					in = append(in, ids)
					skips = append(skips, skip)
				}
				want, err := e.EmbedSkip(in, skips)
				if err != nil {
					t.Fatal(err)
				}
				all, err := e.Embed(in)
				if err != nil {
					t.Fatal(err)
				}
				for i := range texts {
					for k := range want[i] {
						if math.Float32bits(j.Embeddings[i][k]) != math.Float32bits(want[i][k]) {
							t.Fatalf("%v: vector %d value %d = %v, want %v", args, i, k, j.Embeddings[i][k], want[i][k])
						}
					}
					differs := false
					for k := range want[i] {
						differs = differs || want[i][k] != all[i][k]
					}
					if wantDiff := skip > 0 && tc.pool != "last"; differs != wantDiff {
						t.Errorf("%v: vector %d differs from the one pooling every token: %v, want %v", args, i, differs, wantDiff)
					}
				}
			}
		})
	}
}
