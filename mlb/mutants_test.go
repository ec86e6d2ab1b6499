package mlb_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlb/mlbtest"
)

// The tests of this file come from the mutants gremlins found alive
// (docs/RELIABILITY.md, "Mutation testing"): each asserts behaviour that no
// other test pinned down.

// TestErrorText: an error with a known offset ends its message with the offset
// in hex (0 included: a bad magic is at byte 0), and an IO error, which has
// none, says nothing of an offset.
func TestErrorText(t *testing.T) {
	b := validBytes(t, mlbtest.Base())
	copy(b, "MLB2")
	_, err := mlb.Parse(b)
	if err == nil || !strings.HasSuffix(err.Error(), " (at offset 0x0)") {
		t.Errorf("bad magic: got %v, want it to end with (at offset 0x0)", err)
	}
	b = validBytes(t, mlbtest.Base())
	b[mlb.ReservedStart+1] = 1
	_, err = mlb.Parse(b)
	want := " (at offset 0xb9)" // byte 185
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("reserved byte: got %v, want it to end with %q", err, want)
	}
	if err == nil || !strings.Contains(err.Error(), "bytes 184 to 255 are reserved") {
		t.Errorf("reserved byte: got %v, want it to name bytes 184 to 255", err)
	}

	_, err = mlb.Open(filepath.Join(t.TempDir(), "missing.mlb"))
	if err == nil || strings.Contains(err.Error(), "offset") {
		t.Errorf("missing file: got %v, want an error without an offset", err)
	}
	var e *mlb.Error
	if !errors.As(err, &e) || e.Offset != -1 {
		t.Errorf("missing file: got %#v, want Offset -1", e)
	}

	h := mlbtest.Base()
	// A writer whose temp file cannot be created: a folder that does not exist.
	_, err = mlb.Create(filepath.Join(t.TempDir(), "no", "such", "dir", "x.mlb"), &h)
	if err == nil || strings.Contains(err.Error(), "offset") {
		t.Errorf("create in a missing folder: got %v, want an error without an offset", err)
	}
	if !errors.As(err, &e) || e.Offset != -1 || e.Code != mlb.CodeIO {
		t.Errorf("create in a missing folder: got %#v, want ML_E_IO with Offset -1", e)
	}
}

// TestErrorIsSentinelOnly: errors.Is matches an *Error with its code's
// sentinel and with itself, not with another error of the same code.
func TestErrorIsSentinelOnly(t *testing.T) {
	open := func(b []byte) error {
		_, err := mlb.Parse(b)
		if err == nil {
			t.Fatal("got no error")
		}
		return err
	}
	b := validBytes(t, mlbtest.Base())
	copy(b, "MLB2")
	e1 := open(b)
	b = validBytes(t, mlbtest.Base())
	b[mlb.ReservedStart] = 1
	e2 := open(b)
	var a, c *mlb.Error
	if !errors.As(e1, &a) || !errors.As(e2, &c) || a.Code != c.Code {
		t.Fatalf("want two ML_E_FORMAT errors, got %v and %v", e1, e2)
	}
	if errors.Is(e1, c) || errors.Is(e2, a) {
		t.Errorf("errors.Is matches two different errors of one code: %v, %v", e1, e2)
	}
	if !a.Is(a) || !errors.Is(e1, mlb.ErrFormat) || errors.Is(e1, mlb.ErrShape) {
		t.Errorf("errors.Is of %v: want itself and ErrFormat only", e1)
	}
}

// TestFFNPaddingNibble: in a Q4_0 file a byte holds weights j and j+16 of a
// block; the padding check reads the nibble of the weight it checks. A
// changed high nibble at j = 16 (column 16 of a padded row of w1) and at
// j = 17 (column 81 of w2, a padded column) is refused and named by row,
// column, the padded channels and the byte's offset; a changed low nibble of
// the same w2 byte (column 65, a true channel) is accepted. A Q8_0 weight's
// offset is its own byte (row 1 of w2: 96 + 81 bytes into the quants).
func TestFFNPaddingNibble(t *testing.T) {
	for _, c := range []struct {
		wtype  uint32
		tensor string
		r, c   int
		flip   byte
		bad    bool
	}{
		{mlb.WTypeQ4_0, "blk.0.w1", 81, 16, 0x10, true},
		{mlb.WTypeQ4_0, "blk.1.w2", 0, 81, 0x10, true},
		{mlb.WTypeQ4_0, "blk.1.w2", 0, 65, 0x01, false},
		{mlb.WTypeQ8_0, "blk.1.w2", 1, 81, 0x01, true},
	} {
		h := padded(c.wtype)
		b := validBytes(t, h)
		f, err := openBytes(t, b)
		if err != nil {
			t.Fatal(err)
		}
		off := quantByte(t, f, c.tensor, c.r, c.c)
		f.Close()
		b[off] ^= c.flip
		_, err = mlb.Parse(b)
		if !c.bad {
			if err != nil {
				t.Errorf("%s (%d, %d): a true channel's weight refused: %v", c.tensor, c.r, c.c, err)
			}
			continue
		}
		for _, want := range []string{fmt.Sprintf("row %d, column %d", c.r, c.c), "channels 81 to 95 zero padding"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: got %v, want an error saying %q", c.tensor, err, want)
			}
		}
		var e *mlb.Error
		if !errors.As(err, &e) || e.Offset != int64(off) {
			t.Errorf("%s: got %v, want offset %#x", c.tensor, err, off)
		}
	}
}

// TestLayerFlagRange: LayerFlag returns the stored byte of a layer that has
// one, 0 for a layer number outside the flags (it indexes nothing), and
// FlagSliding for every layer of a file without flag bytes whose
// sliding_window is set.
func TestLayerFlagRange(t *testing.T) {
	h := mlb.Header{LayerFlags: 1, SlidingWindow: 8, Flags: []uint8{mlb.FlagSliding | mlb.FlagLocalRoPE, mlb.FlagNoRoPE}}
	for _, c := range []struct {
		l    int
		want uint8
	}{{0, mlb.FlagSliding | mlb.FlagLocalRoPE}, {1, mlb.FlagNoRoPE}, {2, 0}, {3, 0}, {-1, 0}} {
		if got := h.LayerFlag(c.l); got != c.want {
			t.Errorf("LayerFlag(%d) got %#x, want %#x", c.l, got, c.want)
		}
	}
	h = mlb.Header{SlidingWindow: 8}
	if got := h.LayerFlag(5); got != mlb.FlagSliding {
		t.Errorf("no flag bytes, sliding_window 8: LayerFlag(5) got %#x, want %#x", got, mlb.FlagSliding)
	}
	h.SlidingWindow = 0
	if got := h.LayerFlag(5); got != 0 {
		t.Errorf("no flag bytes, sliding_window 0: LayerFlag(5) got %#x, want 0", got)
	}
}

// TestMixedTableTensor: the type table of a mixed file is the body tensor
// "type_table" (a top-level name, not a layer's), U8 with one byte per
// matrix, first in the body or right after the layer flags (at 256 + the
// flags rounded up to 64), and it loads as the codes written. Array.Type
// names the block type of each blocks array only.
func TestMixedTableTensor(t *testing.T) {
	for _, flags := range []bool{false, true} {
		h := mlbtest.Mixed(mlb.Q8_0, mlb.Q4_K, mlb.Q4_0)
		first, at := 0, int64(mlb.HeaderSize)
		if flags {
			h.LayerFlags, h.Flags = 1, make([]uint8, h.NLayers)
			first, at = 1, mlb.HeaderSize+64
		}
		ts, err := mlb.Tensors(&h)
		if err != nil {
			t.Fatal(err)
		}
		want := mlb.TensorInfo{Name: "type_table", Type: mlb.U8, Rows: 1, Cols: h.NumMatrices()}
		if ts[first] != want {
			t.Errorf("layer flags %v: tensor %d got %+v, want %+v", flags, first, ts[first], want)
		}
		arrs, err := mlb.Layout(&h)
		if err != nil {
			t.Fatal(err)
		}
		if a := arrs[first]; a.Name != "type_table" || a.Offset != at || a.Bytes != int64(h.NumMatrices()) {
			t.Errorf("layer flags %v: array %d got %+v, want type_table at %d, %d bytes", flags, first, a, at, h.NumMatrices())
		}
		// Array.Type is the block type of a blocks array, and 0 for the others.
		types := map[string]mlb.DType{}
		for _, ti := range ts {
			types[ti.Name] = ti.Type
		}
		blocks := 0
		for _, a := range arrs {
			want := mlb.DType(0)
			if a.Elem == mlb.ElemBlocks {
				want = types[a.Tensor]
				blocks++
			}
			if a.Type != want {
				t.Errorf("array %s (%v): Type got %v, want %v", a.Name, a.Elem, a.Type, want)
			}
		}
		if blocks == 0 {
			t.Error("no blocks array in a file with Q4_K matrices")
		}
		f, err := mlb.Parse(validBytes(t, h))
		if err != nil {
			t.Fatal(err)
		}
		if tt := f.Tensor("type_table"); tt == nil || !bytes.Equal(tt.Q, h.Types) {
			t.Errorf("layer flags %v: type_table tensor %v, want the codes %v", flags, tt, h.Types)
		}
	}
}

// TestTruncationEdges: a file cut exactly at the end of an array's data holds
// that array whole, so the loader names the next one, at the next one's
// offset (layer_flags, type_table and every array of the body, in files with
// both tables and without); a cut at an array's start names that array at its
// offset, and the message gives the bytes the array needs. The cut image has
// no capacity past its end, so a read past it fails the test.
func TestTruncationEdges(t *testing.T) {
	mixed := mlbtest.Mixed(mlb.Q8_0, mlb.Q4_K)
	mixed.LayerFlags, mixed.Flags = 1, make([]uint8, mixed.NLayers)
	hs := map[string]mlb.Header{"mixed_flags": mixed}
	for _, name := range []string{"q8", "gemma3_local_rope", "qwen35_linear_q4_mask"} {
		hs[name] = mlbtest.CaseHeader(t, name)
	}
	for name, h := range hs {
		t.Run(name, func(t *testing.T) {
			b := validBytes(t, h)
			arrs, err := mlb.Layout(&h)
			if err != nil {
				t.Fatal(err)
			}
			for i, a := range arrs {
				cuts := []struct {
					n    int64
					next mlb.Array
				}{{a.Offset, a}}
				if i+1 < len(arrs) {
					cuts = append(cuts, struct {
						n    int64
						next mlb.Array
					}{a.End(), arrs[i+1]})
				}
				for _, c := range cuts {
					_, err := mlb.Parse(b[:c.n:c.n]) // no capacity past the cut, as in a mapping
					var e *mlb.Error
					if !errors.As(err, &e) || e.Code != mlb.CodeFormat || e.Tensor != c.next.Name || e.Offset != c.next.Offset {
						t.Fatalf("cut at %d: got %v, want ML_E_FORMAT naming %s at offset %d", c.n, err, c.next.Name, c.next.Offset)
					}
					want := fmt.Sprintf("needs bytes %d to %d", c.next.Offset, c.next.End())
					switch c.next.Tensor {
					case "layer_flags":
						want = fmt.Sprintf("%d layer flag bytes at offset %d", c.next.Bytes, c.next.Offset)
					case "type_table":
						want = fmt.Sprintf("%d type table bytes at offset %d", c.next.Bytes, c.next.Offset)
					}
					if !strings.Contains(err.Error(), want) {
						t.Fatalf("cut at %d: got %v, want it to say %q", c.n, err, want)
					}
				}
			}
		})
	}
}

// TestTensorsInPlace: Parse returns tensors that point into its input where
// the bytes allow (an F32 tensor and f32 scales of an aligned image): a
// change to the input shows through. A one-byte-shifted image gives the same
// values from copies.
func TestTensorsInPlace(t *testing.T) {
	h := mlbtest.CaseHeader(t, "q8")
	b := validBytes(t, h)
	f, err := mlb.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	norm := f.Tensor("blk.0.attn_norm")
	var at int64 = -1
	for _, a := range f.Arrays {
		if a.Name == "blk.0.attn_norm" {
			at = a.Offset
		}
	}
	if norm == nil || at < 0 || len(norm.F32) != int(h.Dim) {
		t.Fatalf("no blk.0.attn_norm of %d values", h.Dim)
	}
	binary.LittleEndian.PutUint32(b[at+4:], math.Float32bits(1.5))
	if norm.F32[1] != 1.5 {
		t.Errorf("aligned image: attn_norm[1] got %v after writing 1.5 into the input, want the tensor in place", norm.F32[1])
	}
	buf := make([]byte, len(b)+1)
	copy(buf[1:], b)
	g, err := mlb.Parse(buf[1:])
	if err != nil {
		t.Fatal(err)
	}
	if v := g.Tensor("blk.0.attn_norm").F32; len(v) != int(h.Dim) || v[1] != 1.5 {
		t.Errorf("shifted image: attn_norm got %d values, [1] = %v, want %d and 1.5", len(v), v[1], h.Dim)
	}
}

// TestReadHeaderShort: ReadHeader of a file shorter than the header (or
// empty) is a format error, as Parse gives, not an IO error; of a directory
// it is an IO error; of a valid file it is the header Open reads.
func TestReadHeaderShort(t *testing.T) {
	b := validBytes(t, mlbtest.Base())
	dir := t.TempDir()
	for _, n := range []int{0, 3, 100, mlb.HeaderSize - 1} {
		p := filepath.Join(dir, fmt.Sprintf("short%d.mlb", n))
		if err := os.WriteFile(p, b[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := mlb.ReadHeader(p)
		if mlb.CodeOf(err) != mlb.CodeFormat || !strings.Contains(err.Error(), p) {
			t.Errorf("%d bytes: got %v, want ML_E_FORMAT naming the file", n, err)
		}
	}
	if _, err := mlb.ReadHeader(dir); mlb.CodeOf(err) != mlb.CodeIO {
		t.Errorf("a directory: got %v, want ML_E_IO", err)
	}
	_, err := mlb.Open(dir)
	if err == nil || strings.Contains(err.Error(), "offset") {
		t.Errorf("Open of a directory: got %v, want an error without an offset", err)
	}
	p := filepath.Join(dir, "ok.mlb")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := mlb.ReadHeader(p)
	want := mlbtest.Base()
	if err != nil || !bytes.Equal(h.Marshal(), want.Marshal()) {
		t.Errorf("valid file: got %+v, %v, want the header written", h, err)
	}
}

// TestNumMatrices: the type table's length as docs/FORMATS.md gives it, 1
// (tok_emb) + per layer 7 (+1 with attn_gate; a linear layer: 8) + 1 (wcls,
// unless shared_classifier), and the count of matrices the body lists.
func TestNumMatrices(t *testing.T) {
	for _, c := range []struct {
		name string
		want int
	}{
		{"q8", 1 + 2*7 + 1},                      // 2 layers
		{"gemma3_local_rope", 1 + 3*7},           // 3 layers, shared classifier
		{"qwen35_linear_q4_mask", 1 + 8 + 8 + 1}, // a linear layer, then one with attn_gate
	} {
		h := mlbtest.CaseHeader(t, c.name)
		if got := h.NumMatrices(); got != c.want {
			t.Errorf("%s: NumMatrices got %d, want %d", c.name, got, c.want)
		}
		ts, err := mlb.Tensors(&h)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, ti := range ts {
			if ti.Type.Quantized() {
				n++
			}
		}
		if n != c.want {
			t.Errorf("%s: %d matrices in the body, want %d", c.name, n, c.want)
		}
	}
}

// TestCloseAndQ8: Close succeeds (and is idempotent) on a mapped file, a file
// read into memory and a parsed image, and clears the tensors; a bad file on
// the read path is refused cleanly. Q8 is the quants as int8, nil for none.
func TestCloseAndQ8(t *testing.T) {
	defer func() { *mlb.NoMmap = false }()
	p := mlbtest.Write(t, t.TempDir(), mlbtest.CaseHeader(t, "q8"), 3)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"mmap", "read", "parse"} {
		*mlb.NoMmap = how == "read"
		var f *mlb.File
		if how == "parse" {
			f, err = mlb.Parse(b)
		} else {
			f, err = mlb.Open(p)
		}
		if err != nil {
			t.Fatal(err)
		}
		if f.Mapped != (how == "mmap") {
			t.Errorf("%s: Mapped is %v", how, f.Mapped)
		}
		tn := f.Tensor("tok_emb")
		q8 := tn.Q8()
		if len(q8) != len(tn.Q) || len(q8) == 0 {
			t.Fatalf("%s: Q8 has %d values, want %d", how, len(q8), len(tn.Q))
		}
		for i, v := range tn.Q {
			if q8[i] != int8(v) {
				t.Fatalf("%s: Q8()[%d] got %d, want %d", how, i, q8[i], int8(v))
			}
		}
		if err := f.Close(); err != nil {
			t.Errorf("%s: Close: %v", how, err)
		}
		if err := f.Close(); err != nil {
			t.Errorf("%s: second Close: %v", how, err)
		}
		if f.Tensors != nil || f.Tensor("tok_emb") != nil {
			t.Errorf("%s: tensors left after Close", how)
		}
	}
	*mlb.NoMmap = true
	bad := append([]byte(nil), b...)
	copy(bad, "GGUF")
	q := filepath.Join(t.TempDir(), "bad.mlb")
	if err := os.WriteFile(q, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := mlb.Open(q); mlb.CodeOf(err) != mlb.CodeFormat {
		t.Errorf("bad magic on the read path: got %v, want ML_E_FORMAT", err)
	}
	if q8 := (&mlb.Tensor{}).Q8(); q8 != nil {
		t.Errorf("Q8 of no quants got %v, want nil", q8)
	}
}

// TestBodyEnd: the size bodyEnd computes without allocating is the end of the
// last array Layout places, and its count is the number of tensors.
func TestBodyEnd(t *testing.T) {
	for _, name := range []string{"q8", "q4_mask_all_f16", "gemma3_local_rope", "qwen35_linear_q4_mask"} {
		h := mlbtest.CaseHeader(t, name)
		arrs, err := mlb.Layout(&h)
		if err != nil {
			t.Fatal(err)
		}
		ts, err := mlb.Tensors(&h)
		if err != nil {
			t.Fatal(err)
		}
		end, n, err := mlb.BodyEnd(&h)
		if err != nil || end != arrs[len(arrs)-1].End() || n != len(ts) {
			t.Errorf("%s: BodyEnd got %d, %d, %v, want %d, %d", name, end, n, err, arrs[len(arrs)-1].End(), len(ts))
		}
	}
}

// TestMinus128Offset: the error for a Q8_0 quant of -128 points at that byte.
func TestMinus128Offset(t *testing.T) {
	h := mlbtest.CaseHeader(t, "q8")
	b := validBytes(t, h)
	arrs, err := mlb.Layout(&h)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range arrs {
		if a.Name != "blk.1.wq.q" {
			continue
		}
		at := a.Offset + 64*5 + 7
		b[at] = 0x80
		_, err := mlb.Parse(b)
		var e *mlb.Error
		if !errors.As(err, &e) || e.Offset != at || e.Tensor != "blk.1.wq" {
			t.Errorf("got %v, want ML_E_FORMAT for blk.1.wq at offset %#x", err, at)
		}
		return
	}
	t.Fatal("no blk.1.wq.q")
}

// TestValidateTypesNoOffset: Validate of a header alone does not know where
// the type table lies, so its type-table errors carry no offset (-1).
func TestValidateTypesNoOffset(t *testing.T) {
	h := mlbtest.Mixed(mlb.Q8_0)
	h.Types[2] = 200
	var e *mlb.Error
	if err := h.Validate(); !errors.As(err, &e) || e.Code != mlb.CodeFormat || e.Offset != -1 {
		t.Errorf("got %v, want ML_E_FORMAT with offset -1", err)
	}
}
