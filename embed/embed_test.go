package embed

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/convert"
	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/internal/testenv"
	"github.com/krafla/krafla/mlt"
)

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// openStories converts the real stories260K checkpoint in testdata (a plain
// causal model: no sentence-transformers files, so mean pooling).
func openStories(t *testing.T) (*infer.Model, *mlt.Tokenizer) {
	t.Helper()
	dir := filepath.Join(testenv.RepoRoot(t), "testdata", "stories260K")
	out := filepath.Join(t.TempDir(), "s.mlb")
	if _, err := convert.Convert(context.Background(), dir, convert.Options{Out: out}); err != nil {
		t.Fatal(err)
	}
	m, err := infer.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	tok, err := mlt.Open(convert.TokenizerPath(out))
	if err != nil {
		t.Fatal(err)
	}
	return m, tok
}

// TestStoriesRetrieval is a sanity check on real text with the real model:
// mean-pooled states of the tiny story model, used as a plain decoder, rank
// for each query the sentence about the same thing above the unrelated ones.
func TestStoriesRetrieval(t *testing.T) {
	m, tok := openStories(t)
	e, err := New(m, tok, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.Pooling() != Mean || !e.Normalize() {
		t.Fatalf("pooling %d normalize %v, want mean and normalized for a model without an embedding section", e.Pooling(), e.Normalize())
	}
	docs := []string{
		"Lily went to the park to play with her red ball.",
		"The little cat drank milk from a bowl in the kitchen.",
		"Tom saw a big boat on the sea and he waved at it.",
	}
	queries := []struct {
		text string
		want int
	}{
		{"Lily played with her ball in the park.", 0},
		{"The cat was thirsty and drank some milk.", 1},
		{"Tom waved at the boat on the sea.", 2},
	}
	var inputs [][]int
	for _, s := range docs {
		ids, _ := e.Tokenize("", s)
		inputs = append(inputs, ids)
	}
	for _, q := range queries {
		ids, _ := e.Tokenize("", q.text)
		inputs = append(inputs, ids)
	}
	vs, err := e.Embed(inputs)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if n := math.Sqrt(dot(v, v)); math.Abs(n-1) > 1e-5 {
			t.Errorf("vector %d has norm %v, want 1", i, n)
		}
	}
	for qi, q := range queries {
		qv := vs[len(docs)+qi]
		best, bestS := -1, -2.0
		var scores []float64
		for di := range docs {
			s := dot(qv, vs[di])
			scores = append(scores, s)
			if s > bestS {
				best, bestS = di, s
			}
		}
		t.Logf("%q: similarities %.4f", q.text, scores)
		if best != q.want {
			t.Errorf("%q ranks %q first (similarities %.4f), want %q", q.text, docs[best], scores, docs[q.want])
		}
	}
}

func TestTruncate(t *testing.T) {
	v := []float32{3, 4, 12}
	got := Truncate(append([]float32(nil), v...), 2)
	if len(got) != 2 || math.Abs(float64(got[0])-0.6) > 1e-7 || math.Abs(float64(got[1])-0.8) > 1e-7 {
		t.Errorf("Truncate([3 4 12], 2) = %v, want [0.6 0.8]", got)
	}
	if got := Truncate(v, 0); len(got) != 3 || got[2] != 12 {
		t.Errorf("Truncate(v, 0) = %v, want v unchanged", got)
	}
	z := []float32{0, 0}
	Normalize(z)
	if z[0] != 0 || z[1] != 0 {
		t.Errorf("Normalize of zeros = %v", z)
	}
}

func TestPrompt(t *testing.T) {
	tok := &mlt.Tokenizer{Embed: &mlt.Embed{Pooling: Last, Normalize: true, Prompts: []mlt.NamedPrompt{
		{Name: "plain", Text: "query: "},
		{Name: "query", Text: "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:"}}}}
	e := &Embedder{tok: tok}
	for _, tc := range []struct{ name, task, want, err string }{
		{"query", "", "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:", ""},
		{"query", "Find the code", "Instruct: Find the code\nQuery:", ""},
		{"plain", "", "query: ", ""},
		{"plain", "x", "", "not of the form"},
		{"missing", "", "", `no "missing" prompt`},
		{"", "", "", ""},
		{"", "task", "", "needs a prompt"},
	} {
		got, err := e.Prompt(tc.name, tc.task)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Prompt(%q, %q): got %q, %v, want an error containing %q", tc.name, tc.task, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Prompt(%q, %q) = %q, %v, want %q", tc.name, tc.task, got, err, tc.want)
		}
	}
	tok.Embed.DefaultPrompt = "plain"
	if got, err := e.Prompt("", ""); err != nil || got != "query: " {
		t.Errorf("with a default prompt: Prompt(\"\", \"\") = %q, %v, want %q", got, err, "query: ")
	}
}

func TestEmbedRefuses(t *testing.T) {
	m, tok := openStories(t)
	e, err := New(m, tok, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	long := make([]int, m.Config().MaxSeq+1)
	for _, tc := range []struct {
		in   [][]int
		want string
	}{
		{[][]int{{1, 2}, {}}, "input 1 has no tokens"},
		{[][]int{{1}, long}, "input 1: 513 tokens, more than the context of 512"},
		{[][]int{{1, 99999}}, "token 99999 at index 1 outside the vocabulary"},
	} {
		_, err := e.Embed(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want an error containing %q", err, tc.want)
		}
	}
	if _, err := e.Embed([][]int{long}); !errors.Is(err, ErrTooLong) {
		t.Errorf("got %v, want ErrTooLong", err)
	}
}

// TestPromptTokens: with include_prompt false the prompt's tokens are
// counted as sentence-transformers counts them: the stories tokenizer puts
// BOS before the text and appends nothing, so BOS and every prompt token
// are left out; without the flag, or without a prompt, none are.
func TestPromptTokens(t *testing.T) {
	m, tok := openStories(t)
	if tok.Flags&mlt.FlagAddBOS == 0 || tok.Post != nil {
		t.Fatalf("the stories tokenizer: flags %#x, post %v; want BOS only", tok.Flags, tok.Post)
	}
	const prompt = "Once upon a time:"
	p := len(tok.Encode(prompt, false))
	for _, tc := range []struct {
		embed  *mlt.Embed
		prompt string
		want   int
	}{
		{nil, prompt, 0},
		{&mlt.Embed{Pooling: Mean}, prompt, 0},
		{&mlt.Embed{Pooling: Mean, ExcludePrompt: true}, prompt, 1 + p},
		{&mlt.Embed{Pooling: Max, ExcludePrompt: true}, prompt, 1 + p},
		{&mlt.Embed{Pooling: Mean, ExcludePrompt: true}, "", 0},
	} {
		tok.Embed = tc.embed
		e, err := New(m, tok, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.PromptTokens(tc.prompt); got != tc.want {
			t.Errorf("%+v: PromptTokens(%q) = %d, want %d", tc.embed, tc.prompt, got, tc.want)
		}
		e.Close()
	}
	tok.Embed = &mlt.Embed{Pooling: Mean, ExcludePrompt: true}
	if _, err := New(m, tok, Options{Pooling: CLS}); err == nil || !strings.Contains(err.Error(), "cls pooling cannot leave out") {
		t.Errorf("cls over a model that excludes the prompt: got %v", err)
	}
	tok.Embed = nil
}

func TestEmbedSkipRefuses(t *testing.T) {
	m, tok := openStories(t)
	e, err := New(m, tok, Options{Pooling: Max})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, tc := range []struct {
		skip []int
		want string
	}{
		{[]int{0}, "1 skip counts for 2 inputs"},
		{[]int{0, -1}, "input 1: skip count -1 is negative"},
		{[]int{1, 3}, "input 1: its 3 tokens are all the prompt's (3)"},
	} {
		_, err := e.EmbedSkip([][]int{{1, 2}, {1, 2, 3}}, tc.skip)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("skip %v: got %v, want an error containing %q", tc.skip, err, tc.want)
		}
	}
	if _, err := e.EmbedSkip([][]int{{1, 2}}, []int{2}); !errors.Is(err, ErrPromptOnly) {
		t.Errorf("got %v, want ErrPromptOnly", err)
	}
	// Max pooling with a skip of one is the maximum over the second token
	// alone: that token's normalized state, pooled by last-token.
	got, err := e.EmbedSkip([][]int{{1, 2}}, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	last, err := New(m, tok, Options{Pooling: Last})
	if err != nil {
		t.Fatal(err)
	}
	defer last.Close()
	want, err := last.Embed([][]int{{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	for k := range want[0] {
		if math.Float32bits(got[0][k]) != math.Float32bits(want[0][k]) {
			t.Fatalf("value %d: max over the last token %v, want its state %v", k, got[0][k], want[0][k])
		}
	}
}
