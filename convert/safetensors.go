package convert

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/x448/float16"
)

// Limits that keep a lying header from causing huge allocations or work.
const (
	maxHeaderBytes = 100 << 20 // the JSON header of one safetensors file
	maxDims        = 8
	maxTensors     = 1 << 20
)

// dtypeSizes gives the element size of every safetensors dtype, so offsets
// of tensors the converter does not read can still be validated.
var dtypeSizes = map[string]int{
	"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1,
	"I16": 2, "U16": 2, "F16": 2, "BF16": 2,
	"I32": 4, "U32": 4, "F32": 4,
	"I64": 8, "U64": 8, "F64": 8,
}

// Tensor is one tensor of a safetensors file; its data points into the
// file's mapping and is converted to float32 only when asked.
type Tensor struct {
	Name  string
	DType string // "F32", "F16", "BF16" (others are listed but not readable)
	Shape []int
	File  string // the file holding it
	data  []byte
	off   int // of data in the file's data section
	// mapped: data lies in a file mapping, so its pages can be dropped
	// (never on heap memory, which madvise would zero).
	mapped bool
}

// Elems is the number of elements.
func (t *Tensor) Elems() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Rows is the first dimension (1 for a scalar).
func (t *Tensor) Rows() int {
	if len(t.Shape) == 0 {
		return 1
	}
	return t.Shape[0]
}

// Cols is the product of every dimension after the first.
func (t *Tensor) Cols() int {
	n := 1
	for _, d := range t.Shape[min(1, len(t.Shape)):] {
		n *= d
	}
	return n
}

// Readable reports an error naming the dtype when it cannot be converted.
func (t *Tensor) Readable() error {
	switch t.DType {
	case "F32", "F16", "BF16":
		return nil
	case "F8_E4M3", "F8_E5M2", "F8_E8M0":
		return fmt.Errorf("convert: %s: tensor %q has dtype %s: pre-quantized (FP8) checkpoints are not supported, dequantize to bf16/f16/f32 first", t.File, t.Name, t.DType)
	}
	return fmt.Errorf("convert: %s: tensor %q has dtype %s: only F32, F16 and BF16 are supported", t.File, t.Name, t.DType)
}

// F32 converts the whole tensor to float32.
func (t *Tensor) F32() ([]float32, error) {
	out := make([]float32, t.Elems())
	if err := t.decode(out, 0); err != nil {
		return nil, err
	}
	return out, nil
}

// RowsF32 converts rows [r0, r1) of the tensor, viewed as Rows() × Cols(),
// into dst (len (r1-r0)·Cols()).
func (t *Tensor) RowsF32(dst []float32, r0, r1 int) error {
	c := t.Cols()
	if r0 < 0 || r1 > t.Rows() || r0 > r1 || len(dst) != (r1-r0)*c {
		return fmt.Errorf("convert: tensor %q: rows [%d,%d) of %d out of range", t.Name, r0, r1, t.Rows())
	}
	return t.decode(dst, r0*c)
}

// decode converts len(dst) elements starting at element off.
func (t *Tensor) decode(dst []float32, off int) error {
	if err := t.Readable(); err != nil {
		return err
	}
	switch t.DType {
	case "F32":
		b := t.data[off*4:]
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case "F16":
		b := t.data[off*2:]
		for i := range dst {
			dst[i] = float16.Frombits(binary.LittleEndian.Uint16(b[2*i:])).Float32()
		}
	case "BF16":
		b := t.data[off*2:]
		for i := range dst {
			dst[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:])) << 16)
		}
	}
	return nil
}

// release drops the tensor's pages from this process's resident memory.
func (t *Tensor) release() {
	if t.mapped {
		releasePages(t.data)
	}
}

// releaseRows is release for rows [r0, r1) only.
func (t *Tensor) releaseRows(r0, r1 int) {
	if !t.mapped {
		return
	}
	rb := len(t.data) / max(1, t.Rows())
	releasePages(t.data[r0*rb : r1*rb])
}

// SafeFile is one mapped safetensors file.
type SafeFile struct {
	Path     string
	Tensors  []*Tensor // in data order
	Metadata map[string]string
	data     []byte
	mapped   bool
}

// Close unmaps the file.
func (f *SafeFile) Close() error {
	if f.mapped {
		f.mapped = false
		return unmapFile(f.data)
	}
	return nil
}

// noMmap makes OpenSafetensors read the file as it does where mmap is
// unavailable (mmap_other.go), so that tests on systems with mmap run that
// path too.
var noMmap bool

// readWhole reads the whole file: mapFile where mmap is not available.
func readWhole(f *os.File, size int64) ([]byte, bool, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, size), b); err != nil {
		return nil, false, err
	}
	return b, false, nil
}

// OpenSafetensors maps and validates one safetensors file.
func OpenSafetensors(path string) (*SafeFile, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("convert: %s: not a regular file", path)
	}
	mapFn := mapFile
	if noMmap {
		mapFn = readWhole
	}
	b, mapped, err := mapFn(fh, st.Size())
	if err != nil {
		return nil, fmt.Errorf("convert: %s: %w", path, err)
	}
	f, err := ParseSafetensors(b, path)
	if err != nil {
		if mapped {
			unmapFile(b)
		}
		return nil, err
	}
	f.mapped = mapped
	for _, t := range f.Tensors {
		t.mapped = mapped
	}
	return f, nil
}

// ParseSafetensors validates the layout of a safetensors file held in b:
// the header length, the JSON header (unique names, known dtypes, at most
// 8 dimensions), and that every tensor's byte range lies inside the data,
// matches shape × dtype size and overlaps no other tensor. name is used in
// error messages.
func ParseSafetensors(b []byte, name string) (*SafeFile, error) {
	fail := func(format string, args ...any) (*SafeFile, error) {
		return nil, fmt.Errorf("convert: %s: safetensors: "+format, append([]any{name}, args...)...)
	}
	if len(b) < 8 {
		return fail("file of %d bytes is shorter than the 8-byte header length", len(b))
	}
	n := binary.LittleEndian.Uint64(b)
	if n > maxHeaderBytes {
		return fail("header length %d exceeds the limit of %d bytes", n, maxHeaderBytes)
	}
	if n > uint64(len(b)-8) {
		return fail("header length %d exceeds the file size %d", n, len(b))
	}
	hdr := b[8 : 8+n]
	data := b[8+n:]
	f := &SafeFile{Path: name, data: b}

	dec := json.NewDecoder(bytes.NewReader(hdr))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fail("header is not a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail("header JSON: %v", err)
		}
		key, _ := tok.(string)
		if seen[key] {
			return fail("tensor %q listed twice", key)
		}
		seen[key] = true
		if key == "__metadata__" {
			if err := dec.Decode(&f.Metadata); err != nil {
				return fail("__metadata__: %v", err)
			}
			continue
		}
		if len(f.Tensors) >= maxTensors {
			return fail("more than %d tensors", maxTensors)
		}
		var e struct {
			DType       string         `json:"dtype"`
			Shape       shapeJSON      `json:"shape"`
			DataOffsets [2]json.Number `json:"data_offsets"`
		}
		if err := dec.Decode(&e); err != nil {
			return fail("tensor %q: %v", key, err)
		}
		size, ok := dtypeSizes[e.DType]
		if !ok {
			return fail("tensor %q: unknown dtype %q", key, e.DType)
		}
		if e.Shape.n > maxDims {
			return fail("tensor %q: %d dimensions, at most %d", key, e.Shape.n, maxDims)
		}
		t := &Tensor{Name: key, DType: e.DType, File: name, Shape: make([]int, e.Shape.n)}
		elems := uint64(1)
		for i, d := range e.Shape.dims {
			v, err := strconv64(d)
			if err != nil || v > math.MaxInt32 {
				return fail("tensor %q: bad dimension %s", key, d)
			}
			t.Shape[i] = int(v)
			if v != 0 && elems > math.MaxInt64/v {
				return fail("tensor %q: shape %v overflows", key, e.Shape.dims)
			}
			elems *= v
		}
		if elems > math.MaxInt64/uint64(size) {
			return fail("tensor %q: shape %v overflows", key, e.Shape.dims)
		}
		begin, err1 := strconv64(e.DataOffsets[0])
		end, err2 := strconv64(e.DataOffsets[1])
		if err1 != nil || err2 != nil {
			return fail("tensor %q: bad data_offsets", key)
		}
		if begin > end || end > uint64(len(data)) {
			return fail("tensor %q: data_offsets [%d,%d] outside the %d data bytes", key, begin, end, len(data))
		}
		if end-begin != elems*uint64(size) {
			return fail("tensor %q: %d bytes, but shape %v of %s needs %d", key, end-begin, t.Shape, e.DType, elems*uint64(size))
		}
		t.data = data[begin:end:end]
		t.off = int(begin)
		f.Tensors = append(f.Tensors, t)
	}
	if _, err := dec.Token(); err != nil {
		return fail("header JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fail("trailing data after the header JSON")
	}
	// Sort by offset, then check that no two ranges overlap.
	sort.SliceStable(f.Tensors, func(i, j int) bool { return f.Tensors[i].off < f.Tensors[j].off })
	for i := 1; i < len(f.Tensors); i++ {
		p, q := f.Tensors[i-1], f.Tensors[i]
		if p.off+len(p.data) > q.off {
			return fail("tensors %q and %q overlap", p.Name, q.Name)
		}
	}
	return f, nil
}

// shapeJSON is a tensor's shape list. It keeps at most maxDims+1 entries
// and counts the rest, so that a header listing millions of dimensions costs
// no more than its bytes (a []json.Number costs 30 to 60 times that).
type shapeJSON struct {
	dims []json.Number
	n    int // entries in the list
}

// UnmarshalJSON splits the list at its commas: the decoder has checked that
// b is one valid JSON value, so an entry that starts like a number is one,
// and any other entry (a string, a list, an object) starts otherwise.
func (s *shapeJSON) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	if len(b) < 2 || b[0] != '[' {
		return errors.New("shape is not a list")
	}
	body := bytes.TrimSpace(b[1 : len(b)-1])
	for len(body) > 0 {
		d, rest, _ := bytes.Cut(body, []byte(","))
		d, body = bytes.TrimSpace(d), rest
		if len(d) == 0 || d[0] != '-' && (d[0] < '0' || d[0] > '9') {
			return errors.New("shape holds an entry that is not a number")
		}
		if s.n <= maxDims {
			s.dims = append(s.dims, json.Number(d)) // a copy: b is the decoder's
		}
		s.n++
	}
	return nil
}

func strconv64(n json.Number) (uint64, error) {
	s := string(n)
	var v uint64
	if s == "" || len(s) > 19 {
		return 0, errors.New("bad number")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, errors.New("bad number")
		}
		v = v*10 + uint64(c-'0')
	}
	return v, nil
}

// Checkpoint is every tensor of a Hugging Face model folder, one file or shards.
type Checkpoint struct {
	Dir     string
	Files   []*SafeFile
	Tensors map[string]*Tensor
	Names   []string // sorted
}

// Close unmaps every file.
func (c *Checkpoint) Close() error {
	var first error
	for _, f := range c.Files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// OpenCheckpoint opens dir/model.safetensors, or the shards listed in
// dir/model.safetensors.index.json.
func OpenCheckpoint(dir string) (*Checkpoint, error) {
	c := &Checkpoint{Dir: dir, Tensors: map[string]*Tensor{}}
	add := func(f *SafeFile) error {
		c.Files = append(c.Files, f)
		for _, t := range f.Tensors {
			if old, ok := c.Tensors[t.Name]; ok {
				return fmt.Errorf("convert: tensor %q is in both %s and %s", t.Name, old.File, t.File)
			}
			c.Tensors[t.Name] = t
			c.Names = append(c.Names, t.Name)
		}
		return nil
	}
	index := filepath.Join(dir, "model.safetensors.index.json")
	single := filepath.Join(dir, "model.safetensors")
	ib, err := os.ReadFile(index)
	switch {
	case err == nil:
		var idx struct {
			WeightMap map[string]string `json:"weight_map"`
		}
		if err := json.Unmarshal(ib, &idx); err != nil {
			return nil, fmt.Errorf("convert: %s: %v", index, err)
		}
		if len(idx.WeightMap) == 0 {
			return nil, fmt.Errorf("convert: %s: empty weight_map", index)
		}
		var shards []string
		seen := map[string]bool{}
		for _, file := range idx.WeightMap {
			if file != filepath.Base(file) || file == "." || file == ".." || strings.ContainsAny(file, `/\`) {
				return nil, fmt.Errorf("convert: %s: weight_map names %q, not a file in the folder", index, file)
			}
			if !seen[file] {
				seen[file] = true
				shards = append(shards, file)
			}
		}
		sort.Strings(shards)
		for _, s := range shards {
			if _, err := os.Stat(filepath.Join(dir, s)); errors.Is(err, os.ErrNotExist) {
				c.Close()
				return nil, missingShard(index, s, idx.WeightMap)
			}
			f, err := OpenSafetensors(filepath.Join(dir, s))
			if err != nil {
				c.Close()
				return nil, err
			}
			if err := add(f); err != nil {
				c.Close()
				return nil, err
			}
		}
		for name, file := range idx.WeightMap {
			t, ok := c.Tensors[name]
			if !ok || filepath.Base(t.File) != file {
				c.Close()
				return nil, fmt.Errorf("convert: %s: weight_map puts %q in %s, but that file does not hold it", index, name, file)
			}
		}
	case errors.Is(err, os.ErrNotExist):
		if _, err := os.Stat(single); errors.Is(err, os.ErrNotExist) {
			return nil, checkWeights(dir)
		} else if err != nil {
			return nil, fmt.Errorf("convert: %w", err)
		}
		f, err := OpenSafetensors(single)
		if err != nil {
			return nil, err
		}
		add(f)
	default:
		return nil, fmt.Errorf("convert: %w", err)
	}
	sort.Strings(c.Names)
	return c, nil
}
