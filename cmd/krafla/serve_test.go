package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// lineWriter collects what the server writes and hands over the first line
// containing want.
type lineWriter struct {
	mu   sync.Mutex
	buf  strings.Builder
	want string
	hit  chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for _, l := range strings.Split(w.buf.String(), "\n") {
		if strings.Contains(l, w.want) && w.hit != nil {
			w.hit <- l
			w.hit = nil
		}
	}
	return len(p), nil
}

func TestServeCommand(t *testing.T) {
	model := runTestModel(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &lineWriter{want: "listening on http://", hit: make(chan string, 1)}
	got := w.hit
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, model, serveOptions{modelOptions: modelOptions{Threads: 1, Ctx: 64}, Host: "127.0.0.1", Port: 0,
			Parallel: 2, Queue: 4, Name: "tiny", Timeout: time.Minute, Grace: time.Second, NoHuge: true}, "127.0.0.1:0", false, w)
	}()
	var line string
	select {
	case line = <-got:
	case err := <-done:
		t.Fatalf("serve ended before listening: %v", err)
	}
	url := strings.TrimSpace(line[strings.Index(line, "http://"):])
	resp, err := http.Get(url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.TrimSpace(string(b)) != `{"status":"ok"}` {
		t.Errorf("/health: %d %s", resp.StatusCode, b)
	}
	resp, err = http.Post(url+"/v1/completions", "application/json", strings.NewReader(`{"model":"tiny","prompt":"The lava","max_tokens":4}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"object":"text_completion"`) {
		t.Errorf("/v1/completions: %d %s", resp.StatusCode, b)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve after its context ended: %v, want nil (exit 0)", err)
	}
}

// serveLog starts `krafla serve MODEL ARGS...` through the cobra root on a free
// port, waits until it listens, stops it and returns what it logged.
func serveLog(t *testing.T, model string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &lineWriter{want: "listening on http://", hit: make(chan string, 1)}
	hit := w.hit
	logged := func() string {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.buf.String()
	}
	root := newRootCmd()
	root.SetOut(io.Discard)
	root.SetErr(w)
	root.SetArgs(append([]string{"serve", model, "--host", "127.0.0.1", "--port", "0", "--threads", "1", "--no-huge-pages"}, args...))
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	select {
	case <-hit:
	case err := <-done:
		return logged(), err
	}
	cancel()
	err := <-done
	return logged(), err
}

func TestServeUsage(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "a.mlb", "b.mlb"},
		{"serve", "--models", "/nonexistent-krafla-dir"},
		{"serve", "m.mlb", "--models", "."},
		{"serve", "m.mlb", "--max-loaded", "2"},
		{"serve", "--name", "x"},
		{"serve", "m.mlb", "--parallel", "0"},
		{"serve", "m.mlb", "--port", "70000"},
	} {
		_, _, err := runCLI(args...)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}
