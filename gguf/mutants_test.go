package gguf

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The tests of this file come from the mutants gremlins left alive in gguf's
// files other than dequant.go (docs/RELIABILITY.md, "Mutation testing",
// session 8): each pins behaviour no other test did.

// metaOnly is a v3 file of no tensors and one metadata entry: key, value type
// t and the encoded value, with nothing after it.
func metaOnly(t ValueType, value func(r *raw)) []byte {
	r := (&raw{}).header(3, 0, 1).str("k").u32(uint32(t))
	value(r)
	return r.b
}

// TestFieldsEndingAtEOF: a field whose last byte is the file's last byte is
// read (the bounds are "bytes left", not "bytes left − 1"): a u32, a string,
// an array of u8 whose elements fill the rest exactly.
func TestFieldsEndingAtEOF(t *testing.T) {
	for _, c := range []struct {
		name string
		b    []byte
		want any
	}{
		{"u32", metaOnly(TypeUint32, func(r *raw) { r.u32(7) }), uint64(7)},
		{"u64", metaOnly(TypeUint64, func(r *raw) { r.u64(1 << 40) }), uint64(1 << 40)},
		{"string", metaOnly(TypeString, func(r *raw) { r.str("abc") }), "abc"},
		{"empty string", metaOnly(TypeString, func(r *raw) { r.str("") }), ""},
		{"u8 array", metaOnly(TypeArray, func(r *raw) { r.u32(uint32(TypeUint8)).u64(3).bytes(1, 2, 3) }), []uint8{1, 2, 3}},
		{"u32 array", metaOnly(TypeArray, func(r *raw) { r.u32(uint32(TypeUint32)).u64(2).u32(5).u32(6) }), []uint32{5, 6}},
	} {
		f, err := Parse(c.b)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if v, _ := f.Lookup("k"); !reflect.DeepEqual(v.Interface(), c.want) {
			t.Errorf("%s: got %v, want %v", c.name, v.Interface(), c.want)
		}
		if f.DataOffset != int64(len(c.b)+31)/32*32 {
			t.Errorf("%s: data offset %d for a %d-byte header", c.name, f.DataOffset, len(c.b))
		}
		// One byte short of the same file is refused, at the field.
		if _, err := Parse(c.b[:len(c.b)-1]); !errors.Is(err, ErrFormat) {
			t.Errorf("%s cut by one: got %v, want ErrFormat", c.name, err)
		}
	}
}

// TestArrayCountJustOver: an array of fixed-size elements one element longer
// than the bytes left is refused with the count bound (not read past the end).
func TestArrayCountJustOver(t *testing.T) {
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"3 u32 in 8 bytes", metaOnly(TypeArray, func(r *raw) { r.u32(uint32(TypeUint32)).u64(3).u32(1).u32(2) }), "array of 3 u32 elements needs at least 4 bytes per element, 8 bytes left"},
		{"9 u64 in 64 bytes", metaOnly(TypeArray, func(r *raw) {
			r.u32(uint32(TypeUint64)).u64(9)
			for range 8 {
				r.u64(1)
			}
		}), "array of 9 u64 elements needs at least 8 bytes per element, 64 bytes left"},
		{"2 u16 in 3 bytes", metaOnly(TypeArray, func(r *raw) { r.u32(uint32(TypeUint16)).u64(2).bytes(1, 2, 3) }), "array of 2 u16 elements"},
	} {
		_, err := Parse(c.b)
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrFormat) || !strings.Contains(e.Msg, c.want) || e.Key != "k" {
			t.Errorf("%s: got %v, want ErrFormat for key k with %q", c.name, err, c.want)
		}
	}
}

// TestNestingDepth: arrays nest up to maxDepth (3) levels; the fourth level is
// refused at its own offset.
func TestNestingDepth(t *testing.T) {
	nested := func(levels int) []byte {
		return metaOnly(TypeArray, func(r *raw) {
			for range levels - 1 {
				r.u32(uint32(TypeArray)).u64(1)
			}
			r.u32(uint32(TypeUint8)).u64(1).bytes(9)
		})
	}
	f, err := Parse(nested(3))
	if err != nil {
		t.Fatalf("3 levels: %v", err)
	}
	v, _ := f.Lookup("k")
	if in := v.Index(0).Index(0); in.Elem != TypeUint8 || !reflect.DeepEqual(in.Interface(), []uint8{9}) {
		t.Errorf("3 levels: innermost %v", in)
	}
	_, err = Parse(nested(4))
	var e *Error
	// header 24, key 8+1, type 4, three (type, count) pairs of 12: the fourth
	// level's value starts at 73.
	if !errors.As(err, &e) || !strings.Contains(e.Msg, "arrays nested deeper than 3") || e.Offset != 24+9+4+3*12 {
		t.Errorf("4 levels: got %v, want nesting refused at offset %d", err, 24+9+4+3*12)
	}
}

// TestBoolElementOffset: a bool array element other than 0 or 1 is reported
// at its own byte, with its index and value.
func TestBoolElementOffset(t *testing.T) {
	b := metaOnly(TypeArray, func(r *raw) { r.u32(uint32(TypeBool)).u64(4).bytes(1, 0, 5, 1) })
	_, err := Parse(b)
	var e *Error
	at := int64(len(b) - 2)
	if !errors.As(err, &e) || e.Offset != at || !strings.Contains(e.Msg, "bool element 2 is 5, neither 0 nor 1") {
		t.Errorf("got %v, want bool element 2 at offset %d", err, at)
	}
}

// TestErrorText: the code, the path, key and tensor, and the offset (0
// included, -1 left out) each appear in an error's text as documented.
func TestErrorText(t *testing.T) {
	for _, c := range []struct {
		e    *Error
		text string
		code string
	}{
		{&Error{Kind: ErrFormat, Offset: 0, Msg: "m"}, "gguf: m (at offset 0x0)", "ML_E_FORMAT"},
		{&Error{Kind: ErrFormat, Offset: -1, Msg: "m"}, "gguf: m", "ML_E_FORMAT"},
		{&Error{Kind: ErrFormat, Path: "p", Offset: 16, Key: "k", Tensor: "t", Msg: "m"}, `gguf: p: key "k": tensor "t": m (at offset 0x10)`, "ML_E_FORMAT"},
		{&Error{Kind: ErrIO, Path: "p", Offset: -1, Msg: "m", Err: os.ErrNotExist}, "gguf: p: m: file does not exist", "ML_E_IO"},
	} {
		if got := c.e.Error(); got != c.text {
			t.Errorf("Error() = %q, want %q", got, c.text)
		}
		if got := c.e.Code(); got != c.code {
			t.Errorf("%q: Code() = %s, want %s", c.text, got, c.code)
		}
	}
}

// TestOpenErrors: a missing file is an ErrIO without an offset; a directory is
// not a regular file; a bad file's format error names the path it was opened
// as, and its offset.
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.gguf")
	_, err := Open(missing)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrIO) || e.Offset != -1 || e.Path != missing || e.Code() != "ML_E_IO" ||
		!errors.Is(err, os.ErrNotExist) || strings.Contains(err.Error(), "offset") {
		t.Errorf("missing file: got %v", err)
	}
	if _, err := Open(dir); !errors.As(err, &e) || !errors.Is(err, ErrIO) || e.Msg != "not a regular file" || e.Offset != -1 {
		t.Errorf("directory: got %v", err)
	}
	bad := filepath.Join(dir, "bad.gguf")
	if err := os.WriteFile(bad, append([]byte("GGUF\x04\x00\x00\x00"), good()[8:]...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(bad)
	if !errors.As(err, &e) || !errors.Is(err, ErrFormat) || e.Path != bad || e.Offset != 4 ||
		!strings.HasPrefix(err.Error(), "gguf: "+bad+": unknown GGUF version 4") {
		t.Errorf("bad file: got %v", err)
	}
	// withPath keeps a path already set.
	e2 := &Error{Kind: ErrIO, Path: "first", Offset: -1}
	if withPath(e2, "second"); e2.Path != "first" {
		t.Errorf("withPath replaced the path: %s", e2.Path)
	}
}

// TestTypeNames: Known, String of tensor and value types, in and out of the
// tables.
func TestTypeNames(t *testing.T) {
	for _, c := range []struct {
		t     Type
		known bool
		name  string
	}{{F32, true, "F32"}, {Q4_K, true, "Q4_K"}, {MXFP4, true, "MXFP4"}, {31, false, "Q4_0_4_4"}, {4, false, "Q4_2"}, {99, false, "type(99)"}} {
		if c.t.Known() != c.known || c.t.String() != c.name {
			t.Errorf("type %d: Known %v, String %q; want %v, %q", uint32(c.t), c.t.Known(), c.t.String(), c.known, c.name)
		}
	}
	for _, c := range []struct {
		t    ValueType
		name string
	}{{TypeUint8, "u8"}, {TypeString, "string"}, {TypeFloat64, "f64"}, {13, "value_type(13)"}, {1 << 31, "value_type(2147483648)"}} {
		if got := c.t.String(); got != c.name {
			t.Errorf("value type %d: %q, want %q", uint32(c.t), got, c.name)
		}
	}
}

// TestValueIntegers: Uint and Int at the edges of each direction's range, and
// Ints only for arrays of integers (an empty array of another type included).
func TestValueIntegers(t *testing.T) {
	for _, c := range []struct {
		v     Value
		u     uint64
		uok   bool
		i     int64
		iok   bool
		label string
	}{
		{Int8(0), 0, true, 0, true, "i8 0"},
		{Int64(-1), math.MaxUint64, false, -1, true, "i64 -1"},
		{Int32(7), 7, true, 7, true, "i32 7"},
		{Uint64(math.MaxInt64), math.MaxInt64, true, math.MaxInt64, true, "u64 MaxInt64"},
		{Uint64(math.MaxInt64 + 1), math.MaxInt64 + 1, true, math.MinInt64, false, "u64 MaxInt64+1"},
		{Uint8(0), 0, true, 0, true, "u8 0"},
		{Float32(1), 0, false, 0, false, "f32"},
		{Array([]uint8{}), 0, false, 0, false, "array"},
	} {
		u, uok := c.v.Uint()
		i, iok := c.v.Int()
		if uok != c.uok || (uok && u != c.u) || iok != c.iok || (iok && i != c.i) {
			t.Errorf("%s: Uint %d %v, Int %d %v; want %d %v, %d %v", c.label, u, uok, i, iok, c.u, c.uok, c.i, c.iok)
		}
	}
	for _, c := range []struct {
		v    Value
		want []int64
		ok   bool
	}{
		{Array([]int32{1, -2}), []int64{1, -2}, true},
		{Array([]uint8{}), []int64{}, true},
		{Array([]uint64{3}), []int64{3}, true},
		{Array([]uint64{math.MaxInt64 + 1}), nil, false},
		{Uint32(5), nil, false},
		{Array([]string{}), nil, false},
		{Array([]Value{}), nil, false},
		{Array([]bool{}), nil, false},
		{Array([]float32{}), nil, false},
		{Array([]float64{}), nil, false},
		{Array([]string{"1"}), nil, false},
	} {
		got, ok := c.v.Ints()
		if ok != c.ok || (ok && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("Ints of %v (%s of %s): %v %v, want %v %v", c.v, c.v.Type, c.v.Elem, got, ok, c.want, c.ok)
		}
	}
}

// TestValueIndexAndString: Index is the zero Value from the array's length
// on (and below 0); String quotes strings only.
func TestValueIndexAndString(t *testing.T) {
	a := Array([]uint16{4, 5})
	if got := a.Index(1); got.Type != TypeUint16 || got.Interface() != uint64(5) {
		t.Errorf("Index(1) = %v %v", got.Type, got)
	}
	for _, i := range []int{2, 3, -1} {
		if got := a.Index(i); got.Type != 0 || got.Interface() != nil {
			t.Errorf("Index(%d) of 2 = %v %v, want the zero Value", i, got.Type, got)
		}
	}
	if got := Uint32(5).Index(0); got.Interface() != nil {
		t.Errorf("Index of a scalar = %v", got)
	}
	for _, c := range []struct {
		v    Value
		want string
	}{{String("a b"), `"a b"`}, {Uint32(5), "5"}, {Array([]string{"x"}), "[x]"}, {Bool(true), "true"}} {
		if got := c.v.String(); got != c.want {
			t.Errorf("String() = %s, want %s", got, c.want)
		}
	}
}

// TestCountBounds: the metadata and tensor counts may be exactly the bytes
// left over the smallest entry (14 and 25 bytes); one more is refused with
// the bound, before any entry is read.
func TestCountBounds(t *testing.T) {
	kv := metaOnly(TypeUint8, func(r *raw) { r.bytes(5) }) // 14 bytes of entry
	if _, err := Parse(kv); err != nil {
		t.Errorf("one 14-byte entry: %v", err)
	}
	kv2 := append([]byte(nil), kv...)
	kv2[16] = 2
	if _, err := Parse(kv2); err == nil || !strings.Contains(err.Error(), "metadata count 2 cannot fit in the 14 bytes left (at least 14 bytes each)") {
		t.Errorf("two entries in 14 bytes: %v", err)
	}
	// A scalar F32 tensor: a 25-byte info, padding to 32, then its 4 bytes.
	ts := (&raw{}).header(3, 1, 0).info("s", F32, 0).pad(32).u32(0).b
	f, err := Parse(ts)
	if err != nil || len(f.Tensors) != 1 || f.Tensors[0].Size != 4 {
		t.Errorf("one scalar tensor: %v", err)
	}
	ts[8] = 2
	if _, err := Parse(ts); err == nil || !strings.Contains(err.Error(), "tensor count 2 cannot fit in the 44 bytes left (at least 25 bytes each)") {
		t.Errorf("two tensors in 44 bytes: %v", err)
	}
	// Version 0 is unknown, not big-endian.
	if _, err := Parse(append([]byte("GGUF\x00\x00\x00\x00"), good()[8:]...)); err == nil || !strings.Contains(err.Error(), "unknown GGUF version 0 (want 2 or 3)") {
		t.Errorf("version 0: %v", err)
	}
	// "GGUF" alone: the magic is right, the version is missing.
	if _, err := Parse([]byte(Magic)); err == nil || !strings.Contains(err.Error(), "version needs 4 bytes, 0 left") {
		t.Errorf("magic alone: %v", err)
	}
}

// TestInfoLimits: the largest values each tensor-info rule allows pass it
// (a 63-byte name, 4 dimensions, a dimension and a byte size of exactly
// MaxInt64, data ending exactly at the file's end); the errors name the shape
// prefix that overflows and the data's range.
func TestInfoLimits(t *testing.T) {
	one := func(name string, typ Type, shape ...uint64) []byte {
		return (&raw{}).header(3, 1, 0).info(name, typ, 0, shape...).pad(32).b
	}
	withData := func(b []byte, n int) []byte { return append(b, make([]byte, n)...) }
	for _, c := range []struct {
		name string
		b    []byte
		want string // "" when valid
	}{
		{"63-byte name", withData(one(strings.Repeat("n", 63), F32, 1), 4), ""},
		{"4 dimensions", withData(one("w", F32, 1, 2, 1, 2), 16), ""},
		{"empty tensor at the end", one("z", F32, 0), ""},
		{"shape wraps at dimension 1", one("w", F32, 1<<32, 1<<32, 16), "shape [4294967296 4294967296]: element count overflows"},
		{"data beyond", withData(one("w", F32, 8), 8), "data at file offset 0x40..0x60 lies beyond the end of the file (72 bytes)"},
	} {
		_, err := Parse(c.b)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
	// An I8 tensor of MaxInt64 elements (MaxInt64 bytes) with alignment 1:
	// every bound holds with equality, so the only error is the missing data.
	r := (&raw{}).header(3, 1, 1).str("general.alignment").u32(uint32(TypeUint32)).u32(1)
	r.info("big", I8, 0, math.MaxInt64)
	if _, err := Parse(r.b); err == nil || !strings.Contains(err.Error(), "lies beyond the end of the file") {
		t.Errorf("MaxInt64 bytes: got %v, want only the data missing", err)
	}
	// A cut inside a tensor's dimensions names the tensor.
	b := one("w", F32, 1, 1, 1, 1)
	_, err := Parse(b[:24+9+4+8+8+5]) // 34 bytes left: the count bound holds
	var e *Error
	if !errors.As(err, &e) || e.Tensor != "w" || !strings.Contains(e.Msg, "dimension needs 8 bytes") {
		t.Errorf("cut in a dimension: got %v, want it to name tensor w", err)
	}
}

// TestCloseParsed: Close of a File from Parse (no mapping) succeeds.
func TestCloseParsed(t *testing.T) {
	f, err := Parse(good())
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil || f.Tensors != nil {
		t.Errorf("Close: %v, tensors %v", err, f.Tensors)
	}
}

// TestWriterLimits: the writer's bounds are those of the reader (a 63-byte
// name, a byte size of at most MaxInt64/2), its errors concern no offset, and
// it reports what was written where and what is left unwritten.
func TestWriterLimits(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.gguf")
	for _, c := range []struct {
		name string
		kvs  []KV
		ts   []TensorInfo
		want string // "" when Create succeeds
	}{
		{"63-byte name", nil, []TensorInfo{{Name: strings.Repeat("n", 63), Type: F32, Shape: []uint64{1}}}, ""},
		{"64-byte name", nil, []TensorInfo{{Name: strings.Repeat("n", 64), Type: F32, Shape: []uint64{1}}}, "empty, duplicate or longer than 63 bytes"},
		{"MaxInt64/2 bytes", nil, []TensorInfo{{Name: "a", Type: I8, Shape: []uint64{math.MaxInt64 / 2}}}, ""},
		{"2^62 bytes", nil, []TensorInfo{{Name: "a", Type: I8, Shape: []uint64{1 << 62}}}, "byte size overflows"},
		{"MaxInt64 elements", nil, []TensorInfo{{Name: "a", Type: I8, Shape: []uint64{math.MaxInt64}}}, "byte size overflows"},
		{"shape overflows", nil, []TensorInfo{{Name: "a", Type: I8, Shape: []uint64{1 << 32, 1 << 32}}}, "shape [4294967296 4294967296] overflows"},
		{"duplicate key", []KV{{Key: "a", Value: Uint8(1)}, {Key: "a", Value: Uint8(2)}}, nil, "empty or duplicate key"},
		{"bad alignment", []KV{{Key: "general.alignment", Value: Uint32(3)}}, nil, "alignment must be a u32 power of two"},
		{"nested array", []KV{{Key: "a", Value: Array([]Value{Array([]uint8{1})})}}, nil, "arrays of arrays are not written"},
	} {
		w, err := Create(path, c.kvs, c.ts)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			} else {
				w.Abort()
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Offset != -1 || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "offset") {
			t.Errorf("%s: got %v, want %q at offset -1", c.name, err, c.want)
		}
	}
	ts := []TensorInfo{{Name: "a", Type: F32, Shape: []uint64{2}}, {Name: "b", Type: F32, Shape: []uint64{2}}}
	for _, c := range []struct {
		name string
		do   func(w *Writer) error
		want string
	}{
		{"wrong order", func(w *Writer) error { return w.WriteTensor("b", make([]byte, 8)) }, "written where a comes next"},
		{"short", func(w *Writer) error { return w.WriteTensor("a", make([]byte, 7)) }, "7 bytes, want 8 for F32 [2]"},
		{"after the last", func(w *Writer) error {
			w.WriteTensor("a", make([]byte, 8))
			w.WriteTensor("b", make([]byte, 8))
			return w.WriteTensor("c", make([]byte, 8))
		}, "written after the last tensor"},
		{"none written", func(w *Writer) error { return w.Close() }, "closed with 2 tensors unwritten, next a"},
		{"one written", func(w *Writer) error { w.WriteTensor("a", make([]byte, 8)); return w.Close() }, "closed with 1 tensors unwritten, next b"},
	} {
		w, err := Create(path, nil, ts)
		if err != nil {
			t.Fatal(err)
		}
		err = c.do(w)
		w.Abort()
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrFormat) || e.Offset != -1 || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "offset") {
			t.Errorf("%s: got %v, want %q at offset -1", c.name, err, c.want)
		}
	}
	// Close after Abort reports the abort.
	w, err := Create(path, nil, ts)
	if err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if err := w.Close(); err == nil || err.Error() != "gguf: writer aborted" {
		t.Errorf("Close after Abort: %v", err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Errorf("left behind: %v", names)
	}
}
