//go:build unix

package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestInspectNotRegular: a FIFO is refused at once (opening it would wait
// for a writer forever), and so is a folder.
func TestInspectNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for path, want := range map[string]string{fifo: "a named pipe, not a regular file", dir: "is a folder"} {
		err := runInspect(path, inspectOptions{}, &bytes.Buffer{})
		if err == nil || !strings.HasPrefix(err.Error(), "ML_E_IO: "+path) || !strings.Contains(err.Error(), want) {
			t.Errorf("inspect %s: got %v, want ML_E_IO naming the path and %q", path, err, want)
		}
	}
}
