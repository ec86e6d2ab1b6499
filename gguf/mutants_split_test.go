package gguf_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/gguf"
)

// writeGGUF writes a file of the given keys and one F32 tensor of 4 values
// per name.
func writeGGUF(t *testing.T, path string, kvs []gguf.KV, names ...string) {
	t.Helper()
	var ts []gguf.TensorInfo
	for _, n := range names {
		ts = append(ts, gguf.TensorInfo{Name: n, Type: gguf.F32, Shape: []uint64{4}})
	}
	w, err := gguf.Create(path, kvs, ts)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := w.WriteTensor(n, make([]byte, 16)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func splitKeys(no, count uint16, total int32) []gguf.KV {
	kvs := []gguf.KV{{Key: gguf.KeySplitNo, Value: gguf.Uint16(no)}, {Key: gguf.KeySplitCount, Value: gguf.Uint16(count)}}
	if total >= 0 {
		kvs = append(kvs, gguf.KV{Key: gguf.KeySplitTensors, Value: gguf.Int32(total)})
	}
	return kvs
}

// TestOpenSplitSmall: OpenSplit on small sets written here (no shared data):
// split.count 1 is one file, 65535 is a valid count; every rule's error is
// at offset -1 and says the numbers; a later split that repeats the total
// agrees; Close releases every file's mapping.
func TestOpenSplitSmall(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "one.gguf")
	writeGGUF(t, one, []gguf.KV{{Key: gguf.KeySplitCount, Value: gguf.Uint16(1)}}, "a")
	f, err := gguf.OpenSplit(one)
	if err != nil || f.Splits != nil || len(f.Tensors) != 1 {
		t.Fatalf("split.count 1: %v", err)
	}
	f.Close()

	for _, c := range []struct {
		name  string
		file  string
		kvs   []gguf.KV
		other []gguf.KV // the second split's keys, nil for no second file
		kind  error
		want  string
	}{
		{"65535 splits", "m.gguf", splitKeys(0, 0xffff, 1), nil, gguf.ErrFormat, "not named PREFIX-00001-of-65535.gguf"},
		{"no split.no", "m.gguf", splitKeys(0, 3, 1)[1:], nil, gguf.ErrFormat, "missing: split.count says the file is one of 3 splits, but not which"},
		{"later split", "m-00002-of-00003.gguf", splitKeys(1, 3, 1), nil, gguf.ErrFormat, "this is split 2 of 3: give the first split, " + filepath.Join(dir, "m-00001-of-00003.gguf")},
		{"no total", "p-00001-of-00002.gguf", splitKeys(0, 2, -1), nil, gguf.ErrFormat, "missing: the first of 2 splits must say how many tensors"},
		{"second missing", "q-00001-of-00002.gguf", splitKeys(0, 2, 2), nil, gguf.ErrIO, "split 2 of 2 is missing"},
		{"second misnumbered", "r-00001-of-00002.gguf", splitKeys(0, 2, 2), splitKeys(0, 2, 2), gguf.ErrFormat, "the file says it is split 1, its name says 2 of 2"},
		{"total wrong", "s-00001-of-00002.gguf", splitKeys(0, 2, 3), splitKeys(1, 2, -1), gguf.ErrFormat, "the 2 splits hold 2 tensors, the key says 3"},
	} {
		path := filepath.Join(dir, c.file)
		writeGGUF(t, path, c.kvs, "a")
		if c.other != nil {
			writeGGUF(t, strings.Replace(path, "00001-of", "00002-of", 1), c.other, "b")
		}
		f, err := gguf.OpenSplit(path)
		if err == nil {
			f.Close()
		}
		var e *gguf.Error
		if !errors.As(err, &e) || !errors.Is(err, c.kind) || e.Offset != -1 || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "(at offset") {
			t.Errorf("%s: got %v, want %v with %q at offset -1", c.name, err, c.kind, c.want)
		}
	}

	// A good set of two whose second split repeats the total.
	p1, p2 := filepath.Join(dir, "g-00001-of-00002.gguf"), filepath.Join(dir, "g-00002-of-00002.gguf")
	writeGGUF(t, p1, splitKeys(0, 2, 3), "a", "b")
	writeGGUF(t, p2, splitKeys(1, 2, 3), "c")
	f, err = gguf.OpenSplit(p1)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tensors) != 3 || f.Tensor("c") == nil || f.Tensor("c").Split != 1 || len(f.Splits) != 2 {
		t.Errorf("set of two: %d tensors, splits %v", len(f.Tensors), f.Splits)
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil || !f.Mapped {
		f.Close()
		t.Skipf("the mappings cannot be checked here (/proc/self/maps: %v; mapped %v)", err, f.Mapped)
	}
	for _, p := range []string{p1, p2} {
		if !strings.Contains(string(maps), p) {
			t.Errorf("%s is not mapped while open", p)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	maps, _ = os.ReadFile("/proc/self/maps")
	for _, p := range []string{p1, p2} {
		if strings.Contains(string(maps), p) {
			t.Errorf("%s is still mapped after Close", p)
		}
	}
}
