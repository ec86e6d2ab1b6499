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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/mlt"
)

// testCatalog serves the tiny model under several names; Open can be held
// at a gate and counts its calls.
type testCatalog struct {
	path  string
	names []string
	mu    sync.Mutex
	opens map[string]int
	gate  chan struct{} // when set, Open waits for it to be closed
}

func newTestCatalog(t testing.TB, names ...string) *testCatalog {
	return &testCatalog{path: tinyPath(t), names: names, opens: map[string]int{}}
}

func (c *testCatalog) Models() ([]ModelEntry, error) {
	var out []ModelEntry
	for _, n := range c.names {
		out = append(out, ModelEntry{Name: n, Path: c.path, Bytes: 1000, Modified: time.Unix(1700000000, 0), Type: "q8_0"})
	}
	return out, nil
}

func (c *testCatalog) Open(m ModelEntry) (*infer.Model, *mlt.Tokenizer, error) {
	c.mu.Lock()
	c.opens[m.Name]++
	gate := c.gate
	c.mu.Unlock()
	if gate != nil {
		<-gate
	}
	mod, err := infer.Open(m.Path)
	if err != nil {
		return nil, nil, err
	}
	tok, err := mlt.Open(strings.TrimSuffix(m.Path, ".mlb") + ".mlt")
	if err != nil {
		mod.Close()
		return nil, nil, err
	}
	tok.SetChat(&mlt.Chat{Templates: []mlt.NamedTemplate{{Name: "default", Source: chatML}}, EOSToken: "<|im_end|>"})
	return mod, tok, nil
}

func (c *testCatalog) openCount(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opens[name]
}

// startMany runs a server over cat behind httptest.
func startMany(t testing.TB, cat Catalog, cfg Config) (*Server, string) {
	t.Helper()
	cfg.Catalog = cat
	if cfg.Parallel == 0 {
		cfg.Parallel = 2
	}
	if cfg.Ctx == 0 {
		cfg.Ctx = 256
	}
	s := NewServer(cfg)
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		hs.Close()
		s.Close()
	})
	return s, hs.URL
}

// modelCost is what the registry must count for the tiny model: weights and
// every slot's cache, computed here from the model itself.
func modelCost(t testing.TB, parallel, ctx int) int64 {
	m, _ := tinyModel(t)
	kv, err := m.CacheBytes(ctx, infer.KVF32)
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.NewSession(infer.SessionOptions{Ctx: ctx})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if kv != s.CacheBytes() {
		t.Fatalf("CacheBytes(%d) = %d, a session of that context holds %d", ctx, kv, s.CacheBytes())
	}
	return m.WeightBytes() + int64(parallel)*kv
}

// ollamaDo sends a request and returns the status and body.
func ollamaDo(t testing.TB, method, url string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, ok := body.(string)
		if !ok {
			j, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			b = string(j)
		}
		rd = strings.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// generate asks the model for a few tokens without streaming.
func generate(t testing.TB, url, model string, extra ...any) (int, map[string]any) {
	t.Helper()
	req := map[string]any{"model": model, "prompt": "The lava", "raw": true, "stream": false,
		"options": map[string]any{"num_predict": 3, "temperature": 0}}
	for i := 0; i+1 < len(extra); i += 2 {
		req[extra[i].(string)] = extra[i+1]
	}
	code, b := ollamaDo(t, http.MethodPost, url+"/api/generate", req)
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return code, v
}

// loadedNames is what /api/ps lists.
func loadedNames(t testing.TB, url string) []string {
	t.Helper()
	code, b := ollamaDo(t, http.MethodGet, url+"/api/ps", nil)
	if code != 200 {
		t.Fatalf("/api/ps: %d %s", code, b)
	}
	var ps struct {
		Models []struct {
			Name      string `json:"name"`
			Size      int64  `json:"size"`
			ExpiresAt string `json:"expires_at"`
		} `json:"models"`
	}
	if err := json.Unmarshal(b, &ps); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ps.Models {
		out = append(out, m.Name)
	}
	return out
}

func TestRegistryAlternate(t *testing.T) {
	cat := newTestCatalog(t, "org/a:q8_0", "org/b:q8_0")
	_, url := startMany(t, cat, Config{MaxLoaded: 1})
	for i, name := range []string{"org/a:q8_0", "org/b:q8_0", "org/a:q8_0", "org/a:q8_0", "org/b:q8_0"} {
		code, v := generate(t, url, name)
		if code != 200 || v["done"] != true {
			t.Fatalf("request %d for %s: %d %v", i, name, code, v)
		}
		// load_duration: the wait for a load; none for the model loaded already.
		if ld, _ := v["load_duration"].(float64); (ld > 0) != (i != 3) {
			t.Errorf("request %d for %s: load_duration %v", i, name, ld)
		}
		if got := loadedNames(t, url); len(got) != 1 || got[0] != name {
			t.Fatalf("after request %d for %s: loaded %v, want only it", i, name, got)
		}
	}
	if a, b := cat.openCount("org/a:q8_0"), cat.openCount("org/b:q8_0"); a != 2 || b != 2 {
		t.Errorf("opened a %d times, b %d times; want 2 and 2 (a stays loaded between its two requests in a row)", a, b)
	}
}

func TestRegistryNames(t *testing.T) {
	cat := newTestCatalog(t, "org/a:q4_0", "org/a:q8_0", "solo")
	_, url := startMany(t, cat, Config{})
	for _, c := range []struct{ asked, served string }{
		{"org/a", "org/a:q8_0"}, {"org/a:latest", "org/a:q8_0"}, {"ORG/A:Q4_0", "org/a:q4_0"},
		{"solo", "solo"}, {"solo:latest", "solo"},
	} {
		code, v := generate(t, url, c.asked)
		if code != 200 {
			t.Errorf("%s: %d %v", c.asked, code, v)
			continue
		}
		if got := loadedNames(t, url); !contains(got, c.served) {
			t.Errorf("%s: loaded %v, want %s among them", c.asked, got, c.served)
		}
	}
	code, v := generate(t, url, "org/nope")
	if msg, _ := v["error"].(string); code != 404 || !strings.Contains(msg, "try pulling it first") {
		t.Errorf("unknown model: %d %v, want 404 saying to pull it", code, v)
	}
	code, v = generate(t, url, "org/a:q5_k")
	if code != 404 {
		t.Errorf("org/a:q5_k: %d %v, want 404", code, v)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestRegistryKeepAlive(t *testing.T) {
	cat := newTestCatalog(t, "org/a:q8_0", "org/b:q8_0", "org/c:q8_0")
	_, url := startMany(t, cat, Config{KeepAlive: 300 * time.Millisecond})
	// The server's default: gone some time after the last request.
	generate(t, url, "org/a:q8_0")
	// keep_alive 0 unloads at once; -1 keeps it for good.
	generate(t, url, "org/b:q8_0", "keep_alive", 0)
	generate(t, url, "org/c:q8_0", "keep_alive", "-1")
	got := loadedNames(t, url)
	if !contains(got, "org/a:q8_0") || contains(got, "org/b:q8_0") || !contains(got, "org/c:q8_0") {
		t.Fatalf("right after: loaded %v, want a and c", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for contains(loadedNames(t, url), "org/a:q8_0") {
		if time.Now().After(deadline) {
			t.Fatal("org/a still loaded 5 s after its keep_alive of 300 ms")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := loadedNames(t, url); len(got) != 1 || got[0] != "org/c:q8_0" {
		t.Errorf("after the expiry: loaded %v, want only org/c (keep_alive -1)", got)
	}
	// A request's keep_alive replaces the model's: 1h keeps a past 300 ms.
	generate(t, url, "org/a:q8_0", "keep_alive", "1h")
	time.Sleep(500 * time.Millisecond)
	if !contains(loadedNames(t, url), "org/a:q8_0") {
		t.Error("org/a unloaded within 500 ms of a keep_alive of 1h")
	}
	// An empty prompt with keep_alive 0 is how `ollama stop` unloads.
	code, v := ollamaDo(t, http.MethodPost, url+"/api/generate", `{"model":"org/a:q8_0","keep_alive":0}`)
	if code != 200 || !strings.Contains(string(v), `"done_reason":"unload"`) {
		t.Errorf("unload request: %d %s", code, v)
	}
	if contains(loadedNames(t, url), "org/a:q8_0") {
		t.Error("org/a still loaded after keep_alive 0")
	}
	code, v = ollamaDo(t, http.MethodPost, url+"/api/generate", `{"model":"org/a:q8_0","keep_alive":"soon"}`)
	if code != 400 || !strings.Contains(string(v), "keep_alive") {
		t.Errorf("keep_alive soon: %d %s, want 400 naming keep_alive", code, v)
	}
}

func TestRegistryWhileLoading(t *testing.T) {
	cat := newTestCatalog(t, "org/a:q8_0")
	cat.gate = make(chan struct{})
	_, url := startMany(t, cat, Config{})
	const n = 3
	codes := make(chan int, n)
	for range n {
		go func() {
			code, _ := generate(t, url, "org/a:q8_0")
			codes <- code
		}()
	}
	// A client that gives up while the model loads frees nothing it
	// should not, and the others keep waiting.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/api/generate", strings.NewReader(`{"model":"org/a:q8_0","prompt":"x","raw":true}`))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Error("a request answered while the model was held loading")
	}
	cancel()
	select {
	case c := <-codes:
		t.Fatalf("a request was answered (%d) before the model loaded", c)
	default:
	}
	if got := loadedNames(t, url); len(got) != 0 {
		t.Errorf("/api/ps while loading: %v, want none (not loaded yet)", got)
	}
	close(cat.gate)
	for range n {
		if c := <-codes; c != 200 {
			t.Errorf("a request that waited for the load: %d", c)
		}
	}
	if got := cat.openCount("org/a:q8_0"); got != 1 {
		t.Errorf("opened %d times for %d requests at once, want 1", got, n+1)
	}
}

func TestRegistryMemory(t *testing.T) {
	cost := modelCost(t, 2, 256)
	t.Run("too large", func(t *testing.T) {
		_, url := startMany(t, newTestCatalog(t, "org/a:q8_0"), Config{Memory: cost - 1})
		code, v := generate(t, url, "org/a:q8_0")
		msg, _ := v["error"].(string)
		if code != 503 || !strings.Contains(msg, "--memory") || !strings.Contains(msg, mib(cost)) {
			t.Errorf("%d %v, want 503 naming --memory and the %s needed", code, v, mib(cost))
		}
	})
	t.Run("least recently used goes", func(t *testing.T) {
		cat := newTestCatalog(t, "org/a:q8_0", "org/b:q8_0", "org/c:q8_0")
		_, url := startMany(t, cat, Config{Memory: 2*cost + cost/2})
		generate(t, url, "org/a:q8_0")
		generate(t, url, "org/b:q8_0")
		generate(t, url, "org/a:q8_0") // b is now the least recently used
		generate(t, url, "org/c:q8_0")
		got := loadedNames(t, url)
		if len(got) != 2 || !contains(got, "org/a:q8_0") || !contains(got, "org/c:q8_0") {
			t.Errorf("loaded %v, want a and c (b least recently used)", got)
		}
	})
	t.Run("never one running", func(t *testing.T) {
		cat := newTestCatalog(t, "org/a:q8_0", "org/b:q8_0")
		hold, held := make(chan struct{}), make(chan struct{}, 1)
		s := NewServer(Config{Catalog: cat, Parallel: 2, Ctx: 256, Memory: cost + cost/2})
		s.beforeStep = func() {
			select {
			case held <- struct{}{}:
			default:
			}
			<-hold
		}
		hs := httptest.NewServer(s.Handler())
		defer func() { hs.Close(); s.Close() }()
		done := make(chan int, 1)
		go func() {
			code, _ := generate(t, hs.URL, "org/a:q8_0")
			done <- code
		}()
		<-held // a is generating
		code, v := generate(t, hs.URL, "org/b:q8_0")
		msg, _ := v["error"].(string)
		if code != 503 || !strings.Contains(msg, "org/a:q8_0") || !strings.Contains(msg, "running") {
			t.Errorf("b while a runs: %d %v, want 503 naming a as running", code, v)
		}
		close(hold)
		if c := <-done; c != 200 {
			t.Errorf("a: %d", c)
		}
		if code, v := generate(t, hs.URL, "org/b:q8_0"); code != 200 {
			t.Errorf("b once a is idle: %d %v", code, v)
		}
		if got := loadedNames(t, hs.URL); len(got) != 1 || got[0] != "org/b:q8_0" {
			t.Errorf("loaded %v, want b alone", got)
		}
	})
}

// TestManyOpenAI: the OpenAI endpoints see the catalog's models.
func TestManyOpenAI(t *testing.T) {
	cat := newTestCatalog(t, "org/a:q8_0", "org/b:q8_0")
	_, url := startMany(t, cat, Config{})
	resp, err := http.Get(url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Data []struct{ ID string } }
	json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if len(list.Data) != 2 || list.Data[0].ID != "org/a:q8_0" || list.Data[1].ID != "org/b:q8_0" {
		t.Errorf("/v1/models: %+v", list)
	}
	_, b := post(t, url+"/v1/chat/completions", map[string]any{"model": "org/b", "max_tokens": 2,
		"messages": []any{map[string]any{"role": "user", "content": "hi"}}})
	c := decodeCompletion(t, b)
	if c.Model != "org/b:q8_0" || len(c.Choices) != 1 {
		t.Errorf("chat completion: %s", b)
	}
	r, b := post(t, url+"/v1/completions", map[string]any{"model": "org/x", "prompt": "hi"})
	if c := decodeCompletion(t, b); r.StatusCode != 404 || c.Error == nil {
		t.Errorf("unknown model: %d %s, want OpenAI's 404", r.StatusCode, b)
	}
	r, b = post(t, url+"/v1/completions", map[string]any{"prompt": "hi"})
	if c := decodeCompletion(t, b); r.StatusCode != 400 || c.Error == nil || c.Error.Param == nil || *c.Error.Param != "model" {
		t.Errorf("no model: %d %s, want 400 naming model", r.StatusCode, b)
	}
	// The body the dispatcher read is the handler's again: a stream works.
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/completions", bytes.NewReader([]byte(`{"model":"org/a:q8_0","prompt":"The","max_tokens":3,"stream":true}`)))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	st, err := readStream(t, resp.Body)
	resp.Body.Close()
	if err != nil || !st.done {
		t.Errorf("stream: %v %+v", err, st)
	}
}

// readLines reads an NDJSON body: each line one JSON object.
func readLines(t testing.TB, body io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var v map[string]any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, v)
	}
	return out
}

var _ = fmt.Sprint

// TestRegistryRace: two first requests for different models at once under
// --max-loaded 1: one of them loads (the other may be refused with 503, or
// served after it), never both refused.
func TestRegistryRace(t *testing.T) {
	for range 3 {
		cat := newTestCatalog(t, "org/a:q8_0", "org/b:q8_0")
		cat.gate = make(chan struct{})
		_, url := startMany(t, cat, Config{MaxLoaded: 1})
		codes := make(chan int, 2)
		for _, n := range []string{"org/a:q8_0", "org/b:q8_0"} {
			go func() {
				code, _ := generate(t, url, n)
				codes <- code
			}()
		}
		for cat.openCount("org/a:q8_0")+cat.openCount("org/b:q8_0") < 2 {
			time.Sleep(5 * time.Millisecond)
		}
		close(cat.gate)
		c1, c2 := <-codes, <-codes
		if c1 != 200 && c2 != 200 || c1 != 200 && c1 != 503 || c2 != 200 && c2 != 503 {
			t.Fatalf("statuses %d and %d: want one 200 at least, the other 200 or 503", c1, c2)
		}
		if got := loadedNames(t, url); len(got) != 1 {
			t.Errorf("loaded %v, want one (--max-loaded 1)", got)
		}
	}
}
