package hub

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/krafla/krafla/hub/hubtest"
)

// weights is a deterministic LFS-sized body.
func weights(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

const weightsSize = 200 << 10

func newHub(t *testing.T) (*hubtest.Hub, *hubtest.Repo, *Client) {
	t.Helper()
	h := hubtest.New()
	t.Cleanup(h.Close)
	r := h.Add("org/tiny", map[string][]byte{
		"config.json":       []byte(`{"model_type":"llama"}`),
		"sub/notes.txt":     []byte("nested\n"),
		"model.safetensors": weights(weightsSize),
	})
	c := &Client{Endpoint: h.URL, Cache: t.TempDir(), Retries: 3, Backoff: time.Millisecond}
	return h, r, c
}

func all(files []string) ([]string, error) { return files, nil }

func cdnGets(h *hubtest.Hub) []hubtest.Request {
	var out []hubtest.Request
	for _, r := range h.Log() {
		if r.Server == "cdn" && r.Method == "GET" {
			out = append(out, r)
		}
	}
	return out
}

func wantCode(t *testing.T, err error, code string) *Error {
	t.Helper()
	var he *Error
	if !errors.As(err, &he) || he.Code != code {
		t.Fatalf("err = %v, want code %s", err, code)
	}
	return he
}

func TestPullLayout(t *testing.T) {
	h, r, c := newHub(t)
	h.Tokens["hf_good"] = true
	c.Token = "hf_good"
	s, err := c.Pull(context.Background(), "org/tiny", "main", all)
	if err != nil {
		t.Fatal(err)
	}
	if s.Commit != r.Commit || len(s.Files) != 3 {
		t.Fatalf("snapshot %+v, want commit %s and 3 files", s, r.Commit)
	}
	dir := filepath.Join(c.Cache, "models--org--tiny")
	// Layout as huggingface_hub writes it: relative links into blobs named by ETag.
	for name, want := range map[string]string{
		"model.safetensors": "../../blobs/" + hubtest.SHA256(r.Files["model.safetensors"]),
		"config.json":       "../../blobs/" + hubtest.GitSHA1(r.Files["config.json"]),
		"sub/notes.txt":     "../../../blobs/" + hubtest.GitSHA1(r.Files["sub/notes.txt"]),
	} {
		p := filepath.Join(dir, "snapshots", r.Commit, name)
		got, err := os.Readlink(p)
		if err != nil || got != want {
			t.Errorf("%s links to %q (%v), want %q", name, got, err, want)
		}
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(b, r.Files[name]) {
			t.Errorf("%s: content differs (%v)", name, err)
		}
	}
	ref, err := os.ReadFile(filepath.Join(dir, "refs", "main"))
	if err != nil || string(ref) != r.Commit {
		t.Errorf("refs/main = %q (%v), want %s", ref, err, r.Commit)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "blobs", "*.incomplete"))
	if len(left) != 0 {
		t.Errorf("partial files left: %v", left)
	}
	// The token goes to the hub, never to the CDN on another host.
	var hubAuth, cdn int
	for _, q := range h.Log() {
		switch {
		case q.Server == "cdn":
			cdn++
			if q.Auth != "" {
				t.Errorf("CDN got Authorization %q on %s", q.Auth, q.Path)
			}
		case q.Auth == "Bearer hf_good":
			hubAuth++
		}
	}
	if cdn == 0 || hubAuth == 0 {
		t.Errorf("%d CDN requests, %d hub requests with the token: want both", cdn, hubAuth)
	}
	// A second pull finds everything in the cache: no download.
	n := len(cdnGets(h))
	if _, err := c.Pull(context.Background(), "org/tiny", "main", all); err != nil {
		t.Fatal(err)
	}
	if m := len(cdnGets(h)); m != n {
		t.Errorf("second pull downloaded again (%d CDN GETs, then %d)", n, m)
	}
	// Offline: the same snapshot, no request at all.
	before := len(h.Log())
	off := &Client{Cache: c.Cache, Offline: true}
	s2, err := off.Pull(context.Background(), "org/tiny", "main", all)
	if err != nil || s2.Commit != r.Commit || len(s2.Files) != 3 {
		t.Fatalf("offline pull: %+v, %v", s2, err)
	}
	if len(h.Log()) != before {
		t.Error("offline pull made requests")
	}
	_, err = off.Pull(context.Background(), "org/other", "main", all)
	wantCode(t, err, OfflineMissing)
}

func TestResumeAfterCut(t *testing.T) {
	h, r, c := newHub(t)
	h.CutAfter, h.Cuts = 50000, 2
	s, err := c.Pull(context.Background(), "org/tiny", "main", all)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(s.Path("model.safetensors"))
	if !bytes.Equal(b, r.Files["model.safetensors"]) {
		t.Fatal("resumed file differs")
	}
	gets := cdnGets(h)
	if len(gets) != 3 || gets[0].Range != "" || gets[1].Range != "bytes=50000-" || gets[2].Range != "bytes=100000-" {
		t.Fatalf("CDN GETs %+v, want a whole one then bytes=50000- and bytes=100000-", gets)
	}
}

// plant leaves a partial download as a killed pull would.
func plant(t *testing.T, c *Client, r *hubtest.Repo, b []byte) string {
	t.Helper()
	p := filepath.Join(c.Cache, "models--org--tiny", "blobs", hubtest.SHA256(r.Files["model.safetensors"])+".incomplete")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestResumeAcrossRuns(t *testing.T) {
	h, r, c := newHub(t)
	plant(t, c, r, r.Files["model.safetensors"][:70000])
	s, err := c.Pull(context.Background(), "org/tiny", "main", all)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(s.Path("model.safetensors"))
	if !bytes.Equal(b, r.Files["model.safetensors"]) {
		t.Fatal("resumed file differs")
	}
	if g := cdnGets(h); len(g) != 1 || g[0].Range != "bytes=70000-" {
		t.Fatalf("CDN GETs %+v, want one with bytes=70000-", g)
	}
}

func TestRangeIgnoredRestarts(t *testing.T) {
	h, r, c := newHub(t)
	// A wrong prefix: if the 200 answer were appended, the hash would fail.
	plant(t, c, r, bytes.Repeat([]byte{'x'}, 70000))
	h.IgnoreRange = true
	s, err := c.Pull(context.Background(), "org/tiny", "main", all)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(s.Path("model.safetensors"))
	if !bytes.Equal(b, r.Files["model.safetensors"]) {
		t.Fatal("file differs after a 200 answer to a Range request")
	}
}

func TestRange416Restarts(t *testing.T) {
	h, r, c := newHub(t)
	plant(t, c, r, bytes.Repeat([]byte{'x'}, 70000))
	h.Refuse416 = 1
	s, err := c.Pull(context.Background(), "org/tiny", "main", all)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(s.Path("model.safetensors"))
	if !bytes.Equal(b, r.Files["model.safetensors"]) {
		t.Fatal("file differs after 416")
	}
	if g := cdnGets(h); len(g) != 2 || g[1].Range != "" {
		t.Fatalf("CDN GETs %+v, want the refused Range then a whole GET", g)
	}
}

func TestCompletePartialIsVerified(t *testing.T) {
	h, r, c := newHub(t)
	// A complete partial file (killed between the last byte and the rename).
	plant(t, c, r, r.Files["model.safetensors"])
	if _, err := c.Pull(context.Background(), "org/tiny", "main", all); err != nil {
		t.Fatal(err)
	}
	if g := cdnGets(h); len(g) != 0 {
		t.Fatalf("CDN GETs %+v, want none", g)
	}
}

func TestCorruptBody(t *testing.T) {
	h, r, c := newHub(t)
	h.Corrupt = true
	_, err := c.Pull(context.Background(), "org/tiny", "main", all)
	he := wantCode(t, err, HashMismatch)
	want := hubtest.SHA256(r.Files["model.safetensors"])
	if he.Path != "model.safetensors" || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "sha256 of the download is ") {
		t.Fatalf("error %q should name the file and both hashes", err)
	}
	blobs, _ := filepath.Glob(filepath.Join(c.Cache, "models--org--tiny", "blobs", want+"*"))
	if len(blobs) != 0 {
		t.Fatalf("left %v after a mismatch", blobs)
	}
}

func TestConnectionLost(t *testing.T) {
	h2, r2, c2 := newHub(t)
	// Each cut brings 1000 bytes, too little to count as progress: the
	// retries run out.
	h2.CutAfter, h2.Cuts = 1000, 1000
	c2.Retries = 2
	plant(t, c2, r2, r2.Files["model.safetensors"][:5000])
	_, err := c2.Pull(context.Background(), "org/tiny", "main", all)
	he := wantCode(t, err, ConnectionLost)
	if he.Hint() == "" || !strings.Contains(he.Hint(), "resume") {
		t.Errorf("hint %q should say how to resume", he.Hint())
	}
	p := filepath.Join(c2.Cache, "models--org--tiny", "blobs", hubtest.SHA256(r2.Files["model.safetensors"])+".incomplete")
	if st, err := os.Stat(p); err != nil || st.Size() != 8000 {
		t.Fatalf("partial file %v, %v: want it kept with the 5000+3·1000 bytes", st, err)
	}
}

func TestErrors(t *testing.T) {
	h, _, c := newHub(t)
	ctx := context.Background()
	h.Add("org/private", map[string][]byte{"config.json": []byte("{}")}).Private = true
	h.Add("org/gated", map[string][]byte{"config.json": []byte("{}")}).Gated = true
	h.Tokens["hf_user"], h.Tokens["hf_granted"] = true, true
	h.Granted["hf_granted"] = true

	_, err := c.Pull(ctx, "org/missing", "main", all)
	wantCode(t, err, RepoNotFound)
	_, err = c.Pull(ctx, "org/private", "main", all)
	he := wantCode(t, err, RepoNotFound)
	if !strings.Contains(he.Hint(), "HF_TOKEN") {
		t.Errorf("hint %q should mention HF_TOKEN", he.Hint())
	}
	_, err = c.Pull(ctx, "org/tiny", "v9", all)
	wantCode(t, err, RevisionNotFound)
	err = c.Download(ctx, "org/tiny", "main", "nope.json")
	wantCode(t, err, EntryNotFound)

	_, err = c.Pull(ctx, "org/gated", "main", all)
	he = wantCode(t, err, GatedRepo)
	if he.Status != 401 || !strings.Contains(he.Hint(), "HF_TOKEN") || !strings.Contains(he.Hint(), "huggingface.co/org/gated") {
		t.Errorf("gated without token: %v, hint %q", err, he.Hint())
	}
	c.Token = "hf_user"
	_, err = c.Pull(ctx, "org/gated", "main", all)
	he = wantCode(t, err, GatedRepo)
	if he.Status != 403 || !strings.Contains(he.Hint(), "request") {
		t.Errorf("gated not granted: %v, hint %q", err, he.Hint())
	}
	c.Token = "hf_granted"
	if _, err := c.Pull(ctx, "org/gated", "main", all); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Pull(ctx, "org/private", "main", all); err != nil {
		t.Fatal(err)
	}
	c.Token = "hf_bad"
	_, err = c.Pull(ctx, "org/tiny", "main", all)
	wantCode(t, err, RepoNotFound)
}

func TestRetryOn503(t *testing.T) {
	h, _, c := newHub(t)
	h.Status, h.Fails = 503, 2
	if _, err := c.Pull(context.Background(), "org/tiny", "main", all); err != nil {
		t.Fatal(err)
	}
	h.Status, h.Fails = 503, 10
	_, err := c.Pull(context.Background(), "org/tiny", "v1", all)
	if err == nil {
		t.Fatal("pull through a hub answering 503 succeeded")
	}
}

func TestConcurrentPulls(t *testing.T) {
	h, r, c := newHub(t)
	h.Slow = 50 * time.Microsecond
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cc := *c
			_, errs[i] = cc.Pull(context.Background(), "org/tiny", "main", all)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(c.Cache, "models--org--tiny", "snapshots", r.Commit, "model.safetensors"))
	if !bytes.Equal(b, r.Files["model.safetensors"]) {
		t.Fatal("content differs after concurrent pulls")
	}
	if g := cdnGets(h); len(g) != 1 {
		t.Errorf("%d CDN GETs, want 1 (the others wait on the lock and find the blob)", len(g))
	}
}

func TestHostileListing(t *testing.T) {
	h, _, c := newHub(t)
	h.Add("org/evil", map[string][]byte{"../../../etc/x": []byte("x")})
	_, err := c.Pull(context.Background(), "org/evil", "main", all)
	wantCode(t, err, BadResponse)
}

func TestEnv(t *testing.T) {
	dir := t.TempDir()
	env := func(m map[string]string) Env { return func(k string) string { return m[k] } }
	c := NewClient(env(map[string]string{"HOME": dir}))
	if c.Endpoint != DefaultEndpoint || c.Cache != filepath.Join(dir, ".cache", "huggingface", "hub") || c.Offline || c.Token != "" {
		t.Errorf("defaults: %+v", c)
	}
	os.WriteFile(filepath.Join(dir, "token"), []byte("hf_file\n"), 0o600)
	c = NewClient(env(map[string]string{"HOME": "/nowhere", "HF_HOME": dir, "HF_ENDPOINT": "http://mirror:8080/", "HF_HUB_OFFLINE": "yes"}))
	if c.Endpoint != "http://mirror:8080" || c.Cache != filepath.Join(dir, "hub") || !c.Offline || c.Token != "hf_file" {
		t.Errorf("HF_HOME etc.: %+v", c)
	}
	c = NewClient(env(map[string]string{"HF_HOME": dir, "HF_TOKEN": "hf_env", "HF_HUB_CACHE": "/c", "XDG_CACHE_HOME": "/x", "HF_HUB_OFFLINE": "0"}))
	if c.Token != "hf_env" || c.Cache != "/c" || c.Offline {
		t.Errorf("HF_TOKEN, HF_HUB_CACHE: %+v", c)
	}
	if got := CacheDir(env(map[string]string{"XDG_CACHE_HOME": "/x"})); got != "/x/huggingface/hub" {
		t.Errorf("XDG_CACHE_HOME: %s", got)
	}
}

func TestParseRef(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Ref
	}{
		{"org/name", Ref{Repo: "org/name"}},
		{"org/name:q4_0", Ref{Repo: "org/name", Tag: "q4_0"}},
		{"org/name-GGUF:Q4_K_M@v1.0", Ref{Repo: "org/name-GGUF", Tag: "Q4_K_M", Revision: "v1.0"}},
		{"org/n.a_m-e@refs/pr/1", Ref{Repo: "org/n.a_m-e", Revision: "refs/pr/1"}},
	} {
		got, err := ParseRef(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseRef(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if got.String() != tc.in {
			t.Errorf("String() = %q, want %q", got.String(), tc.in)
		}
	}
	for _, bad := range []string{"name", "a/b/c", "/b", "a/", "a/b:", "a/b@", "a/b@../x", "./m.mlb", "a/..", "a/b:x y"} {
		if r, err := ParseRef(bad); err == nil {
			t.Errorf("ParseRef(%q) = %+v, want an error", bad, r)
		}
	}
}
