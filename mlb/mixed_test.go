package mlb_test

import (
	"bytes"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlb/mlbtest"
)

var allMatrixTypes = []mlb.DType{mlb.Q8_0, mlb.Q4_0, mlb.Q4_1, mlb.Q5_0, mlb.Q4_K, mlb.Q5_K, mlb.Q6_K, mlb.IQ4_NL, mlb.IQ4_XS}

// TestMixedRoundTrip writes a mixed file with every matrix type and checks
// that each matrix reads back with its type and exactly the bytes written,
// at the offsets docs/FORMATS.md gives (the type table right after the header,
// the first matrix at 320).
func TestMixedRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, shared := range []uint32{0, 1} {
		h := mlbtest.Mixed(allMatrixTypes...)
		h.SharedClassifier = shared
		h.Types = h.Types[:h.NumMatrices()]
		path := filepath.Join(dir, "mixed.mlb")
		w, err := mlb.Create(path, &h)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewSource(int64(shared)))
		want := map[string][]byte{}
		for {
			ti, ok := w.Next()
			if !ok {
				break
			}
			left := len(w.Remaining())
			switch {
			case ti.Type.Blocked():
				b := mlbtest.RandomBlocks(r, ti.Type, ti.Rows*ti.Cols/ti.Type.BlockElems(), ti.Cols)
				want[ti.Name] = b
				err = w.WriteBlocks(ti.Name, b)
			case ti.Type.Quantized():
				n := ti.Rows * ti.Cols
				if ti.Type == mlb.Q4_0 {
					n /= 2
				}
				q := make([]byte, n)
				for i := range q {
					q[i] = byte(r.Intn(127))
				}
				want[ti.Name] = q
				err = w.WriteMatrix(ti.Name, q, make([]byte, ti.Rows*ti.Cols/32*4))
			default:
				err = w.WriteF32(ti.Name, make([]float32, ti.Rows*ti.Cols))
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := len(w.Remaining()); n != left-1 {
				t.Fatalf("%s written: %d tensors left, want %d", ti.Name, n, left-1) // else the loop never ends
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		raw, _ := os.ReadFile(path)
		if got := raw[44]; got != 3 {
			t.Fatalf("wtype byte %d, want 3", got)
		}
		if !bytes.Equal(raw[256:256+h.NumMatrices()], h.Types) {
			t.Fatalf("type table at 256 is %v, want %v", raw[256:256+h.NumMatrices()], h.Types)
		}
		f, err := mlb.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		mi := 0
		for _, ts := range f.Tensors {
			if !ts.Type.Quantized() {
				continue
			}
			if wt := allMatrixTypes[mi%len(allMatrixTypes)]; ts.Type != wt {
				t.Errorf("%s: type %v, want %v", ts.Name, ts.Type, wt)
			}
			mi++
			if !bytes.Equal(ts.Q, want[ts.Name]) {
				t.Errorf("%s (%v): bytes differ from those written", ts.Name, ts.Type)
			}
			if ts.Type.Blocked() != (ts.D == nil) {
				t.Errorf("%s: D %d scales", ts.Name, len(ts.D))
			}
		}
		if mi != h.NumMatrices() {
			t.Errorf("%d matrices, want %d", mi, h.NumMatrices())
		}
		if a := f.Arrays[1]; a.Name != "tok_emb.q" || a.Offset != 320 {
			t.Errorf("first matrix array %s at %d, want tok_emb.q at 320", a.Name, a.Offset)
		}
		f.Close()
	}
}

// TestMixedRefuses corrupts a valid mixed file and checks each refusal's code,
// tensor and offset.
func TestMixedRefuses(t *testing.T) {
	dir := t.TempDir()
	h := mlbtest.Mixed(mlb.Q4_K, mlb.Q6_K, mlb.IQ4_XS, mlb.Q8_0)
	path := mlbtest.Write(t, dir, h, 1)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mlb.Parse(good); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		edit   func(b []byte) []byte
		want   error
		tensor string
		off    int64
	}{
		{"unknown code", func(b []byte) []byte { b[256+3] = 10; return b }, mlb.ErrFormat, "blk.0.wv", 259},
		{"code 0", func(b []byte) []byte { b[256] = 0; return b }, mlb.ErrFormat, "tok_emb", 256},
		{"code 255", func(b []byte) []byte { b[256+8] = 255; return b }, mlb.ErrFormat, "blk.1.wq", 264},
		{"wtype 4", func(b []byte) []byte { b[44] = 4; return b }, mlb.ErrFormat, "", 44},
		{"q8_mask with wtype 3", func(b []byte) []byte { b[72] = 1; return b }, mlb.ErrFormat, "", 72},
		{"truncated table", func(b []byte) []byte { return b[:258] }, mlb.ErrFormat, "type_table", 256},
		{"truncated body", func(b []byte) []byte { return b[:len(b)-200] }, mlb.ErrFormat, "wcls.d", -2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := mlb.Parse(c.edit(bytes.Clone(good)))
			var e *mlb.Error
			if !errors.Is(err, c.want) || !errors.As(err, &e) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if e.Tensor != c.tensor || (c.off != -2 && e.Offset != c.off) {
				t.Errorf("tensor %q offset %d, want %q %d (%v)", e.Tensor, e.Offset, c.tensor, c.off, err)
			}
			if c.tensor != "" && !strings.Contains(err.Error(), c.tensor) {
				t.Errorf("message does not name %s: %v", c.tensor, err)
			}
		})
	}
}

// TestMixedHeaderRules checks the type-table rules that Validate (and so the
// writer) enforces.
func TestMixedHeaderRules(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(h *mlb.Header)
		want error
		msg  string
	}{
		{"short table", func(h *mlb.Header) { h.Types = h.Types[:3] }, mlb.ErrFormat, "3 codes for 16 matrices"},
		{"table without wtype 3", func(h *mlb.Header) { h.WType = mlb.WTypeQ8_0 }, mlb.ErrFormat, "no type table"},
		{"K-quant on 96 columns", func(h *mlb.Header) { h.Dim, h.NHeads, h.NKVHeads = 96, 6, 2 }, mlb.ErrShape, "whole blocks of 256"},
		{"IQ4_XS in a padded FFN", func(h *mlb.Header) { h.TrueHiddenDim = 250; h.Types[6] = mlb.TypeCode(mlb.IQ4_XS) }, mlb.ErrFormat, "padded FFN"},
	} {
		h := mlbtest.Mixed(mlb.Q4_K, mlb.Q8_0)
		c.edit(&h)
		err := h.Validate()
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want %v with %q", c.name, err, c.want, c.msg)
		}
	}
	// lb and la stay Q8_0.
	h := mlbtest.CaseHeader(t, "qwen35_linear")
	h.WType = mlb.WTypeMixed
	h.Types = make([]uint8, h.NumMatrices())
	for i := range h.Types {
		h.Types[i] = mlb.TypeCode(mlb.Q4_0)
	}
	if err := h.Validate(); !errors.Is(err, mlb.ErrFormat) || !strings.Contains(err.Error(), "lb and la must be Q8_0") {
		t.Errorf("Q4_0 lb: got %v", err)
	}
}

// TestMixedCodes pins the type codes docs/FORMATS.md lists.
func TestMixedCodes(t *testing.T) {
	for code, want := range map[uint8]mlb.DType{1: mlb.Q8_0, 2: mlb.Q4_0, 3: mlb.Q4_1, 4: mlb.Q5_0, 5: mlb.Q4_K,
		6: mlb.Q5_K, 7: mlb.Q6_K, 8: mlb.IQ4_NL, 9: mlb.IQ4_XS} {
		if got, ok := mlb.TypeOfCode(code); !ok || got != want || mlb.TypeCode(want) != code {
			t.Errorf("code %d: %v %v, want %v", code, got, ok, want)
		}
	}
	for _, c := range []uint8{0, 10, 255} {
		if _, ok := mlb.TypeOfCode(c); ok {
			t.Errorf("code %d known", c)
		}
	}
	// Block sizes as ggml defines them (ggml-common.h's static asserts).
	for typ, want := range map[mlb.DType][2]int{mlb.Q4_1: {32, 20}, mlb.Q5_0: {32, 22}, mlb.Q4_K: {256, 144},
		mlb.Q5_K: {256, 176}, mlb.Q6_K: {256, 210}, mlb.IQ4_NL: {32, 18}, mlb.IQ4_XS: {256, 136}} {
		if typ.BlockElems() != want[0] || typ.BlockBytes() != want[1] {
			t.Errorf("%v: %d/%d, want %v", typ, typ.BlockElems(), typ.BlockBytes(), want)
		}
	}
}
