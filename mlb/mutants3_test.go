package mlb_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlb/mlbtest"
)

// The tests of this file come from the mutants gremlins left alive in
// writer.go and validate.go:322 after mutants2_test.go (docs/RELIABILITY.md,
// "Mutation testing", session 8): each pins behaviour no other test did.

// zeroTensor writes the next tensor of w with zero quants and scales (or the
// values f gives, for F32 tensors); f may be nil for zeros.
func zeroTensor(t *testing.T, w *mlb.Writer, f func(i int) float32) mlb.TensorInfo {
	t.Helper()
	ti, ok := w.Next()
	if !ok {
		t.Fatal("no tensor left")
	}
	left := len(w.Remaining())
	var err error
	switch {
	case ti.Type.Blocked():
		err = w.WriteBlocks(ti.Name, make([]byte, ti.Elems()/int64(ti.Type.BlockElems())*int64(ti.Type.BlockBytes())))
	case ti.Type.Quantized():
		q := make([]byte, ti.Elems())
		if ti.Type == mlb.Q4_0 {
			q = q[:len(q)/2]
			for i := range q {
				q[i] = 0x88 // the zero code
			}
		}
		err = w.WriteMatrix(ti.Name, q, make([]byte, ti.Elems()/mlb.BlockSize*int64(4>>w.Header().ScaleF16)))
	default:
		v := make([]float32, ti.Elems())
		if f != nil {
			for i := range v {
				v[i] = f(i)
			}
		}
		err = w.WriteF32(ti.Name, v)
	}
	if err != nil {
		t.Fatalf("%s: %v", ti.Name, err)
	}
	if n := len(w.Remaining()); n != left-1 {
		t.Fatalf("%s written: %d tensors left, want %d", ti.Name, n, left-1) // else the callers' loops never end
	}
	return ti
}

// checkNoOffset fails unless err is an *mlb.Error of code with Offset -1,
// containing want and naming no offset.
func checkNoOffset(t *testing.T, name string, err error, code mlb.Code, want string) {
	t.Helper()
	var e *mlb.Error
	if !errors.As(err, &e) || e.Code != code || e.Offset != -1 || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "offset") {
		t.Errorf("%s: got %v (%+v), want %v with %q at offset -1 and no offset in the text", name, err, e, code, want)
	}
}

// TestWriterShapeErrorsHaveNoOffset: the writer's length, -128 and unwritten
// errors concern no byte of a file (Offset -1), and their text gives the
// lengths, the position of the -128 and the count of tensors left.
func TestWriterShapeErrorsHaveNoOffset(t *testing.T) {
	h := mlbtest.Base()
	h.NLayers = 1
	all, err := mlb.Tensors(&h)
	if err != nil {
		t.Fatal(err)
	}
	q := func(n int, at ...int) []byte {
		b := make([]byte, n)
		for _, i := range at {
			b[i] = 0x80
		}
		return b
	}
	for _, c := range []struct {
		name string
		code mlb.Code
		do   func(w *mlb.Writer) error
		want string
	}{
		{"short f32", mlb.CodeShape, func(w *mlb.Writer) error {
			zeroTensor(t, w, nil)
			return w.WriteF32("blk.0.attn_norm", make([]float32, 63))
		}, "tensor blk.0.attn_norm: 63 values, want 64"},
		{"short quants", mlb.CodeShape, func(w *mlb.Writer) error {
			return w.WriteMatrix("tok_emb", q(100), make([]byte, 67*2*4))
		}, "Q8_0 67×64: 100 quant bytes, want 4288"},
		{"short scales", mlb.CodeShape, func(w *mlb.Writer) error {
			return w.WriteMatrix("tok_emb", q(67*64), make([]byte, 7))
		}, "Q8_0 67×64: 7 scale bytes, want 536"},
		{"-128 first", mlb.CodeFormat, func(w *mlb.Writer) error {
			return w.WriteMatrix("tok_emb", q(67*64, 0), make([]byte, 67*2*4))
		}, "quant at row 0, column 0 is -128"},
		{"-128 at row 2, column 5", mlb.CodeFormat, func(w *mlb.Writer) error {
			return w.WriteMatrix("tok_emb", q(67*64, 2*64+5, 3*64), make([]byte, 67*2*4))
		}, "quant at row 2, column 5 is -128"},
		{"none written", mlb.CodeFormat, func(w *mlb.Writer) error { return w.Prepare() },
			"closed with " + strconv.Itoa(len(all)) + " tensors unwritten, next tok_emb"},
		{"short blocks", mlb.CodeShape, nil, "Q4_K 67×256: 5 block bytes, want 9648"},
		{"one written", mlb.CodeFormat, func(w *mlb.Writer) error {
			zeroTensor(t, w, nil)
			return w.Close()
		}, "closed with " + strconv.Itoa(len(all)-1) + " tensors unwritten, next blk.0.attn_norm"},
	} {
		hc, do := h, c.do
		if do == nil { // a mixed file whose tok_emb is Q4_K
			hc = mlbtest.Mixed(mlb.Q4_K)
			do = func(w *mlb.Writer) error {
				// Create wrote type_table: tok_emb comes next
				return w.WriteBlocks("tok_emb", make([]byte, 5))
			}
		}
		path := filepath.Join(t.TempDir(), "m.mlb")
		w, err := mlb.Create(path, &hc)
		if err != nil {
			t.Fatal(err)
		}
		err = do(w)
		w.Abort()
		checkNoOffset(t, c.name, err, c.code, c.want)
		if _, serr := os.Stat(path); !errors.Is(serr, os.ErrNotExist) {
			t.Errorf("%s: %s exists after the error (%v)", c.name, path, serr)
		}
	}
}

// TestWriteF32Chunks: WriteF32 encodes through a 4 KiB buffer, 1024 values at
// a time; norms of 2080 values (two full chunks and a part) read back exactly.
func TestWriteF32Chunks(t *testing.T) {
	h := mlbtest.Base()
	h.NLayers, h.Dim, h.HeadDim, h.WType = 1, 2080, 16, mlb.WTypeQ4_0
	path := filepath.Join(t.TempDir(), "m.mlb")
	w, err := mlb.Create(path, &h)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	val := func(i int) float32 { return float32(i) + 0.25 }
	var f32 []string
	for {
		ti, ok := w.Next()
		if !ok {
			break
		}
		zeroTensor(t, w, val)
		if !ti.Type.Quantized() {
			f32 = append(f32, ti.Name)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := mlb.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f32) == 0 {
		t.Fatal("no F32 tensor")
	}
	for _, name := range f32 {
		v := f.Tensor(name).F32
		if len(v) != 2080 {
			t.Fatalf("%s: %d values, want 2080", name, len(v))
		}
		for i, x := range v {
			if x != val(i) {
				t.Fatalf("%s[%d] = %v, want %v", name, i, x, val(i))
			}
		}
	}
}

// TestPrepareVerificationFails: a file the writer's own checks accept but the
// loader refuses (a nonzero weight in an FFN padding row, which only Open
// checks) fails Prepare with the loader's error, named for the destination and
// marked as a verification failure, and nothing lands at the destination.
func TestPrepareVerificationFails(t *testing.T) {
	h := mlbtest.Base()
	h.NLayers, h.TrueHiddenDim = 1, 81
	dir := t.TempDir()
	path := filepath.Join(dir, "m.mlb")
	w, err := mlb.Create(path, &h)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for {
		ti, ok := w.Next()
		if !ok {
			break
		}
		if ti.Name != "blk.0.w1" {
			zeroTensor(t, w, nil)
			continue
		}
		q := make([]byte, ti.Elems())
		q[81*ti.Cols] = 1 // row 81: padding
		if err := w.WriteMatrix(ti.Name, q, make([]byte, ti.Elems()/mlb.BlockSize*4)); err != nil {
			t.Fatal(err)
		}
	}
	err = w.Prepare()
	var e *mlb.Error
	if !errors.As(err, &e) || e.Code != mlb.CodeFormat || e.Path != path ||
		!strings.HasPrefix(e.Msg, "written file fails verification: ") || !strings.Contains(err.Error(), "blk.0.w1") {
		t.Fatalf("got %v (%+v), want a verification failure of blk.0.w1 at %s", err, e, path)
	}
	if err2 := w.Commit(); err2 != err {
		t.Errorf("Commit after the failure: got %v, want the same error", err2)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 0 {
		t.Errorf("files left in %s: %v", dir, left)
	}
}

// TestCloseAfterAbort: once aborted, Close, Prepare and Commit report the
// abort (none succeeds), and nothing is left in the directory.
func TestCloseAfterAbort(t *testing.T) {
	h := mlbtest.Base()
	dir := t.TempDir()
	w, err := mlb.Create(filepath.Join(dir, "m.mlb"), &h)
	if err != nil {
		t.Fatal(err)
	}
	if err := mlbtest.Fill(w, 1); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	for name, f := range map[string]func() error{"Close": w.Close, "Prepare": w.Prepare, "Commit": w.Commit} {
		if err := f(); err == nil || err.Error() != "mlb: writer aborted" {
			t.Errorf("%s after Abort: got %v, want mlb: writer aborted", name, err)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("files left in %s: %v", dir, left)
	}
}

// TestPaddedFFNTypes: with true_hidden_dim set, the FFN matrices (w1, w3, w2)
// must be Q8_0 or Q4_0, and only they: Q8_0 and Q4_0 FFNs are valid, so is a
// K-quant in any other matrix, and a K-quant w1, w3 or w2 is refused.
func TestPaddedFFNTypes(t *testing.T) {
	base := mlbtest.Mixed(mlb.Q8_0)
	base.TrueHiddenDim = 250
	ts, err := mlb.Tensors(&base)
	if err != nil {
		t.Fatal(err)
	}
	idx := map[string]int{} // matrix name → type table entry
	for _, ti := range ts {
		if ti.Type.Quantized() {
			idx[ti.Name] = len(idx)
		}
	}
	if len(idx) != len(base.Types) {
		t.Fatalf("%d matrices, %d type codes", len(idx), len(base.Types))
	}
	for _, c := range []struct {
		name  string
		types map[string]mlb.DType
		ok    bool
	}{
		{"all Q8_0", nil, true},
		{"Q4_0 FFN", map[string]mlb.DType{"blk.0.w1": mlb.Q4_0, "blk.0.w2": mlb.Q4_0, "blk.1.w3": mlb.Q4_0}, true},
		{"Q4_K elsewhere", map[string]mlb.DType{"tok_emb": mlb.Q4_K, "blk.0.wq": mlb.Q4_K, "blk.1.wo": mlb.Q6_K, "wcls": mlb.Q4_K}, true},
		{"Q4_K w1", map[string]mlb.DType{"blk.1.w1": mlb.Q4_K}, false},
		{"Q6_K w2", map[string]mlb.DType{"blk.0.w2": mlb.Q6_K}, false},
		{"Q4_K w3", map[string]mlb.DType{"blk.0.w3": mlb.Q4_K}, false},
	} {
		h := base
		h.Types = append([]uint8(nil), base.Types...)
		for name, ty := range c.types {
			i, ok := idx[name]
			if !ok {
				t.Fatalf("no matrix %s", name)
			}
			h.Types[i] = mlb.TypeCode(ty)
		}
		err := h.Validate()
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: got %v, want valid", c.name, err)
		case !c.ok && (!errors.Is(err, mlb.ErrFormat) || !strings.Contains(err.Error(), "padded FFN")):
			t.Errorf("%s: got %v, want a padded-FFN format error", c.name, err)
		}
		h.TrueHiddenDim = 0 // without padding every one is valid
		if err := h.Validate(); err != nil {
			t.Errorf("%s without padding: %v", c.name, err)
		}
	}
}
