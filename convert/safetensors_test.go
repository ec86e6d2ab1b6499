package convert

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stFile builds a safetensors file from a JSON header and raw data bytes.
func stFile(header string, data []byte) []byte {
	b := make([]byte, 8, 8+len(header)+len(data))
	binary.LittleEndian.PutUint64(b, uint64(len(header)))
	b = append(b, header...)
	return append(b, data...)
}

func TestParseSafetensorsValues(t *testing.T) {
	// Hand-encoded values: f32 1.5 and -2; bf16 1.0 (0x3f80) and -0.5
	// (0xbf00); f16 1.0 (0x3c00) and 65504 (0x7bff).
	data := []byte{}
	data = binary.LittleEndian.AppendUint32(data, math.Float32bits(1.5))
	data = binary.LittleEndian.AppendUint32(data, math.Float32bits(-2))
	data = binary.LittleEndian.AppendUint16(data, 0x3f80)
	data = binary.LittleEndian.AppendUint16(data, 0xbf00)
	data = binary.LittleEndian.AppendUint16(data, 0x3c00)
	data = binary.LittleEndian.AppendUint16(data, 0x7bff)
	hdr := `{"__metadata__":{"format":"pt"},"h":{"dtype":"F16","shape":[2,1],"data_offsets":[12,16]},` +
		`"f":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"BF16","shape":[1,2],"data_offsets":[8,12]}}`
	f, err := ParseSafetensors(stFile(hdr, data), "x.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float32{"f": {1.5, -2}, "b": {1, -0.5}, "h": {1, 65504}}
	if len(f.Tensors) != 3 {
		t.Fatalf("got %d tensors, want 3", len(f.Tensors))
	}
	for _, tn := range f.Tensors {
		got, err := tn.F32()
		if err != nil {
			t.Fatal(err)
		}
		w := want[tn.Name]
		if len(got) != len(w) || got[0] != w[0] || got[1] != w[1] {
			t.Errorf("%s: got %v, want %v", tn.Name, got, w)
		}
	}
	if f.Metadata["format"] != "pt" {
		t.Errorf("metadata: got %v, want format pt", f.Metadata)
	}
	// Row access of the [2,1] f16 tensor.
	h := f.Tensors[2]
	row := make([]float32, 1)
	if err := h.RowsF32(row, 1, 2); err != nil || row[0] != 65504 {
		t.Errorf("RowsF32(1,2): got %v %v, want [65504]", row, err)
	}
	if err := h.RowsF32(row, 2, 3); err == nil {
		t.Errorf("RowsF32 past the end: got nil error")
	}
}

func TestParseSafetensorsErrors(t *testing.T) {
	d16 := make([]byte, 16)
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"short", []byte{1, 2, 3}, "shorter than the 8-byte"},
		{"header past end", func() []byte { b := stFile(`{}`, nil); b[0] = 200; return b }(), "exceeds the file size"},
		{"huge header", func() []byte { b := stFile(`{}`, nil); binary.LittleEndian.PutUint64(b, 1<<40); return b }(), "exceeds the limit"},
		{"not object", stFile(`[1]`, nil), "not a JSON object"},
		{"bad json", stFile(`{"a":`, nil), "tensor \"a\""},
		{"unknown dtype", stFile(`{"a":{"dtype":"Q4","shape":[1],"data_offsets":[0,1]}}`, d16), "unknown dtype \"Q4\""},
		{"outside", stFile(`{"a":{"dtype":"F32","shape":[8],"data_offsets":[0,32]}}`, d16), "outside the 16 data bytes"},
		{"size mismatch", stFile(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}}`, d16), "needs 12"},
		{"reversed", stFile(`{"a":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}}`, d16), "outside"},
		{"overlap", stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, d16), "overlap"},
		{"duplicate", stFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, d16), "listed twice"},
		{"negative dim", stFile(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, d16), "bad dimension"},
		{"too many dims", stFile(`{"a":{"dtype":"U8","shape":[1,1,1,1,1,1,1,1,1],"data_offsets":[0,1]}}`, d16), "9 dimensions"},
		{"a million dims", stFile(`{"a":{"dtype":"U8","shape":[1`+strings.Repeat(",1", 1<<20)+`],"data_offsets":[0,1]}}`, d16), "1048577 dimensions"},
		{"shape not a list", stFile(`{"a":{"dtype":"U8","shape":{"x":1},"data_offsets":[0,1]}}`, d16), "shape is not a list"},
		{"shape of strings", stFile(`{"a":{"dtype":"U8","shape":["1,2"],"data_offsets":[0,1]}}`, d16), "not a number"},
		{"shape of lists", stFile(`{"a":{"dtype":"U8","shape":[1,[2,3]],"data_offsets":[0,1]}}`, d16), "not a number"},
		{"fractional dim", stFile(`{"a":{"dtype":"U8","shape":[1.5],"data_offsets":[0,1]}}`, d16), "bad dimension"},
		{"overflow", stFile(`{"a":{"dtype":"F32","shape":[2147483647,2147483647,2147483647],"data_offsets":[0,4]}}`, d16), "overflows"},
		{"trailing", stFile(`{} {}`, nil), "trailing data"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSafetensors(tc.file, "bad.safetensors")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "bad.safetensors") {
				t.Errorf("got %v, want an error naming the file and containing %q", err, tc.want)
			}
		})
	}
}

func TestUnreadableDType(t *testing.T) {
	f, err := ParseSafetensors(stFile(`{"a":{"dtype":"I8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"F8_E4M3","shape":[4],"data_offsets":[4,8]}}`, make([]byte, 8)), "q.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range f.Tensors {
		if _, err := tn.F32(); err == nil || !strings.Contains(err.Error(), tn.DType) {
			t.Errorf("%s: got %v, want an error naming %s", tn.Name, err, tn.DType)
		}
	}
}

func TestOpenCheckpointErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenCheckpoint(dir); err == nil || !strings.Contains(err.Error(), "model.safetensors") {
		t.Errorf("empty folder: got %v, want an error naming model.safetensors", err)
	}
	os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), []byte(`{"weight_map":{"a":"../x.safetensors"}}`), 0o644)
	if _, err := OpenCheckpoint(dir); err == nil || !strings.Contains(err.Error(), "not a file in the folder") {
		t.Errorf("path in weight_map: got %v, want a refusal", err)
	}
	os.WriteFile(filepath.Join(dir, "s1.safetensors"), stFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)), 0o644)
	os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), []byte(`{"weight_map":{"a":"s1.safetensors","b":"s1.safetensors"}}`), 0o644)
	if _, err := OpenCheckpoint(dir); err == nil || !strings.Contains(err.Error(), `"b"`) {
		t.Errorf("missing tensor: got %v, want an error naming b", err)
	}
	os.WriteFile(filepath.Join(dir, "s2.safetensors"), stFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)), 0o644)
	os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), []byte(`{"weight_map":{"a":"s1.safetensors","c":"s2.safetensors"}}`), 0o644)
	if _, err := OpenCheckpoint(dir); err == nil || !strings.Contains(err.Error(), "in both") {
		t.Errorf("tensor in two shards: got %v, want an error", err)
	}
}

func FuzzParseSafetensors(f *testing.F) {
	f.Add(stFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"__metadata__":{"x":"y"}}`, make([]byte, 8)))
	f.Add(stFile(`{"b":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]},"c":{"dtype":"F16","shape":[1],"data_offsets":[8,10]}}`, make([]byte, 10)))
	f.Add(stFile(`{}`, nil))
	// A shape longer than the limit, and one with a non-number (shapeJSON).
	f.Add(stFile(`{"a":{"dtype":"U8","shape":[1,1,1,1,1,1,1,1,1,1,1,1],"data_offsets":[0,1]}}`, make([]byte, 1)))
	f.Add(stFile(`{"a":{"dtype":"U8","shape":[1,"1"],"data_offsets":[0,1]},"b":{"dtype":"U8","shape":null,"data_offsets":[1,2]}}`, make([]byte, 2)))
	f.Fuzz(func(t *testing.T, b []byte) {
		sf, err := ParseSafetensors(b, "fuzz")
		if err != nil {
			return
		}
		for _, tn := range sf.Tensors {
			if tn.Readable() != nil || tn.Elems() > 1<<16 {
				continue
			}
			if _, err := tn.F32(); err != nil {
				t.Fatalf("F32 of a validated tensor: %v", err)
			}
			if tn.Rows() > 0 {
				if err := tn.RowsF32(make([]float32, tn.Cols()), tn.Rows()-1, tn.Rows()); err != nil {
					t.Fatalf("RowsF32 of a validated tensor: %v", err)
				}
			}
		}
	})
}

// TestReleaseKeepsData drops the pages of a mapped tensor and reads it
// again: the values come back from the file. A tensor parsed from memory
// is never released (madvise would zero heap memory).
func TestReleaseKeepsData(t *testing.T) {
	n := 8192 // floats: 32 KiB, several pages
	data := make([]byte, 4*n)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(i)))
	}
	file := stFile(`{"a":{"dtype":"F32","shape":[64,128],"data_offsets":[0,32768]}}`, data)
	p := filepath.Join(t.TempDir(), "m.safetensors")
	if err := os.WriteFile(p, file, 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(tn *Tensor, what string) {
		v, err := tn.F32()
		if err != nil {
			t.Fatal(err)
		}
		for i, x := range v {
			if x != float32(i) {
				t.Fatalf("%s: value %d: got %v, want %v", what, i, x, float32(i))
			}
		}
	}
	f, err := OpenSafetensors(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tn := f.Tensors[0]
	check(tn, "before release")
	tn.releaseRows(0, 64)
	tn.release()
	check(tn, "mapped, after release")
	mem, err := ParseSafetensors(append([]byte(nil), file...), "mem")
	if err != nil {
		t.Fatal(err)
	}
	mem.Tensors[0].release()
	mem.Tensors[0].releaseRows(0, 64)
	check(mem.Tensors[0], "in memory, after release")
}

// TestOpenSafetensorsReadFallback runs OpenSafetensors's path for systems
// without mmap (mmap_other.go), here by forcing it: the file is read, not
// mapped, its values are right, and a release leaves them (read memory is
// never given back).
func TestOpenSafetensorsReadFallback(t *testing.T) {
	defer func() { noMmap = false }()
	noMmap = true
	n := 4096
	data := make([]byte, 4*n)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(i)))
	}
	p := filepath.Join(t.TempDir(), "m.safetensors")
	if err := os.WriteFile(p, stFile(`{"a":{"dtype":"F32","shape":[32,128],"data_offsets":[0,16384]}}`, data), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenSafetensors(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.mapped || f.Tensors[0].mapped {
		t.Fatal("the file is marked mapped on the read path")
	}
	tn := f.Tensors[0]
	tn.release()
	v, err := tn.F32()
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range v {
		if x != float32(i) {
			t.Fatalf("value %d: got %v, want %v", i, x, float32(i))
		}
	}
}
