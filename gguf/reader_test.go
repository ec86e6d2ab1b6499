package gguf

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/krafla/krafla/internal/testenv"
)

func TestParseGood(t *testing.T) {
	f, err := Parse(good())
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := f.String("general.architecture"); s != "llama" {
		t.Errorf("architecture %q, want llama", s)
	}
	if n, _ := f.Uint("llama.block_count"); n != 1 {
		t.Errorf("block_count %d, want 1", n)
	}
	b := f.Tensor("b")
	if b == nil || !reflect.DeepEqual(b.Shape, []uint64{8, 2}) || b.Size != 64 || b.Offset != 32 || len(b.Data) != 64 {
		t.Fatalf("tensor b = %+v", b)
	}
	if got := math.Float32frombits(uint32(b.Data[0]) | uint32(b.Data[1])<<8 | uint32(b.Data[2])<<16 | uint32(b.Data[3])<<24); got != 8 {
		t.Errorf("b[0] = %v, want 8", got)
	}
	if f.DataOffset%32 != 0 {
		t.Errorf("data offset %d not aligned", f.DataOffset)
	}
}

// crafted returns one file per fault class: the ones behind the published
// GGUF loader bugs (llama.cpp CVE-2024-23496: unchecked counts and string
// lengths; CVE-2026-27940: dimension products that wrap; "Bleeding Llama":
// offsets outside the data; ollama#17032: a 36-byte file) and the other rules.
func crafted() []struct {
	name string
	b    []byte
	want error
} {
	kv := func(r *raw) *raw { return r.str("general.architecture").u32(uint32(TypeString)).str("llama") }
	one := func(f func(r *raw)) []byte {
		r := &raw{}
		f(r)
		return r.b
	}
	tensor := func(name string, typ Type, off uint64, dataLen int, shape ...uint64) []byte {
		r := (&raw{}).header(3, 1, 1)
		kv(r)
		r.info(name, typ, off, shape...).pad(32)
		r.b = append(r.b, make([]byte, dataLen)...)
		return r.b
	}
	return []struct {
		name string
		b    []byte
		want error
	}{
		{"ollama#17032 36-byte file", one(func(r *raw) { r.header(3, 1, 0).u64(math.MaxUint64).u32(1) }), ErrFormat},
		{"CVE-2024-23496 key length past the end", one(func(r *raw) { r.header(3, 0, 1).u64(1 << 62).bytes('a') }), ErrFormat},
		{"CVE-2024-23496 string value length past the end", one(func(r *raw) {
			r.header(3, 0, 1).str("k").u32(uint32(TypeString)).u64(math.MaxUint64)
		}), ErrFormat},
		{"CVE-2024-23496 array count past the end", one(func(r *raw) {
			r.header(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeUint32)).u64(1 << 61).u32(7)
		}), ErrFormat},
		{"CVE-2024-23496 string array count past the end", one(func(r *raw) {
			r.header(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(1 << 40).str("x")
		}), ErrFormat},
		{"CVE-2024-23496 metadata count past the end", one(func(r *raw) { r.header(3, 0, 1<<40) }), ErrFormat},
		{"CVE-2024-23496 tensor count past the end", one(func(r *raw) { r.header(3, 1<<40, 0) }), ErrFormat},
		{"CVE-2026-27940 element count wraps", tensor("w", F32, 0, 64, 1<<32, 1<<32, 16), ErrFormat},
		{"CVE-2026-27940 byte size wraps", tensor("w", F32, 0, 64, 1<<31, 1<<31, 2), ErrFormat},
		{"CVE-2026-27940 quantized byte size wraps", tensor("w", Q8_0, 0, 64, 1<<40, 1<<22), ErrFormat},
		{"negative dimension", tensor("w", F32, 0, 64, 1<<63), ErrFormat},
		{"five dimensions", tensor("w", F32, 0, 64, 1, 1, 1, 1, 1), ErrFormat},
		{"Bleeding Llama offset beyond the file", tensor("w", F32, 0, 8, 16), ErrFormat},
		{"Bleeding Llama offset far outside", tensor("w", F32, 1<<40, 64, 4), ErrFormat},
		{"misaligned offset", tensor("w", F32, 4, 64, 4), ErrFormat},
		{"overlapping tensors", one(func(r *raw) {
			r.header(3, 2, 0).info("a", F32, 0, 16).info("b", F32, 32, 16).pad(32)
			r.b = append(r.b, make([]byte, 128)...)
		}), ErrFormat},
		{"gap between tensors", one(func(r *raw) {
			r.header(3, 2, 0).info("a", F32, 0, 4).info("b", F32, 64, 4).pad(32)
			r.b = append(r.b, make([]byte, 128)...)
		}), ErrFormat},
		{"row not a multiple of the block", tensor("w", Q4_0, 0, 64, 20), ErrFormat},
		{"duplicate key", one(func(r *raw) { r.header(3, 0, 2); kv(r); kv(r) }), ErrFormat},
		{"empty key", one(func(r *raw) { r.header(3, 0, 1).str("").u32(uint32(TypeUint8)).bytes(1) }), ErrFormat},
		{"duplicate tensor name", one(func(r *raw) {
			r.header(3, 2, 0).info("a", F32, 0, 8).info("a", F32, 32, 8).pad(32)
			r.b = append(r.b, make([]byte, 64)...)
		}), ErrFormat},
		{"empty tensor name", tensor("", F32, 0, 64, 4), ErrFormat},
		{"tensor name of 64 bytes", tensor(strings.Repeat("n", 64), F32, 0, 64, 4), ErrFormat},
		{"unknown tensor type", tensor("w", Type(99), 0, 64, 4), ErrFormat},
		{"removed tensor type", tensor("w", Type(31), 0, 64, 32), ErrFormat},
		{"unknown value type", one(func(r *raw) { r.header(3, 0, 1).str("k").u32(13).u64(0) }), ErrFormat},
		{"unknown array element type", one(func(r *raw) { r.header(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(77).u64(0) }), ErrFormat},
		{"bool value 2", one(func(r *raw) { r.header(3, 0, 1).str("k").u32(uint32(TypeBool)).bytes(2) }), ErrFormat},
		{"arrays nested too deep", one(func(r *raw) {
			r.header(3, 0, 1).str("k").u32(uint32(TypeArray))
			for range 4 {
				r.u32(uint32(TypeArray)).u64(1)
			}
			r.u32(uint32(TypeUint8)).u64(0)
		}), ErrFormat},
		{"alignment zero", one(func(r *raw) { r.header(3, 0, 1).str("general.alignment").u32(uint32(TypeUint32)).u32(0) }), ErrFormat},
		{"alignment not a power of two", one(func(r *raw) { r.header(3, 0, 1).str("general.alignment").u32(uint32(TypeUint32)).u32(48) }), ErrFormat},
		{"alignment not u32", one(func(r *raw) { r.header(3, 0, 1).str("general.alignment").u32(uint32(TypeUint64)).u64(32) }), ErrFormat},
		{"bad magic", append([]byte("GGUG"), good()[4:]...), ErrFormat},
		{"big-endian file", append([]byte("GGUF\x00\x00\x00\x03"), good()[8:]...), ErrFormat},
		{"version 1", append([]byte("GGUF\x01\x00\x00\x00"), good()[8:]...), ErrFormat},
		{"version 4", append([]byte("GGUF\x04\x00\x00\x00"), good()[8:]...), ErrFormat},
		{"empty file", nil, ErrFormat},
	}
}

func TestCrafted(t *testing.T) {
	for _, c := range crafted() {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.b)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			var e *Error
			if !errors.As(err, &e) || e.Msg == "" {
				t.Fatalf("error %v is not a *gguf.Error with a message", err)
			}
			t.Log(err)
		})
	}
}

// TestErrorNamesKeyAndOffset checks that errors say where.
func TestErrorNamesKeyAndOffset(t *testing.T) {
	r := (&raw{}).header(3, 0, 2).str("a").u32(uint32(TypeUint8)).bytes(1)
	r.str("tokenizer.ggml.tokens").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(3).str("x")
	_, err := Parse(r.b)
	var e *Error
	if !errors.As(err, &e) || e.Key != "tokenizer.ggml.tokens" || e.Offset <= 0 {
		t.Fatalf("got %v, want an error naming tokenizer.ggml.tokens with an offset", err)
	}
	f, err := Parse(good())
	if err != nil {
		t.Fatal(err)
	}
	at := f.Tensor("b").InfoOffset
	b := good()
	// name "b" (8+1), n_dims (4), 2 dims (16), type (4): offset follows.
	b[at+9+4+16+4] = 0x40
	_, err = Parse(b)
	if !errors.As(err, &e) || e.Tensor != "b" || e.Offset != at || !strings.Contains(err.Error(), "want 0x20") {
		t.Fatalf("got %v, want an error naming tensor b at %#x", err, at)
	}
}

// TestTruncated cuts a valid file at every byte up to the end of the last
// tensor's data: every prefix must fail cleanly.
func TestTruncated(t *testing.T) {
	files := map[string][]byte{"good": good()}
	if p := sharedGGUF(t, false); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files["stories260K"] = b
	}
	for name, b := range files {
		f, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		last := f.Tensors[len(f.Tensors)-1]
		end := int(f.DataOffset) + int(last.Offset+last.Size)
		for n := 0; n < end; n++ {
			if n > int(f.DataOffset) && n%997 != 0 && n != end-1 {
				continue // every byte of the header, a sample of the data
			}
			if _, err := Parse(b[:n]); !errors.Is(err, ErrFormat) {
				t.Fatalf("%s cut at %d of %d: got %v, want ErrFormat", name, n, end, err)
			}
		}
	}
}

func sharedGGUF(t testing.TB, skip bool) string {
	if skip {
		return testenv.Model(t, "stories260K.gguf")
	}
	// testenv.Model skips; probe first so the test can go on without it.
	p := testenv.ModelPath(t, "stories260K.gguf")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// allocBound is what parsing an input of n bytes may allocate: a small
// multiple of the input, never what a lying header claims.
func allocBound(n int) uint64 { return uint64(16*n + 64<<10) }

// parseAlloc returns the bytes Parse allocates for b.
func parseAlloc(b []byte) uint64 {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	Parse(b)
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

func TestAllocationBounded(t *testing.T) {
	for _, c := range crafted() {
		if a := parseAlloc(c.b); a > allocBound(len(c.b)) {
			t.Errorf("%s: %d bytes allocated for a %d-byte input", c.name, a, len(c.b))
		}
	}
	// Files that are all metadata: the most allocation per input byte.
	r := (&raw{}).header(3, 0, 1).str("tokenizer.ggml.tokens").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(50000)
	for range 50000 {
		r.str("")
	}
	if a := parseAlloc(r.b); a > allocBound(len(r.b)) {
		t.Errorf("empty strings: %d bytes allocated for a %d-byte input", a, len(r.b))
	}
	r = (&raw{}).header(3, 0, 20000)
	for i := range 20000 {
		r.str(string(rune('a'+i%26)) + strings.Repeat("k", i%7) + string(rune(0x100+i))).u32(uint32(TypeUint8)).bytes(0)
	}
	if a := parseAlloc(r.b); a > allocBound(len(r.b)) {
		t.Errorf("many keys: %d bytes allocated for a %d-byte input", a, len(r.b))
	}
	if p := sharedGGUF(t, false); p != "" {
		b, _ := os.ReadFile(p)
		if a := parseAlloc(b); a > allocBound(len(b)) {
			t.Errorf("stories260K: %d bytes allocated for %d", a, len(b))
		}
	}
}

func TestStories260K(t *testing.T) {
	f, err := Open(sharedGGUF(t, true))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Values read from the file by hand (xxd) and from the model's README.
	if f.Version != 3 || len(f.Tensors) != 48 || len(f.KVs) != 19 {
		t.Errorf("version %d, %d tensors, %d keys; want 3, 48, 19", f.Version, len(f.Tensors), len(f.KVs))
	}
	toks, _ := f.Lookup("tokenizer.ggml.tokens")
	if s, ok := toks.Strings(); !ok || len(s) != 512 || s[1] != "<s>" || s[3] != "<0x00>" {
		t.Errorf("tokens: %d, want 512 starting <unk> <s> </s> <0x00>", toks.Len())
	}
	if n, _ := f.Uint("llama.feed_forward_length"); n != 172 {
		t.Errorf("feed_forward_length %d, want 172", n)
	}
	if w := f.Tensor("blk.0.ffn_down.weight"); w == nil || !reflect.DeepEqual(w.Shape, []uint64{172, 64}) || w.Type != F32 {
		t.Errorf("blk.0.ffn_down.weight = %+v", w)
	}
}

// TestWriteRoundTrip writes every value type and several tensor types and
// reads them back.
func TestWriteRoundTrip(t *testing.T) {
	kvs := []KV{
		{Key: "general.alignment", Value: Uint32(64)},
		{Key: "u8", Value: Uint8(200)}, {Key: "i8", Value: Int8(-100)},
		{Key: "u16", Value: Uint16(60000)}, {Key: "i16", Value: Int16(-30000)},
		{Key: "u32", Value: Uint32(4e9)}, {Key: "i32", Value: Int32(-2e9)},
		{Key: "f32", Value: Float32(1.5)}, {Key: "bool", Value: Bool(true)},
		{Key: "string", Value: String("a template\n")},
		{Key: "u64", Value: Uint64(1 << 60)}, {Key: "i64", Value: Int64(-1 << 60)},
		{Key: "f64", Value: Float64(math.Pi)},
		{Key: "a.u8", Value: Array([]uint8{1, 2})}, {Key: "a.i8", Value: Array([]int8{-1})},
		{Key: "a.u16", Value: Array([]uint16{7})}, {Key: "a.i16", Value: Array([]int16{-7})},
		{Key: "a.u32", Value: Array([]uint32{1 << 31})}, {Key: "a.i32", Value: Array([]int32{-5, 6})},
		{Key: "a.f32", Value: Array([]float32{0.25, -1})}, {Key: "a.bool", Value: Array([]bool{true, false})},
		{Key: "a.string", Value: Array([]string{"", "▁x", "\x00"})},
		{Key: "a.u64", Value: Array([]uint64{9})}, {Key: "a.i64", Value: Array([]int64{-9})},
		{Key: "a.f64", Value: Array([]float64{2.5})}, {Key: "a.empty", Value: Array([]float32{})},
	}
	ts := []TensorInfo{
		{Name: "f32", Type: F32, Shape: []uint64{3}},
		{Name: "q8", Type: Q8_0, Shape: []uint64{64, 2}},
		{Name: "q4k", Type: Q4_K, Shape: []uint64{256}},
		{Name: "scalar", Type: F16},
	}
	data := [][]byte{bytes.Repeat([]byte{1}, 12), bytes.Repeat([]byte{2}, 4*34), bytes.Repeat([]byte{3}, 144), {4, 5}}
	path := filepath.Join(t.TempDir(), "x.gguf")
	w, err := Create(path, kvs, ts)
	if err != nil {
		t.Fatal(err)
	}
	for i, ti := range w.Tensors() {
		if err := w.WriteTensor(ti.Name, data[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Alignment != 64 || len(f.KVs) != len(kvs) {
		t.Fatalf("alignment %d, %d keys", f.Alignment, len(f.KVs))
	}
	for i, kv := range kvs {
		got := f.KVs[i]
		if got.Key != kv.Key || got.Value.Type != kv.Value.Type || got.Value.Elem != kv.Value.Elem ||
			!reflect.DeepEqual(got.Value.Interface(), kv.Value.Interface()) {
			t.Errorf("key %s: got %v %v, want %v %v", kv.Key, got.Value.Type, got.Value, kv.Value.Type, kv.Value)
		}
	}
	for i, ti := range ts {
		g := f.Tensor(ti.Name)
		if g == nil || g.Type != ti.Type || !bytes.Equal(g.Data, data[i]) || g.Offset%64 != 0 {
			t.Errorf("tensor %s: got %+v", ti.Name, g)
		}
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	// Write → read → write gives the same bytes.
	b1, _ := os.ReadFile(path)
	path2 := filepath.Join(t.TempDir(), "y.gguf")
	infos := make([]TensorInfo, len(f.Tensors))
	for i := range f.Tensors {
		infos[i] = f.Tensors[i].TensorInfo
	}
	w2, err := Create(path2, f.KVs, infos)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range f.Tensors {
		if err := w2.WriteTensor(tt.Name, tt.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
	if b2, _ := os.ReadFile(path2); !bytes.Equal(b1, b2) {
		t.Error("rewritten file differs")
	}
}

func TestWriterRefuses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.gguf")
	cases := []struct {
		name string
		kvs  []KV
		ts   []TensorInfo
	}{
		{"duplicate key", []KV{{Key: "a", Value: Uint8(1)}, {Key: "a", Value: Uint8(2)}}, nil},
		{"bad alignment", []KV{{Key: "general.alignment", Value: Uint32(3)}}, nil},
		{"nested array", []KV{{Key: "a", Value: Array([]Value{Array([]uint8{1})})}}, nil},
		{"duplicate tensor", nil, []TensorInfo{{Name: "a", Type: F32, Shape: []uint64{1}}, {Name: "a", Type: F32, Shape: []uint64{1}}}},
		{"five dims", nil, []TensorInfo{{Name: "a", Type: F32, Shape: []uint64{1, 1, 1, 1, 1}}}},
		{"removed type", nil, []TensorInfo{{Name: "a", Type: 31, Shape: []uint64{32}}}},
		{"partial block", nil, []TensorInfo{{Name: "a", Type: Q8_0, Shape: []uint64{16}}}},
	}
	for _, c := range cases {
		if _, err := Create(path, c.kvs, c.ts); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: got %v, want ErrFormat", c.name, err)
		}
	}
	// Wrong order, wrong size, missing tensor: nothing lands at path.
	ts := []TensorInfo{{Name: "a", Type: F32, Shape: []uint64{2}}, {Name: "b", Type: F32, Shape: []uint64{2}}}
	w, _ := Create(path, nil, ts)
	if err := w.WriteTensor("b", make([]byte, 8)); err == nil {
		t.Error("out of order write accepted")
	}
	w.Abort()
	w, _ = Create(path, nil, ts)
	if err := w.WriteTensor("a", make([]byte, 7)); err == nil {
		t.Error("short tensor accepted")
	}
	w.Abort()
	w, _ = Create(path, nil, ts)
	w.WriteTensor("a", make([]byte, 8))
	if err := w.Close(); err == nil {
		t.Error("missing tensor accepted")
	}
	if names := testenv.DirNames(t, dir); len(names) != 0 {
		t.Errorf("left behind: %v", names)
	}
}
