package gguf

import (
	"fmt"
	"math"
	"math/bits"
	"os"

	"github.com/krafla/krafla/internal/mmap"
)

// Magic opens every GGUF file.
const Magic = "GGUF"

// DefaultAlignment is the data alignment when general.alignment is absent.
const DefaultAlignment = 32

// MaxDims is ggml's GGML_MAX_DIMS; MaxNameLen is GGML_MAX_NAME less its NUL.
const (
	MaxDims    = 4
	MaxNameLen = 63
)

// KV is one metadata entry.
type KV struct {
	Key    string
	Value  Value
	Offset int64 // where the entry starts in the file
}

// TensorInfo describes one tensor. Shape lists ggml's ne: Shape[0] is the
// contiguous (innermost) dimension, so a matrix of rows × cols is
// [cols, rows].
type TensorInfo struct {
	Name       string
	Type       Type
	Shape      []uint64
	Offset     uint64 // from the start of the data section
	Size       uint64 // bytes
	InfoOffset int64  // where the tensor info starts in the file
}

// Elems returns the number of elements (validated not to overflow).
func (t *TensorInfo) Elems() uint64 {
	n := uint64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Tensor is a tensor of an open file; Data points into the mapping and is
// read-only.
type Tensor struct {
	TensorInfo
	Data  []byte
	Split int // the file of a split set it lies in (an index into File.Splits); 0 for one file
}

// File is a parsed and validated GGUF file.
type File struct {
	Path       string
	Version    uint32
	KVs        []KV     // in file order
	Tensors    []Tensor // in file order
	Alignment  uint64
	DataOffset int64 // start of the data section
	Size       int64 // bytes in the file
	Mapped     bool
	Splits     []string // OpenSplit of a split set: every file's path, in order; nil for one file

	kv     map[string]int
	tensor map[string]int
	unmap  func() error
}

// Open maps the file at path and decodes and validates everything but the
// tensor values before it returns. Errors are *Error values matching ErrIO
// or ErrFormat.
func Open(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, ioErr(path, "cannot open file", err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, ioErr(path, "cannot read file", err)
	}
	if !st.Mode().IsRegular() {
		return nil, &Error{Kind: ErrIO, Path: path, Offset: -1, Msg: "not a regular file"}
	}
	data, unmap, mapped, err := mmap.Map(fh, st.Size())
	if err != nil {
		return nil, ioErr(path, "cannot map file", err)
	}
	f, err := Parse(data)
	if err != nil {
		unmap()
		return nil, withPath(err, path)
	}
	f.Path, f.unmap, f.Mapped = path, unmap, mapped
	return f, nil
}

// Close releases the mapping; the tensors' Data must not be used afterwards.
func (f *File) Close() error {
	var err error
	if f.unmap != nil {
		err = f.unmap()
		f.unmap = nil
	}
	f.Tensors = nil
	if err != nil {
		return ioErr(f.Path, "cannot unmap file", err)
	}
	return nil
}

// Lookup returns the value of key.
func (f *File) Lookup(key string) (Value, bool) {
	if i, ok := f.kv[key]; ok {
		return f.KVs[i].Value, true
	}
	return Value{}, false
}

// String returns a string value; false when absent or of another type.
func (f *File) String(key string) (string, bool) {
	v, _ := f.Lookup(key)
	return v.Str()
}

// Uint returns a non-negative integer value of any integer type.
func (f *File) Uint(key string) (uint64, bool) {
	v, _ := f.Lookup(key)
	return v.Uint()
}

// Float returns a float value (f32 or f64).
func (f *File) Float(key string) (float64, bool) {
	v, _ := f.Lookup(key)
	return v.Float()
}

// Bool returns a bool value.
func (f *File) Bool(key string) (bool, bool) {
	v, _ := f.Lookup(key)
	return v.Bool()
}

// Tensor returns the tensor called name, or nil.
func (f *File) Tensor(name string) *Tensor {
	if i, ok := f.tensor[name]; ok {
		return &f.Tensors[i]
	}
	return nil
}

// Parse decodes and validates a GGUF image held in memory, as Open does. The
// tensors' Data point into b.
func Parse(b []byte) (*File, error) {
	d := &decoder{b: b}
	if len(b) < 4 || string(b[:4]) != Magic {
		n := min(len(b), 4)
		return nil, formatErr(0, "magic %q is not %q", b[:n], Magic)
	}
	d.off = 4
	version, err := d.u32("version")
	if err != nil {
		return nil, err
	}
	switch {
	case version&0xffff == 0 && version != 0:
		return nil, formatErr(4, "version field %#x: a big-endian GGUF file; only little-endian files are read", version)
	case version == 1:
		return nil, formatErr(4, "GGUF version 1 (32-bit counts) is not read; versions 2 and 3 are")
	case version != 2 && version != 3:
		return nil, formatErr(4, "unknown GGUF version %d (want 2 or 3)", version)
	}
	nt, err := d.u64("tensor count")
	if err != nil {
		return nil, err
	}
	nkv, err := d.u64("metadata count")
	if err != nil {
		return nil, err
	}
	// A key-value pair takes at least 8+1+4+1 bytes and a tensor info
	// 8+1+4+4+8, so both counts are bounded by the bytes left before any
	// slice is sized by them.
	const minKV, minInfo = 14, 25
	if nkv > d.left()/minKV {
		return nil, formatErr(16, "metadata count %d cannot fit in the %d bytes left (at least %d bytes each)", nkv, d.left(), minKV)
	}
	if nt > d.left()/minInfo {
		return nil, formatErr(8, "tensor count %d cannot fit in the %d bytes left (at least %d bytes each)", nt, d.left(), minInfo)
	}
	f := &File{Version: version, Size: int64(len(b)), Alignment: DefaultAlignment,
		kv: map[string]int{}, tensor: map[string]int{}}
	f.KVs = make([]KV, 0, nkv)
	for range nkv {
		at := int64(d.off)
		key, err := d.str("key")
		if err != nil {
			return nil, err
		}
		if key == "" {
			return nil, formatErr(at, "empty key")
		}
		if _, dup := f.kv[key]; dup {
			return nil, &Error{Kind: ErrFormat, Offset: at, Key: key, Msg: "duplicate key"}
		}
		t, err := d.u32("value type")
		if err != nil {
			return nil, keyErr(err, key)
		}
		v, err := d.value(ValueType(t), 0)
		if err != nil {
			return nil, keyErr(err, key)
		}
		f.kv[key] = len(f.KVs)
		f.KVs = append(f.KVs, KV{Key: key, Value: v, Offset: at})
	}
	if i, ok := f.kv["general.alignment"]; ok {
		kv := f.KVs[i]
		a, _ := kv.Value.Uint()
		if kv.Value.Type != TypeUint32 || a == 0 || a&(a-1) != 0 {
			return nil, &Error{Kind: ErrFormat, Offset: kv.Offset, Key: kv.Key,
				Msg: fmt.Sprintf("alignment %v (%s) must be a u32 power of two", kv.Value, kv.Value.Type)}
		}
		f.Alignment = a
	}

	f.Tensors = make([]Tensor, 0, nt)
	var next uint64 // where the next tensor must start in the data section
	for range nt {
		ti, err := d.tensorInfo()
		if err != nil {
			return nil, err
		}
		if _, dup := f.tensor[ti.Name]; dup {
			return nil, &Error{Kind: ErrFormat, Offset: ti.InfoOffset, Tensor: ti.Name, Msg: "duplicate tensor name"}
		}
		// In info order each tensor starts at the aligned end of the one
		// before: no gap, overlap or misalignment can pass (llama.cpp
		// refuses any other layout too).
		if ti.Offset != next {
			return nil, &Error{Kind: ErrFormat, Offset: ti.InfoOffset, Tensor: ti.Name,
				Msg: fmt.Sprintf("data at %#x, want %#x (each tensor starts at the %d-aligned end of the one before)", ti.Offset, next, f.Alignment)}
		}
		end, c := bits.Add64(ti.Offset, ti.Size, 0)
		padded, c2 := bits.Add64(end, (f.Alignment-end%f.Alignment)%f.Alignment, 0)
		if c != 0 || c2 != 0 || padded > math.MaxInt64 {
			return nil, &Error{Kind: ErrFormat, Offset: ti.InfoOffset, Tensor: ti.Name, Msg: "data end overflows"}
		}
		next = padded
		f.tensor[ti.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, Tensor{TensorInfo: ti})
	}
	hdrEnd := uint64(d.off)
	f.DataOffset = int64(hdrEnd + (f.Alignment-hdrEnd%f.Alignment)%f.Alignment)
	size := uint64(len(b))
	for i := range f.Tensors {
		t := &f.Tensors[i]
		start := uint64(f.DataOffset) + t.Offset // both bounded above: no overflow
		if start > size || t.Size > size-start {
			return nil, &Error{Kind: ErrFormat, Offset: t.InfoOffset, Tensor: t.Name,
				Msg: fmt.Sprintf("data at file offset %#x..%#x lies beyond the end of the file (%d bytes)", start, start+t.Size, size)}
		}
		t.Data = b[start : start+t.Size : start+t.Size]
	}
	return f, nil
}

func keyErr(err error, key string) error {
	if e, ok := err.(*Error); ok && e.Key == "" {
		e.Key = key
	}
	return err
}

func (d *decoder) tensorInfo() (TensorInfo, error) {
	at := int64(d.off)
	ti := TensorInfo{InfoOffset: at}
	name, err := d.str("tensor name")
	if err != nil {
		return ti, err
	}
	ti.Name = name
	fail := func(format string, args ...any) error {
		return &Error{Kind: ErrFormat, Offset: at, Tensor: name, Msg: fmt.Sprintf(format, args...)}
	}
	if name == "" || len(name) > MaxNameLen {
		return ti, fail("name of %d bytes (want 1 to %d)", len(name), MaxNameLen)
	}
	nd, err := d.u32("dimension count")
	if err != nil {
		return ti, keyTensor(err, name)
	}
	if nd > MaxDims {
		return ti, fail("%d dimensions, at most %d", nd, MaxDims)
	}
	ti.Shape = make([]uint64, nd)
	elems := uint64(1)
	for i := range ti.Shape {
		n, err := d.u64("dimension")
		if err != nil {
			return ti, keyTensor(err, name)
		}
		// ggml keeps dims as int64.
		if n > math.MaxInt64 {
			return ti, fail("dimension %d is %d, negative as ggml's int64", i, int64(n))
		}
		ti.Shape[i] = n
		hi, lo := bits.Mul64(elems, n)
		if hi != 0 || lo > math.MaxInt64 {
			return ti, fail("shape %v: element count overflows", ti.Shape[:i+1])
		}
		elems = lo
	}
	typ, err := d.u32("tensor type")
	if err != nil {
		return ti, keyTensor(err, name)
	}
	ti.Type = Type(typ)
	info, known := types[ti.Type]
	switch {
	case !known:
		return ti, &Error{Kind: ErrFormat, Offset: at, Tensor: name, Msg: fmt.Sprintf("tensor type %d is not a ggml type this reader knows", typ)}
	case info.block == 0:
		return ti, &Error{Kind: ErrFormat, Offset: at, Tensor: name, Msg: fmt.Sprintf("tensor type %s (%d) was removed from ggml", info.name, typ)}
	}
	ne0 := uint64(1)
	if nd > 0 {
		ne0 = ti.Shape[0]
	}
	if ne0%info.block != 0 {
		return ti, fail("%s row of %d elements is not a multiple of the block size %d", ti.Type, ne0, info.block)
	}
	hi, size := bits.Mul64(elems/info.block, info.bytes)
	if hi != 0 || size > math.MaxInt64 {
		return ti, fail("byte size of shape %v overflows", ti.Shape)
	}
	ti.Size = size
	off, err := d.u64("tensor offset")
	if err != nil {
		return ti, keyTensor(err, name)
	}
	ti.Offset = off
	return ti, nil
}

func keyTensor(err error, name string) error {
	if e, ok := err.(*Error); ok && e.Tensor == "" {
		e.Tensor = name
	}
	return err
}
