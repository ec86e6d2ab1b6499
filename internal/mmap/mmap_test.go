package mmap

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestMap(t *testing.T) {
	dir := t.TempDir()
	for _, want := range [][]byte{nil, []byte("GGUF"), bytes.Repeat([]byte{7}, 1<<16+3)} {
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, want, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		b, unmap, _, err := Map(f, int64(len(want)))
		f.Close() // the mapping outlives the descriptor
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, want) {
			t.Errorf("%d bytes mapped, want %d equal bytes", len(b), len(want))
		}
		if err := unmap(); err != nil {
			t.Error(err)
		}
	}
	f, _ := os.Open(filepath.Join(dir, "f"))
	defer f.Close()
	if _, _, _, err := Map(f, -1); err == nil {
		t.Error("a negative size was mapped")
	}
}

// TestMapReadFallback runs the path of systems without mmap (Windows, wasm,
// plan9): the file is read, mapped is false, the bytes are the same.
func TestMapReadFallback(t *testing.T) {
	defer func() { noMap = false }()
	noMap = true
	want := bytes.Repeat([]byte("krafla"), 5000)
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, want, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, unmap, mapped, err := Map(f, int64(len(want)))
	if err != nil || mapped || !bytes.Equal(b, want) {
		t.Fatalf("read fallback: mapped %v, err %v, %d bytes equal %v", mapped, err, len(b), bytes.Equal(b, want))
	}
	if err := unmap(); err != nil {
		t.Error(err)
	}
	if _, _, _, err := Map(f, int64(len(want))+1); err == nil {
		t.Error("reading past the end of the file did not fail")
	}
}
