package serve

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestManyShutdown: Run with a catalog serves without loading anything
// first; on shutdown a running ollama stream finishes within the grace
// period and Run returns nil, with every model unloaded.
func TestManyShutdown(t *testing.T) {
	cat := newTestCatalog(t, "org/a:q8_0")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := make(chan net.Addr, 1)
	release := make(chan struct{})
	var once sync.Once
	var srv *Server
	runErr := make(chan error, 1)
	go func() {
		runErr <- Run(ctx, RunConfig{Config: Config{Catalog: cat, Parallel: 1, Ctx: 256}, Addr: "127.0.0.1:0", Grace: time.Minute,
			Ready: func(a net.Addr) { addr <- a },
			start: func(s *Server) {
				srv = s
				s.beforeStep = func() { once.Do(func() { <-release }) }
			}})
	}()
	url := "http://" + (<-addr).String()
	if cat.openCount("org/a:q8_0") != 0 {
		t.Error("a model was loaded before any request")
	}
	resp, err := http.Post(url+"/api/generate", "application/json",
		strings.NewReader(`{"model":"org/a","prompt":"The lava","raw":true,"options":{"num_predict":6,"temperature":0}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	cancel()
	for {
		c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
		if err != nil {
			break
		}
		c.Close()
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	lines := readLines(t, resp.Body)
	if last := lines[len(lines)-1]; last["done"] != true || last["eval_count"] != float64(6) {
		t.Errorf("the stream running at shutdown ended with %v, want done after 6 tokens", last)
	}
	if err := <-runErr; err != nil {
		t.Errorf("Run: %v, want nil after a shutdown", err)
	}
	if n := len(srv.reg.loadedModels()); n != 0 {
		t.Errorf("%d models still loaded after Run returned", n)
	}
	if _, _, ae := srv.reg.acquire(context.Background(), "org/a"); ae == nil || ae.Status != 503 {
		t.Errorf("acquire after close: %v, want 503", ae)
	}
}

// TestOllamaDisconnect: a streaming client that goes away frees its slot:
// with one slot, the next request runs at once and the first counts as
// failed.
func TestOllamaDisconnect(t *testing.T) {
	hook := func() { time.Sleep(time.Millisecond) }
	for _, many := range []bool{false, true} {
		var s *Server
		var url string
		if many {
			s = NewServer(Config{Catalog: newTestCatalog(t, "tiny"), Parallel: 1, Ctx: 2048})
			s.beforeStep = hook
			url = newTestHTTP(t, s)
		} else {
			s, url = startServer(t, Config{Parallel: 1}, hook)
		}
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "POST", url+"/api/generate",
			strings.NewReader(`{"model":"tiny","prompt":"The lava","raw":true,"options":{"temperature":0,"repeat_penalty":1}}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		_, err = resp.Body.Read(buf)
		cancel()
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		if code, v := generate(t, url, "tiny"); code != 200 {
			t.Fatalf("many %v: the next request: %d %v", many, code, v)
		}
		// 2000 positions at a millisecond a step: seconds, had the first run on.
		if d := time.Since(t0); d > 1500*time.Millisecond {
			t.Errorf("many %v: the next request took %v: the abandoned one kept its slot", many, d)
		}
		if f := s.met.failed.Load(); f != 1 {
			t.Errorf("many %v: %d requests failed, want 1 (the abandoned one)", many, f)
		}
	}
}

func newTestHTTP(t *testing.T, s *Server) string {
	hs := httptestServer(s)
	t.Cleanup(func() { hs.Close(); s.Close() })
	return hs.URL
}

// TestManyLimits: the dispatcher's read of the body keeps the body limit
// (413, in ollama's shape on /api/ paths).
func TestManyLimits(t *testing.T) {
	_, url := startMany(t, newTestCatalog(t, "tiny"), Config{MaxBody: 64})
	code, b := ollamaDo(t, http.MethodPost, url+"/api/chat", `{"model":"tiny","messages":[{"role":"user","content":"`+strings.Repeat("x", 100)+`"}]}`)
	if code != 413 || !strings.HasPrefix(string(b), `{"error":"the request body exceeds`) {
		t.Errorf("%d %s, want 413 in ollama's shape", code, b)
	}
	r, b2 := post(t, url+"/v1/completions", `{"model":"tiny","prompt":"`+strings.Repeat("x", 100)+`"}`)
	if c := decodeCompletion(t, b2); r.StatusCode != 413 || c.Error == nil {
		t.Errorf("%d %s, want 413 in OpenAI's shape", r.StatusCode, b2)
	}
}

func httptestServer(s *Server) *httptest.Server { return httptest.NewServer(s.Handler()) }
