package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/krafla/krafla/internal/atomicfile"
)

// Writer writes a GGUF v3 file: Create plans every tensor's offset from the
// list before the first byte and writes the header; WriteTensor then takes
// the tensors' data in that order, and Close verifies the file with Parse's
// every check before it renames the temporary file into place.
type Writer struct {
	path  string
	infos []TensorInfo
	align uint64
	next  int
	tmp   *atomicfile.File
	bw    *bufio.Writer
	pos   uint64 // bytes written to the data section
	err   error  // sticky
	done  bool
}

// Create validates the metadata and tensor list (names, shapes, types, the
// alignment in general.alignment if any), creates a temporary file beside
// path and writes the header. The tensors' Offset and Size are planned here;
// whatever the caller put there is ignored.
func Create(path string, kvs []KV, tensors []TensorInfo) (*Writer, error) {
	w := &Writer{path: path, align: DefaultAlignment}
	hdr, err := w.header(kvs, tensors)
	if err != nil {
		return nil, withPath(err, path)
	}
	tmp, err := atomicfile.Create(path)
	if err != nil {
		return nil, ioErr(path, "cannot write file", err)
	}
	w.tmp = tmp
	w.bw = bufio.NewWriterSize(tmp, 1<<20)
	if _, err := w.bw.Write(hdr); err != nil {
		w.err = ioErr(path, "cannot write file", err)
		w.Abort()
		return nil, w.err
	}
	return w, nil
}

// header plans the layout and encodes everything before the data section.
func (w *Writer) header(kvs []KV, tensors []TensorInfo) ([]byte, error) {
	le := binary.LittleEndian
	b := []byte(Magic)
	b = le.AppendUint32(b, 3)
	b = le.AppendUint64(b, uint64(len(tensors)))
	b = le.AppendUint64(b, uint64(len(kvs)))
	seen := map[string]bool{}
	for _, kv := range kvs {
		if kv.Key == "" || seen[kv.Key] {
			return nil, &Error{Kind: ErrFormat, Offset: -1, Key: kv.Key, Msg: "empty or duplicate key"}
		}
		seen[kv.Key] = true
		if kv.Key == "general.alignment" {
			a, _ := kv.Value.Uint()
			if kv.Value.Type != TypeUint32 || a == 0 || a&(a-1) != 0 {
				return nil, &Error{Kind: ErrFormat, Offset: -1, Key: kv.Key, Msg: "alignment must be a u32 power of two"}
			}
			w.align = a
		}
		b = appendString(b, kv.Key)
		b = le.AppendUint32(b, uint32(kv.Value.Type))
		var err error
		if b, err = appendValue(b, kv.Value, 0); err != nil {
			return nil, &Error{Kind: ErrFormat, Offset: -1, Key: kv.Key, Msg: err.Error()}
		}
	}
	names := map[string]bool{}
	var off uint64
	for _, t := range tensors {
		fail := func(format string, args ...any) error {
			return &Error{Kind: ErrFormat, Offset: -1, Tensor: t.Name, Msg: fmt.Sprintf(format, args...)}
		}
		if t.Name == "" || len(t.Name) > MaxNameLen || names[t.Name] {
			return nil, fail("empty, duplicate or longer than %d bytes", MaxNameLen)
		}
		names[t.Name] = true
		if len(t.Shape) > MaxDims {
			return nil, fail("%d dimensions, at most %d", len(t.Shape), MaxDims)
		}
		info := types[t.Type]
		if info.block == 0 {
			return nil, fail("type %s cannot be written", t.Type)
		}
		elems := uint64(1)
		for _, n := range t.Shape {
			hi, lo := bits.Mul64(elems, n)
			if hi != 0 || lo > math.MaxInt64 {
				return nil, fail("shape %v overflows", t.Shape)
			}
			elems = lo
		}
		if len(t.Shape) > 0 && t.Shape[0]%info.block != 0 {
			return nil, fail("%s row of %d elements is not a multiple of the block size %d", t.Type, t.Shape[0], info.block)
		}
		hi, size := bits.Mul64(elems/info.block, info.bytes)
		if hi != 0 || size > math.MaxInt64/2 {
			return nil, fail("byte size overflows")
		}
		b = appendString(b, t.Name)
		b = le.AppendUint32(b, uint32(len(t.Shape)))
		for _, n := range t.Shape {
			b = le.AppendUint64(b, n)
		}
		b = le.AppendUint32(b, uint32(t.Type))
		b = le.AppendUint64(b, off)
		t.Offset, t.Size = off, size
		w.infos = append(w.infos, t)
		off += size + (w.align-size%w.align)%w.align
	}
	for uint64(len(b))%w.align != 0 {
		b = append(b, 0)
	}
	return b, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

// appendValue encodes v (without its type) after b.
func appendValue(b []byte, v Value, depth int) ([]byte, error) {
	le := binary.LittleEndian
	if v.Type == TypeArray {
		if depth > 0 {
			return nil, errors.New("arrays of arrays are not written (llama.cpp refuses them)")
		}
		b = le.AppendUint32(b, uint32(v.Elem))
		n := v.Len()
		b = le.AppendUint64(b, uint64(n))
		for i := range n {
			var err error
			if b, err = appendValue(b, v.Index(i), depth+1); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
	switch x := v.v.(type) {
	case uint64:
		switch v.Type {
		case TypeUint8:
			return append(b, byte(x)), nil
		case TypeUint16:
			return le.AppendUint16(b, uint16(x)), nil
		case TypeUint32:
			return le.AppendUint32(b, uint32(x)), nil
		case TypeUint64:
			return le.AppendUint64(b, x), nil
		}
	case int64:
		switch v.Type {
		case TypeInt8:
			return append(b, byte(x)), nil
		case TypeInt16:
			return le.AppendUint16(b, uint16(x)), nil
		case TypeInt32:
			return le.AppendUint32(b, uint32(x)), nil
		case TypeInt64:
			return le.AppendUint64(b, uint64(x)), nil
		}
	case float64:
		switch v.Type {
		case TypeFloat32:
			return le.AppendUint32(b, math.Float32bits(float32(x))), nil
		case TypeFloat64:
			return le.AppendUint64(b, math.Float64bits(x)), nil
		}
	case bool:
		if x {
			return append(b, 1), nil
		}
		return append(b, 0), nil
	case string:
		return appendString(b, x), nil
	}
	return nil, fmt.Errorf("value of type %s holds %T", v.Type, v.v)
}

// Tensors returns the planned tensor list, with offsets and sizes.
func (w *Writer) Tensors() []TensorInfo { return w.infos }

// WriteTensor writes the next tensor's data, exactly its planned size.
func (w *Writer) WriteTensor(name string, data []byte) error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return fmt.Errorf("gguf: %s: write of %s after Close or Abort", w.path, name)
	}
	switch {
	case w.next >= len(w.infos):
		w.err = &Error{Kind: ErrFormat, Path: w.path, Offset: -1, Tensor: name, Msg: "written after the last tensor"}
	case w.infos[w.next].Name != name:
		w.err = &Error{Kind: ErrFormat, Path: w.path, Offset: -1, Tensor: name, Msg: "written where " + w.infos[w.next].Name + " comes next"}
	case uint64(len(data)) != w.infos[w.next].Size:
		w.err = &Error{Kind: ErrFormat, Path: w.path, Offset: -1, Tensor: name,
			Msg: fmt.Sprintf("%d bytes, want %d for %s %v", len(data), w.infos[w.next].Size, w.infos[w.next].Type, w.infos[w.next].Shape)}
	}
	if w.err != nil {
		return w.err
	}
	if w.pos != w.infos[w.next].Offset {
		w.err = fmt.Errorf("gguf: %s: internal error: tensor %s at %#x, planned %#x", w.path, name, w.pos, w.infos[w.next].Offset)
		return w.err
	}
	pad := (w.align - uint64(len(data))%w.align) % w.align
	if _, err := w.bw.Write(data); err != nil {
		w.err = ioErr(w.path, "cannot write file", err)
		return w.err
	}
	for range pad {
		if err := w.bw.WriteByte(0); err != nil {
			w.err = ioErr(w.path, "cannot write file", err)
			return w.err
		}
	}
	w.pos += uint64(len(data)) + pad
	w.next++
	return nil
}

// Close checks that every tensor was written, syncs the file, verifies it
// with Open and renames it into place (internal/atomicfile). On any error the
// temporary file is removed and path is untouched.
func (w *Writer) Close() error {
	if w.done {
		return w.err
	}
	if w.err == nil && w.next < len(w.infos) {
		w.err = &Error{Kind: ErrFormat, Path: w.path, Offset: -1,
			Msg: fmt.Sprintf("closed with %d tensors unwritten, next %s", len(w.infos)-w.next, w.infos[w.next].Name)}
	}
	if w.err == nil {
		if err := w.bw.Flush(); err != nil {
			w.err = ioErr(w.path, "cannot write file", err)
		}
	}
	if w.err == nil {
		// Commit syncs, verifies with Open (every check of Parse) and only
		// then renames, so a file that fails never lands at path.
		err := w.tmp.Commit(func(tmp string) error {
			f, err := Open(tmp)
			if err != nil {
				return fmt.Errorf("gguf: %s: written file fails verification: %w", w.path, err)
			}
			return f.Close()
		})
		if err != nil {
			w.err = err
			if !errors.Is(err, ErrFormat) {
				w.err = ioErr(w.path, "cannot write file", err)
			}
			w.done = true
			return w.err
		}
	}
	if w.err != nil {
		err := w.err
		w.Abort()
		w.err = err
		return err
	}
	w.done = true
	return nil
}

// Abort removes the temporary file. It is safe after Close.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	if w.err == nil {
		w.err = errors.New("gguf: writer aborted")
	}
	w.tmp.Abort()
}
