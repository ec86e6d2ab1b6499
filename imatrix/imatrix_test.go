package imatrix

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// handFile builds the bytes of a small MLI1 file field by field from SPEC.md's
// table, independently of MarshalBinary: 2 layers, dim 4, hidden 8, q_dim 6; the
// sums are 0, 1, 2, … so that each value is its own index.
func handFile(t testing.TB) []byte {
	var b bytes.Buffer
	b.WriteString("MLI1")
	for _, v := range []uint32{1, 2, 4, 8, 6} {
		binary.Write(&b, binary.LittleEndian, v)
	}
	binary.Write(&b, binary.LittleEndian, uint64(10))
	binary.Write(&b, binary.LittleEndian, uint64(7))
	// per layer 4 + 6 + 4 + 8 = 22 sums, then the classifier's 4: 48 in all
	for i := 0; i < 48; i++ {
		binary.Write(&b, binary.LittleEndian, float64(i))
	}
	if b.Len() != 40+48*8 {
		t.Fatalf("hand file: %d bytes", b.Len())
	}
	return b.Bytes()
}

func TestParseLayout(t *testing.T) {
	f, err := Parse(handFile(t))
	if err != nil {
		t.Fatal(err)
	}
	if f.NLayers != 2 || f.Dim != 4 || f.HiddenDim != 8 || f.QDim != 6 || f.LayerTokens != 10 || f.ClassifierTokens != 7 {
		t.Errorf("header: got %+v", *f)
	}
	tests := []struct {
		layer      int
		slot       Slot
		first, len int
	}{
		{0, AttnIn, 0, 4}, {0, AttnOut, 4, 6}, {0, FFNIn, 10, 4}, {0, FFNOut, 14, 8},
		{1, AttnIn, 22, 4}, {1, AttnOut, 26, 6}, {1, FFNIn, 32, 4}, {1, FFNOut, 36, 8},
	}
	for _, tc := range tests {
		s := f.Slot(tc.layer, tc.slot)
		if len(s) != tc.len || s[0] != float64(tc.first) || s[len(s)-1] != float64(tc.first+tc.len-1) {
			t.Errorf("layer %d %v: got %d values from %v, want %d from %d", tc.layer, tc.slot, len(s), s[0], tc.len, tc.first)
		}
	}
	if c := f.Classifier(); len(c) != 4 || c[0] != 44 || c[3] != 47 {
		t.Errorf("classifier: got %v, want [44 45 46 47]", c)
	}
	b, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, handFile(t)) {
		t.Errorf("MarshalBinary: bytes differ from the hand-built file")
	}
}

func TestNewQDim(t *testing.T) {
	tests := []struct {
		qdim, stored, sums int
	}{
		{64, 0, 3*(64+64+64+128) + 64},  // q_dim == dim is stored as 0
		{96, 96, 3*(64+96+64+128) + 64}, // differing q_dim is stored
	}
	for _, tc := range tests {
		f := New(3, 64, 128, tc.qdim)
		if int(f.QDim) != tc.stored || len(f.Sums) != tc.sums || f.QDimEff() != tc.qdim {
			t.Errorf("New(q_dim %d): got QDim %d, %d sums, QDimEff %d; want %d, %d, %d", tc.qdim, f.QDim, len(f.Sums), f.QDimEff(), tc.stored, tc.sums, tc.qdim)
		}
	}
}

func TestWriteOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.mli")
	f := New(2, 32, 64, 32)
	for i := range f.Sums {
		f.Sums[i] = float64(i) * 0.25
	}
	f.LayerTokens, f.ClassifierTokens = 123, 45
	if err := f.Write(path); err != nil {
		t.Fatal(err)
	}
	g, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if g.NLayers != 2 || g.Dim != 32 || g.HiddenDim != 64 || g.QDim != 0 || g.LayerTokens != 123 || g.ClassifierTokens != 45 {
		t.Errorf("header: got %+v", *g)
	}
	for i := range f.Sums {
		if g.Sums[i] != f.Sums[i] {
			t.Fatalf("sum %d: got %v, want %v", i, g.Sums[i], f.Sums[i])
		}
	}
	if st, err := os.Stat(path); err != nil {
		t.Fatal(err)
	} else if got := st.Mode().Perm(); got&0o044 == 0 {
		t.Errorf("mode %v: the file is not readable by others", got)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries, want only x.mli (no temp file left)", len(ents))
	}
	// an invalid file is not written and leaves nothing behind
	f.Sums = f.Sums[:3]
	if err := f.Write(filepath.Join(dir, "bad.mli")); err == nil {
		t.Errorf("Write with 3 sums: got no error")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("after a failed write the directory holds %d entries, want 1", len(ents))
	}
	f.Sums = make([]float64, len(g.Sums))
	f.Sums[5] = math.NaN()
	if err := f.Write(filepath.Join(dir, "nan.mli")); err == nil || !strings.Contains(err.Error(), "layer 0 attn_in (wq/wk/wv) channel 5 is NaN") {
		t.Errorf("Write with a NaN sum: got %v, want an error naming layer 0 attn_in channel 5", err)
	}
	if _, err := Open(filepath.Join(dir, "missing.mli")); err == nil || !strings.Contains(err.Error(), "missing.mli") {
		t.Errorf("Open missing: got %v, want an error naming the file", err)
	}
}

func TestImportance(t *testing.T) {
	f := New(1, 4, 4, 4)
	copy(f.Slot(0, AttnIn), []float64{1, 2, 3, 0})
	copy(f.Slot(0, FFNOut), []float64{5, 5, 5, 5})
	copy(f.Classifier(), []float64{0, 0, 0, 8})
	f.LayerTokens = 2
	// mean squares 0.5 1 1.5 0, mean 0.75: 2/3, 4/3, 2, floor 0.001
	want := []float32{float32(0.5 / 0.75), float32(1 / 0.75), 2, 0.001}
	got := f.Importance(0, AttnIn)
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-7 {
			t.Errorf("importance %d: got %v, want %v", i, got[i], want[i])
		}
	}
	if got := f.Importance(0, FFNOut); len(got) != 4 || got[0] != 1 || got[3] != 1 {
		t.Errorf("uniform slot: got %v, want all 1", got)
	}
	if got := f.Importance(0, FFNIn); got != nil {
		t.Errorf("all-zero slot: got %v, want nil", got)
	}
	if got := f.ClassifierImportance(); got != nil {
		t.Errorf("classifier with zero tokens: got %v, want nil", got)
	}
	f.ClassifierTokens = 1
	if got := f.ClassifierImportance(); len(got) != 4 || got[0] != 0.001 || got[3] != 4 {
		t.Errorf("classifier: got %v, want [0.001 0.001 0.001 4]", got)
	}
}

// corrupt returns a copy of the hand file with fn applied.
func corrupt(t *testing.T, fn func(b []byte) []byte) []byte {
	return fn(append([]byte(nil), handFile(t)...))
}

func TestParseErrors(t *testing.T) {
	le := binary.LittleEndian
	tests := []struct {
		name string
		b    []byte
		msg  string
	}{
		{"empty", nil, "0 bytes, shorter than the 40-byte header"},
		{"short header", corrupt(t, func(b []byte) []byte { return b[:39] }), "39 bytes, shorter than the 40-byte header"},
		{"magic", corrupt(t, func(b []byte) []byte { copy(b, "MLB1"); return b }), `bad magic "MLB1"`},
		{"version", corrupt(t, func(b []byte) []byte { le.PutUint32(b[4:], 2); return b }), "version 2 at offset 4, want 1"},
		{"zero layers", corrupt(t, func(b []byte) []byte { le.PutUint32(b[8:], 0); return b }), "n_layers = 0 at offset 8"},
		{"dim over limit", corrupt(t, func(b []byte) []byte { le.PutUint32(b[12:], 65537); return b }), "dim = 65537 at offset 12, must be 1..65536"},
		{"zero hidden", corrupt(t, func(b []byte) []byte { le.PutUint32(b[16:], 0); return b }), "hidden_dim = 0"},
		{"q_dim over limit", corrupt(t, func(b []byte) []byte { le.PutUint32(b[20:], 1<<31); return b }), "q_dim = 2147483648"},
		{"truncated sums", corrupt(t, func(b []byte) []byte { return b[:len(b)-8] }), "shorter than the 424 the header implies"},
		{"trailing byte", corrupt(t, func(b []byte) []byte { return append(b, 0) }), "longer than the 424"},
		// 65536·(2·65536 + 6 + 65536) + 65536 sums = 12885360640, ·8 + 40 bytes
		{"lying header", corrupt(t, func(b []byte) []byte {
			le.PutUint32(b[8:], 65536)
			le.PutUint32(b[12:], 65536)
			le.PutUint32(b[16:], 65536)
			return b
		}), "shorter than the 103082885160 the header implies"},
		// q_dim 0 means dim: 2·(4+4+4+8) + 4 = 44 sums, 40 + 352 bytes
		{"q_dim mismatch", corrupt(t, func(b []byte) []byte { le.PutUint32(b[20:], 0); return b }), "longer than the 392"},
		{"nan sum", corrupt(t, func(b []byte) []byte { le.PutUint64(b[40+8*27:], math.Float64bits(math.NaN())); return b }), "layer 1 attn_out (wo) channel 1 is NaN at offset 256"},
		{"negative sum", corrupt(t, func(b []byte) []byte { le.PutUint64(b[40+8*45:], math.Float64bits(-1)); return b }), "classifier channel 1 is -1"},
		{"inf sum", corrupt(t, func(b []byte) []byte { le.PutUint64(b[40+8*14:], math.Float64bits(math.Inf(1))); return b }), "layer 0 ffn_out (w2) channel 0 is +Inf"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.b)
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("got %v, want ErrFormat containing %q", err, tc.msg)
			}
			// Open reports the same problem and names the file
			path := filepath.Join(t.TempDir(), "c.mli")
			if err := os.WriteFile(path, tc.b, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = Open(path)
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Open: got %v, want ErrFormat naming %s containing %q", err, path, tc.msg)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add(handFile(f))
	g := New(1, 32, 32, 64)
	g.LayerTokens = 1
	b, _ := g.MarshalBinary()
	f.Add(b)
	f.Add([]byte("MLI1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not match ErrFormat", err)
			}
			return
		}
		for l := 0; l < int(m.NLayers); l++ {
			for s := AttnIn; s < NumSlots; s++ {
				if len(m.Slot(l, s)) != m.SlotSize(s) {
					t.Fatalf("slot size")
				}
				m.Importance(l, s)
				m.Stats(l, s)
			}
		}
		m.ClassifierImportance()
		m.ClassifierStats()
		out, err := m.MarshalBinary()
		if err != nil || !bytes.Equal(out, b) {
			t.Fatalf("re-encoding differs: %v", err)
		}
	})
}

func TestSlotOf(t *testing.T) {
	tests := []struct {
		name string
		slot Slot
		ok   bool
	}{
		{"wq", AttnIn, true}, {"wk", AttnIn, true}, {"wv", AttnIn, true}, {"wg", AttnIn, true},
		{"lqkv", AttnIn, true}, {"lz", AttnIn, true}, {"lb", AttnIn, true}, {"la", AttnIn, true},
		{"wo", AttnOut, true}, {"lout", AttnOut, true},
		{"w1", FFNIn, true}, {"w3", FFNIn, true}, {"w2", FFNOut, true},
		{"wcls", 0, false}, {"tok_emb", 0, false}, {"attn_norm", 0, false},
	}
	for _, tc := range tests {
		s, ok := SlotOf(tc.name)
		if s != tc.slot || ok != tc.ok {
			t.Errorf("SlotOf(%q): got %v, %v, want %v, %v", tc.name, s, ok, tc.slot, tc.ok)
		}
	}
}

// mustPanic reports whether fn panics.
func mustPanic(fn func()) (panicked bool) {
	defer func() { panicked = recover() != nil }()
	fn()
	return false
}

// TestBounds pins the edges of New's and Slot's ranges: a size of exactly
// MaxDim (65536) is valid and one more is not; layer NLayers and slot NumSlots
// are one past the end (without the check, Slot(NLayers, AttnIn) would
// quietly return the classifier's sums and Slot(0, NumSlots) an empty slice).
func TestBounds(t *testing.T) {
	if mustPanic(func() { New(1, MaxDim, 1, 1) }) {
		t.Errorf("New(1, %d, 1, 1) panicked; %d is a valid size", MaxDim, MaxDim)
	}
	for _, sizes := range [][4]int{{MaxDim + 1, 1, 1, 1}, {1, 1, 1, 0}, {1, 1, MaxDim + 1, 1}} {
		if !mustPanic(func() { New(sizes[0], sizes[1], sizes[2], sizes[3]) }) {
			t.Errorf("New%v did not panic", sizes)
		}
	}
	f := New(2, 4, 8, 6)
	for _, c := range []struct {
		l int
		s Slot
	}{{2, AttnIn}, {-1, AttnIn}, {0, NumSlots}, {0, -1}, {1, NumSlots}} {
		if !mustPanic(func() { f.Slot(c.l, c.s) }) {
			t.Errorf("Slot(%d, %d) of a 2-layer file did not panic", c.l, c.s)
		}
	}
	if mustPanic(func() { f.Slot(1, FFNOut) }) {
		t.Errorf("Slot(1, FFNOut), the last slot, panicked")
	}
}

// TestStats checks SlotStats against values worked out by hand.
func TestStats(t *testing.T) {
	f := New(1, 4, 4, 4)
	f.LayerTokens = 2
	copy(f.Slot(0, AttnIn), []float64{0, 2, 6, 0}) // total 8, mean 2, mean square 2/2 tokens
	copy(f.Slot(0, FFNIn), []float64{5, 5, 1, 1})  // a tie: the first channel wins
	copy(f.Classifier(), []float64{1, 2, 3, 4})    // but no classifier tokens
	got := f.Stats(0, AttnIn)
	want := SlotStats{Layer: 0, Slot: "attn_in", Matrices: "wq/wk/wv", Channels: 4, Zero: 2,
		MeanSq: 1, MaxRatio: 3, MinRatio: 0, HasStats: true, MaxChannel: 2}
	if got != want {
		t.Errorf("attn_in:\n got %+v\nwant %+v", got, want)
	}
	got = f.Stats(0, FFNIn)
	want = SlotStats{Layer: 0, Slot: "ffn_in", Matrices: "w1/w3", Channels: 4,
		MeanSq: 1.5, MaxRatio: 5.0 / 3, MinRatio: 1.0 / 3, HasStats: true, MaxChannel: 0}
	if got != want {
		t.Errorf("ffn_in (tie):\n got %+v\nwant %+v", got, want)
	}
	// all sums zero: no statistics
	got = f.Stats(0, FFNOut)
	want = SlotStats{Layer: 0, Slot: "ffn_out", Matrices: "w2", Channels: 4, Zero: 4}
	if got != want {
		t.Errorf("ffn_out (all zero):\n got %+v\nwant %+v", got, want)
	}
	// sums but zero tokens: no statistics
	got = f.ClassifierStats()
	want = SlotStats{Layer: -1, Slot: "classifier", Matrices: "wcls", Channels: 4, MaxChannel: 3}
	if got != want {
		t.Errorf("classifier (no tokens):\n got %+v\nwant %+v", got, want)
	}
	// the largest valid size encodes
	if _, err := New(1, MaxDim, 1, 1).MarshalBinary(); err != nil {
		t.Errorf("MarshalBinary of dim %d: %v", MaxDim, err)
	}
}
