package mlb

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/krafla/krafla/internal/atomicfile"
)

// Writer streams an .mlb file: the header and layer flags first, then each tensor
// in file order, 64-byte aligned and zero padded, into a temporary file beside
// the destination (internal/atomicfile: .NAME.krafla-tmp-PID-RAND) that Close
// renames into place. It refuses anything the loader would refuse, so a file it
// completes always loads.
type Writer struct {
	path string
	h    Header
	ts   []TensorInfo
	next int
	tmp  *atomicfile.File
	bw   *bufio.Writer
	pos  int64
	err  error // sticky: the first error ends the file
	done bool
	// prepared: complete, synced and verified; only Commit's rename is left
	prepared bool
}

var zeros [Align]byte

// Create validates h (with its Flags when LayerFlags is 1), creates a temporary
// file beside path (removing those a killed writer left for path) and writes
// the header and the layer flags.
func Create(path string, h *Header) (*Writer, error) {
	if err := h.Validate(); err != nil {
		return nil, withPath(err, path)
	}
	if _, _, err := bodyEnd(h); err != nil {
		return nil, withPath(err, path)
	}
	w := &Writer{path: path, h: *h, ts: tensors(h)}
	w.h.Flags = append([]uint8(nil), h.Flags...)
	w.h.Types = append([]uint8(nil), h.Types...)
	tmp, err := atomicfile.Create(path)
	if err != nil {
		return nil, writeErr(path, err)
	}
	w.tmp = tmp
	w.bw = bufio.NewWriterSize(tmp, 1<<20)
	w.write(w.h.Marshal())
	if w.h.LayerFlags != 0 {
		w.next++ // the first tensor is layer_flags
		w.write(w.h.Flags)
		w.pad()
	}
	if w.h.WType == WTypeMixed {
		w.next++ // then type_table
		w.write(w.h.Types)
		w.pad()
	}
	if w.err != nil {
		err := w.err
		w.Abort()
		return nil, err
	}
	return w, nil
}

func (w *Writer) write(b []byte) {
	if w.err != nil {
		return
	}
	if _, err := w.bw.Write(b); err != nil {
		w.err = writeErr(w.path, err)
		return
	}
	w.pos += int64(len(b))
}

func (w *Writer) pad() { w.write(zeros[:(Align-w.pos%Align)%Align]) }

// Path returns the file the writer puts in place.
func (w *Writer) Path() string { return w.path }

// Header returns the header being written.
func (w *Writer) Header() *Header { return &w.h }

// Next returns the tensor expected next; ok is false when all are written.
func (w *Writer) Next() (t TensorInfo, ok bool) {
	if w.next >= len(w.ts) {
		return TensorInfo{}, false
	}
	return w.ts[w.next], true
}

// Remaining returns the tensors still to write, in order.
func (w *Writer) Remaining() []TensorInfo { return w.ts[min(w.next, len(w.ts)):] }

// expect checks that name is the next tensor; it fails the writer otherwise.
func (w *Writer) expect(name string, quant, blocks bool) (TensorInfo, error) {
	if w.err != nil {
		return TensorInfo{}, w.err
	}
	if w.done {
		return TensorInfo{}, fmt.Errorf("mlb: %s: write of %s after Close or Abort", w.path, name)
	}
	t, ok := w.Next()
	switch {
	case !ok:
		w.err = &Error{Code: CodeFormat, Path: w.path, Offset: -1, Tensor: name, Msg: "written after the last tensor"}
	case t.Name != name:
		w.err = &Error{Code: CodeFormat, Path: w.path, Offset: -1, Tensor: name, Msg: "written where " + t.Name + " comes next"}
	case quant != t.Type.Quantized():
		w.err = &Error{Code: CodeFormat, Path: w.path, Offset: -1, Tensor: name, Msg: fmt.Sprintf("is %v, written with the wrong method", t.Type)}
	case quant && t.Type.Blocked() != blocks:
		w.err = &Error{Code: CodeFormat, Path: w.path, Offset: -1, Tensor: name, Msg: fmt.Sprintf("is %v, written with the wrong method", t.Type)}
	}
	return t, w.err
}

// WriteF32 writes the next tensor, an F32 one of Rows × Cols values.
func (w *Writer) WriteF32(name string, v []float32) error {
	t, err := w.expect(name, false, false)
	if err != nil {
		return err
	}
	if int64(len(v)) != t.Elems() {
		w.err = &Error{Code: CodeShape, Path: w.path, Offset: -1, Tensor: name, Msg: fmt.Sprintf("%d values, want %d", len(v), t.Elems())}
		return w.err
	}
	var buf [4096]byte
	for len(v) > 0 {
		n := min(len(v), len(buf)/4)
		for i, x := range v[:n] {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(x))
		}
		w.write(buf[:4*n])
		v = v[n:]
	}
	w.pad()
	w.next++
	return w.err
}

// WriteMatrix writes the next tensor, a quantized one: the quants (Q8_0: Rows ×
// Cols int8 bytes, none equal to -128; Q4_0: Rows × Cols / 2 bytes) and the
// scales, already encoded little-endian as f32 or, with scale_f16, f16.
func (w *Writer) WriteMatrix(name string, q, scales []byte) error {
	t, err := w.expect(name, true, false)
	if err != nil {
		return err
	}
	qn := t.Elems()
	if t.Type == Q4_0 {
		qn /= 2
	}
	sn := t.Elems() / BlockSize * 4
	if w.h.ScaleF16 != 0 {
		sn /= 2
	}
	switch {
	case int64(len(q)) != qn:
		w.err = &Error{Code: CodeShape, Path: w.path, Offset: -1, Tensor: name, Msg: fmt.Sprintf("%v %d×%d: %d quant bytes, want %d", t.Type, t.Rows, t.Cols, len(q), qn)}
	case int64(len(scales)) != sn:
		w.err = &Error{Code: CodeShape, Path: w.path, Offset: -1, Tensor: name, Msg: fmt.Sprintf("%v %d×%d: %d scale bytes, want %d", t.Type, t.Rows, t.Cols, len(scales), sn)}
	case t.Type == Q8_0:
		if j := findMinus128(q); j >= 0 {
			w.err = &Error{Code: CodeFormat, Path: w.path, Offset: -1, Tensor: name,
				Msg: fmt.Sprintf("Q8_0 quant at row %d, column %d is -128 (quants must be in [-127, 127])", j/t.Cols, j%t.Cols)}
		}
	}
	if w.err != nil {
		return w.err
	}
	w.write(q)
	w.pad()
	w.write(scales)
	w.pad()
	w.next++
	return w.err
}

// WriteBlocks writes the next tensor, one of a Blocked type (Q4_K, IQ4_XS, …):
// Rows × Cols / BlockElems ggml blocks of BlockBytes each, as GGUF stores them.
func (w *Writer) WriteBlocks(name string, b []byte) error {
	t, err := w.expect(name, true, true)
	if err != nil {
		return err
	}
	n := int64(t.Rows) * int64(t.Cols/t.Type.BlockElems()) * int64(t.Type.BlockBytes())
	if int64(len(b)) != n {
		w.err = &Error{Code: CodeShape, Path: w.path, Offset: -1, Tensor: name, Msg: fmt.Sprintf("%v %d×%d: %d block bytes, want %d", t.Type, t.Rows, t.Cols, len(b), n)}
		return w.err
	}
	w.write(b)
	w.pad()
	w.next++
	return w.err
}

// Close checks that every tensor was written, flushes and syncs the temporary
// file, verifies it with Open (every check of the loader) and only then renames
// it into place. On any error the temporary file is removed.
func (w *Writer) Close() error {
	if w.done {
		return w.err
	}
	if err := w.Prepare(); err != nil {
		return err
	}
	return w.Commit()
}

// Prepare is Close without the rename: the complete file is synced and
// verified, and waits beside the destination for Commit (or Abort). A model
// whose tokenizer must change with it is prepared, then the tokenizer, and
// only then are both renamed (internal/pair). On any error the temporary file
// is removed.
func (w *Writer) Prepare() error {
	if w.done || w.prepared {
		if w.err != nil {
			return w.err
		}
		return fmt.Errorf("mlb: %s: Prepare after Prepare, Close or Abort", w.path)
	}
	if w.err == nil && w.next < len(w.ts) {
		w.err = &Error{Code: CodeFormat, Path: w.path, Offset: -1,
			Msg: fmt.Sprintf("closed with %d tensors unwritten, next %s", len(w.ts)-w.next, w.ts[w.next].Name)}
	}
	if w.err == nil {
		if err := w.bw.Flush(); err != nil {
			w.err = writeErr(w.path, err)
		}
	}
	if w.err == nil {
		// Verify with every check of the loader before the file replaces
		// anything at w.path, so a file that fails never lands there.
		err := w.tmp.Prepare(func(tmp string) error {
			f, err := Open(tmp)
			if err != nil {
				var e *Error
				if errors.As(err, &e) {
					e.Path = w.path
					e.Msg = "written file fails verification: " + e.Msg
				}
				return err
			}
			return f.Close()
		})
		var e *Error
		if err != nil && !errors.As(err, &e) {
			err = writeErr(w.path, err)
		}
		w.err = err
	}
	if w.err != nil {
		err := w.err
		w.Abort()
		w.err = err
		return err
	}
	w.prepared = true
	return nil
}

// Commit renames the file Prepare verified into place.
func (w *Writer) Commit() error {
	if w.done || !w.prepared {
		if w.err != nil {
			return w.err
		}
		return fmt.Errorf("mlb: %s: Commit without Prepare, or after Close or Abort", w.path)
	}
	if err := w.tmp.Rename(); err != nil {
		w.err = writeErr(w.path, err)
		w.done = true
		return w.err
	}
	w.done = true
	return nil
}

// Abort removes the temporary file; the destination is untouched. It is safe
// after Close.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	if w.err == nil {
		w.err = errors.New("mlb: writer aborted")
	}
	w.tmp.Abort()
}
