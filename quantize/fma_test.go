package quantize

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
)

// TestNoFusedMultiplyAdd compiles this package for the architectures where Go fuses
// x*y+z into one instruction (arm64, ppc64le, s390x, riscv64, amd64 v3) and checks that
// the quantizers contain no fused multiply-add: a fused operation rounds once instead
// of twice, which would make the bytes depend on the machine.
func TestNoFusedMultiplyAdd(t *testing.T) {
	if os.Getenv("KRAFLA_CROSS") == "" {
		// With a cold build cache this compiles the standard library for five
		// targets, far too slow for every CI run; run it after touching the
		// arithmetic: KRAFLA_CROSS=1 go test -run NoFused ./quantize
		t.Skip("set KRAFLA_CROSS=1 to cross-compile and check for fused multiply-add")
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		t.Skipf("no go command: %v", err)
	}
	fma := regexp.MustCompile(`(?m)^.*\((?:[^)]*/quantize/[a-z0-9]+\.go:\d+)\)\s+(?:V?FN?M(?:ADD|SUB)\w*|WFM\w*).*$`)
	for _, env := range [][]string{{"GOARCH=arm64"}, {"GOARCH=ppc64le"}, {"GOARCH=s390x"}, {"GOARCH=riscv64"}, {"GOARCH=amd64", "GOAMD64=v3"}} {
		cmd := exec.Command(gobin, "build", "-gcflags=-S", "-o", os.DevNull, ".")
		cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false"), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: go build: %v\n%s", env, err, out)
		}
		if m := fma.FindAll(out, 5); len(m) > 0 {
			t.Errorf("%v: fused multiply-add in the quantizers:\n%s", env, bytesJoin(m))
		}
	}
}

func bytesJoin(m [][]byte) string {
	var s string
	for _, b := range m {
		s += string(b) + "\n"
	}
	return s
}
