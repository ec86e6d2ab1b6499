package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeModelsDir: `krafla serve --models DIR` with OLLAMA_HOST set
// listens where OLLAMA_HOST says, lists the folder's models on ollama's
// and OpenAI's API, serves one on first use, and answers browsers with
// ollama's CORS rules.
func TestServeModelsDir(t *testing.T) {
	model := runTestModel(t) // DIR/tiny.mlb and tiny.mlt
	dir := filepath.Dir(model)
	t.Setenv("OLLAMA_HOST", "127.0.0.1:0")
	t.Setenv("OLLAMA_ORIGINS", "https://webui.example")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &lineWriter{want: "listening on http://", hit: make(chan string, 1)}
	hit := w.hit
	root := newRootCmd()
	root.SetOut(io.Discard)
	root.SetErr(w)
	root.SetArgs([]string{"serve", "--models", dir, "--threads", "1", "--ctx", "64", "--no-huge-pages"})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	var line string
	select {
	case line = <-hit:
	case err := <-done:
		t.Fatalf("serve ended before listening: %v\n%s", err, w.buf.String())
	}
	url := strings.TrimSpace(line[strings.Index(line, "http://"):])
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Errorf("listening on %s, want 127.0.0.1 as OLLAMA_HOST says", url)
	}
	get := func(path, origin string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, url+path, nil)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, b := get("/api/tags", ""); code != 200 || !strings.Contains(b, `"name":"tiny"`) {
		t.Errorf("/api/tags: %d %s", code, b)
	}
	if code, b := get("/v1/models", ""); code != 200 || !strings.Contains(b, `"id":"tiny"`) {
		t.Errorf("/v1/models: %d %s", code, b)
	}
	resp, err := http.Post(url+"/api/generate", "application/json", strings.NewReader(`{"model":"tiny:latest","prompt":"The lava","raw":true,"stream":false,"options":{"num_predict":3}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"done":true`) {
		t.Errorf("/api/generate: %d %s", resp.StatusCode, b)
	}
	if code, _ := get("/api/version", "https://webui.example"); code != 200 {
		t.Errorf("an OLLAMA_ORIGINS origin: %d", code)
	}
	if code, _ := get("/api/version", "https://evil.example"); code != 403 {
		t.Errorf("another origin: %d, want 403", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve after its context ended: %v", err)
	}
	if log := w.buf.String(); !strings.Contains(log, "serving 1 model of "+dir) || !strings.Contains(log, "loaded tiny in") {
		t.Errorf("log:\n%s", log)
	}
}
