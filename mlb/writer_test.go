package mlb_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/internal/testenv"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlb/mlbtest"
)

// TestWriterRefuses: each misuse fails with a message naming the tensor and
// leaves neither the destination nor a temporary file behind.
func TestWriterRefuses(t *testing.T) {
	h := mlbtest.Base()
	h.NLayers = 1
	for _, c := range []struct {
		name string
		do   func(w *mlb.Writer) error
		want string
	}{
		{"wrong name", func(w *mlb.Writer) error { return w.WriteMatrix("blk.0.wq", make([]byte, 64*67), make([]byte, 4*2*67)) }, "where tok_emb comes next"},
		{"wrong method", func(w *mlb.Writer) error { return w.WriteF32("tok_emb", make([]float32, 67*64)) }, "wrong method"},
		{"short quants", func(w *mlb.Writer) error {
			return w.WriteMatrix("tok_emb", make([]byte, 64*67-1), make([]byte, 4*2*67))
		}, "quant bytes"},
		{"short scales", func(w *mlb.Writer) error {
			return w.WriteMatrix("tok_emb", make([]byte, 64*67), make([]byte, 4*2*67-4))
		}, "scale bytes"},
		{"-128", func(w *mlb.Writer) error {
			q := make([]byte, 64*67)
			q[64*3+2] = 0x80
			return w.WriteMatrix("tok_emb", q, make([]byte, 4*2*67))
		}, "row 3, column 2 is -128"},
		{"f32 length", func(w *mlb.Writer) error {
			if err := w.WriteMatrix("tok_emb", make([]byte, 64*67), make([]byte, 4*2*67)); err != nil {
				return err
			}
			return w.WriteF32("blk.0.attn_norm", make([]float32, 63))
		}, "blk.0.attn_norm: 63 values, want 64"},
		{"incomplete", func(w *mlb.Writer) error {
			return w.WriteMatrix("tok_emb", make([]byte, 64*67), make([]byte, 4*2*67))
		}, "unwritten, next blk.0.attn_norm"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "m.mlb")
			w, err := mlb.Create(path, &h)
			if err != nil {
				t.Fatal(err)
			}
			err = c.do(w)
			if err == nil {
				err = w.Close()
			} else if err2 := w.Close(); err2 == nil {
				t.Fatal("Close after a failed write succeeded")
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
			if mlb.CodeOf(err) == 0 || !strings.Contains(err.Error(), path) {
				t.Errorf("got %v, want an *mlb.Error naming %s", err, path)
			}
			if got := testenv.DirNames(t, dir); len(got) != 0 {
				t.Fatalf("left behind %v, want nothing", got)
			}
		})
	}
}

// TestWriterAtomic: an existing destination is untouched until Close, and
// Abort removes the temporary file.
func TestWriterAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.mlb")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := mlbtest.Base()
	w, err := mlb.Create(path, &h)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(testenv.DirNames(t, dir)); got != 2 {
		t.Fatalf("got %d entries while writing, want 2 (old file and temporary)", got)
	}
	w.Abort()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "old" {
		t.Fatalf("destination changed: %q, %v", b, err)
	}
	if got := testenv.DirNames(t, dir); len(got) != 1 {
		t.Fatalf("got %v after Abort, want only m.mlb", got)
	}
	p := mlbtest.Write(t, dir, h, 1)
	if err := os.Rename(p, path); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got&0o044 == 0 {
		t.Errorf("mode %v: the model is not readable by others", got)
	}
}

// TestWriterNext lists exactly Tensors' order, and the layer flags are written
// by Create (never asked for).
func TestWriterNext(t *testing.T) {
	h := mlbtest.CaseHeader(t, "gemma3_local_rope")
	ts, err := mlb.Tensors(&h)
	if err != nil {
		t.Fatal(err)
	}
	if ts[0].Name != "layer_flags" || ts[0].Type != mlb.U8 {
		t.Fatalf("first tensor %v, want layer_flags U8", ts[0])
	}
	w, err := mlb.Create(filepath.Join(t.TempDir(), "m.mlb"), &h)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	got, ok := w.Next()
	if !ok || got != ts[1] {
		t.Fatalf("Next got %v, want %v", got, ts[1])
	}
	if got := len(w.Remaining()); got != len(ts)-1 {
		t.Fatalf("Remaining got %d, want %d", got, len(ts)-1)
	}
}

func TestCreateIO(t *testing.T) {
	h := mlbtest.Base()
	_, err := mlb.Create(filepath.Join(t.TempDir(), "no", "such", "dir", "m.mlb"), &h)
	wantCode(t, err, mlb.CodeIO, mlb.ErrIO)
}
