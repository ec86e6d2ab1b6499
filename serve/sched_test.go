package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// waitFor polls cond (the scheduler runs on its own goroutine) and fails
// after a generous limit instead of hanging.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; !cond(); i++ {
		if i > 20000 {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestBatchedBitIdentical: a request's tokens and log probabilities are the
// same bits whether it runs alone or in steps shared with seven others.
func TestBatchedBitIdentical(t *testing.T) {
	gate := make(chan struct{})
	var once sync.Once
	s, url := startServer(t, Config{Parallel: 8}, func() { once.Do(func() { <-gate }) })
	e := s.eng.Load()
	bias := noStops(e.tok)
	target := map[string]any{"model": "tiny", "prompt": "The fire of the mountain warms", "max_tokens": 24,
		"temperature": 0.9, "top_k": 0, "seed": 7, "logprobs": 5, "logit_bias": bias, "frequency_penalty": 0.5}
	chatTarget := map[string]any{"model": "tiny", "messages": []map[string]any{{"role": "user", "content": "Hello there"}},
		"max_tokens": 20, "temperature": 0.7, "seed": 3, "logprobs": true, "top_logprobs": 4, "logit_bias": bias}
	paths := []string{"/v1/completions", "/v1/chat/completions"}
	targets := []map[string]any{target, chatTarget}
	if e.chat == nil {
		paths, targets = paths[:1], targets[:1]
	}
	choice := func(b []byte) string {
		var c struct{ Choices []json.RawMessage }
		if err := json.Unmarshal(b, &c); err != nil || len(c.Choices) != 1 {
			t.Fatalf("response %s", b)
		}
		return string(c.Choices[0])
	}
	// Alone. The gate opens at once for the first step.
	close(gate)
	var alone []string
	for i, p := range paths {
		_, b := post(t, url+p, targets[i])
		alone = append(alone, choice(b))
	}
	if !strings.Contains(alone[0], `"token_logprobs":[`) {
		t.Fatalf("no logprobs in %s", alone[0])
	}

	// Alongside others: hold the first step until every request is queued.
	gate = make(chan struct{})
	once = sync.Once{}
	var wg sync.WaitGroup
	together := make([]string, len(paths))
	others := 0
	send := func(path string, body map[string]any, out *string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, b := post(t, url+path, body)
			if resp.StatusCode != 200 {
				t.Errorf("status %d: %s", resp.StatusCode, b)
			}
			if out != nil {
				*out = choice(b)
			}
		}()
	}
	for i := range 6 {
		send("/v1/completions", map[string]any{"model": "tiny", "prompt": strings.Repeat("lava ice ", i+1), "max_tokens": 5 + 4*i,
			"temperature": 1, "seed": i, "logit_bias": bias}, nil)
		others++
		if i == 2 {
			for j, p := range paths {
				send(p, targets[j], &together[j])
			}
		}
	}
	waitFor(t, "every request to be queued", func() bool {
		return s.met.queued.Load()+s.met.busy.Load() == int64(others+len(paths))
	})
	close(gate)
	wg.Wait()
	for i := range paths {
		if together[i] != alone[i] {
			t.Errorf("%s alongside others:\n%s\nalone:\n%s", paths[i], together[i], alone[i])
		}
	}
	// The scheduler goroutine has finished these steps (every response is in).
	if n := s.eng.Load().sched.maxItems; n < 4 {
		t.Errorf("at most %d sequences shared a step, want the requests batched together", n)
	}
}

func TestQueueFull(t *testing.T) {
	gate := make(chan struct{})
	var once sync.Once
	s, url := startServer(t, Config{Parallel: 1, Queue: 1}, func() { once.Do(func() { <-gate }) })
	body := map[string]any{"model": "tiny", "prompt": "x", "max_tokens": 2}
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if resp, b := post(t, url+"/v1/completions", body); resp.StatusCode != 200 {
				t.Errorf("request %d: status %d: %s", i, resp.StatusCode, b)
			}
		}()
		if i == 0 {
			waitFor(t, "the first request to take the slot", func() bool { return s.met.busy.Load() == 1 })
		}
	}
	waitFor(t, "the second request to be queued", func() bool { return s.met.queued.Load() == 1 })
	resp, b := post(t, url+"/v1/completions", body)
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), `"error"`) {
		t.Errorf("with the slot busy and the queue full: status %d Retry-After %q body %s, want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	close(gate)
	wg.Wait()
}

// TestDisconnectFreesSlot: a client that goes away mid-stream frees its slot
// while the scheduler keeps stepping, and the next request gets it.
func TestDisconnectFreesSlot(t *testing.T) {
	// The abandoned request (the first) may run 50 steps, enough for its
	// first text to reach the client; then the scheduler waits until the
	// client has gone and the server has seen it go (the request's context is
	// done). Free stepping let the scheduler run all 200 steps before the
	// client had read its first text and cancelled (it often did at
	// GOMAXPROCS=1), and the request ended as complete.
	const freeSteps = 50
	released := make(chan struct{})
	var s *Server
	var abandoned *request // touched only by the scheduler goroutine
	n := 0
	hook := func() {
		sl := s.eng.Load().sched.slots[0]
		if abandoned == nil {
			abandoned = sl.req
		}
		if sl.req != abandoned || n < freeSteps {
			n++
			return
		}
		// A bound against a hang, not a synchronization.
		timeout := time.After(time.Minute)
		for _, c := range []<-chan struct{}{released, abandoned.ctx.Done()} {
			select {
			case <-c:
			case <-timeout:
				t.Error("the client did not go, or the server did not see it, within a minute")
				return
			}
		}
	}
	s, url := startServer(t, Config{Parallel: 1}, hook)
	e := s.eng.Load()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := fmt.Sprintf(`{"model":"tiny","prompt":"The lava","max_tokens":200,"stream":true,"logit_bias":%s}`, mustJSON(noStops(e.tok)))
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/completions", strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		close(released)
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	_, err = resp.Body.Read(buf)
	cancel()
	resp.Body.Close()
	close(released)
	if err != nil {
		t.Fatal(err)
	}
	// With one slot, the next request runs only once the abandoned one has
	// freed it; when its answer arrives, the first has ended as failed.
	if r, b := post(t, url+"/v1/completions", map[string]any{"model": "tiny", "prompt": "x", "max_tokens": 2}); r.StatusCode != 200 {
		t.Fatalf("the next request: %d %s", r.StatusCode, b)
	}
	if busy, failed := s.met.busy.Load(), s.met.failed.Load(); busy != 0 || failed != 1 {
		t.Errorf("after the next request: %d slots busy and %d requests failed, want 0 and 1", busy, failed)
	}
	// The abandoned request ran its free steps and at most one more.
	if n := s.met.genTokens.Load(); n > freeSteps+1+2 {
		t.Errorf("%d tokens generated, want at most %d: the abandoned generation cut short", n, freeSteps+1+2)
	}
}

// TestPrefixReuse: a request that extends the previous conversation of a
// slot evaluates only the new tokens, with the bits of a fresh evaluation.
func TestPrefixReuse(t *testing.T) {
	s, url := startServer(t, Config{Parallel: 2})
	e := s.eng.Load()
	bias := noStops(e.tok)
	p1 := e.tok.Encode("The lava flows under the ice", false)
	_, b := post(t, url+"/v1/completions", map[string]any{"model": "tiny", "prompt": p1, "max_tokens": 6, "temperature": 0, "logit_bias": bias})
	c1 := decodeCompletion(t, b)
	g1 := greedy(t, e.m, p1, 6, bias)
	if c1.Choices[0].Text != e.tok.Decode(g1) {
		t.Fatalf("first answer %q, want %q", c1.Choices[0].Text, e.tok.Decode(g1))
	}
	p2 := append(append(append([]int{}, p1...), g1...), e.tok.Encode(" and the fire", false)...)
	_, b = post(t, url+"/v1/completions", map[string]any{"model": "tiny", "prompt": p2, "max_tokens": 8, "temperature": 0, "logit_bias": bias})
	c2 := decodeCompletion(t, b)
	// The cache holds the prompt and every generated token but the last,
	// which was drawn and never evaluated.
	if got, want := c2.Usage.PromptTokensDetails.CachedTokens, len(p1)+len(g1)-1; got != want {
		t.Errorf("cached_tokens %d, want %d", got, want)
	}
	if want := e.tok.Decode(greedy(t, e.m, p2, 8, bias)); c2.Choices[0].Text != want {
		t.Errorf("answer after reuse %q, want %q (a fresh evaluation)", c2.Choices[0].Text, want)
	}
}

// TestLoad: 8 concurrent streaming clients (chat and completions), 4
// requests each, on 4 slots: every stream complete and well-formed, with
// the text of the request alone.
func TestLoad(t *testing.T) {
	s, url := startServer(t, Config{Parallel: 4, Queue: 16})
	e := s.eng.Load()
	bias := noStops(e.tok)
	const clients, each, n = 8, 4, 16
	var wg sync.WaitGroup
	for c := range clients {
		// Odd clients chat, even ones complete.
		text := strings.Repeat("the mountain ", c+1)
		path, object := "/v1/completions", "text_completion"
		req := map[string]any{"model": "tiny", "prompt": text, "max_tokens": n, "temperature": 0,
			"stream": true, "stream_options": map[string]any{"include_usage": true}, "logit_bias": bias}
		prompt := e.tok.Encode(text, e.addBOS)
		if c%2 == 1 {
			path, object = "/v1/chat/completions", "chat.completion.chunk"
			delete(req, "prompt")
			req["messages"] = []map[string]any{{"role": "user", "content": text}}
			prompt = e.tok.Encode("<|im_start|>user\n"+text+"<|im_end|>\n<|im_start|>assistant\n", false)
		}
		want := e.tok.Decode(greedy(t, e.m, prompt, n, bias))
		wg.Add(1)
		go func() {
			defer wg.Done()
			body, _ := json.Marshal(req)
			for i := range each {
				resp, err := http.Post(url+path, "application/json", bytes.NewReader(body))
				if err != nil {
					t.Errorf("client %d request %d: %v", c, i, err)
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 {
					t.Errorf("client %d request %d: status %d %v: %s", c, i, resp.StatusCode, err, b)
					return
				}
				r, err := readStream(t, bytes.NewReader(b))
				if err != nil {
					t.Errorf("client %d request %d: %v", c, i, err)
					return
				}
				checkStream(t, r, object)
				if r.text != want {
					t.Errorf("client %d request %d: %q, want %q", c, i, r.text, want)
				}
				if u := r.chunks[len(r.chunks)-1].Usage; u == nil || u.CompletionTokens != n || u.PromptTokens != len(prompt) {
					t.Errorf("client %d request %d: usage %+v", c, i, u)
				}
			}
		}()
	}
	wg.Wait()
	if got := s.met.genTokens.Load(); got != clients*each*n {
		t.Errorf("%d tokens generated, want %d", got, clients*each*n)
	}
}

// TestCloseMidStream: requests still running when the server closes (the
// grace period is over) end with an error event, not a silent cut.
func TestCloseMidStream(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	s, url := startServer(t, Config{Parallel: 1}, func() { once.Do(func() { <-release }) })
	resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(`{"model":"tiny","prompt":"x","max_tokens":100,"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	waitFor(t, "the request to take the slot", func() bool { return s.met.busy.Load() == 1 })
	// Close's two halves, so that the scheduler sees the end before its
	// next step: cancel, let the held step run, wait.
	s.stop()
	close(release)
	s.Close()
	r, err := readStream(t, resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if r.done || len(r.chunks) == 0 {
		t.Fatalf("stream %q: want an error event and no [DONE]", r.raw)
	}
	if e := r.chunks[len(r.chunks)-1].Error; e == nil || e.Type != "server_error" || !strings.Contains(e.Message, "shutting down") {
		t.Errorf("last event %q: want the shutdown error", r.raw[len(r.raw)-1])
	}
}
