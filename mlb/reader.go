package mlb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"unsafe"

	"github.com/x448/float16"
)

// Tensor is one tensor of a loaded file. Its slices point into the file's
// mapping where they can and are read-only: writing to them faults.
type Tensor struct {
	TensorInfo
	F32 []float32 // F32 tensors: the values, rows × cols (in place in the mapping)
	Q   []byte    // Q8_0, Q4_0: the quants (in place); Blocked types: the ggml blocks (in place); U8: the bytes
	D   []float32 // Q8_0, Q4_0: the scales as f32, rows × cols/32 (in place for f32 scales, converted once for f16); nil for Blocked types
}

// Q8 returns the quants of a Q8_0 tensor as int8, without copying.
func (t *Tensor) Q8() []int8 {
	if len(t.Q) == 0 {
		return nil
	}
	return unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(t.Q))), len(t.Q))
}

// File is a loaded and validated .mlb file.
type File struct {
	Header  Header
	Path    string
	Tensors []Tensor // in file order
	Arrays  []Array  // every array of the body in file order
	Size    int64    // bytes in the file
	Mapped  bool     // the data is mmapped (false: read into memory)

	data  []byte
	unmap func() error
	index map[string]int
}

// Tensor returns the tensor called name, or nil when the file has none.
func (f *File) Tensor(name string) *Tensor {
	if i, ok := f.index[name]; ok {
		return &f.Tensors[i]
	}
	return nil
}

// Close releases the mapping. The tensors' slices must not be used afterwards.
func (f *File) Close() error {
	var err error
	if f.unmap != nil {
		err = f.unmap()
		f.unmap = nil
	}
	f.data, f.Tensors, f.index = nil, nil, nil
	if err != nil {
		return ioErr(f.Path, err)
	}
	return nil
}

// Open maps the file at path, validates it completely (every rule of SPEC.md's
// validation table, including the scan of every Q8_0 quant for -128) and returns
// it. Where mmap is unavailable the file is read into memory. Errors are *Error
// values matching ErrIO, ErrFormat or ErrShape.
func Open(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, ioErr(path, err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, ioErr(path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, &Error{Code: CodeIO, Path: path, Offset: -1, Msg: "not a regular file"}
	}
	size := st.Size()
	if size == 0 {
		return nil, &Error{Code: CodeFormat, Path: path, Offset: 0, Msg: "empty file"}
	}
	if size > math.MaxInt { // a 32-bit platform cannot map or index it
		return nil, &Error{Code: CodeFormat, Path: path, Offset: -1, Msg: fmt.Sprintf("file of %d bytes is too large to map on this platform", size)}
	}
	var data []byte
	var unmap func() error
	ok := false
	if !noMmap {
		data, unmap, ok = mmapFile(fh, int(size))
	}
	if !ok { // no mmap on this system (mmap_other.go), or it failed
		data = make([]byte, size)
		if _, err := io.ReadFull(fh, data); err != nil {
			return nil, ioErr(path, err)
		}
	}
	f, err := load(data, path)
	if err != nil {
		if unmap != nil {
			unmap()
		}
		return nil, err
	}
	f.unmap, f.Mapped = unmap, ok
	return f, nil
}

// ReadHeader reads only the 256-byte header of the file at path and checks
// its magic, its reserved bytes and its pair record, not the rest (Open
// validates a file). It serves callers that need a model's pair id without
// mapping it.
func ReadHeader(path string) (*Header, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, ioErr(path, err)
	}
	defer fh.Close()
	b := make([]byte, HeaderSize)
	n, err := io.ReadFull(fh, b)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, ioErr(path, err)
	}
	var h Header
	err = h.Unmarshal(b[:n])
	if err == nil {
		err = checkReserved(b)
	}
	if err == nil {
		err = h.validatePair()
	}
	if err != nil {
		return nil, withPath(err, path)
	}
	return &h, nil
}

// Parse validates an .mlb image held in memory, as Open does. The returned
// tensors point into b.
func Parse(b []byte) (*File, error) { return load(b, "") }

// noMmap makes Open read the file as it does where mmap is unavailable, so
// that tests on systems with mmap run that path too.
var noMmap bool

var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

func withPath(err error, path string) error {
	var e *Error
	if errors.As(err, &e) {
		e.Path = path
	}
	return err
}

func load(data []byte, path string) (*File, error) {
	f, err := parse(data)
	if err != nil {
		return nil, withPath(err, path)
	}
	f.Path = path
	return f, nil
}

func parse(data []byte) (*File, error) {
	var h Header
	if err := h.Unmarshal(data); err != nil {
		return nil, err
	}
	if err := checkReserved(data); err != nil {
		return nil, err
	}
	if err := h.validateFormat(); err != nil {
		return nil, err
	}
	if err := h.validateShape(); err != nil {
		return nil, err
	}
	if h.LayerFlags != 0 {
		// n_layers is at most 2^16 here.
		if n := int(h.NLayers); len(data)-HeaderSize < n {
			return nil, &Error{Code: CodeFormat, Offset: HeaderSize, Tensor: "layer_flags",
				Msg: fmt.Sprintf("file of %d bytes is shorter than the arrays the header implies: %d layer flag bytes at offset %d",
					len(data), n, HeaderSize)}
		}
		h.Flags = append([]uint8(nil), data[HeaderSize:HeaderSize+int(h.NLayers)]...)
		if err := h.validateFlags(); err != nil {
			return nil, err
		}
	}
	if h.WType == WTypeMixed {
		// The type table follows the layer flags; its length (at most a few
		// matrices per layer) is bounded by the header, and checked against
		// the file before it is copied.
		o := int64(HeaderSize)
		if h.LayerFlags != 0 {
			o, _ = alignUp(o + int64(h.NLayers))
		}
		n := int64(h.numMatrices())
		if int64(len(data)) < o+n {
			return nil, &Error{Code: CodeFormat, Offset: o, Tensor: "type_table",
				Msg: fmt.Sprintf("file of %d bytes is shorter than the arrays the header implies: %d type table bytes at offset %d",
					len(data), n, o)}
		}
		h.Types = append([]uint8(nil), data[o:o+n]...)
		if err := h.validateTypes(o); err != nil {
			return nil, err
		}
	}
	// Check the size before allocating anything sized by the header: a tiny file
	// may claim 65536 layers.
	size := int64(len(data))
	need, _, err := bodyEnd(&h)
	if err != nil {
		return nil, err
	}
	if need > size {
		name, o, e := firstBeyond(&h, size)
		return nil, &Error{Code: CodeFormat, Offset: o, Tensor: name,
			Msg: fmt.Sprintf("file of %d bytes is shorter than the %d bytes the header implies (array %s needs bytes %d to %d)",
				size, need, name, o, e)}
	}
	ts := tensors(&h)
	arrs, err := layout(&h)
	if err != nil {
		return nil, err
	}
	f := &File{Header: h, Arrays: arrs, Size: size, data: data,
		Tensors: make([]Tensor, len(ts)), index: make(map[string]int, len(ts))}
	ai := 0
	for i, ti := range ts {
		t := Tensor{TensorInfo: ti}
		a := arrs[ai]
		ai++
		bytes := data[a.Offset:a.End():a.End()]
		switch ti.Type {
		case U8:
			t.Q = bytes
		case F32:
			t.F32 = f32View(bytes)
		case Q4_1, Q5_0, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS:
			t.Q = bytes
		case Q8_0, Q4_0:
			t.Q = bytes
			if ti.Type == Q8_0 {
				if j := findMinus128(bytes); j >= 0 {
					return nil, &Error{Code: CodeFormat, Offset: a.Offset + int64(j), Tensor: ti.Name,
						Msg: fmt.Sprintf("Q8_0 quant at row %d, column %d is -128 (quants must be in [-127, 127])", j/ti.Cols, j%ti.Cols)}
				}
			}
			s := arrs[ai]
			ai++
			sb := data[s.Offset:s.End():s.End()]
			if s.Elem == ElemScaleF16 {
				t.D = f16ToF32(sb)
			} else {
				t.D = f32View(sb)
			}
		}
		f.Tensors[i] = t
		f.index[ti.Name] = i
	}
	if err := checkFFNPadding(f); err != nil {
		return nil, err
	}
	return f, nil
}

// f32View returns b as float32 values: in place when the host is little-endian
// and b is 4-byte aligned (always so in a mapping), else decoded into a copy.
func f32View(b []byte) []float32 {
	n := len(b) / 4
	if n == 0 {
		return []float32{}
	}
	if littleEndian && uintptr(unsafe.Pointer(unsafe.SliceData(b)))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), n)
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// f16ToF32 converts little-endian IEEE f16 values exactly to float32.
func f16ToF32(b []byte) []float32 {
	v := make([]float32, len(b)/2)
	for i := range v {
		v[i] = float16.Frombits(binary.LittleEndian.Uint16(b[2*i:])).Float32()
	}
	return v
}

// firstBeyond finds the first array of a valid header that does not fit in size
// bytes, without allocating the whole layout.
func firstBeyond(h *Header, size int64) (name string, off, end int64) {
	pos := int64(HeaderSize)
	found := false
	walkArrays(h, func(layer int, n, suffix string, rows, cols int, e Elem, t DType) {
		if found {
			return
		}
		// bodyEnd has checked that none of this overflows.
		bytes, _ := e.size(t, rows, cols)
		if pos+bytes > size {
			n += suffix
			if layer >= 0 {
				n = fmt.Sprintf("blk.%d.%s", layer, n)
			}
			name, off, end, found = n, pos, pos+bytes, true
			return
		}
		pos += bytes
		pos += (Align - pos%Align) % Align
	})
	return name, off, end
}
