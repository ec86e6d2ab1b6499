package asm

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// TestGeneratedARM64 checks that kernels_arm64.s, dot_ggml_arm64.s,
// packed_k_arm64.s and quantize_q8k_arm64.s are the output of their
// generators, _genarm64/gen.py, _genarm64/ggml.py, _genarm64/packedk.py and
// _genarm64/q8k.py (skipped where python3 is missing).
func TestGeneratedARM64(t *testing.T) {
	if testing.Short() {
		t.Skip("short: the generator check runs in the full (amd64) test run")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: the arm64 .s files not checked against _genarm64")
	}
	for _, g := range []struct{ gen, out string }{
		{"_genarm64/gen.py", "kernels_arm64.s"},
		{"_genarm64/ggml.py", "dot_ggml_arm64.s"},
		{"_genarm64/packedk.py", "packed_k_arm64.s"},
		{"_genarm64/q8k.py", "quantize_q8k_arm64.s"},
	} {
		want, err := exec.Command(py, g.gen).Output()
		if err != nil {
			t.Fatalf("%s: %v", g.gen, err)
		}
		got, err := os.ReadFile(g.out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s is not %s's output: run `python3 %s > %s` in asm/", g.out, g.gen, g.gen, g.out)
		}
	}
}
