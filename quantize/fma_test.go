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
	targets := [][]string{{"GOARCH=arm64"}, {"GOARCH=ppc64le"}, {"GOARCH=s390x"}, {"GOARCH=riscv64"}, {"GOARCH=amd64", "GOAMD64=v3"}}
	if os.Getenv("KRAFLA_CROSS") == "" {
		// With a cold build cache each target compiles the ~60 standard
		// packages quantize needs (about 20 s of CPU each), so by default only
		// arm64, the target most users run with fusion; after touching the
		// arithmetic run all five: KRAFLA_CROSS=1 go test -run NoFused ./quantize
		t.Log("arm64 only; KRAFLA_CROSS=1 checks ppc64le, s390x, riscv64 and amd64 v3 too")
		targets = targets[:1]
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		t.Skipf("no go command: %v", err)
	}
	fma := regexp.MustCompile(`(?m)^.*\((?:[^)]*/quantize/[a-z0-9]+\.go:\d+)\)\s+(?:V?FN?M(?:ADD|SUB)\w*|WFM\w*).*$`)
	for _, env := range targets {
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
