package serve

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/krafla/krafla/hub"
	"github.com/krafla/krafla/hub/hubtest"
	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/mlt"
	"github.com/krafla/krafla/store"
)

// storiesRepo puts the real stories260K checkpoint of testdata on a fake hub.
func storiesRepo(t testing.TB) (*hubtest.Hub, map[string][]byte) {
	t.Helper()
	files := map[string][]byte{}
	for _, n := range []string{"config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "stories260K", n))
		if err != nil {
			t.Fatal(err)
		}
		files[n] = b
	}
	h := hubtest.New()
	t.Cleanup(h.Close)
	h.Add("karpathy/stories260K", files)
	return h, files
}

func openFiles(path string) (*infer.Model, *mlt.Tokenizer, error) {
	m, err := infer.Open(path)
	if err != nil {
		return nil, nil, err
	}
	tok, err := mlt.Open(strings.TrimSuffix(path, ".mlb") + ".mlt")
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	return m, tok, nil
}

// storeServer serves a fresh store that pulls from h.
func storeServer(t testing.TB, h *hubtest.Hub) (*store.Store, string) {
	st := &store.Store{Dir: t.TempDir(), Hub: &hub.Client{Endpoint: h.URL, Cache: t.TempDir(), Retries: 1, Backoff: time.Millisecond}, Threads: 1}
	_, url := startMany(t, &StoreCatalog{Store: st, Load: openFiles}, Config{})
	return st, url
}

func tagNames(t testing.TB, url string) []string {
	t.Helper()
	code, b := ollamaDo(t, http.MethodGet, url+"/api/tags", nil)
	var tags struct{ Models []struct{ Name string } }
	if err := json.Unmarshal(b, &tags); code != 200 || err != nil || tags.Models == nil {
		t.Fatalf("/api/tags: %d %s", code, b)
	}
	var out []string
	for _, m := range tags.Models {
		out = append(out, m.Name)
	}
	return out
}

func TestOllamaPullDeleteCopy(t *testing.T) {
	h, files := storiesRepo(t)
	_, url := storeServer(t, h)
	if got := tagNames(t, url); len(got) != 0 {
		t.Fatalf("an empty store lists %v", got)
	}
	resp, err := http.Post(url+"/api/pull", "application/json", strings.NewReader(`{"model":"karpathy/stories260K:q4_0"}`))
	if err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(lines) < 3 || lines[0]["status"] != "pulling manifest" || lines[len(lines)-1]["status"] != "success" {
		t.Fatalf("pull: %d %v", resp.StatusCode, lines)
	}
	var sawWeights, sawConvert bool
	for _, l := range lines {
		if l["digest"] == "model.safetensors" && l["completed"] == l["total"] && l["total"] == float64(len(files["model.safetensors"])) {
			sawWeights = true
		}
		if s, _ := l["status"].(string); strings.HasPrefix(s, "converting") {
			sawConvert = true
		}
	}
	if !sawWeights || !sawConvert {
		t.Errorf("pull streamed %v: want model.safetensors completed at %d bytes and a converting status", lines, len(files["model.safetensors"]))
	}
	if got := tagNames(t, url); len(got) != 1 || got[0] != "karpathy/stories260K:q4_0" {
		t.Fatalf("after the pull: %v", got)
	}
	if code, v := generate(t, url, "karpathy/stories260K"); code != 200 || v["done"] != true {
		t.Errorf("generate with the pulled model: %d %v", code, v)
	}
	// Pulled again: already there, nothing downloaded.
	n := len(h.Log())
	code, b := ollamaDo(t, http.MethodPost, url+"/api/pull", `{"model":"karpathy/stories260K:q4_0","stream":false}`)
	if code != 200 || strings.TrimSpace(string(b)) != `{"status":"success"}` {
		t.Errorf("pull without stream: %d %s", code, b)
	}
	for _, r := range h.Log()[n:] {
		if strings.Contains(r.Path, "/resolve/") && r.Method == http.MethodGet {
			t.Errorf("second pull downloaded %s", r.Path)
		}
	}
	code, b = ollamaDo(t, http.MethodPost, url+"/api/copy", `{"source":"karpathy/stories260K:q4_0","destination":"me/story"}`)
	if code != 200 {
		t.Fatalf("copy: %d %s", code, b)
	}
	code, b = ollamaDo(t, http.MethodPost, url+"/api/copy", `{"source":"karpathy/stories260K:q4_0","destination":"me/story:q8_0"}`)
	if code != 400 || !strings.Contains(string(b), "type") {
		t.Errorf("copy to another type: %d %s, want 400", code, b)
	}
	code, b = ollamaDo(t, http.MethodDelete, url+"/api/delete", `{"model":"karpathy/stories260K:q4_0"}`)
	if code != 200 {
		t.Fatalf("delete: %d %s", code, b)
	}
	if got := tagNames(t, url); len(got) != 1 || got[0] != "me/story:q4_0" {
		t.Errorf("after copy and delete: %v, want [me/story:q4_0]", got)
	}
	if code, v := generate(t, url, "me/story:latest"); code != 200 {
		t.Errorf("generate with the copy: %d %v", code, v)
	}
	code, b = ollamaDo(t, http.MethodDelete, url+"/api/delete", `{"model":"karpathy/stories260K:q4_0"}`)
	if code != 404 || !strings.Contains(string(b), "not found") {
		t.Errorf("delete again: %d %s, want 404", code, b)
	}
	// A repo the hub does not have: the stream ends with an error line.
	resp, err = http.Post(url+"/api/pull", "application/json", strings.NewReader(`{"model":"org/missing"}`))
	if err != nil {
		t.Fatal(err)
	}
	lines = readLines(t, resp.Body)
	resp.Body.Close()
	if last := lines[len(lines)-1]; last["error"] == nil || !strings.Contains(last["error"].(string), "org/missing") {
		t.Errorf("pull of a missing repo: %v, want a last error line naming it", lines)
	}
	code, b = ollamaDo(t, http.MethodPost, url+"/api/pull", `{"model":"not a name"}`)
	if code != 400 || !strings.Contains(string(b), "ORG/NAME") {
		t.Errorf("pull of a bad name: %d %s, want 400 before any stream", code, b)
	}
}
