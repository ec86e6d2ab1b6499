package gguf_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/krafla/krafla/gguf"
	"github.com/krafla/krafla/gguf/gguftest"
	"github.com/krafla/krafla/internal/testenv"
)

// sameModel checks that the split set opened as one File holds the
// source's metadata (less the split keys) and its tensors, in order, byte
// for byte.
func sameModel(t *testing.T, src string, got *gguf.File) {
	t.Helper()
	want, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	var keys []string
	for _, kv := range got.KVs {
		if strings.HasPrefix(kv.Key, "split.") {
			continue
		}
		keys = append(keys, kv.Key)
		if w, ok := want.Lookup(kv.Key); !ok || !reflect.DeepEqual(w, kv.Value) {
			t.Errorf("key %s = %v, want %v", kv.Key, kv.Value, w)
		}
	}
	if len(keys) != len(want.KVs) {
		t.Errorf("%d keys, want %d", len(keys), len(want.KVs))
	}
	if len(got.Tensors) != len(want.Tensors) {
		t.Fatalf("%d tensors, want %d", len(got.Tensors), len(want.Tensors))
	}
	for i, w := range want.Tensors {
		g := got.Tensors[i]
		if g.Name != w.Name || g.Type != w.Type || !reflect.DeepEqual(g.Shape, w.Shape) || !bytes.Equal(g.Data, w.Data) {
			t.Errorf("tensor %d: %s %v %v, want %s %v %v (or its data differs)", i, g.Name, g.Type, g.Shape, w.Name, w.Type, w.Shape)
		}
		if got.Tensor(w.Name) == nil || got.Tensor(w.Name).Name != w.Name {
			t.Errorf("Tensor(%q) not found", w.Name)
		}
	}
}

func TestOpenSplit(t *testing.T) {
	src := testenv.Model(t, "stories260K.gguf")
	dir := t.TempDir()
	paths, err := gguftest.Split(src, filepath.Join(dir, "stories"), 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(paths[2]) != "stories-00003-of-00003.gguf" {
		t.Fatalf("split names %v", paths)
	}
	f, err := gguf.OpenSplit(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !reflect.DeepEqual(f.Splits, paths) {
		t.Errorf("Splits = %v, want %v", f.Splits, paths)
	}
	sameModel(t, src, f)
	seen := map[int]bool{}
	for i, tn := range f.Tensors {
		seen[tn.Split] = true
		if i > 0 && tn.Split < f.Tensors[i-1].Split {
			t.Errorf("tensor %s in split %d after one in split %d", tn.Name, tn.Split, f.Tensors[i-1].Split)
		}
	}
	if len(seen) != 3 {
		t.Errorf("tensors lie in splits %v, want 0, 1 and 2", seen)
	}
	// One file is itself.
	g, err := gguf.OpenSplit(src)
	if err != nil || g.Splits != nil || len(g.Tensors) != len(f.Tensors) {
		t.Fatalf("OpenSplit of one file: %v, %v", g, err)
	}
	g.Close()
	// One split alone opens with Open (inspect shows it as it is).
	h, err := gguf.Open(paths[1])
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := h.Uint(gguf.KeySplitNo); n != 1 || len(h.Tensors) == 0 || len(h.Tensors) >= len(f.Tensors) {
		t.Errorf("split 2 alone: split.no %d, %d tensors", n, len(h.Tensors))
	}
	h.Close()
}

func TestSplitName(t *testing.T) {
	for _, tc := range []struct {
		path, prefix string
		no, count    int
		ok           bool
	}{
		{"/m/Qwen-Q4_K_M-00001-of-00003.gguf", "/m/Qwen-Q4_K_M", 1, 3, true},
		{"a-00012-of-00020.gguf", "a", 12, 20, true},
		{"a-0001-of-0003.gguf", "", 0, 0, false},
		{"a-00001-of-00003.GGUF", "", 0, 0, false}, // llama.cpp's suffix is exact
		{"-00001-of-00003.gguf", "", 0, 0, false},
		{"a.gguf", "", 0, 0, false},
	} {
		prefix, no, count, ok := gguf.SplitName(tc.path)
		if prefix != tc.prefix || no != tc.no || count != tc.count || ok != tc.ok {
			t.Errorf("SplitName(%q) = %q, %d, %d, %v; want %q, %d, %d, %v", tc.path, prefix, no, count, ok, tc.prefix, tc.no, tc.count, tc.ok)
		}
		if ok && gguf.SplitPath(prefix, no, count) != tc.path {
			t.Errorf("SplitPath(%q, %d, %d) = %q, want %q", prefix, no, count, gguf.SplitPath(prefix, no, count), tc.path)
		}
	}
}

// setKey returns an edit that sets (or, with a zero Value, removes) key in split i.
func setKey(i int, key string, v gguf.Value) func(int, []gguf.KV) []gguf.KV {
	return func(j int, kvs []gguf.KV) []gguf.KV {
		if j != i {
			return kvs
		}
		var out []gguf.KV
		for _, kv := range kvs {
			if kv.Key != key {
				out = append(out, kv)
			}
		}
		if v.Type != 0 || v.Interface() != nil {
			out = append(out, gguf.KV{Key: key, Value: v})
		}
		return out
	}
}

// TestOpenSplitErrors plants one fault per rule; each error is the
// sentinel's kind, names the file at fault and says the rule.
func TestOpenSplitErrors(t *testing.T) {
	src := testenv.Model(t, "stories260K.gguf")
	none := gguf.Value{}
	for _, tc := range []struct {
		name   string
		edit   func(int, []gguf.KV) []gguf.KV
		mess   func(t *testing.T, paths []string) string // returns the path to open
		kind   error
		file   int // the split the error names (1-based; 0: none checked)
		phrase string
	}{
		{name: "later split given", mess: func(t *testing.T, p []string) string { return p[1] }, kind: gguf.ErrFormat, file: 2, phrase: "give the first split"},
		{name: "missing split", mess: func(t *testing.T, p []string) string { os.Remove(p[2]); return p[0] }, kind: gguf.ErrIO, file: 3, phrase: "split 3 of 3 is missing"},
		{name: "renamed first", mess: func(t *testing.T, p []string) string {
			q := filepath.Join(filepath.Dir(p[0]), "model.gguf")
			if err := os.Rename(p[0], q); err != nil {
				t.Fatal(err)
			}
			return q
		}, kind: gguf.ErrFormat, phrase: "not named PREFIX-00001-of-00003.gguf"},
		{name: "numbered wrong", edit: setKey(1, gguf.KeySplitNo, gguf.Uint16(2)), kind: gguf.ErrFormat, file: 2, phrase: "says it is split 3, its name says 2 of 3"},
		{name: "no number", edit: setKey(2, gguf.KeySplitNo, none), kind: gguf.ErrFormat, file: 3, phrase: `"split.no": missing`},
		{name: "counted wrong", edit: setKey(2, gguf.KeySplitCount, gguf.Uint16(4)), kind: gguf.ErrFormat, file: 3, phrase: "has 4 splits, the first"},
		{name: "tensor total wrong", edit: setKey(0, gguf.KeySplitTensors, gguf.Int32(1000)), kind: gguf.ErrFormat, file: 2, phrase: "says 1000"},
		{name: "tensor total wrong everywhere", edit: func(i int, kvs []gguf.KV) []gguf.KV {
			return setKey(i, gguf.KeySplitTensors, gguf.Int32(1000))(i, kvs)
		}, kind: gguf.ErrFormat, file: 1, phrase: "the key says 1000"},
		{name: "no tensor total", edit: setKey(0, gguf.KeySplitTensors, none), kind: gguf.ErrFormat, file: 1, phrase: "must say how many tensors"},
		{name: "count not a number", edit: setKey(0, gguf.KeySplitCount, gguf.String("3")), kind: gguf.ErrFormat, file: 1, phrase: "not an integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			paths, err := gguftest.Split(src, filepath.Join(dir, "m"), 3, tc.edit)
			if err != nil {
				t.Fatal(err)
			}
			open := paths[0]
			if tc.mess != nil {
				open = tc.mess(t, paths)
			}
			f, err := gguf.OpenSplit(open)
			if err == nil {
				f.Close()
				t.Fatal("opened")
			}
			if !errors.Is(err, tc.kind) {
				t.Errorf("err = %v, want %v", err, tc.kind)
			}
			var ge *gguf.Error
			if !errors.As(err, &ge) {
				t.Fatalf("err %T is not a *gguf.Error", err)
			}
			if tc.file > 0 && ge.Path != paths[tc.file-1] {
				t.Errorf("error names %s, want %s: %v", ge.Path, paths[tc.file-1], err)
			}
			if !strings.Contains(err.Error(), tc.phrase) {
				t.Errorf("err = %v, want it to say %q", err, tc.phrase)
			}
			if tc.name == "missing split" && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("missing split: %v does not match fs.ErrNotExist", err)
			}
		})
	}
}

// TestOpenSplitLlamaCpp reads a set llama.cpp's own llama-gguf-split wrote
// (LLAMA_GGUF_SPLIT, else the benchmark build's), skipped without one.
func TestOpenSplitLlamaCpp(t *testing.T) {
	tool := os.Getenv("LLAMA_GGUF_SPLIT")
	if tool == "" {
		cache, _ := os.UserCacheDir()
		tool = filepath.Join(cache, "krafla", "bench", "llama", "build", "bin", "llama-gguf-split")
	}
	if _, err := os.Stat(tool); err != nil {
		t.Skipf("no llama-gguf-split at %s (set LLAMA_GGUF_SPLIT)", tool)
	}
	src := testenv.Model(t, "stories260K.gguf")
	prefix := filepath.Join(t.TempDir(), "ll")
	out, err := exec.Command(tool, "--split", "--split-max-tensors", "20", src, prefix).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", tool, err, out)
	}
	paths, _ := filepath.Glob(prefix + "-*-of-*.gguf")
	if len(paths) < 2 {
		t.Fatalf("llama-gguf-split wrote %v", paths)
	}
	f, err := gguf.OpenSplit(gguf.SplitPath(prefix, 1, len(paths)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.Splits) != len(paths) {
		t.Errorf("%d splits opened, %d written", len(f.Splits), len(paths))
	}
	sameModel(t, src, f)
}

// TestOpenSplitDuplicate: a tensor in two files of a set is refused,
// naming the second file and the first.
func TestOpenSplitDuplicate(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "d")
	data := make([]byte, 16)
	for i := range 2 {
		kvs := []gguf.KV{{Key: gguf.KeySplitNo, Value: gguf.Uint16(uint16(i))}, {Key: gguf.KeySplitCount, Value: gguf.Uint16(2)},
			{Key: gguf.KeySplitTensors, Value: gguf.Int32(2)}}
		w, err := gguf.Create(gguf.SplitPath(prefix, i+1, 2), kvs, []gguf.TensorInfo{{Name: "w", Type: gguf.F32, Shape: []uint64{4}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteTensor("w", data); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	_, err := gguf.OpenSplit(gguf.SplitPath(prefix, 1, 2))
	var ge *gguf.Error
	if !errors.As(err, &ge) || !errors.Is(err, gguf.ErrFormat) || ge.Path != gguf.SplitPath(prefix, 2, 2) || ge.Tensor != "w" ||
		!strings.Contains(err.Error(), "also in split 1 ("+gguf.SplitPath(prefix, 1, 2)+")") {
		t.Errorf("err = %v, want tensor w refused in split 2 as also in split 1", err)
	}
}
