package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/krafla/krafla/mlt"
)

// The FIM sentinels fimModel gives the tiny tokenizer, after its 283 tokens
// (hfgen: 256 bytes, 24 merges, 3 specials; the model's vocab is 320).
const (
	fimPre = 283 + iota // <|fim_prefix|>
	fimSuf              // <|fim_suffix|>
	fimMid              // <|fim_middle|>
	fimPad              // <|fim_pad|>, one of llama.cpp's infill stops
)

// fimModel is the tiny model with Qwen2.5-Coder's FIM sentinels added to its
// tokenizer (ids fimPre..fimPad), served with slots of ctx positions
// (256 without).
func fimModel(t testing.TB, ctx ...int) (*Server, string) {
	t.Helper()
	m, tok := tinyModel(t)
	if len(tok.Tokens) != fimPre {
		t.Fatalf("the tiny tokenizer has %d tokens, want %d", len(tok.Tokens), fimPre)
	}
	ft := &mlt.Tokenizer{Kind: tok.Kind, Flags: tok.Flags, BOS: tok.BOS, EOS: tok.EOS, Merges: tok.Merges,
		Pipeline: tok.Pipeline, Chat: tok.Chat, Post: tok.Post, Embed: tok.Embed, Pair: tok.Pair}
	ft.Tokens = slices.Clone(tok.Tokens)
	for _, s := range []string{"<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|fim_pad|>"} {
		ft.Tokens = append(ft.Tokens, mlt.Token{Attr: mlt.AttrAdded, Bytes: []byte(s)})
	}
	if err := ft.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Name: "tiny", Ctx: 256}
	if len(ctx) > 0 {
		cfg.Ctx = ctx[0]
	}
	s := NewServer(cfg)
	if err := s.Start(m, ft); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		hs.Close()
		s.Close()
	})
	return s, hs.URL
}

// fimWant is the prompt of prefix "ab" and suffix "cd" as llama.cpp's
// format_prompt_infill lays it out (FIM_PRE prefix FIM_SUF suffix FIM_MID;
// no BOS: the tiny tokenizer does not add one), with the tiny tokenizer's
// ids written by hand: a byte-level vocabulary whose id is the byte, and no
// merge of "ab" or "cd".
var fimWant = []int{fimPre, 'a', 'b', fimSuf, 'c', 'd', fimMid}

func TestFIMGenerate(t *testing.T) {
	s, url := fimModel(t)
	e := s.eng.Load()
	if got := e.fim.Prompt(e.tok, "ab", "cd", e.addBOS); !slices.Equal(got, fimWant) {
		t.Fatalf("prompt %v, want %v", got, fimWant)
	}
	const n = 10
	// A strong repeat penalty over everything keeps the random tiny model
	// off repeating one token (a sentinel), so the answer follows the prompt.
	const rp, lastN = 100, 1 << 30
	ids, stopped := greedyRef(t, e.m, fimWant, n, rp, lastN, e.fimIDs)
	want, wantReason := e.tok.Decode(ids), "length"
	if stopped {
		wantReason = "stop"
	}
	// The reference sees the order: suffix first gives another answer, so
	// a prompt built in the wrong order would fail below.
	if other, _ := greedyRef(t, e.m, []int{fimSuf, 'c', 'd', fimPre, 'a', 'b', fimMid}, n, rp, lastN, e.fimIDs); slices.Equal(other, ids) {
		t.Fatalf("suffix-first gives the same greedy answer %v: the test would not see the order", ids)
	}
	opts := map[string]any{"temperature": 0, "num_predict": n, "repeat_penalty": rp, "repeat_last_n": -1}
	for _, raw := range []bool{false, true} {
		code, b := ollamaDo(t, http.MethodPost, url+"/api/generate", map[string]any{"model": "tiny", "prompt": "ab", "suffix": "cd", "raw": raw, "stream": false, "options": opts})
		var d ollamaDone
		if err := json.Unmarshal(b, &d); err != nil || code != 200 {
			t.Fatalf("raw %v: %d %s", raw, code, b)
		}
		if d.Response != want || d.DoneReason != wantReason || d.PromptN != len(fimWant) {
			t.Errorf("raw %v: %s\nwant response %q, done_reason %s, prompt_eval_count %d", raw, b, want, wantReason, len(fimWant))
		}
	}
	// streamed: the same text
	bb, _ := json.Marshal(map[string]any{"model": "tiny", "prompt": "ab", "suffix": "cd", "options": opts})
	sr, err := http.Post(url+"/api/generate", "application/json", strings.NewReader(string(bb)))
	if err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, sr.Body)
	sr.Body.Close()
	got := ""
	for _, l := range lines {
		got += l["response"].(string)
	}
	if got != want || lines[len(lines)-1]["done"] != true {
		t.Errorf("streamed %q, want %q", got, want)
	}
	// /v1/completions: the same prompt; logit_bias (it has no repeat
	// penalty) keeps the sentinels and stops out of the greedy answer.
	bias := noStops(e.tok)
	for id := fimPre; id <= fimPad; id++ {
		bias[fmt.Sprint(id)] = -100
	}
	want = e.tok.Decode(greedy(t, e.m, fimWant, n, bias))
	resp, b := post(t, url+"/v1/completions", map[string]any{"model": "tiny", "prompt": "ab", "suffix": "cd", "max_tokens": n, "temperature": 0, "logit_bias": bias})
	if resp.StatusCode != 200 {
		t.Fatalf("completions: %d %s", resp.StatusCode, b)
	}
	c := decodeCompletion(t, b)
	if c.Choices[0].Text != want || c.Usage == nil || c.Usage.PromptTokens != len(fimWant) {
		t.Errorf("completions: %s\nwant text %q and %d prompt tokens", b, want, len(fimWant))
	}
}

// TestFIMStops: the infill stops (llama.cpp's FIM pad, repo, file separator)
// end a suffix request, and only those: forced by logit_bias, <|fim_pad|>
// ends the infill at once, while a plain completion runs on past it.
func TestFIMStops(t *testing.T) {
	_, url := fimModel(t)
	bias := map[string]float64{fmt.Sprint(fimPad): 100}
	for _, tc := range []struct {
		suffix, finish string
		tokens         int
	}{{"cd", "stop", 0}, {"", "length", 3}} {
		resp, b := post(t, url+"/v1/completions", map[string]any{"model": "tiny", "prompt": "ab", "suffix": tc.suffix, "max_tokens": 3, "temperature": 0, "logit_bias": bias})
		if resp.StatusCode != 200 {
			t.Fatalf("suffix %q: %d %s", tc.suffix, resp.StatusCode, b)
		}
		c := decodeCompletion(t, b)
		if f := c.Choices[0].FinishReason; f == nil || *f != tc.finish || c.Usage.CompletionTokens != tc.tokens {
			t.Errorf("suffix %q: %s\nwant finish_reason %s after %d tokens", tc.suffix, b, tc.finish, tc.tokens)
		}
	}
}

// TestFIMRequests: what a suffix combines with, and the refusals.
func TestFIMRequests(t *testing.T) {
	_, url := fimModel(t)
	_, plain := startServer(t, Config{})
	opts := map[string]any{"temperature": 0, "num_predict": 2}
	for _, tc := range []struct {
		name, url, path string
		body            map[string]any
		status          int
		want            string // in the error, or the done_reason
	}{
		{"no FIM tokens: generate", plain, "/api/generate", map[string]any{"prompt": "a", "suffix": "b"}, 400, "no fill-in-the-middle tokens"},
		{"no FIM tokens: raw generate", plain, "/api/generate", map[string]any{"prompt": "a", "suffix": "b", "raw": true}, 400, "no fill-in-the-middle tokens"},
		{"no FIM tokens: completions", plain, "/v1/completions", map[string]any{"prompt": "a", "suffix": "b"}, 400, "suffix"},
		{"suffix not a string", url, "/api/generate", map[string]any{"prompt": "a", "suffix": 1}, 400, "suffix"},
		{"system", url, "/api/generate", map[string]any{"prompt": "a", "suffix": "b", "system": "s"}, 400, "system"},
		{"think", url, "/api/generate", map[string]any{"prompt": "a", "suffix": "b", "think": true}, 400, "think"},
		{"token prompt", url, "/v1/completions", map[string]any{"prompt": []int{1, 2}, "suffix": "b"}, 400, "prompt"},
		{"template without .Suffix", url, "/api/generate", map[string]any{"prompt": "a", "suffix": "b", "template": "{{ .Prompt }}"}, 400, "suffix"},
		// an empty prefix is an insertion at the start, not a load request
		{"empty prompt", url, "/api/generate", map[string]any{"prompt": "", "suffix": "b"}, 200, "length"},
		// ollama's template override places the suffix where it says
		{"template with .Suffix", url, "/api/generate", map[string]any{"prompt": "a", "suffix": "b",
			"template": "{{ if .Suffix }}<|fim_prefix|>{{ .Prompt }}<|fim_suffix|>{{ .Suffix }}<|fim_middle|>{{ end }}"}, 200, "length"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := map[string]any{"model": "tiny", "stream": false, "options": opts, "max_tokens": 2}
			for k, v := range tc.body {
				body[k] = v
			}
			code, b := ollamaDo(t, http.MethodPost, tc.url+tc.path, body)
			if code != tc.status || !strings.Contains(string(b), tc.want) {
				t.Errorf("%d %s, want %d with %q", code, b, tc.status, tc.want)
			}
		})
	}
}

// TestFIMTemplateMatches: the template override of ollama's qwen2.5-coder
// gives the prompt FIM.Prompt builds (the same answer, the same count).
func TestFIMTemplateMatches(t *testing.T) {
	_, url := fimModel(t)
	opts := map[string]any{"temperature": 0, "num_predict": 6, "repeat_penalty": 100, "repeat_last_n": -1}
	var answers []ollamaDone
	for _, tmpl := range []string{"", "{{ if .Suffix }}<|fim_prefix|>{{ .Prompt }}<|fim_suffix|>{{ .Suffix }}<|fim_middle|>{{ end }}"} {
		code, b := ollamaDo(t, http.MethodPost, url+"/api/generate", map[string]any{"model": "tiny", "prompt": "ab", "suffix": "cd", "template": tmpl, "stream": false, "options": opts})
		var d ollamaDone
		if err := json.Unmarshal(b, &d); err != nil || code != 200 {
			t.Fatalf("template %q: %d %s", tmpl, code, b)
		}
		answers = append(answers, d)
	}
	if a, b := answers[0], answers[1]; a.Response != b.Response || a.PromptN != len(fimWant) || b.PromptN != len(fimWant) {
		t.Errorf("built %q (%d tokens), template %q (%d tokens), want equal with %d", a.Response, a.PromptN, b.Response, b.PromptN, len(fimWant))
	}
}

// TestFIMShow: /api/show lists ollama's "insert" capability for a model
// with FIM sentinels only.
func TestFIMShow(t *testing.T) {
	_, url := fimModel(t)
	_, plain := startServer(t, Config{})
	for _, tc := range []struct {
		url  string
		want bool
	}{{url, true}, {plain, false}} {
		code, b := ollamaDo(t, http.MethodPost, tc.url+"/api/show", `{"model":"tiny"}`)
		var d struct{ Capabilities []string }
		if err := json.Unmarshal(b, &d); err != nil || code != 200 {
			t.Fatalf("%d %s", code, b)
		}
		if got := slices.Contains(d.Capabilities, "insert"); got != tc.want {
			t.Errorf("capabilities %v: insert %v, want %v", d.Capabilities, got, tc.want)
		}
	}
}

// addFIMTokens adds fimModel's sentinels to hfgen's tokenizer.json (283
// tokens), as added special tokens with ids fimPre..fimPad.
func addFIMTokens(b []byte) ([]byte, error) {
	var tj map[string]any
	if err := json.Unmarshal(b, &tj); err != nil {
		return nil, err
	}
	added, _ := tj["added_tokens"].([]any)
	vocab, _ := tj["model"].(map[string]any)["vocab"].(map[string]any)
	if len(vocab) != fimPre {
		return nil, fmt.Errorf("tokenizer.json: %d vocab entries, want %d", len(vocab), fimPre)
	}
	for i, s := range []string{"<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|fim_pad|>"} {
		vocab[s] = fimPre + i
		added = append(added, map[string]any{"id": fimPre + i, "content": s, "single_word": false,
			"lstrip": false, "rstrip": false, "normalized": false, "special": true})
	}
	tj["added_tokens"] = added
	return json.Marshal(tj)
}

// TestFIMTrim: a suffix prompt over the context is trimmed, not refused:
// the end of the prefix and the start of the suffix stay, 3:1, leaving the
// answer its max_tokens. Context 64, max_tokens 8: 56 ids, 53 of text, the
// suffix 13 (a quarter), the prefix 40; the ids by hand (one a byte).
func TestFIMTrim(t *testing.T) {
	s, url := fimModel(t, 64)
	e := s.eng.Load()
	prefix, suffix := strings.Repeat("x", 80)+"yz", "Q"+strings.Repeat("w", 40)
	want := []int{fimPre}
	for _, c := range strings.Repeat("x", 38) + "yz" {
		want = append(want, int(c))
	}
	want = append(want, fimSuf)
	for _, c := range "Q" + strings.Repeat("w", 12) {
		want = append(want, int(c))
	}
	want = append(want, fimMid)
	bias := noStops(e.tok)
	for id := fimPre; id <= fimPad; id++ {
		bias[fmt.Sprint(id)] = -100
	}
	text := e.tok.Decode(greedy(t, e.m, want, 8, bias))
	resp, b := post(t, url+"/v1/completions", map[string]any{"model": "tiny", "prompt": prefix, "suffix": suffix, "max_tokens": 8, "temperature": 0, "logit_bias": bias})
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	c := decodeCompletion(t, b)
	if c.Usage == nil || c.Usage.PromptTokens != len(want) || c.Choices[0].Text != text {
		t.Errorf("%s\nwant %d prompt tokens and text %q", b, len(want), text)
	}
	// ollama's num_predict leaves the same room; num_ctx narrows the context
	for _, tc := range []struct {
		opts map[string]any
		n    int
	}{
		{map[string]any{"num_predict": 8}, len(want)},
		{map[string]any{"num_ctx": 32, "num_predict": 8}, 24},
	} {
		tc.opts["temperature"] = 0
		code, b := ollamaDo(t, http.MethodPost, url+"/api/generate", map[string]any{"model": "tiny", "prompt": prefix, "suffix": suffix, "stream": false, "options": tc.opts})
		var d ollamaDone
		if err := json.Unmarshal(b, &d); err != nil || code != 200 || d.PromptN != tc.n {
			t.Errorf("options %v: %d %s, want %d prompt tokens", tc.opts, code, b, tc.n)
		}
	}
}
