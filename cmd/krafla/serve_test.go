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
			Parallel: 2, Queue: 4, Name: "tiny", Timeout: time.Minute, Grace: time.Second, NoHuge: true}, w)
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

func TestServeUsage(t *testing.T) {
	for _, args := range [][]string{
		{"serve"},
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
