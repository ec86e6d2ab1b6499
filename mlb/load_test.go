package mlb_test

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlb/mlbtest"
)

// TestTruncation cuts valid files at every array boundary: at the start of each
// array and one byte before its end the loader names that array with
// ML_E_FORMAT; at the end of the last array's data (the final padding is
// optional) the file loads.
func TestTruncation(t *testing.T) {
	for _, name := range []string{"q8", "q4_mask_all_f16", "gemma3_local_rope", "qwen35_linear_q4_mask"} {
		t.Run(name, func(t *testing.T) {
			h := mlbtest.CaseHeader(t, name)
			b := validBytes(t, h)
			arrs, err := mlb.Layout(&h)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range arrs {
				for _, n := range []int64{a.Offset, a.End() - 1} {
					_, err := mlb.Parse(b[:n])
					wantCode(t, err, mlb.CodeFormat, mlb.ErrFormat)
					if !strings.Contains(err.Error(), "tensor "+a.Name+":") {
						t.Fatalf("cut at %d: got %v, want it to name %s", n, err, a.Name)
					}
				}
			}
			last := arrs[len(arrs)-1]
			if _, err := mlb.Parse(b[:last.End()]); err != nil {
				t.Fatalf("cut after the last array's data: %v", err)
			}
			if got, want := int64(len(b)), (last.End()+63)/64*64; got != want {
				t.Errorf("writer wrote %d bytes, want %d (padded)", got, want)
			}
		})
	}
}

// TestLayoutSpec checks the layout against SPEC.md's body order and sizes,
// computed here by hand for one layer of mlbtest.Base (dim 64, 4 heads of 16,
// 2 KV heads, FFN 96, vocab 67) as Q4_0 with q8_mask 4 (wq and wk) and f16 scales.
func TestLayoutSpec(t *testing.T) {
	h := mlbtest.Base()
	h.NLayers, h.WType, h.Q8Mask, h.ScaleF16, h.QKVBias = 1, mlb.WTypeQ4_0, mlb.MaskWQK, 1, 1
	arrs, err := mlb.Layout(&h)
	if err != nil {
		t.Fatal(err)
	}
	type w struct {
		name  string
		elem  mlb.Elem
		bytes int64
	}
	want := []w{
		{"tok_emb.q", mlb.ElemQ4, 67 * 64 / 2}, {"tok_emb.d", mlb.ElemScaleF16, 67 * 2 * 2},
		{"blk.0.attn_norm", mlb.ElemF32, 64 * 4},
		{"blk.0.wq.q", mlb.ElemQ8, 64 * 64}, {"blk.0.wq.d", mlb.ElemScaleF16, 64 * 2 * 2},
		{"blk.0.wk.q", mlb.ElemQ8, 32 * 64}, {"blk.0.wk.d", mlb.ElemScaleF16, 32 * 2 * 2},
		{"blk.0.wv.q", mlb.ElemQ4, 32 * 64 / 2}, {"blk.0.wv.d", mlb.ElemScaleF16, 32 * 2 * 2},
		{"blk.0.wo.q", mlb.ElemQ4, 64 * 64 / 2}, {"blk.0.wo.d", mlb.ElemScaleF16, 64 * 2 * 2},
		{"blk.0.bq", mlb.ElemF32, 64 * 4}, {"blk.0.bk", mlb.ElemF32, 32 * 4}, {"blk.0.bv", mlb.ElemF32, 32 * 4},
		{"blk.0.ffn_norm", mlb.ElemF32, 64 * 4},
		{"blk.0.w1.q", mlb.ElemQ4, 96 * 64 / 2}, {"blk.0.w1.d", mlb.ElemScaleF16, 96 * 2 * 2},
		{"blk.0.w2.q", mlb.ElemQ4, 64 * 96 / 2}, {"blk.0.w2.d", mlb.ElemScaleF16, 64 * 3 * 2},
		{"blk.0.w3.q", mlb.ElemQ4, 96 * 64 / 2}, {"blk.0.w3.d", mlb.ElemScaleF16, 96 * 2 * 2},
		{"final_norm", mlb.ElemF32, 64 * 4},
		{"wcls.q", mlb.ElemQ4, 67 * 64 / 2}, {"wcls.d", mlb.ElemScaleF16, 67 * 2 * 2},
	}
	if len(arrs) != len(want) {
		t.Fatalf("got %d arrays, want %d", len(arrs), len(want))
	}
	off := int64(256)
	for i, a := range arrs {
		if a.Name != want[i].name || a.Elem != want[i].elem || a.Bytes != want[i].bytes || a.Offset != off {
			t.Errorf("array %d: got %s %v %d bytes at %d, want %s %v %d bytes at %d",
				i, a.Name, a.Elem, a.Bytes, a.Offset, want[i].name, want[i].elem, want[i].bytes, off)
		}
		off += (want[i].bytes + 63) / 64 * 64
	}
}

// TestQ8Classes checks which tensors each q8_mask bit turns to Q8_0 (SPEC.md's
// list), including tok_emb under a shared classifier and lb/la always.
func TestQ8Classes(t *testing.T) {
	classes := map[uint32][]string{
		mlb.MaskTokEmb: {"tok_emb"},
		mlb.MaskWcls:   {"wcls"},
		mlb.MaskWQK:    {"wq", "wk", "wg", "lqkv"},
		mlb.MaskWV:     {"wv", "lz"},
		mlb.MaskWO:     {"wo", "lout"},
		mlb.MaskW13:    {"w1", "w3"},
		mlb.MaskW2:     {"w2"},
	}
	always := map[string]bool{"lb": true, "la": true}
	for _, shared := range []uint32{0, 1} {
		for bit, names := range classes {
			h := mlbtest.Base()
			linearBase(&h)
			h.AttnGate, h.WType, h.Q8Mask, h.SharedClassifier = 1, mlb.WTypeQ4_0, bit, shared
			ts, err := mlb.Tensors(&h)
			if err != nil {
				t.Fatal(err)
			}
			in := map[string]bool{}
			for _, n := range names {
				in[n] = true
			}
			if shared == 1 && bit == mlb.MaskWcls {
				in["tok_emb"] = true
			}
			for _, ti := range ts {
				if !ti.Type.Quantized() {
					continue
				}
				short := ti.Name[strings.LastIndex(ti.Name, ".")+1:]
				want := mlb.Q4_0
				if in[short] || always[short] {
					want = mlb.Q8_0
				}
				if ti.Type != want {
					t.Errorf("q8_mask %d shared %d: %s got %v, want %v", bit, shared, ti.Name, ti.Type, want)
				}
			}
		}
	}
}

// TestMinus128 plants a -128 in Q8_0 quants of several kinds and expects
// ML_E_FORMAT naming the tensor and the row and column; the same byte in Q4_0
// quants or in scales is fine.
func TestMinus128(t *testing.T) {
	for _, c := range []struct {
		caseName, array string
		at              int64 // byte inside the array
		ok              bool
		where           string
	}{
		{"q8", "blk.1.wq.q", 64*5 + 7, false, "row 5, column 7"},
		{"q8", "tok_emb.q", 0, false, "row 0, column 0"},
		{"q8", "wcls.q", 67*64 - 1, false, "row 66, column 63"},
		{"q4_mask1", "tok_emb.q", 64 + 1, false, "row 1, column 1"},
		{"qwen35_linear_q4_mask", "blk.0.lb.q", 3, false, "row 0, column 3"},
		{"qwen35_linear_q4_mask", "blk.0.la.q", 64*3 + 63, false, "row 3, column 63"},
		{"q4", "blk.0.wq.q", 10, true, ""},
		{"q8", "blk.0.wq.d", 1, true, ""},
	} {
		h := mlbtest.CaseHeader(t, c.caseName)
		b := validBytes(t, h)
		arrs, err := mlb.Layout(&h)
		if err != nil {
			t.Fatal(err)
		}
		var a *mlb.Array
		for i := range arrs {
			if arrs[i].Name == c.array {
				a = &arrs[i]
			}
		}
		if a == nil {
			t.Fatalf("%s has no array %s", c.caseName, c.array)
		}
		b[a.Offset+c.at] = 0x80
		_, err = openBytes(t, b)
		if c.ok {
			if err != nil {
				t.Errorf("%s %s: got %v, want no error", c.caseName, c.array, err)
			}
			continue
		}
		wantCode(t, err, mlb.CodeFormat, mlb.ErrFormat)
		tensor := strings.TrimSuffix(c.array, ".q")
		if !strings.Contains(err.Error(), "tensor "+tensor+":") || !strings.Contains(err.Error(), c.where) || !strings.Contains(err.Error(), "-128") {
			t.Errorf("got %q, want it to name %s, %s and -128", err, tensor, c.where)
		}
	}
}

// writeModel writes a model with header h at path through mlb.Writer, taking
// each F32 tensor's values from f32 and each quantized tensor's quants and
// encoded scales from mat.
func writeModel(tb testing.TB, path string, h mlb.Header, f32 func(mlb.TensorInfo) []float32, mat func(mlb.TensorInfo) (q, d []byte)) {
	tb.Helper()
	w, err := mlb.Create(path, &h)
	if err != nil {
		tb.Fatal(err)
	}
	defer w.Abort()
	for {
		ti, ok := w.Next()
		if !ok {
			break
		}
		left := len(w.Remaining())
		if ti.Type == mlb.F32 {
			err = w.WriteF32(ti.Name, f32(ti))
		} else {
			q, d := mat(ti)
			err = w.WriteMatrix(ti.Name, q, d)
		}
		if err != nil {
			tb.Fatal(err)
		}
		if n := len(w.Remaining()); n != left-1 {
			tb.Fatalf("%s written: %d tensors left, want %d", ti.Name, n, left-1) // else the loop never ends
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
}

// TestValues checks that the loaded tensors hold what the writer was given:
// f32 values in place, f16 scales converted exactly (bit patterns chosen by
// hand: 1, -2, the largest f16, the smallest subnormal), quants as int8.
func TestValues(t *testing.T) {
	h := mlbtest.Base()
	h.NLayers, h.ScaleF16 = 1, 1
	path := filepath.Join(t.TempDir(), "v.mlb")
	f16 := []uint16{0x3c00, 0xc000, 0x7bff, 0x0001}
	f16want := []float32{1, -2, 65504, float32(math.Ldexp(1, -24))}
	var norm []float32
	writeModel(t, path, h, func(ti mlb.TensorInfo) []float32 {
		v := make([]float32, ti.Elems())
		for i := range v {
			v[i] = float32(i) * 0.5
		}
		if ti.Name == "blk.0.attn_norm" {
			norm = v
		}
		return v
	}, func(ti mlb.TensorInfo) (q, d []byte) {
		n := int(ti.Elems())
		q = make([]byte, n)
		for i := range q {
			q[i] = byte(int8(i%255 - 127))
		}
		d = make([]byte, n/32*2)
		for i := 0; i < n/32; i++ {
			binary.LittleEndian.PutUint16(d[2*i:], f16[i%4])
		}
		return q, d
	})
	f, err := mlb.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	wq := f.Tensor("blk.0.wq")
	for i, d := range wq.D {
		if d != f16want[i%4] {
			t.Fatalf("scale %d: got %v, want %v", i, d, f16want[i%4])
		}
	}
	for i, q := range wq.Q8() {
		if want := int8(i%255 - 127); q != want {
			t.Fatalf("quant %d: got %d, want %d", i, q, want)
		}
	}
	got := f.Tensor("blk.0.attn_norm").F32
	for i := range norm {
		if got[i] != norm[i] {
			t.Fatalf("attn_norm[%d]: got %v, want %v", i, got[i], norm[i])
		}
	}
	if f.Tensor("wg") != nil || f.Tensor("blk.0.wg") != nil {
		t.Error("Tensor of an absent name is not nil")
	}
	if !f.Mapped {
		t.Log("file was read, not mapped")
	}
}

// TestParseUnaligned: Parse of an image at an odd address still gives correct
// float values (decoded into a copy instead of viewed in place).
func TestParseUnaligned(t *testing.T) {
	h := mlbtest.CaseHeader(t, "q8")
	b := validBytes(t, h)
	ref, err := mlb.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(b)+1)
	copy(buf[1:], b)
	f, err := mlb.Parse(buf[1:])
	if err != nil {
		t.Fatal(err)
	}
	for i := range ref.Tensors {
		r, g := ref.Tensors[i], f.Tensors[i]
		for j := range r.F32 {
			if r.F32[j] != g.F32[j] {
				t.Fatalf("%s[%d]: got %v, want %v", r.Name, j, g.F32[j], r.F32[j])
			}
		}
		for j := range r.D {
			if r.D[j] != g.D[j] {
				t.Fatalf("%s scale %d: got %v, want %v", r.Name, j, g.D[j], r.D[j])
			}
		}
	}
}

func TestTrailingBytesAccepted(t *testing.T) {
	b := validBytes(t, mlbtest.Base())
	b = append(b, make([]byte, 100)...)
	if _, err := openBytes(t, b); err != nil {
		t.Fatalf("got %v, want no error", err)
	}
}

func TestMlbtestDeterministic(t *testing.T) {
	h := mlbtest.CaseHeader(t, "qwen35_linear")
	dir := t.TempDir()
	a, err := os.ReadFile(mlbtest.Write(t, dir, h, 5))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(mlbtest.Write(t, dir, h, 5))
	if err != nil {
		t.Fatal(err)
	}
	c, err := os.ReadFile(mlbtest.Write(t, dir, h, 6))
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Error("same seed, different bytes")
	}
	if string(a) == string(c) {
		t.Error("different seeds, same bytes")
	}
}
