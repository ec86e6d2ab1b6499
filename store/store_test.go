package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/krafla/krafla/hub"
	"github.com/krafla/krafla/hub/hubtest"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlt"
)

// stories reads the real checkpoint in testdata.
func stories(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, n := range []string{"config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "stories260K", n))
		if err != nil {
			t.Fatal(err)
		}
		files[n] = b
	}
	return files
}

func newStore(t *testing.T, h *hubtest.Hub) *Store {
	cache := t.TempDir()
	return &Store{Dir: t.TempDir(), Hub: &hub.Client{Endpoint: h.URL, Cache: cache, Retries: 1, Backoff: time.Millisecond}}
}

func resolves(h *hubtest.Hub) []string {
	var out []string
	for _, r := range h.Log() {
		if strings.Contains(r.Path, "/resolve/") {
			out = append(out, r.Path)
		}
	}
	return out
}

func TestPullCheckpoint(t *testing.T) {
	h := hubtest.New()
	defer h.Close()
	files := stories(t)
	files["pytorch_model.bin"] = []byte("pickle, never downloaded")
	files["README.md"] = []byte("# card")
	files["onnx/model.onnx"] = []byte("not read by convert")
	r := h.Add("karpathy/stories260K", files)
	s := newStore(t, h)
	ctx := context.Background()
	m, err := s.Resolve(ctx, hub.Ref{Repo: "karpathy/stories260K", Tag: "q4_0"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range resolves(h) {
		if strings.HasSuffix(p, ".bin") || strings.HasSuffix(p, "README.md") || strings.Contains(p, "onnx") {
			t.Errorf("downloaded %s, which convert does not read", p)
		}
	}
	if m.Commit != r.Commit || m.Type != "q4_0" || m.Repo != "karpathy/stories260K" {
		t.Errorf("meta %+v", m.Meta)
	}
	f, err := mlb.Open(m.Path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	// The pulled model and its tokenizer are one pair: each names the other.
	if tok, err := mlt.Open(strings.TrimSuffix(m.Path, ".mlb") + ".mlt"); err != nil {
		t.Error(err)
	} else if f.Header.PairVersion != 1 || f.Header.PairID != tok.Pair {
		t.Errorf("model pair record %d %x, tokenizer %x: want one id in both", f.Header.PairVersion, f.Header.PairID, tok.Pair)
	}
	// Found again without any request, offline too.
	n := len(h.Log())
	s.Hub.Offline = true
	m2, err := s.Resolve(ctx, hub.Ref{Repo: "karpathy/stories260K", Tag: "q4_0"})
	if err != nil || m2.Path != m.Path || len(h.Log()) != n {
		t.Fatalf("second resolve: %v, %v, %d requests", m2, err, len(h.Log())-n)
	}
	// Offline, another type converts from the HF cache.
	m3, err := s.Resolve(ctx, hub.Ref{Repo: "karpathy/stories260K", Tag: "q8_0"})
	if err != nil || m3.Type != "q8_0" || len(h.Log()) != n {
		t.Fatalf("offline q8_0 from the cache: %v, %v, %d requests", m3, err, len(h.Log())-n)
	}
	l, err := s.List()
	if err != nil || len(l) != 2 {
		t.Fatalf("list %v, %v", l, err)
	}
	gone, err := s.Remove(hub.Ref{Repo: "karpathy/stories260K", Tag: "q4_0"})
	if err != nil || len(gone) != 1 {
		t.Fatalf("rm: %v, %v", gone, err)
	}
	if _, err := os.Stat(m.Path); !os.IsNotExist(err) {
		t.Errorf("rm left %s", m.Path)
	}
	if _, err := s.Remove(hub.Ref{Repo: "karpathy/stories260K", Tag: "q4_0"}); err == nil {
		t.Error("second rm succeeded")
	}
	// Offline and missing: says so, no request.
	_, err = s.Resolve(ctx, hub.Ref{Repo: "org/absent"})
	if err == nil || !strings.Contains(err.Error(), hub.OfflineMissing) || len(h.Log()) != n {
		t.Errorf("offline missing: %v", err)
	}
}

func TestPickleOnlyRefused(t *testing.T) {
	h := hubtest.New()
	defer h.Close()
	h.Add("org/old", map[string][]byte{"config.json": []byte("{}"), "pytorch_model.bin": make([]byte, 1<<20)})
	s := newStore(t, h)
	_, err := s.Resolve(context.Background(), hub.Ref{Repo: "org/old"})
	if err == nil || !strings.Contains(err.Error(), "pytorch_model.bin") || !strings.Contains(err.Error(), "pickle") {
		t.Fatalf("err = %v, want the pickle refused by name", err)
	}
	if r := resolves(h); len(r) != 0 {
		t.Fatalf("downloaded %v before refusing", r)
	}
}

func TestChooseGGUF(t *testing.T) {
	files := []string{"README.md", "m-Q2_K.gguf", "m-Q4_K_M.gguf", "m-Q8_0.gguf", "m-f16.gguf", "mmproj-m-Q4_0.gguf", "m.imatrix.gguf",
		"big-Q6_K-00001-of-00002.gguf", "big-Q6_K-00002-of-00002.gguf"}
	for _, tc := range []struct{ tag, file, typ string }{
		{"", "m-Q4_K_M.gguf", "q4_k_m"}, // llama.cpp's -hf default
		{"q4_k_m", "m-Q4_K_M.gguf", "q4_k_m"},
		{"F16", "m-f16.gguf", "f16"},
	} {
		c, err := Choose("org/m-GGUF", files, tc.tag)
		if err != nil || c.Kind != GGUF || c.GGUF != tc.file || c.Type != tc.typ || len(c.Files) != 1 {
			t.Errorf("tag %q: %+v, %v; want %s (%s)", tc.tag, c, err, tc.file, tc.typ)
		}
	}
	if _, err := Choose("org/m-GGUF", files, "Q5_K_S"); err == nil || !strings.Contains(err.Error(), "m-Q8_0.gguf") {
		t.Errorf("no match: %v, want the files listed", err)
	}
	// A split set: every file of it, in order, the first to import; the
	// type from the set's name.
	c, err := Choose("org/m-GGUF", files, "Q6_K")
	if err != nil || c.GGUF != "big-Q6_K-00001-of-00002.gguf" || c.Type != "q6_k" ||
		strings.Join(c.Files, " ") != "big-Q6_K-00001-of-00002.gguf big-Q6_K-00002-of-00002.gguf" {
		t.Errorf("split: %+v, %v", c, err)
	}
	// In a subfolder, as llama.cpp finds them, and without a tag; the
	// sidecar files llama.cpp skips are skipped.
	sub := []string{"Q8_0/x-Q8_0-00002-of-00003.gguf", "Q8_0/x-Q8_0-00001-of-00003.gguf", "Q8_0/x-Q8_0-00003-of-00003.gguf",
		"mtp-x-Q4_0.gguf", "x-eagle3-Q4_0.gguf", "README.md"}
	c, err = Choose("org/x-GGUF", sub, "")
	if err != nil || c.GGUF != "Q8_0/x-Q8_0-00001-of-00003.gguf" || len(c.Files) != 3 || c.Files[2] != "Q8_0/x-Q8_0-00003-of-00003.gguf" || c.Type != "q8_0" {
		t.Errorf("subfolder split set: %+v, %v", c, err)
	}
	if c == nil || !strings.Contains(c.Note, "split into 3 files") {
		t.Errorf("note %q does not say the set was chosen", c.Note)
	}
	// A set the listing holds only part of: the others by name (hub.Pull
	// says the repo, or offline the cache, lacks them).
	c, err = Choose("org/x-GGUF", []string{"x-Q8_0-00001-of-00004.gguf", "x-Q8_0-00003-of-00004.gguf"}, "q8_0")
	if err != nil || strings.Join(c.Files, " ") != "x-Q8_0-00001-of-00004.gguf x-Q8_0-00002-of-00004.gguf x-Q8_0-00003-of-00004.gguf x-Q8_0-00004-of-00004.gguf" {
		t.Errorf("partial split set: %+v, %v", c, err)
	}
	// A later split alone is no candidate.
	if _, err := Choose("org/x-GGUF", []string{"x-Q8_0-00002-of-00002.gguf"}, ""); err == nil {
		t.Error("a second split alone was chosen")
	}
	// Without Q4_K_M: Q8_0, then Q4_0 (the mmproj one does not count), then
	// the first file.
	for _, tc := range []struct {
		files []string
		want  string
	}{
		{[]string{"m-Q4_0.gguf", "m-Q8_0.gguf", "m-Q2_K.gguf"}, "m-Q8_0.gguf"},
		{[]string{"m-Q4_0.gguf", "mmproj-m-Q8_0.gguf", "m-Q2_K.gguf"}, "m-Q4_0.gguf"},
		{[]string{"m-Q5_K_S.gguf", "m-Q2_K.gguf"}, "m-Q2_K.gguf"},
	} {
		if c, err := Choose("org/m-GGUF", tc.files, ""); err != nil || c.GGUF != tc.want {
			t.Errorf("default among %v: %+v, %v; want %s", tc.files, c, err, tc.want)
		}
	}
	c, err = Choose("org/ck", []string{"config.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
		"model.safetensors.index.json", "consolidated.safetensors", "tokenizer.json", "pytorch_model.bin", "README.md", "chat_template.jinja"}, "")
	want := "chat_template.jinja config.json model-00001-of-00002.safetensors model-00002-of-00002.safetensors model.safetensors.index.json tokenizer.json"
	if err != nil || c.Kind != Checkpoint || strings.Join(c.Files, " ") != want || c.Type != "q8_0" {
		t.Errorf("checkpoint: %+v, %v; want %s", c, err, want)
	}
	// Shard names imply the whole set and its index, listed or not.
	c, err = Choose("org/ck", []string{"config.json", "model-00003-of-00003.safetensors"}, "")
	want = "config.json model-00001-of-00003.safetensors model-00002-of-00003.safetensors model-00003-of-00003.safetensors model.safetensors.index.json"
	if err != nil || strings.Join(c.Files, " ") != want {
		t.Errorf("shards by name: %+v, %v; want %s", c, err, want)
	}
	if _, err := Choose("org/ck", []string{"config.json", "model.safetensors"}, "q5_k"); err == nil {
		t.Error("tag q5_k accepted for a checkpoint")
	}
}

func TestFindWithoutTag(t *testing.T) {
	h := hubtest.New()
	defer h.Close()
	h.Add("karpathy/stories260K", stories(t))
	s := newStore(t, h)
	ctx := context.Background()
	if _, err := s.Resolve(ctx, hub.Ref{Repo: "karpathy/stories260K", Tag: "q4_0"}); err != nil {
		t.Fatal(err)
	}
	// Without a tag, what is stored is taken (no second conversion).
	m, err := s.Find(hub.Ref{Repo: "karpathy/stories260K"})
	if err != nil || m == nil || m.Type != "q4_0" {
		t.Fatalf("find without tag: %v, %v", m, err)
	}
}

// TestPullFollowsTheHub: an explicit pull asks the hub where main is now
// (a new commit whose blobs the cache already has: no download), while
// resolving a name takes what is stored.
func TestPullFollowsTheHub(t *testing.T) {
	h := hubtest.New()
	defer h.Close()
	files := stories(t)
	old := h.Add("karpathy/stories260K", files)
	s := newStore(t, h)
	ctx := context.Background()
	ref := hub.Ref{Repo: "karpathy/stories260K"}
	if _, err := s.Resolve(ctx, ref); err != nil {
		t.Fatal(err)
	}
	files2 := map[string][]byte{"README.md": []byte("# new card")}
	for k, v := range files {
		files2[k] = v
	}
	cur := h.Add("karpathy/stories260K", files2)
	if cur.Commit == old.Commit {
		t.Fatal("the fake hub's commit did not move")
	}
	if m, err := s.Resolve(ctx, ref); err != nil || m.Commit != old.Commit {
		t.Fatalf("resolve: %v, %v; want the stored commit %s", m, err, old.Commit)
	}
	n := 0
	for _, q := range h.Log() {
		if q.Server == "cdn" {
			n++
		}
	}
	m, err := s.Pull(ctx, ref)
	if err != nil || m.Commit != cur.Commit {
		t.Fatalf("pull: %v, %v; want commit %s", m, err, cur.Commit)
	}
	for _, q := range h.Log() {
		if q.Server == "cdn" {
			n--
		}
	}
	if n != 0 {
		t.Errorf("pull downloaded %d blobs the cache had", -n)
	}
	if b, _ := os.ReadFile(filepath.Join(s.Hub.Cache, "models--karpathy--stories260K", "refs", "main")); string(b) != cur.Commit {
		t.Errorf("refs/main = %s, want %s", b, cur.Commit)
	}
	// The hub gone: pull falls back to the cache.
	h.Close()
	if m, err := s.Pull(ctx, ref); err != nil || m.Commit != cur.Commit {
		t.Fatalf("pull with the hub down: %v, %v", m, err)
	}
}
