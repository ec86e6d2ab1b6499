package hubtest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// HFJS runs hub/testdata/hfjs/interop.mjs with @huggingface/hub (npm,
// 2.17.5, installed into hub/testdata/hfjs/node_modules by scripts/test.sh)
// and decodes its answer into v; the test skips without node or the
// package.
func HFJS(t testing.TB, v any, args ...string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found")
	}
	_, self, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(self), "..", "testdata", "hfjs")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@huggingface", "hub", "package.json")); err != nil {
		t.Skip("@huggingface/hub not installed: run scripts/test.sh, or npm install in hub/testdata/hfjs")
	}
	cmd := exec.Command(node, append([]string{"interop.mjs"}, args...)...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("node interop.mjs %v: %v\n%s%s", args, err, out.String(), errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	res, ok := strings.CutPrefix(lines[len(lines)-1], "RESULT ")
	if !ok {
		t.Fatalf("no RESULT line in %q", out.String())
	}
	if err := json.Unmarshal([]byte(res), v); err != nil {
		t.Fatalf("%v in %s", err, res)
	}
}
