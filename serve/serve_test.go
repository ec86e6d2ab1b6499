package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/krafla/krafla/chat"
	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/internal/testenv"
	"github.com/krafla/krafla/jinja"
	"github.com/krafla/krafla/mlt"
)

func TestCompletionMatchesGreedy(t *testing.T) {
	s, url := startServer(t, Config{})
	e := s.eng.Load()
	bias := noStops(e.tok)
	prompt := e.tok.Encode("The lava flows", e.addBOS)
	want := e.tok.Decode(greedy(t, e.m, prompt, 12, bias))

	for _, p := range []any{"The lava flows", prompt, []string{"The lava flows"}} {
		resp, b := post(t, url+"/v1/completions", map[string]any{"model": "tiny", "prompt": p, "max_tokens": 12,
			"temperature": 0, "logit_bias": bias})
		if resp.StatusCode != 200 {
			t.Fatalf("prompt %v: status %d: %s", p, resp.StatusCode, b)
		}
		c := decodeCompletion(t, b)
		if c.Object != "text_completion" || c.Model != "tiny" || !strings.HasPrefix(c.ID, "cmpl-") || len(c.Choices) != 1 {
			t.Errorf("response %s: want a text_completion of model tiny with one choice", b)
		}
		if got := c.Choices[0].Text; got != want {
			t.Errorf("prompt %v: text %q, want %q (greedy through infer)", p, got, want)
		}
		if f := c.Choices[0].FinishReason; f == nil || *f != "length" {
			t.Errorf("finish_reason %v, want length", f)
		}
		if u := c.Usage; u == nil || u.PromptTokens != len(prompt) || u.CompletionTokens != 12 || u.TotalTokens != len(prompt)+12 {
			t.Errorf("usage %+v, want %d prompt and 12 completion tokens", u, len(prompt))
		}
	}
}

func TestStreamCompletion(t *testing.T) {
	s, url := startServer(t, Config{})
	e := s.eng.Load()
	req := map[string]any{"model": "tiny", "prompt": "Once upon", "max_tokens": 10, "temperature": 0.8, "seed": 11,
		"logit_bias": noStops(e.tok)}
	_, b := post(t, url+"/v1/completions", req)
	whole := decodeCompletion(t, b)

	req["stream"] = true
	req["stream_options"] = map[string]any{"include_usage": true}
	resp, b := post(t, url+"/v1/completions", req)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q, want text/event-stream", ct)
	}
	r, err := readStream(t, strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	checkStream(t, r, "text_completion")
	if r.text != whole.Choices[0].Text {
		t.Errorf("streamed text %q, want the non-streamed %q (same seed)", r.text, whole.Choices[0].Text)
	}
	last := r.chunks[len(r.chunks)-1]
	if last.Usage == nil || last.Usage.CompletionTokens != 10 || len(last.Choices) != 0 {
		t.Errorf("last chunk %s: want usage with 10 completion tokens and no choices", r.raw[len(r.raw)-2])
	}
	if !strings.Contains(r.raw[0], `"usage":null`) {
		t.Errorf("first chunk %s: want \"usage\": null before the last chunk", r.raw[0])
	}
}

// checkStream checks a stream's shape: [DONE] last, one id and created on
// every chunk, exactly one finish_reason, on the last chunk with choices.
func checkStream(t testing.TB, r streamResult, object string) {
	t.Helper()
	if !r.done {
		t.Fatalf("stream ended without data: [DONE]: %q", r.raw)
	}
	if len(r.chunks) == 0 {
		t.Fatal("stream without chunks")
	}
	finishes := 0
	lastChoice := -1
	for i, c := range r.chunks {
		if c.Error != nil {
			t.Fatalf("error event: %s", r.raw[i])
		}
		if c.ID != r.chunks[0].ID || c.Created != r.chunks[0].Created || c.Object != object {
			t.Errorf("chunk %d: id %q created %d object %q, want %q %d %q", i, c.ID, c.Created, c.Object, r.chunks[0].ID, r.chunks[0].Created, object)
		}
		for _, ch := range c.Choices {
			lastChoice = i
			if ch.FinishReason != nil {
				finishes++
			}
		}
	}
	if finishes != 1 || r.chunks[lastChoice].Choices[0].FinishReason == nil {
		t.Errorf("%d finish reasons, want one on the last chunk with choices", finishes)
	}
}

func TestChat(t *testing.T) {
	s, url := startServer(t, Config{})
	e := s.eng.Load()
	if e.chat == nil {
		t.Skipf("no chat template: %v", e.chatErr)
	}
	msgs := []map[string]any{{"role": "system", "content": "Be brief."}, {"role": "user", "content": []map[string]any{{"type": "text", "text": "Hi"}}}}
	prompt := e.tok.Encode("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n", false)
	want := e.tok.Decode(greedy(t, e.m, prompt, 8, noStops(e.tok)))
	req := map[string]any{"model": "tiny", "messages": msgs, "max_completion_tokens": 8, "temperature": 0, "logit_bias": noStops(e.tok)}
	resp, b := post(t, url+"/v1/chat/completions", req)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	c := decodeCompletion(t, b)
	if c.Object != "chat.completion" || c.Choices[0].Message == nil || c.Choices[0].Message.Role != "assistant" {
		t.Fatalf("response %s: want a chat.completion with an assistant message", b)
	}
	if got := c.Choices[0].Message.Content; got != want {
		t.Errorf("content %q, want %q (the ChatML prompt, greedy through infer)", got, want)
	}
	if c.Usage.PromptTokens != len(prompt) {
		t.Errorf("prompt_tokens %d, want %d", c.Usage.PromptTokens, len(prompt))
	}
	req["stream"] = true
	_, b = post(t, url+"/v1/chat/completions", req)
	r, err := readStream(t, strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	checkStream(t, r, "chat.completion.chunk")
	if d := r.chunks[0].Choices[0].Delta; d == nil || d.Role == nil || *d.Role != "assistant" {
		t.Errorf("first chunk %s: want the assistant role", r.raw[0])
	}
	if r.text != want {
		t.Errorf("streamed %q, want %q", r.text, want)
	}
}

func TestStopString(t *testing.T) {
	s, url := startServer(t, Config{})
	e := s.eng.Load()
	bias := noStops(e.tok)
	prompt := e.tok.Encode("The valley", e.addBOS)
	ids := greedy(t, e.m, prompt, 20, bias)
	full := e.tok.Decode(ids)
	// A stop string spanning a token boundary: the end of token 5's text
	// and the start of token 6's.
	pre := e.tok.Decode(ids[:5])
	t5, t6 := e.tok.Decode(ids[5:6]), e.tok.Decode(ids[6:7])
	if t5 == "" || t6 == "" {
		t.Skipf("tokens 5 and 6 (%q %q) have no text", t5, t6)
	}
	stop := t5[len(t5)-1:] + t6[:1]
	want := full[:strings.Index(full, stop)]
	if len(want) > len(pre)+len(t5) {
		t.Fatalf("the stop string %q occurs only after tokens 5 and 6 in %q", stop, full)
	}
	for _, stream := range []bool{false, true} {
		resp, b := post(t, url+"/v1/completions", map[string]any{"model": "tiny", "prompt": prompt, "max_tokens": 20,
			"temperature": 0, "logit_bias": bias, "stop": []string{"never-there", stop}, "stream": stream})
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		var text, finish string
		if stream {
			r, err := readStream(t, strings.NewReader(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			checkStream(t, r, "text_completion")
			text = r.text
			finish = *r.chunks[len(r.chunks)-1].Choices[0].FinishReason
		} else {
			c := decodeCompletion(t, b)
			text, finish = c.Choices[0].Text, *c.Choices[0].FinishReason
		}
		if text != want || finish != "stop" {
			t.Errorf("stream %v: text %q finish %q, want %q and stop (stop string %q in %q)", stream, text, finish, want, stop, full)
		}
	}
}

func TestStopper(t *testing.T) {
	for _, tc := range []struct {
		stops  []string
		pieces []string
		want   string
		hit    bool
	}{
		{[]string{"END"}, []string{"ab", "cE", "N", "Dxyz"}, "abc", true},
		{[]string{"END"}, []string{"ab", "cE", "N", "x"}, "abcENx", false},
		{[]string{"xy", "abc"}, []string{"a", "b", "x", "y"}, "ab", true},
		{[]string{"aab"}, []string{"a", "a", "a", "b"}, "a", true},
		{[]string{"é!"}, []string{"café", "!"}, "caf", true},
		{nil, []string{"a", "b"}, "ab", false},
	} {
		st := stopper{stops: tc.stops}
		var got string
		hit := false
		for _, p := range tc.pieces {
			out, h := st.add(p)
			got += out
			if h {
				hit = true
				break
			}
		}
		if !hit {
			got += st.flush()
		}
		if got != tc.want || hit != tc.hit {
			t.Errorf("stops %q pieces %q: got %q hit %v, want %q hit %v", tc.stops, tc.pieces, got, hit, tc.want, tc.hit)
		}
	}
}

func TestErrors(t *testing.T) {
	_, url := startServer(t, Config{MaxBody: 4096, Ctx: 64})
	long := strings.Repeat("the lava ", 60)
	for _, tc := range []struct {
		method, path, body string
		status             int
		param              string
	}{
		{"POST", "/v1/completions", `{"model":"tiny","prompt":"x"`, 400, ""},
		{"POST", "/v1/completions", `[1,2]`, 400, ""},
		{"POST", "/v1/completions", `null`, 400, ""},
		{"POST", "/v1/completions", `{"prompt":"x"}`, 400, "model"},
		{"POST", "/v1/completions", `{"model":"other","prompt":"x"}`, 404, ""},
		{"POST", "/v1/completions", `{"model":"tiny"}`, 400, "prompt"},
		{"POST", "/v1/completions", `{"model":"tiny","prompt":{"a":1}}`, 400, "prompt"},
		{"POST", "/v1/completions", `{"model":"tiny","prompt":["a","b"]}`, 400, "prompt"},
		{"POST", "/v1/completions", `{"model":"tiny","prompt":[1,99999]}`, 400, "prompt"},
		{"POST", "/v1/completions", `{"model":"tiny","prompt":"` + long + `"}`, 400, "prompt"},
		{"POST", "/v1/completions", `{"model":"tiny","prompt":"x","temperature":"hot"}`, 400, "temperature"},
		{"POST", "/v1/completions", `{"model":"tiny","prompt":"x","temperature":3}`, 400, "temperature"},
		{"POST", "/v1/completions", `{"model":"tiny","prompt":"x","top_p":-1}`, 400, "top_p"},
		{"POST", "/v1/completions", `{"model":"tiny","prompt":"x","max_tokens":0}`, 400, "max_tokens"},
		{"POST", "/v1/completions", `{"model":"tiny","prompt":"x","max_tokens":1.5}`, 400, "max_tokens"},
		{"POST", "/v1/completions", `{"model":"tiny","prompt":"x","n":2}`, 400, "n"},
		{"POST", "/v1/completions", `{"model":"tiny","prompt":"x","stop":["a","b","c","d","e"]}`, 400, "stop"},
		{"POST", "/v1/completions", `{"model":"tiny","prompt":"x","stop":5}`, 400, "stop"},
		{"POST", "/v1/completions", `{"model":"tiny","prompt":"x","presence_penalty":9}`, 400, "presence_penalty"},
		{"POST", "/v1/completions", `{"model":"tiny","prompt":"x","logprobs":6}`, 400, "logprobs"},
		{"POST", "/v1/completions", `{"model":"tiny","prompt":"x","logit_bias":{"x":1}}`, 400, "logit_bias"},
		{"POST", "/v1/completions", `{"model":"tiny","prompt":"x","echo":true}`, 400, "echo"},
		{"POST", "/v1/completions", `{"model":"tiny","prompt":"x","stream_options":{"include_usage":1}}`, 400, "stream_options.include_usage"},
		{"POST", "/v1/completions", `{"model":"tiny","prompt":"x","seed":"s"}`, 400, "seed"},
		{"POST", "/v1/completions", `{"model":"tiny","prompt":"` + strings.Repeat("a", 5000) + `"}`, 413, ""},
		{"POST", "/v1/chat/completions", `{"model":"tiny"}`, 400, "messages"},
		{"POST", "/v1/chat/completions", `{"model":"tiny","messages":[]}`, 400, "messages"},
		{"POST", "/v1/chat/completions", `{"model":"tiny","messages":[{"content":"hi"}]}`, 400, "messages[0].role"},
		{"POST", "/v1/chat/completions", `{"model":"tiny","messages":[{"role":"user","content":[{"type":"image_url"}]}]}`, 400, "messages[0].content[0]"},
		{"POST", "/v1/chat/completions", `{"model":"tiny","messages":[{"role":"user","content":"x"}],"top_logprobs":3}`, 400, "top_logprobs"},
		{"POST", "/v1/chat/completions", `{"model":"tiny","messages":[{"role":"user","content":"x"}],"logprobs":3}`, 400, "logprobs"},
		{"POST", "/v1/chat/completions", `{"model":"tiny","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"array","uniqueItems":true}}}}`, 400, "response_format.json_schema.schema"},
		{"POST", "/v1/chat/completions", `{"model":"tiny","messages":[{"role":"user","content":"x"}],"response_format":{"type":"xml"}}`, 400, "response_format.type"},
		{"GET", "/v1/completions", ``, 405, ""},
		{"DELETE", "/v1/models", ``, 405, ""},
		{"GET", "/v1/nothing", ``, 404, ""},
		{"GET", "/v1/models/other", ``, 404, ""},
		{"POST", "/detokenize", `{"tokens":[-1]}`, 400, "tokens"},
		{"POST", "/tokenize", `{"content":5}`, 400, "content"},
	} {
		req, _ := http.NewRequest(tc.method, url+tc.path, strings.NewReader(tc.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct {
			Error *struct {
				Message, Type string
				Param         *string
				Code          *string
			}
		}
		if err := json.Unmarshal(b, &e); err != nil || e.Error == nil || e.Error.Message == "" || e.Error.Type == "" {
			t.Errorf("%s %s %.60s: body %s: want OpenAI's error JSON", tc.method, tc.path, tc.body, b)
			continue
		}
		param := ""
		if e.Error.Param != nil {
			param = *e.Error.Param
		}
		if resp.StatusCode != tc.status || param != tc.param {
			t.Errorf("%s %s %.60s: status %d param %q, want %d %q (%s)", tc.method, tc.path, tc.body, resp.StatusCode, param, tc.status, tc.param, e.Error.Message)
		}
	}
}

func TestAPIKey(t *testing.T) {
	const key = "sk-test-4242"
	var log strings.Builder
	var mu sync.Mutex
	_, url := startServer(t, Config{APIKey: key, Log: writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return log.Write(p)
	})})
	get := func(path, auth string) int {
		req, _ := http.NewRequest("GET", url+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		path, auth string
		want       int
	}{
		{"/v1/models", "", 401}, {"/v1/models", "Bearer wrong", 401}, {"/v1/models", "Bearer " + key + "x", 401},
		{"/v1/models", key, 401}, {"/v1/models", "Bearer " + key, 200}, {"/metrics", "", 401},
		{"/health", "", 200}, {"/v1/nothing", "", 401},
	} {
		if got := get(tc.path, tc.auth); got != tc.want {
			t.Errorf("GET %s with %q: status %d, want %d", tc.path, tc.auth, got, tc.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(log.String(), key) {
		t.Errorf("the log holds the API key:\n%s", log.String())
	}
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestHealthWhileLoading(t *testing.T) {
	s := NewServer(Config{Name: "tiny"})
	h := s.Handler()
	rec := httptestDo(h, "GET", "/health", "")
	if rec.status != 503 {
		t.Errorf("/health before Start: %d, want 503", rec.status)
	}
	if rec := httptestDo(h, "POST", "/v1/completions", `{}`); rec.status != 503 {
		t.Errorf("/v1/completions before Start: %d, want 503", rec.status)
	}
	m, tok := tinyModel(t)
	if err := s.Start(m, tok); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if rec := httptestDo(h, "GET", "/health", ""); rec.status != 200 || strings.TrimSpace(rec.body) != `{"status":"ok"}` {
		t.Errorf("/health after Start: %d %s, want 200 {\"status\":\"ok\"}", rec.status, rec.body)
	}
}

func TestModelsTokenizeMetrics(t *testing.T) {
	s, url := startServer(t, Config{Parallel: 3})
	e := s.eng.Load()
	resp, err := http.Get(url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Object string
		Data   []struct{ ID, Object string }
	}
	json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if list.Object != "list" || len(list.Data) != 1 || list.Data[0].ID != "tiny" || list.Data[0].Object != "model" {
		t.Errorf("/v1/models: %+v, want one model tiny", list)
	}
	text := "the lava and the ice"
	_, b := post(t, url+"/tokenize", map[string]any{"content": text})
	var tk struct{ Tokens []int }
	json.Unmarshal(b, &tk)
	if want := e.tok.Encode(text, false); fmt.Sprint(tk.Tokens) != fmt.Sprint(want) {
		t.Errorf("/tokenize: %s, want %v", b, want)
	}
	_, b = post(t, url+"/detokenize", map[string]any{"tokens": tk.Tokens})
	var dt struct{ Content string }
	json.Unmarshal(b, &dt)
	if dt.Content != text {
		t.Errorf("/detokenize: %q, want %q", dt.Content, text)
	}
	_, b = post(t, url+"/tokenize", map[string]any{"content": " the", "with_pieces": true})
	if !strings.Contains(string(b), `"piece":" the"`) {
		t.Errorf("/tokenize with_pieces: %s, want the piece \" the\"", b)
	}
	post(t, url+"/v1/completions", map[string]any{"model": "tiny", "prompt": "x", "max_tokens": 3, "logit_bias": noStops(e.tok)})
	resp, err = http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	mb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		"# TYPE krafla_requests_total counter",
		`krafla_requests_total{endpoint="completions",code="2xx"} 1`,
		`krafla_requests_total{endpoint="chat_completions",code="5xx"} 0`,
		"krafla_generated_tokens_total 3",
		"# TYPE krafla_queue_length gauge",
		"krafla_slots 3",
		"krafla_slots_busy 0",
		"# HELP krafla_generation_tokens_per_second ",
	} {
		if !strings.Contains(string(mb), want+"\n") && !strings.Contains(string(mb), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, mb)
		}
	}
}

type recorded struct {
	status int
	body   string
}

func httptestDo(h http.Handler, method, path, body string) recorded {
	rec := httptest.NewRecorder()
	req, _ := http.NewRequest(method, path, strings.NewReader(body))
	h.ServeHTTP(rec, req)
	return recorded{rec.Code, rec.Body.String()}
}

// TestSlowHeader: a client that sends half a header is cut off by
// ReadHeaderTimeout (slowloris), and one that sends half a body gets no
// generation.
func TestSlowClients(t *testing.T) {
	m, tok := tinyModel(t)
	s := NewServer(Config{Name: "tiny", BodyTimeout: 200 * time.Millisecond})
	if err := s.Start(m, tok); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := newHTTPServer(s.Handler())
	hs.ReadHeaderTimeout = 200 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(ln)
	defer hs.Close()
	for _, tc := range []struct{ name, send, want string }{
		{"half a header", "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Le", ""},
		{"half a body", "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"model\":", "HTTP/1.1 408"},
	} {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(20 * time.Second)) // a hang fails instead of blocking the suite
		io.WriteString(c, tc.send)
		got, err := io.ReadAll(c)
		c.Close()
		if err != nil {
			t.Errorf("%s: the server did not close the connection: %v", tc.name, err)
		}
		if !strings.HasPrefix(string(got), tc.want) {
			t.Errorf("%s: got %q, want a reply starting %q", tc.name, got, tc.want)
		}
	}
}

// TestShutdown: once Run's context is done, new connections are refused
// while a running stream completes, and Run returns nil.
func TestShutdown(t *testing.T) {
	m, tok := tinyModel(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := make(chan net.Addr, 1)
	release := make(chan struct{})
	var once sync.Once
	runErr := make(chan error, 1)
	go func() {
		runErr <- Run(ctx, RunConfig{Config: Config{Name: "tiny"}, Addr: "127.0.0.1:0", Grace: time.Minute,
			Load:  func() (*infer.Model, *mlt.Tokenizer, error) { return m, tok, nil },
			Ready: func(a net.Addr) { addr <- a },
			start: func(s *Server) {
				// Hold the first step until the shutdown began.
				s.beforeStep = func() { once.Do(func() { <-release }) }
			}})
	}()
	url := "http://" + (<-addr).String()
	bias := noStops(tok)
	body := fmt.Sprintf(`{"model":"tiny","prompt":"The lava","max_tokens":6,"stream":true,"logit_bias":%s}`, mustJSON(bias))
	resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	cancel()
	// Wait until the listener is closed, then let the step run.
	for {
		c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
		if err != nil {
			break
		}
		c.Close()
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	r, err := readStream(t, resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	checkStream(t, r, "text_completion")
	if err := <-runErr; err != nil {
		t.Errorf("Run: %v, want nil after a shutdown", err)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestLimits: without max_tokens a generation runs until the context is
// full; past the generation deadline it ends with what it has. Both finish
// with length.
func TestLimits(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want func(prompt int) int
	}{
		{"full context", Config{Ctx: 32}, func(p int) int { return 32 - p + 1 }},
		{"deadline", Config{Timeout: time.Nanosecond}, func(int) int { return 0 }},
	} {
		s, url := startServer(t, tc.cfg)
		e := s.eng.Load()
		prompt := e.tok.Encode("the lava flows under the ice", false)
		_, b := post(t, url+"/v1/completions", map[string]any{"model": "tiny", "prompt": prompt, "logit_bias": noStops(e.tok)})
		c := decodeCompletion(t, b)
		if len(c.Choices) != 1 || c.Usage == nil {
			t.Fatalf("%s: response %s", tc.name, b)
		}
		if f := c.Choices[0].FinishReason; f == nil || *f != "length" || c.Usage.CompletionTokens != tc.want(len(prompt)) {
			t.Errorf("%s: finish %v after %d tokens, want length after %d", tc.name, f, c.Usage.CompletionTokens, tc.want(len(prompt)))
		}
	}
}

// TestChatRealTemplate serves with Qwen2.5's own template file (from
// ../shared/chat-templates; skipped without it) and checks that the
// messages and tools of the request are what it renders.
func TestChatRealTemplate(t *testing.T) {
	path := testenv.Shared(t, "chat-templates", "templates", "Qwen-Qwen2.5-7B-Instruct.jinja")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, tok := tinyModel(t)
	for _, cfg := range []Config{{Name: "tiny", TemplateFile: path + ".missing"}, {Name: "tiny", Template: "missing"}} {
		if err := NewServer(cfg).Start(m, tok); err == nil {
			t.Errorf("Start with %+v: got no error, want the missing template reported", cfg)
		}
	}
	s := NewServer(Config{Name: "tiny", TemplateFile: path})
	if err := s.Start(m, tok); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.ChatError(); err != nil {
		t.Fatalf("the Qwen2.5 template: %v", err)
	}
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	const msgs = `[{"role":"system","content":"You are terse."},{"role":"user","content":"Weather in Reykjavik?"}]`
	const tools = `[{"type":"function","function":{"name":"get_weather","description":"Current weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`
	body := `{"model":"tiny","max_tokens":3,"temperature":0,"messages":` + msgs + `,"tools":` + tools + `}`
	resp, b := post(t, hs.URL+"/v1/chat/completions", body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	// The reference: the chat package renders the same JSON.
	tmpl, err := chat.New("qwen2.5", string(src), tok)
	if err != nil {
		t.Fatal(err)
	}
	mv, _ := jinja.DecodeJSON([]byte(msgs))
	tv, _ := jinja.DecodeJSON([]byte(tools))
	text, err := tmpl.Render(mv.([]any), chat.RenderOptions{AddGenerationPrompt: true, Tools: tv.([]any)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, `"name": "get_weather"`) || !strings.HasSuffix(text, "<|im_start|>assistant\n") {
		t.Fatalf("the reference rendering lacks the tool or the generation prompt:\n%s", text)
	}
	if c := decodeCompletion(t, b); c.Usage.PromptTokens != len(chat.Encode(tok, text)) {
		t.Errorf("prompt_tokens %d, want %d (the messages and tools rendered)", c.Usage.PromptTokens, len(chat.Encode(tok, text)))
	}
}

// TestLogprobs: greedy draws the most likely token, so each token's logprob
// is its top alternative's; the first equals the log-softmax of the
// prompt's last logits, computed here.
func TestLogprobs(t *testing.T) {
	s, url := startServer(t, Config{})
	e := s.eng.Load()
	prompt := e.tok.Encode("the ice and the fire", false)
	want := greedyLogprob(t, e.m, prompt, infer.KVF32)
	_, b := post(t, url+"/v1/chat/completions", map[string]any{"model": "tiny", "messages": []map[string]any{{"role": "user", "content": "x"}},
		"max_tokens": 1, "temperature": 0, "logprobs": true, "top_logprobs": 3})
	var chatResp struct {
		Choices []struct {
			Logprobs struct {
				Content []struct {
					Token       string
					Logprob     float64
					Bytes       []int
					TopLogprobs []struct {
						Token   string
						Logprob float64
					} `json:"top_logprobs"`
				}
			}
		}
	}
	if err := json.Unmarshal(b, &chatResp); err != nil || len(chatResp.Choices) != 1 || len(chatResp.Choices[0].Logprobs.Content) != 1 {
		t.Fatalf("chat logprobs: %s", b)
	}
	lp := chatResp.Choices[0].Logprobs.Content[0]
	if len(lp.TopLogprobs) != 3 || lp.TopLogprobs[0].Logprob != lp.Logprob || lp.TopLogprobs[1].Logprob > lp.TopLogprobs[0].Logprob ||
		lp.TopLogprobs[2].Logprob > lp.TopLogprobs[1].Logprob || lp.Logprob > 0 || len(lp.Bytes) != len(lp.Token) {
		t.Errorf("chat logprobs %+v: want 3 alternatives in decreasing order, the first the token drawn", lp)
	}
	_, b = post(t, url+"/v1/completions", map[string]any{"model": "tiny", "prompt": prompt, "max_tokens": 1, "temperature": 0, "logprobs": 2})
	var comp struct {
		Choices []struct {
			Logprobs struct {
				Tokens        []string
				TokenLogprobs []float64            `json:"token_logprobs"`
				TopLogprobs   []map[string]float64 `json:"top_logprobs"`
			}
		}
	}
	if err := json.Unmarshal(b, &comp); err != nil || len(comp.Choices) != 1 || len(comp.Choices[0].Logprobs.TokenLogprobs) != 1 {
		t.Fatalf("completion logprobs: %s", b)
	}
	l := comp.Choices[0].Logprobs
	if got := l.TokenLogprobs[0]; math.Abs(got-want) > 1e-9 {
		t.Errorf("logprob %v, want %v (log-softmax of the logits)", got, want)
	}
	if len(l.TopLogprobs[0]) != 2 || l.TopLogprobs[0][l.Tokens[0]] != l.TokenLogprobs[0] {
		t.Errorf("top_logprobs %v: want 2 alternatives including the token %q drawn", l.TopLogprobs, l.Tokens[0])
	}
}

// greedyLogprob is the log-softmax of the most likely next token after
// prompt, computed directly from a session with the given cache type.
func greedyLogprob(t *testing.T, m *infer.Model, prompt []int, kv infer.KVType) float64 {
	t.Helper()
	sess, err := m.NewSession(infer.SessionOptions{Ctx: 64, KV: kv})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	var lp float64
	err = sess.Eval(prompt, false, func(_ int, l []float32) error {
		mx, best := math.Inf(-1), 0
		for i, v := range l {
			if float64(v) > mx {
				mx, best = float64(v), i
			}
		}
		var sum float64
		for _, v := range l {
			sum += math.Exp(float64(v) - mx)
		}
		lp = float64(l[best]) - mx - math.Log(sum)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return lp
}

// TestKVF16: with Config.KV f16 every slot caches in f16, so a completion's
// log probability is an f16 session's, not the f32 cache's.
func TestKVF16(t *testing.T) {
	s, url := startServer(t, Config{KV: infer.KVF16})
	e := s.eng.Load()
	prompt := e.tok.Encode("the ice and the fire and the lava", false)
	want, f32 := greedyLogprob(t, e.m, prompt, infer.KVF16), greedyLogprob(t, e.m, prompt, infer.KVF32)
	if want == f32 {
		t.Fatalf("f16 and f32 caches give the same log probability %v: the test cannot tell them apart", want)
	}
	_, b := post(t, url+"/v1/completions", map[string]any{"model": "tiny", "prompt": prompt, "max_tokens": 1, "temperature": 0, "logprobs": 1})
	var comp struct {
		Choices []struct {
			Logprobs struct {
				TokenLogprobs []float64 `json:"token_logprobs"`
			}
		}
	}
	if err := json.Unmarshal(b, &comp); err != nil || len(comp.Choices) != 1 || len(comp.Choices[0].Logprobs.TokenLogprobs) != 1 {
		t.Fatalf("completion logprobs: %s", b)
	}
	// The server's log-softmax may differ from this one in the last bits, so
	// the check is relative to the f16 − f32 difference.
	if got := comp.Choices[0].Logprobs.TokenLogprobs[0]; math.Abs(got-want) > math.Abs(want-f32)/1000 {
		t.Errorf("logprob %v, want the f16 cache's %v (f32's is %v)", got, want, f32)
	}
}

// TestTopPZero: top_p 0 keeps only the most likely token, so a high
// temperature still gives the greedy text.
func TestTopPZero(t *testing.T) {
	s, url := startServer(t, Config{})
	e := s.eng.Load()
	bias := noStops(e.tok)
	prompt := e.tok.Encode("under the ice", false)
	want := e.tok.Decode(greedy(t, e.m, prompt, 10, bias))
	_, b := post(t, url+"/v1/completions", map[string]any{"model": "tiny", "prompt": prompt, "max_tokens": 10,
		"temperature": 2, "top_p": 0, "seed": 9, "logit_bias": bias})
	if got := decodeCompletion(t, b).Choices[0].Text; got != want {
		t.Errorf("top_p 0 at temperature 2: %q, want the greedy %q", got, want)
	}
}
