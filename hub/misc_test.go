package hub

import (
	"context"
	"fmt"
	"os"
	"strings"
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
