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

	out, _, _ = runEmbedCLI(t, path, "--dimensions", "8", "the fox")
	full := want("", "the fox")[0]
	same("--dimensions 8", parsePlain(out), [][]float32{embed.Truncate(full, 8)})

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{path}, "no input"},
		{[]string{path, "--pooling", "max", "x"}, `pooling "max"`},
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
