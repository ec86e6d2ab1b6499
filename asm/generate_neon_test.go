package asm

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// TestGeneratedARM64 checks that kernels_arm64.s is the output of its
// generator, _genarm64/gen.py (skipped where python3 is missing).
func TestGeneratedARM64(t *testing.T) {
	if testing.Short() {
		t.Skip("short: the generator check runs in the full (amd64) test run")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: kernels_arm64.s not checked against _genarm64/gen.py")
	}
	want, err := exec.Command(py, "_genarm64/gen.py").Output()
	if err != nil {
		t.Fatalf("_genarm64/gen.py: %v", err)
	}
	got, err := os.ReadFile("kernels_arm64.s")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("kernels_arm64.s is not _genarm64/gen.py's output: run `python3 _genarm64/gen.py > kernels_arm64.s` in asm/")
	}
}
