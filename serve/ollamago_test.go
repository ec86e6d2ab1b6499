package serve

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestOllamaGo is TestOllamaJS with the official ollama Go client
// (github.com/ollama/ollama/api v0.17.4, what the ollama CLI is built on):
// testdata/ollamago, a module of its own, is built from the module cache
// only (GOPROXY=off). scripts/test.sh downloads its modules (about 25 MB)
// when the module proxy is reachable; without them the test skips.
func TestOllamaGo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the ollama Go client (-short)")
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	bin := filepath.Join(t.TempDir(), "ollamago")
	build := exec.Command(goBin, "build", "-o", bin, ".")
	build.Dir = filepath.Join("testdata", "ollamago")
	build.Env = append(build.Environ(), "GOWORK=off", "GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=readonly -buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, "GOPROXY=off") || strings.Contains(l, "GOTOOLCHAIN=local") {
				t.Skipf("the ollama Go client cannot be built from the module cache (scripts/test.sh downloads its modules when the module proxy is reachable): %s", l)
			}
		}
		t.Fatalf("go build in testdata/ollamago: %v\n%s", err, out)
	}
	runOllamaClient(t, "StatusError", func(ctx context.Context, url string) *exec.Cmd {
		return exec.CommandContext(ctx, bin, url)
	})
}
