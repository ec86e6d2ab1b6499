package hub

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestDiskFullIsNamed(t *testing.T) {
	err := diskErr(fmt.Errorf("write blob: %w", &os.PathError{Op: "write", Path: "/c/blobs/x", Err: syscall.ENOSPC}), "org/m", "main", "model.safetensors")
	he := wantCode(t, err, DiskFull)
	if he.Path != "model.safetensors" || !strings.Contains(he.Hint(), "resume") {
		t.Errorf("%v; hint %q", err, he.Hint())
	}
	if err := diskErr(os.ErrPermission, "org/m", "main", "x"); err != os.ErrPermission {
		t.Errorf("another error changed: %v", err)
	}
}

// A 429 is retried (the fake says Retry-After: 0); the header's parser on its own.
func TestRetryOn429(t *testing.T) {
	h, _, c := newHub(t)
	h.Status, h.Fails = 429, 1
	if _, err := c.Info(context.Background(), "org/tiny", "main"); err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]time.Duration{"2": 2 * time.Second, "": 0, "x": 0, "-1": 0, "3600": time.Minute} {
		if got := retryAfter(in); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"org/name", "org/name:q4_0@main", "a/b@refs/pr/1", "a/b:c:d", "@/:", "a/b@x/../y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if err != nil {
			return
		}
		// What parses names no path outside its folder and prints back.
		if strings.Contains(r.Repo, "..") || strings.Contains(r.Revision, "..") || strings.Count(r.Repo, "/") != 1 {
			t.Fatalf("%q parsed to %+v", s, r)
		}
		if r2, err := ParseRef(r.String()); err != nil || r2 != r {
			t.Fatalf("%q: round trip %+v -> %q -> %+v, %v", s, r, r.String(), r2, err)
		}
	})
}

const proxyChildEnv = "KRAFLA_TEST_PROXY_CHILD"

// TestProxyFromEnvironment: NewClient sends its requests through the proxy
// the environment names (HTTP_PROXY here; HTTPS_PROXY is the same
// mechanism for https endpoints). It runs in a child process, since
// net/http reads the proxy variables once per process.
func TestProxyFromEnvironment(t *testing.T) {
	if os.Getenv(proxyChildEnv) != "" {
		c := NewClient(os.Getenv)
		s, err := c.Pull(context.Background(), "org/tiny", "main", func([]string) ([]string, error) { return []string{"config.json"}, nil })
		if err != nil {
			fmt.Println("CHILD ERROR", err)
			os.Exit(1)
		}
		fmt.Println("CHILD COMMIT", s.Commit)
		os.Exit(0)
	}
	h, r, _ := newHub(t)
	target, _ := url.Parse(h.URL)
	var mu sync.Mutex
	var seen []string
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		mu.Lock()
		seen = append(seen, pr.In.Method+" "+pr.In.URL.String())
		mu.Unlock()
		pr.SetURL(target)
		pr.Out.URL.Path = pr.In.URL.Path
		pr.Out.Host = ""
	}})
	defer proxy.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestProxyFromEnvironment$")
	cmd.Env = append(os.Environ(), proxyChildEnv+"=1", "HTTP_PROXY="+proxy.URL, "http_proxy="+proxy.URL, "NO_PROXY=", "no_proxy=",
		"HF_ENDPOINT=http://hub.example.invalid", "HF_HUB_CACHE="+t.TempDir(), "HF_TOKEN=", "HF_HUB_OFFLINE=")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "CHILD COMMIT "+r.Commit) {
		t.Fatalf("child: %v\n%s", err, out)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"GET http://hub.example.invalid/api/models/org/tiny/revision/main",
		"HEAD http://hub.example.invalid/org/tiny/resolve/" + r.Commit + "/config.json",
		"GET http://hub.example.invalid/org/tiny/resolve/" + r.Commit + "/config.json"}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("the proxy saw\n%s\nwant\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
}
