package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/internal/testenv"
)

func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errw bytes.Buffer
	rc := execute(context.Background(), args, nil, &out, &errw)
	return out.String(), errw.String(), rc
}

// TestExportCLI: synth → convert --f16-scales → export → convert gives the
// same .mlb and .mlt, and the GGUF inspects as the right architecture.
func TestExportCLI(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	if _, e, rc := run(t, "synth", "qwen3", "-o", ck); rc != 0 {
		t.Fatalf("synth: %s", e)
	}
	a, g, b := filepath.Join(dir, "a.mlb"), filepath.Join(dir, "a.gguf"), filepath.Join(dir, "b.mlb")
	if _, e, rc := run(t, "convert", ck, "-o", a, "--f16-scales"); rc != 0 {
		t.Fatalf("convert: %s", e)
	}
	out, e, rc := run(t, "export", a, "-o", g)
	if rc != 0 || !strings.Contains(out, "wrote "+g+": qwen3") || !strings.Contains(out, "a.mlt") {
		t.Fatalf("export: exit %d, %q %q", rc, out, e)
	}
	if out, _, rc := run(t, "inspect", g); rc != 0 || !strings.Contains(out, "valid GGUF file (version 3), qwen3") {
		t.Fatalf("inspect: exit %d, %q", rc, out)
	}
	if _, e, rc := run(t, "convert", g, "-o", b); rc != 0 {
		t.Fatalf("convert GGUF: %s", e)
	}
	for _, p := range [][2]string{{a, b}, {filepath.Join(dir, "a.mlt"), filepath.Join(dir, "b.mlt")}} {
		x, _ := os.ReadFile(p[0])
		y, _ := os.ReadFile(p[1])
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s and %s differ", p[0], p[1])
		}
	}
	// Usage errors exit 2.
	for _, args := range [][]string{{"export", a}, {"export", a, "-o", a}, {"export"}} {
		if _, _, rc := run(t, args...); rc != 2 {
			t.Errorf("%v: exit %d, want 2", args, rc)
		}
	}
	// A missing model or a file that is not one exits 1.
	if _, e, rc := run(t, "export", g, "-o", filepath.Join(dir, "x.gguf")); rc != 1 || !strings.Contains(e, "ML_E_FORMAT") {
		t.Errorf("export of a GGUF: exit %d, %q", rc, e)
	}
}

// TestConvertGGUFStory: the real stories260K.gguf converts and tells the
// story its author published (models README: llama2.c doc/stories260K.md,
// greedy from BOS); Q8_0 follows it for the first paragraph.
func TestConvertGGUFStory(t *testing.T) {
	src := testenv.Model(t, "stories260K.gguf")
	m := filepath.Join(t.TempDir(), "s.mlb")
	out, e, rc := run(t, "convert", src, "-o", m)
	if rc != 0 || !strings.Contains(out, "wrote "+m+": llama (llama), Q8_0") || !strings.Contains(out, "172 padded to 192") {
		t.Fatalf("convert: exit %d, %q %q", rc, out, e)
	}
	out, e, rc = run(t, "run", m, "--temp", "0", "-n", "60", "--no-huge-pages")
	const want = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball."
	if rc != 0 || !strings.HasPrefix(out, want) {
		t.Fatalf("run: exit %d, %q %q; want it to start %q", rc, out, e, want)
	}
}
