package asm

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGenerated runs the kernel generator (_gen, its own module) into a
// temporary directory and checks that every .s file it writes is the one
// checked in, so that an edit of a generated file, or of the generator
// without regenerating, fails here.
func TestGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the generator (seconds); skipped under -short")
	}
	// go test puts its own toolchain's bin first on the PATH of the tests.
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go toolchain on PATH: %v", err)
	}
	dir := t.TempDir()
	cmd := exec.Command(goTool, "run", ".", "-out", dir)
	cmd.Dir = "_gen"
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run . in _gen: %v\n%s", err, out)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) == 0 {
		t.Fatal("the generator wrote no files")
	}
	for _, e := range ents {
		got, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		have, err := os.ReadFile(e.Name())
		if err != nil {
			t.Errorf("%s: the generator writes it, but it is not checked in (%v); run go generate ./asm", e.Name(), err)
			continue
		}
		if n, checkedIn, generated, ok := firstDiff(have, got); !ok {
			t.Errorf("%s differs from the generator's output at line %d:\nchecked in: %q\ngenerated:  %q\nrun go generate ./asm", e.Name(), n, checkedIn, generated)
		}
	}
}

// firstDiff compares a and b line by line. When they differ it returns the
// 1-based number of the first differing line and that line of each
// ("<end of file>" for the shorter one), and ok false.
func firstDiff(a, b []byte) (line int, la, lb string, ok bool) {
	if bytes.Equal(a, b) {
		return 0, "", "", true
	}
	as, bs := bytes.SplitAfter(a, []byte("\n")), bytes.SplitAfter(b, []byte("\n"))
	at := func(ls [][]byte, i int) string {
		if i < len(ls) && len(ls[i]) > 0 { // SplitAfter ends with "" after a final newline
			return string(ls[i])
		}
		return "<end of file>"
	}
	for i := 0; ; i++ {
		if la, lb := at(as, i), at(bs, i); la != lb {
			return i + 1, la, lb, false
		}
	}
}

func TestFirstDiff(t *testing.T) {
	tests := []struct {
		a, b   string
		line   int
		la, lb string
		ok     bool
	}{
		{"x\ny\n", "x\ny\n", 0, "", "", true},
		{"x\ny\n", "x\nz\n", 2, "y\n", "z\n", false},
		{"x\ny\n", "x\ny", 2, "y\n", "y", false},
		{"x\n", "x\ny\n", 2, "<end of file>", "y\n", false},
		{"", "x", 1, "<end of file>", "x", false},
	}
	for _, tt := range tests {
		line, la, lb, ok := firstDiff([]byte(tt.a), []byte(tt.b))
		if line != tt.line || la != tt.la || lb != tt.lb || ok != tt.ok {
			t.Errorf("firstDiff(%q, %q) = %d, %q, %q, %v, want %d, %q, %q, %v", tt.a, tt.b, line, la, lb, ok, tt.line, tt.la, tt.lb, tt.ok)
		}
	}
}
