package main

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
)

// TestVersionStamped: the version and commit release.sh stamps with -ldflags
// -X are what `krafla --version` prints (commit cut to 12 characters), with
// the Go version and the target; unstamped, the build info is used.
func TestVersionStamped(t *testing.T) {
	defer func(v, c string) { buildVersion, buildCommit = v, c }(buildVersion, buildCommit)
	buildVersion, buildCommit = "", ""
	if v := version(); strings.Contains(v, "v9.8.7") || v == "" {
		t.Fatalf("unstamped version() = %q", v)
	}
	buildVersion, buildCommit = "v9.8.7", "0123456789abcdef0123"
	var out, errw bytes.Buffer
	if rc := execute(context.Background(), []string{"--version"}, strings.NewReader(""), &out, &errw); rc != exitOK {
		t.Fatalf("--version: exit %d, %s", rc, errw.String())
	}
	want := "v9.8.7 (0123456789ab), " + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH
	if !strings.Contains(out.String(), want) {
		t.Fatalf("--version printed %q, want it to contain %q", out.String(), want)
	}
}
