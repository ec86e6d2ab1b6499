package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/krafla/krafla/chat"
	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/mlt"
)

// greedyRef is an independent reference for ollama's sampling at
// temperature 0: the prompt through one session, then argmax (lowest id on
// ties) of the logits after llama.cpp's repeat penalty rp over the last
// lastN tokens (prompt included; 1: off), until n tokens or a stop id. It
// returns the tokens (the stop excluded) and whether a stop ended them.
func greedyRef(t testing.TB, m *infer.Model, prompt []int, n int, rp float32, lastN int, stops map[int]bool) ([]int, bool) {
	t.Helper()
	s, err := m.NewSession(infer.SessionOptions{Ctx: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hist := append([]int(nil), prompt...)
	next := -1
	pick := func(_ int, l []float32) error {
		x := append([]float32(nil), l...)
		if rp != 1 {
			seen := map[int]bool{}
			for i := len(hist) - 1; i >= 0 && i >= len(hist)-lastN; i-- {
				if id := hist[i]; !seen[id] {
					seen[id] = true
					if x[id] > 0 {
						x[id] /= rp
					} else {
						x[id] *= rp
					}
				}
			}
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
	var out []int
	for len(out) < n {
		if stops[next] {
			return out, true
		}
		out = append(out, next)
		hist = append(hist, next)
		if len(out) == n {
			break
		}
		if err := s.Eval([]int{next}, false, pick); err != nil {
			t.Fatal(err)
		}
	}
	return out, false
}

type ollamaDone struct {
	Model      string `json:"model"`
	CreatedAt  string `json:"created_at"`
	Response   string `json:"response"`
	Message    *struct{ Role, Content, Thinking string }
	Done       bool   `json:"done"`
	DoneReason string `json:"done_reason"`
	Total      int64  `json:"total_duration"`
	Load       int64  `json:"load_duration"`
	PromptN    int    `json:"prompt_eval_count"`
	PromptDur  int64  `json:"prompt_eval_duration"`
	EvalN      int    `json:"eval_count"`
	EvalDur    int64  `json:"eval_duration"`
	Error      string `json:"error"`
}

func TestOllamaGenerate(t *testing.T) {
	s, url := startServer(t, Config{Ctx: 256})
	e := s.eng.Load()
	const n = 12
	prompt := e.tok.Encode("The lava", e.addBOS)
	// The cases differ: the penalties change what greedy picks.
	off, _ := greedyRef(t, e.m, prompt, n, 1, 0, e.stopIDs)
	if on, _ := greedyRef(t, e.m, prompt, n, 3, 4, e.stopIDs); fmt.Sprint(on) == fmt.Sprint(off) {
		t.Fatalf("repeat_penalty 3 leaves the reference unchanged (%v): the test would not see it", on)
	}
	for _, c := range []struct {
		name    string
		opts    map[string]any
		rp      float32
		lastN   int
		stream  bool
		reqName string
	}{
		{"penalty off", map[string]any{"repeat_penalty": 1}, 1, 0, false, "tiny"},
		{"penalty 3 over 4", map[string]any{"repeat_penalty": 3, "repeat_last_n": 4}, 3, 4, false, "tiny:latest"},
		{"penalty 100 over all", map[string]any{"repeat_penalty": 100, "repeat_last_n": -1}, 100, 1 << 30, false, "tiny"},
		{"ollama's default penalty, streamed", map[string]any{}, 1.1, 64, true, "tiny"},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := map[string]any{"temperature": 0, "num_predict": n}
			for k, v := range c.opts {
				opts[k] = v
			}
			ids, stopped := greedyRef(t, e.m, prompt, n, c.rp, c.lastN, e.stopIDs)
			want, wantReason := e.tok.Decode(ids), "length"
			if stopped {
				wantReason = "stop"
			}
			body := map[string]any{"model": c.reqName, "prompt": "The lava", "raw": true, "stream": c.stream, "options": opts}
			if !c.stream {
				code, b := ollamaDo(t, http.MethodPost, url+"/api/generate", body)
				var d ollamaDone
				json.Unmarshal(b, &d)
				if code != 200 || d.Response != want || d.DoneReason != wantReason || !d.Done {
					t.Fatalf("%d %s\nwant response %q, done_reason %s", code, b, want, wantReason)
				}
				if d.EvalN != len(ids) || d.PromptN != len(prompt) || d.Model != c.reqName {
					t.Errorf("eval_count %d prompt_eval_count %d model %q, want %d, %d, %q", d.EvalN, d.PromptN, d.Model, len(ids), len(prompt), c.reqName)
				}
				if d.Total <= 0 || d.EvalDur < 0 || d.PromptDur <= 0 || d.Total < d.EvalDur+d.PromptDur {
					t.Errorf("durations total %d prompt %d eval %d", d.Total, d.PromptDur, d.EvalDur)
				}
				if _, err := time.Parse(time.RFC3339Nano, d.CreatedAt); err != nil {
					t.Errorf("created_at %q: %v", d.CreatedAt, err)
				}
				return
			}
			b, _ := json.Marshal(body)
			resp, err := http.Post(url+"/api/generate", "application/json", strings.NewReader(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
				t.Errorf("Content-Type %q", ct)
			}
			lines := readLines(t, resp.Body)
			text := ""
			for i, l := range lines {
				text += l["response"].(string)
				if (l["done"] == true) != (i == len(lines)-1) {
					t.Errorf("line %d: done %v", i, l["done"])
				}
			}
			last := lines[len(lines)-1]
			if text != want || last["done_reason"] != wantReason || last["eval_count"] != float64(len(ids)) {
				t.Errorf("streamed %q, last %v; want %q, %s, %d tokens", text, last, want, wantReason, len(ids))
			}
		})
	}
}

func TestOllamaChat(t *testing.T) {
	s, url := startServer(t, Config{Ctx: 256})
	e := s.eng.Load()
	const n = 10
	text := "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"
	ids, stopped := greedyRef(t, e.m, e.tok.Encode(text, false), n, 1, 0, e.chatIDs)
	want, wantReason := e.tok.Decode(ids), "length"
	if stopped {
		wantReason = "stop"
	}
	msgs := []any{map[string]any{"role": "system", "content": "Be brief."}, map[string]any{"role": "user", "content": "Hello"}}
	opts := map[string]any{"temperature": 0, "num_predict": n, "repeat_penalty": 1}
	code, b := ollamaDo(t, http.MethodPost, url+"/api/chat", map[string]any{"model": "tiny", "messages": msgs, "stream": false, "options": opts})
	var d ollamaDone
	json.Unmarshal(b, &d)
	if code != 200 || d.Message == nil || d.Message.Role != "assistant" || d.Message.Content != want || d.DoneReason != wantReason {
		t.Fatalf("%d %s\nwant content %q, %s", code, b, want, wantReason)
	}
	// Streamed (ollama's default): the same text, one object a line.
	bb, _ := json.Marshal(map[string]any{"model": "tiny", "messages": msgs, "options": opts})
	resp, err := http.Post(url+"/api/chat", "application/json", strings.NewReader(string(bb)))
	if err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, resp.Body)
	resp.Body.Close()
	got := ""
	for _, l := range lines {
		got += l["message"].(map[string]any)["content"].(string)
	}
	if got != want || lines[len(lines)-1]["done"] != true {
		t.Errorf("streamed %q (%d lines), want %q", got, len(lines), want)
	}
	// /api/generate with a system prompt renders the same conversation.
	code, b = ollamaDo(t, http.MethodPost, url+"/api/generate", map[string]any{"model": "tiny", "system": "Be brief.", "prompt": "Hello", "stream": false, "options": opts})
	json.Unmarshal(b, &d)
	if code != 200 || d.Response != want {
		t.Errorf("generate through the template: %d %s, want %q", code, b, want)
	}
	// A template override (ollama's Go template) renders the same prompt;
	// what follows .Response is not part of it.
	tmpl := "{{ if .System }}<|im_start|>system\n{{ .System }}<|im_end|>\n{{ end }}<|im_start|>user\n{{ .Prompt }}<|im_end|>\n<|im_start|>assistant\n{{ .Response }}<|im_end|>\n"
	code, b = ollamaDo(t, http.MethodPost, url+"/api/generate", map[string]any{"model": "tiny", "system": "Be brief.", "prompt": "Hello", "template": tmpl, "stream": false, "options": opts})
	d = ollamaDone{}
	json.Unmarshal(b, &d)
	if code != 200 || d.Response != want || d.PromptN != len(e.tok.Encode(text, false)) {
		t.Errorf("generate with a template override: %d %s, want %q", code, b, want)
	}
	// format "json": the answer is one JSON object.
	code, b = ollamaDo(t, http.MethodPost, url+"/api/chat", map[string]any{"model": "tiny", "messages": msgs, "stream": false, "format": "json",
		"options": map[string]any{"temperature": 0, "num_predict": 200}})
	json.Unmarshal(b, &d)
	var obj map[string]any
	if code != 200 || d.DoneReason == "stop" && json.Unmarshal([]byte(d.Message.Content), &obj) != nil || !strings.HasPrefix(strings.TrimSpace(d.Message.Content), "{") {
		t.Errorf("format json: %d %s", code, b)
	}
	// An empty images list is no image.
	code, b = ollamaDo(t, http.MethodPost, url+"/api/chat", map[string]any{"model": "tiny", "stream": false, "images": []any{}, "options": opts,
		"messages": []any{map[string]any{"role": "user", "content": "Hello", "images": []any{}}}})
	if code != 200 {
		t.Errorf("empty images lists: %d %s", code, b)
	}
	// An empty conversation loads the model.
	code, b = ollamaDo(t, http.MethodPost, url+"/api/chat", `{"model":"tiny","messages":[]}`)
	if code != 200 || !strings.Contains(string(b), `"done_reason":"load"`) {
		t.Errorf("load request: %d %s", code, b)
	}
}

func TestOllamaErrors(t *testing.T) {
	_, url := startServer(t, Config{Ctx: 64})
	msg := `{"model":"tiny","messages":[{"role":"user","content":"hi"}]`
	for _, c := range []struct {
		method, path, body string
		status             int
		want               string // in the error message
	}{
		{"POST", "/api/chat", `{"model":"nope","messages":[]}`, 404, `model "nope" not found, try pulling it first`},
		{"POST", "/api/chat", `{"messages":[]}`, 400, "model"},
		{"POST", "/api/chat", `[1]`, 400, "JSON object"},
		{"POST", "/api/chat", msg + `,"options":{"temperature":"hot"}}`, 400, "options.temperature"},
		{"POST", "/api/chat", msg + `,"options":{"num_predict":-3}}`, 400, "options.num_predict"},
		{"POST", "/api/chat", msg + `,"options":{"top_p":2}}`, 400, "options.top_p"},
		{"POST", "/api/chat", msg + `,"options":{"stop":[1]}}`, 400, "options.stop"},
		{"POST", "/api/chat", msg + `,"options":[]}`, 400, "options"},
		{"POST", "/api/chat", msg + `,"format":"yaml"}`, 400, "format"},
		{"POST", "/api/chat", msg + `,"format":{"type":"object","patternProperties":{"a":{}}}}`, 400, "format"},
		{"POST", "/api/chat", msg + `,"think":true}`, 400, "does not support thinking"},
		{"POST", "/api/chat", msg + `,"think":"max"}`, 400, "think"},
		{"POST", "/api/chat", msg + `,"keep_alive":[]}`, 400, "keep_alive"},
		{"POST", "/api/chat", msg + `,"stream":"yes"}`, 400, "stream"},
		{"POST", "/api/chat", `{"model":"tiny","messages":[{"role":"user","content":"hi","images":["aGk="]}]}`, 400, "images"},
		{"POST", "/api/chat", `{"model":"tiny","messages":[{"role":"user","content":5}]}`, 400, "messages[0].content"},
		{"POST", "/api/chat", `{"model":"tiny","messages":[{"role":"user","content":"` + strings.Repeat("long ", 100) + `"}]}`, 400, "context"},
		{"POST", "/api/generate", `{"model":"tiny","prompt":"a","suffix":"b"}`, 400, "suffix"},
		{"POST", "/api/generate", `{"model":"tiny","prompt":"a","context":[1,2]}`, 400, "context"},
		{"POST", "/api/generate", `{"model":"tiny","prompt":"a","template":"{{ .Prompt "}`, 400, "template"},
		{"POST", "/api/generate", `{"model":"tiny","prompt":"a","template":"{{ range 1000000000000 }}{{ end }}"}`, 400, "range"},
		{"POST", "/api/generate", `{"model":"tiny","prompt":"a","template":"{{ with 9 }}{{ range . }}{{ end }}{{ end }}"}`, 400, "range"},
		{"POST", "/api/generate", `{"model":"tiny","prompt":"a","template":"{{ printf \"%999999999d\" 1 }}"}`, 400, "printf"},
		{"POST", "/api/generate", `{"model":"tiny","prompt":"a","template":"{{ define \"x\" }}{{ template \"x\" }}{{ end }}{{ template \"x\" }}"}`, 400, "template"},
		{"POST", "/api/generate", `{"model":"tiny","prompt":"a","template":"{{ .Nope }}"}`, 400, "Nope"},
		{"POST", "/api/generate", `{"model":"tiny","prompt":"a","raw":true,"system":"s"}`, 400, "system"},
		{"POST", "/api/generate", `{"model":"tiny","prompt":"a","options":{"num_ctx":2}}`, 400, "num_ctx"},
		{"POST", "/api/show", `{"model":"nope"}`, 404, "not found"},
		{"POST", "/api/pull", `{"model":"org/x"}`, 400, "one model"},
		{"DELETE", "/api/delete", `{"model":"tiny"}`, 400, "one model"},
		{"POST", "/api/copy", `{"source":"tiny"}`, 400, "destination"},
		{"GET", "/api/chat", ``, 405, "not allowed"},
		{"GET", "/api/nope", ``, 404, "no such path"},
	} {
		code, b := ollamaDo(t, c.method, url+c.path, c.body)
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Errorf("%s %s %s: %d %q is not JSON", c.method, c.path, c.body, code, b)
			continue
		}
		m, ok := v["error"].(string)
		if code != c.status || !ok || !strings.Contains(m, c.want) {
			t.Errorf("%s %s %.80s: %d %s, want %d with an error saying %q", c.method, c.path, c.body, code, b, c.status, c.want)
		}
	}
}

func TestOllamaInfo(t *testing.T) {
	s, url := startServer(t, Config{Ctx: 128})
	e := s.eng.Load()
	code, b := ollamaDo(t, http.MethodGet, url+"/", nil)
	if code != 200 || string(b) != "krafla is running" {
		t.Errorf("GET /: %d %q", code, b)
	}
	req, _ := http.NewRequest(http.MethodHead, url+"/", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("HEAD /: %v %v", resp, err)
	}
	code, b = ollamaDo(t, http.MethodGet, url+"/api/version", nil)
	if code != 200 || !strings.Contains(string(b), `"version":"`+OllamaVersion+`"`) {
		t.Errorf("/api/version: %d %s", code, b)
	}
	code, b = ollamaDo(t, http.MethodGet, url+"/api/tags", nil)
	var tags struct {
		Models []struct {
			Name, Model, Digest string
			Size                int64
			Details             map[string]any
		}
	}
	json.Unmarshal(b, &tags)
	if code != 200 || len(tags.Models) != 1 || tags.Models[0].Name != "tiny" || tags.Models[0].Size != e.m.WeightBytes() || len(tags.Models[0].Digest) != 64 {
		t.Errorf("/api/tags: %d %s", code, b)
	}
	code, b = ollamaDo(t, http.MethodPost, url+"/api/show", `{"model":"tiny"}`)
	var show struct {
		Template     string
		Capabilities []string
		ModelInfo    map[string]any `json:"model_info"`
		Details      map[string]any
	}
	json.Unmarshal(b, &show)
	c := e.m.Config()
	if code != 200 || show.Template != chatML || len(show.Capabilities) != 1 || show.Capabilities[0] != "completion" ||
		show.ModelInfo["krafla.block_count"] != float64(c.NLayers) || show.ModelInfo["krafla.context_length"] != float64(c.MaxSeq) {
		t.Errorf("/api/show: %d %s", code, b)
	}
	code, b = ollamaDo(t, http.MethodGet, url+"/api/ps", nil)
	var ps struct {
		Models []struct {
			Name      string
			Size      int64
			ExpiresAt string `json:"expires_at"`
			Ctx       int    `json:"context_length"`
		}
	}
	json.Unmarshal(b, &ps)
	wantSize := e.m.WeightBytes() + 4*e.sched.slots[0].sess.CacheBytes()
	if code != 200 || len(ps.Models) != 1 || ps.Models[0].Size != wantSize || ps.Models[0].Ctx != 128 || !strings.HasPrefix(ps.Models[0].ExpiresAt, "2318") {
		t.Errorf("/api/ps: %d %s (want size %d)", code, b, wantSize)
	}
}

// TestOllamaToolCallShape: a parsed call goes out as ollama sends it,
// arguments an object.
func TestOllamaToolCallShape(t *testing.T) {
	a := &ollamaAnswer{chat: true, model: "m"}
	o := a.chunk("", "why", []chat.ToolCall{{Name: "get", Arguments: `{"city":"Reykjavík"}`}, {Name: "bad", Arguments: `[`}})
	b, _ := json.Marshal(o["message"])
	want := `{"content":"","role":"assistant","thinking":"why","tool_calls":[{"function":{"arguments":{"city":"Reykjavík"},"index":0,"name":"get"}},{"function":{"arguments":{},"index":1,"name":"bad"}}]}`
	if string(b) != want {
		t.Errorf("message %s\nwant    %s", b, want)
	}
}

func TestKeepAliveParse(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want time.Duration
		ok   bool
	}{
		{`"5m"`, 5 * time.Minute, true}, {`"0"`, 0, true}, {`0`, 0, true}, {`30`, 30 * time.Second, true},
		{`1.5`, 1500 * time.Millisecond, true}, {`"-1"`, -1, true}, {`-1`, -1, true}, {`"-5m"`, -1, true},
		{`"10"`, 10 * time.Second, true}, {`1e300`, time.Duration(1e18), true},
		{`"soon"`, 0, false}, {`true`, 0, false}, {`{}`, 0, false},
	} {
		d, ae := keepAlive(fields{"keep_alive": json.RawMessage(c.raw)})
		if c.ok != (ae == nil) || ae == nil && *d != c.want {
			t.Errorf("keep_alive %s: %v %v, want %v (ok %v)", c.raw, d, ae, c.want, c.ok)
		}
	}
}

func TestOllamaHost(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "127.0.0.1:11434"}, {"0.0.0.0", "0.0.0.0:11434"}, {":8000", ":8000"}, {"example.com", "example.com:11434"},
		{"http://10.0.0.1", "10.0.0.1:80"}, {"https://h:99/path", "h:99"}, {"[::1]:5", "[::1]:5"}, {"::1", "[::1]:11434"},
		{"h:99999", "h:11434"}, {"h:x", "h:11434"}, {"  1.2.3.4:7  ", "1.2.3.4:7"},
	} {
		if got := OllamaHost(c.in); got != c.want {
			t.Errorf("OllamaHost(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCORS(t *testing.T) {
	_, url := startServer(t, Config{CORS: true, Origins: []string{"https://webui.example", "chrome-extension://*"}})
	for _, c := range []struct {
		origin string
		status int
		allow  bool
	}{
		{"", 200, false}, {"http://localhost:3000", 200, true}, {"http://127.0.0.1", 200, true}, {"app://obsidian.md", 200, true},
		{"https://webui.example", 200, true}, {"chrome-extension://abc", 200, true},
		{"https://evil.example", 403, false}, {"http://localhost.evil.example", 403, false},
	} {
		req, _ := http.NewRequest(http.MethodGet, url+"/api/version", nil)
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got := resp.Header.Get("Access-Control-Allow-Origin")
		if resp.StatusCode != c.status || (got == c.origin && c.origin != "") != c.allow {
			t.Errorf("Origin %q: %d, Allow-Origin %q; want %d, allowed %v", c.origin, resp.StatusCode, got, c.status, c.allow)
		}
	}
	req, _ := http.NewRequest(http.MethodOptions, url+"/v1/chat/completions", nil)
	req.Header.Set("Origin", "http://localhost:5173")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type, authorization")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Headers") != "content-type, authorization" || !strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	// Without CORS (the OpenAI server as before), no headers and no refusal.
	_, plain := startServer(t, Config{})
	req, _ = http.NewRequest(http.MethodGet, plain+"/v1/models", nil)
	req.Header.Set("Origin", "https://evil.example")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("CORS off: %d %v", resp.StatusCode, resp.Header)
	}
}

var _ = fmt.Sprint

// thinkML is chatML for a thinking model: it reads enable_thinking, as
// Qwen 3's template does, and names <think>.
const thinkML = `{% for m in messages %}<|im_start|>{{ m['role'] }}
{{ m['content'] }}<|im_end|>
{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant
{% if enable_thinking is defined and not enable_thinking %}<think>

</think>

{% endif %}{% endif %}`

// TestOllamaThink: think reaches the template as enable_thinking (false
// writes the empty think block, more prompt tokens), and /api/show lists
// the thinking capability.
func TestOllamaThink(t *testing.T) {
	m, tok := tinyModel(t)
	tok.SetChat(&mlt.Chat{Templates: []mlt.NamedTemplate{{Name: "default", Source: thinkML}}, EOSToken: "<|im_end|>"})
	s := NewServer(Config{Name: "tiny", Ctx: 256})
	if err := s.Start(m, tok); err != nil {
		t.Fatal(err)
	}
	url := newTestHTTP(t, s)
	count := func(think string) int {
		body := `{"model":"tiny","stream":false,"messages":[{"role":"user","content":"Hi"}],"options":{"num_predict":1}` + think + `}`
		code, b := ollamaDo(t, http.MethodPost, url+"/api/chat", body)
		var d ollamaDone
		if json.Unmarshal(b, &d); code != 200 {
			t.Fatalf("think %q: %d %s", think, code, b)
		}
		return d.PromptN
	}
	plain, on, off := count(""), count(`,"think":true`), count(`,"think":false`)
	want := len(tok.Encode("<think>\n\n</think>\n\n", false))
	if on != plain || off != plain+want {
		t.Errorf("prompt tokens: %d without think, %d with true, %d with false; want the same, then %d more", plain, on, off, want)
	}
	code, b := ollamaDo(t, http.MethodPost, url+"/api/show", `{"model":"tiny"}`)
	if code != 200 || !strings.Contains(string(b), `"capabilities":["completion","thinking"]`) {
		t.Errorf("/api/show: %d %s", code, b)
	}
}

func TestOllamaTemplate(t *testing.T) {
	got, ae := renderOllamaTemplate("{{ range .Messages }}[{{ .Role }}:{{ .Content }}]{{ end }}{{ if eq (len .Messages) 2 }}two{{ end }}>{{ .Response }}<after", "sys", "hi", "")
	if ae != nil || got != "[system:sys][user:hi]two>" {
		t.Errorf("%q %v", got, ae)
	}
	if _, ae := renderOllamaTemplate("{{ range .Messages }}{{ range .Content }}{{ end }}{{ end }}", "", "hi", ""); ae == nil {
		t.Error("range over a string accepted")
	}
	// Output is bounded.
	big := strings.Repeat("{{ .Prompt }}", 200)
	if _, ae := renderOllamaTemplate(big, "", strings.Repeat("x", 10000), ""); ae == nil || !strings.Contains(ae.Message, "more than") {
		t.Errorf("2 MB of output: %v", ae)
	}
}
