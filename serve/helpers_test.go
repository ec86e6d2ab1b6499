package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/krafla/krafla/convert"
	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/mlt"
)

// chatML is a small ChatML template (Qwen's shape) for the tiny model, whose
// tokenizer has <|im_start|> and <|im_end|>.
const chatML = `{% for m in messages %}<|im_start|>{{ m['role'] }}
{{ m['content'] }}<|im_end|>
{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant
{% endif %}`

var (
	modelOnce sync.Once
	modelDir  string
	modelErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if modelDir != "" {
		os.RemoveAll(modelDir)
	}
	os.Exit(code)
}

// tinyPath converts a synthetic tiny Llama 3 checkpoint with its byte-level
// tokenizer once per test binary and returns the .mlb path. Its context is
// 2048 (not hfgen's 256): a real template's tool prompt, one byte a token
// with so few merges, needs some 600.
func tinyPath(t testing.TB) string {
	t.Helper()
	modelOnce.Do(func() {
		modelDir, modelErr = os.MkdirTemp("", "krafla-serve-test-")
		if modelErr != nil {
			return
		}
		ck := filepath.Join(modelDir, "ck")
		if modelErr = hfgen.Write(ck, "llama3", hfgen.Options{Shape: "tiny", Seed: 3, Config: map[string]any{"max_position_embeddings": 2048}}); modelErr != nil {
			return
		}
		_, modelErr = convert.Convert(context.Background(), ck, convert.Options{Out: filepath.Join(modelDir, "tiny.mlb"), Threads: 1})
	})
	if modelErr != nil {
		t.Fatal(modelErr)
	}
	return filepath.Join(modelDir, "tiny.mlb")
}

// tinyModel opens the tiny model and its tokenizer, with the ChatML template
// attached to the tokenizer.
func tinyModel(t testing.TB) (*infer.Model, *mlt.Tokenizer) {
	t.Helper()
	p := tinyPath(t)
	m, err := infer.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	tok, err := mlt.Open(strings.TrimSuffix(p, ".mlb") + ".mlt")
	if err != nil {
		t.Fatal(err)
	}
	tok.SetChat(&mlt.Chat{Templates: []mlt.NamedTemplate{{Name: "default", Source: chatML}}, EOSToken: "<|im_end|>"})
	return m, tok
}

// startServer runs a server for the tiny model behind httptest; beforeStep,
// when given, runs before every scheduler step.
func startServer(t testing.TB, cfg Config, beforeStep ...func()) (*Server, string) {
	t.Helper()
	m, tok := tinyModel(t)
	if cfg.Name == "" {
		cfg.Name = "tiny"
	}
	s := NewServer(cfg)
	if len(beforeStep) > 0 {
		s.beforeStep = beforeStep[0]
	}
	if err := s.Start(m, tok); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		hs.Close()
		s.Close()
	})
	return s, hs.URL
}

// post sends body (a string, or a value encoded as JSON) and returns the
// status and the body read whole.
func post(t testing.TB, url string, body any, header ...string) (*http.Response, []byte) {
	t.Helper()
	var b []byte
	if s, ok := body.(string); ok {
		b = []byte(s)
	} else {
		var err error
		if b, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, out
}

// completion is the part of a text_completion (or chat.completion) response
// the tests read.
type completion struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Text         string                           `json:"text"`
		Message      *struct{ Role, Content string }  `json:"message"`
		Delta        *struct{ Role, Content *string } `json:"delta"`
		FinishReason *string                          `json:"finish_reason"`
		Logprobs     json.RawMessage                  `json:"logprobs"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error *struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
	} `json:"error"`
}

func decodeCompletion(t testing.TB, b []byte) completion {
	t.Helper()
	var c completion
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("response %s: %v", b, err)
	}
	return c
}

// streamResult is a stream read to its end.
type streamResult struct {
	chunks []completion
	text   string // the concatenated text or delta content
	done   bool   // data: [DONE] came last
	raw    []string
}

// readStream reads SSE data lines until the body ends, checking that each
// is JSON (or [DONE], which must be last).
func readStream(t testing.TB, body io.Reader) (streamResult, error) {
	var r streamResult
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		r.raw = append(r.raw, line)
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			return r, fmt.Errorf("line %q is not a data line", line)
		}
		if r.done {
			return r, fmt.Errorf("data after [DONE]: %q", line)
		}
		if data == "[DONE]" {
			r.done = true
			continue
		}
		var c completion
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			return r, fmt.Errorf("event %q: %v", data, err)
		}
		r.chunks = append(r.chunks, c)
		for _, ch := range c.Choices {
			r.text += ch.Text
			if ch.Delta != nil && ch.Delta.Content != nil {
				r.text += *ch.Delta.Content
			}
		}
	}
	return r, sc.Err()
}

// noStops is a logit_bias forbidding the tiny tokenizer's end tokens, so that
// generations run to max_tokens.
func noStops(tok *mlt.Tokenizer) map[string]float64 {
	b := map[string]float64{}
	for _, id := range tok.StopTokens() {
		b[fmt.Sprint(id)] = -100
	}
	if id, ok := tok.Lookup("<|im_end|>"); ok {
		b[fmt.Sprint(id)] = -100
	}
	return b
}

// greedy is an independent reference: the prompt through one session, then
// argmax (lowest id on ties) of the biased logits, n tokens.
func greedy(t testing.TB, m *infer.Model, prompt []int, n int, bias map[string]float64) []int {
	t.Helper()
	s, err := m.NewSession(infer.SessionOptions{Ctx: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out []int
	next := -1
	pick := func(_ int, l []float32) error {
		x := append([]float32(nil), l...)
		for k, v := range bias {
			var id int
			fmt.Sscan(k, &id)
			x[id] += float32(v)
		}
		best := 0
		for i, v := range x {
			if v > x[best] {
				best = i
			}
		}
		next = best
		return nil
	}
	if err := s.Eval(prompt, false, pick); err != nil {
		t.Fatal(err)
	}
	for len(out) < n {
		out = append(out, next)
		if len(out) == n {
			break
		}
		if err := s.Eval([]int{next}, false, pick); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
