package mlb_test

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlb/mlbtest"
)

// The SPEC.md offsets, typed in from its table (not taken from the package).
var specOffsets = map[string]int{
	"version": 4, "dim": 8, "n_layers": 12, "n_heads": 16, "n_kv_heads": 20, "hidden_dim": 24,
	"vocab": 28, "max_seq": 32, "rope_theta": 36, "norm_eps": 40, "wtype": 44,
	"shared_classifier": 48, "rope_type": 52, "rope_factor": 56, "rope_low_freq_factor": 60,
	"rope_high_freq_factor": 64, "rope_orig_max_seq": 68, "q8_mask": 72, "qkv_bias": 76,
	"head_dim": 80, "qk_norm": 84, "rope_attn_factor": 88, "sliding_window": 92,
	"layer_flags": 96, "rope_local_theta": 100, "act": 104, "post_norms": 108,
	"embed_scale": 112, "attn_scale": 116, "scale_f16": 120, "attn_softcap": 124,
	"final_softcap": 128, "rot_dim": 132, "attn_gate": 136, "lin_k_heads": 140,
	"lin_v_heads": 144, "lin_k_dim": 148, "lin_v_dim": 152, "lin_conv": 156,
	"true_hidden_dim": 160, // krafla's extension in SPEC.md's padding (docs/FORMATS.md)
}

var specFloats = map[string]bool{
	"rope_theta": true, "norm_eps": true, "rope_factor": true, "rope_low_freq_factor": true,
	"rope_high_freq_factor": true, "rope_attn_factor": true, "rope_local_theta": true,
	"embed_scale": true, "attn_scale": true, "attn_softcap": true, "final_softcap": true,
}

// TestMarshalOffsets sets every field to a distinct value and checks that it
// lands at the SPEC.md offset with the SPEC.md type, and that Unmarshal
// restores the header.
func TestMarshalOffsets(t *testing.T) {
	fs := mlb.Fields()
	if got, want := len(fs), len(specOffsets); got != want {
		t.Fatalf("got %d fields, want %d", got, want)
	}
	var h mlb.Header
	want := map[string]uint32{}
	for i, f := range fs {
		buf := make([]byte, mlb.HeaderSize)
		if specFloats[f.Name] {
			v := float32(i) + 0.25
			binary.LittleEndian.PutUint32(buf[f.Offset:], math.Float32bits(v))
			want[f.Name] = math.Float32bits(v)
		} else {
			want[f.Name] = uint32(1000 + i)
			binary.LittleEndian.PutUint32(buf[f.Offset:], want[f.Name])
		}
		if got, w := f.Float, specFloats[f.Name]; got != w {
			t.Errorf("%s: Float got %v, want %v", f.Name, got, w)
		}
		if got, w := f.Offset, specOffsets[f.Name]; got != w {
			t.Errorf("%s: offset got %d, want %d", f.Name, got, w)
		}
	}
	// Fill h through Unmarshal of a buffer built from the SPEC offsets.
	buf := make([]byte, mlb.HeaderSize)
	copy(buf, "MLB1")
	for name, off := range specOffsets {
		binary.LittleEndian.PutUint32(buf[off:], want[name])
	}
	if err := h.Unmarshal(buf); err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		var got uint32
		switch v := f.Value(&h).(type) {
		case uint32:
			got = v
		case float32:
			got = math.Float32bits(v)
		}
		if got != want[f.Name] {
			t.Errorf("%s: got %#x, want %#x", f.Name, got, want[f.Name])
		}
	}
	if h.Dim != want["dim"] || h.LinConv != want["lin_conv"] || math.Float32bits(h.FinalSoftcap) != want["final_softcap"] {
		t.Errorf("struct fields not decoded: dim %d lin_conv %d final_softcap %v", h.Dim, h.LinConv, h.FinalSoftcap)
	}
	out := h.Marshal()
	if got, w := string(out), string(buf); got != w {
		t.Errorf("Marshal(Unmarshal(b)) differs from b")
	}
	for i := mlb.ReservedStart; i < mlb.HeaderSize; i++ {
		if out[i] != 0 {
			t.Fatalf("padding byte %d is %d, want 0", i, out[i])
		}
	}
}

// TestEverythingCase: mlbtest's "everything" header sets every field, so the
// file round trip of TestWriteOpenCases covers each one.
func TestEverythingCase(t *testing.T) {
	h := mlbtest.CaseHeader(t, "everything")
	for _, f := range mlb.Fields() {
		switch v := f.Value(&h).(type) {
		case uint32:
			if v == 0 {
				t.Errorf("%s is 0", f.Name)
			}
		case float32:
			if v == 0 {
				t.Errorf("%s is 0", f.Name)
			}
		}
	}
}

func TestDerived(t *testing.T) {
	for _, c := range []struct {
		name                       string
		h                          mlb.Header
		headDim, qDim, kvDim, rotD int
	}{
		{"plain", mlb.Header{Dim: 64, NHeads: 4, NKVHeads: 2}, 16, 64, 32, 16},
		{"head_dim", mlb.Header{Dim: 64, NHeads: 4, NKVHeads: 1, HeadDim: 32}, 32, 128, 32, 32},
		{"rot_dim", mlb.Header{Dim: 64, NHeads: 2, NKVHeads: 2, RotDim: 8}, 32, 64, 64, 8},
	} {
		h := c.h
		if got := h.HeadDimEff(); got != c.headDim {
			t.Errorf("%s: HeadDimEff got %d, want %d", c.name, got, c.headDim)
		}
		if got := h.QDim(); got != c.qDim {
			t.Errorf("%s: QDim got %d, want %d", c.name, got, c.qDim)
		}
		if got := h.KVDim(); got != c.kvDim {
			t.Errorf("%s: KVDim got %d, want %d", c.name, got, c.kvDim)
		}
		if got := h.RotDimEff(); got != c.rotD {
			t.Errorf("%s: RotDimEff got %d, want %d", c.name, got, c.rotD)
		}
	}
	h := mlb.Header{LinKHeads: 2, LinVHeads: 4, LinKDim: 16, LinVDim: 8}
	if got, want := h.LinQKVDim(), 2*2*16+4*8; got != want {
		t.Errorf("LinQKVDim got %d, want %d", got, want)
	}
	if got, want := h.LinVDimTotal(), 32; got != want {
		t.Errorf("LinVDimTotal got %d, want %d", got, want)
	}
	for _, c := range []struct {
		window, layerFlags uint32
		flags              []uint8
		want               []uint8
	}{
		{0, 0, nil, []uint8{0, 0}},
		{8, 0, nil, []uint8{mlb.FlagSliding, mlb.FlagSliding}},
		{8, 1, []uint8{mlb.FlagSliding | mlb.FlagLocalRoPE, 0}, []uint8{mlb.FlagSliding | mlb.FlagLocalRoPE, 0}},
		{0, 1, []uint8{mlb.FlagSliding, mlb.FlagLinear}, []uint8{0, mlb.FlagLinear}},
	} {
		h := mlb.Header{NLayers: 2, SlidingWindow: c.window, LayerFlags: c.layerFlags, Flags: c.flags}
		for l, w := range c.want {
			if got := h.LayerFlag(l); got != w {
				t.Errorf("window %d flags %v: LayerFlag(%d) got %d, want %d", c.window, c.flags, l, got, w)
			}
		}
	}
}

func setU32(b []byte, name string, v uint32) {
	binary.LittleEndian.PutUint32(b[specOffsets[name]:], v)
}

func setF32(b []byte, name string, v float32) {
	binary.LittleEndian.PutUint32(b[specOffsets[name]:], math.Float32bits(v))
}

// validBytes returns the bytes of a valid model with header h.
func validBytes(t *testing.T, h mlb.Header) []byte {
	t.Helper()
	b, err := os.ReadFile(mlbtest.Write(t, t.TempDir(), h, 3))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// openBytes writes b to a file and opens it, so the whole Open path runs.
func openBytes(t *testing.T, b []byte) (*mlb.File, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.mlb")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := mlb.Open(p)
	if err == nil {
		t.Cleanup(func() { f.Close() })
	} else if !strings.Contains(err.Error(), p) {
		t.Errorf("error %q does not name the file", err)
	}
	return f, err
}

func wantCode(t *testing.T, err error, want mlb.Code, sentinel error) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %v", want)
	}
	if got := mlb.CodeOf(err); got != want {
		t.Fatalf("got %v (%v), want %v", got, err, want)
	}
	if !errors.Is(err, sentinel) {
		t.Fatalf("errors.Is(%v, %v) is false", err, sentinel)
	}
	if !strings.HasPrefix(err.Error(), want.String()+": ") {
		t.Fatalf("message %q does not start with %s", err, want)
	}
}

// A header patch: the test starts from base (a valid Q8_0 model unless the row
// says otherwise), rewrites header fields or flag bytes and expects the code.
type row struct {
	name  string
	base  func(h *mlb.Header) // adjust the valid starting header; nil: mlbtest.Base()
	patch func(b []byte)
	want  mlb.Code
	field string // a word the message must contain
}

func withFlags(flags ...uint8) func(h *mlb.Header) {
	return func(h *mlb.Header) {
		h.NLayers = uint32(len(flags))
		h.LayerFlags = 1
		h.Flags = flags
		h.SlidingWindow = 8
		h.RopeLocalTheta = 10000
	}
}

func setFlag(l int, v uint8) func(b []byte) {
	return func(b []byte) { b[mlb.HeaderSize+l] = v }
}

func u(name string, v uint32) func(b []byte)  { return func(b []byte) { setU32(b, name, v) } }
func f(name string, v float32) func(b []byte) { return func(b []byte) { setF32(b, name, v) } }
func both(ps ...func(b []byte)) func(b []byte) {
	return func(b []byte) {
		for _, p := range ps {
			p(b)
		}
	}
}

var nan = float32(math.NaN())
var inf = float32(math.Inf(1))

func llama3(b []byte) {
	setU32(b, "rope_type", 1)
	setF32(b, "rope_factor", 8)
	setF32(b, "rope_low_freq_factor", 1)
	setF32(b, "rope_high_freq_factor", 4)
	setU32(b, "rope_orig_max_seq", 8192)
}

func yarn(b []byte) {
	setU32(b, "rope_type", 3)
	setF32(b, "rope_factor", 4)
	setF32(b, "rope_low_freq_factor", 32)
	setF32(b, "rope_high_freq_factor", 1)
	setU32(b, "rope_orig_max_seq", 4096)
	setF32(b, "rope_attn_factor", 1.1)
}

// validationRows has one entry per rule of SPEC.md's validation table (FORMAT and
// SHAPE rows; ML_E_IO, truncation and -128 have their own tests), plus the rules
// stated in the field notes.
var validationRows = []row{
	// ML_E_FORMAT
	{name: "bad magic", patch: func(b []byte) { copy(b, "MLB2") }, want: mlb.CodeFormat, field: "magic"},
	{name: "GGUF magic", patch: func(b []byte) { copy(b, "GGUF\x03\x00\x00\x00") }, want: mlb.CodeFormat, field: "this looks like a GGUF file"},
	{name: "version 0", patch: u("version", 0), want: mlb.CodeFormat, field: "version"},
	{name: "version 2", patch: u("version", 2), want: mlb.CodeFormat, field: "version"},
	{name: "wtype 0", patch: u("wtype", 0), want: mlb.CodeFormat, field: "wtype"},
	{name: "wtype 3", patch: u("wtype", 3), want: mlb.CodeFormat, field: "wtype"},
	{name: "rope_type 4", patch: u("rope_type", 4), want: mlb.CodeFormat, field: "rope_type"},
	{name: "llama3 factor 0", patch: both(llama3, f("rope_factor", 0)), want: mlb.CodeFormat, field: "rope_factor"},
	{name: "llama3 factor NaN", patch: both(llama3, f("rope_factor", nan)), want: mlb.CodeFormat, field: "rope_factor"},
	{name: "llama3 low 0", patch: both(llama3, f("rope_low_freq_factor", 0)), want: mlb.CodeFormat, field: "rope_low_freq_factor"},
	{name: "llama3 high = low", patch: both(llama3, f("rope_high_freq_factor", 1)), want: mlb.CodeFormat, field: "rope_high_freq_factor"},
	{name: "llama3 high < low", patch: both(llama3, f("rope_high_freq_factor", 0.5)), want: mlb.CodeFormat, field: "rope_high_freq_factor"},
	{name: "llama3 orig 0", patch: both(llama3, u("rope_orig_max_seq", 0)), want: mlb.CodeFormat, field: "rope_orig_max_seq"},
	{name: "linear factor 0", patch: both(u("rope_type", 2), f("rope_factor", 0)), want: mlb.CodeFormat, field: "rope_factor"},
	{name: "linear factor -2", patch: both(u("rope_type", 2), f("rope_factor", -2)), want: mlb.CodeFormat, field: "rope_factor"},
	{name: "yarn factor 0", patch: both(yarn, f("rope_factor", 0)), want: mlb.CodeFormat, field: "rope_factor"},
	{name: "yarn beta_fast 0", patch: both(yarn, f("rope_low_freq_factor", 0)), want: mlb.CodeFormat, field: "rope_low_freq_factor"},
	{name: "yarn beta_slow 0", patch: both(yarn, f("rope_high_freq_factor", 0)), want: mlb.CodeFormat, field: "rope_high_freq_factor"},
	{name: "yarn beta_slow = beta_fast", patch: both(yarn, f("rope_high_freq_factor", 32)), want: mlb.CodeFormat, field: "rope_high_freq_factor"},
	{name: "yarn orig 0", patch: both(yarn, u("rope_orig_max_seq", 0)), want: mlb.CodeFormat, field: "rope_orig_max_seq"},
	{name: "yarn attn factor 0", patch: both(yarn, f("rope_attn_factor", 0)), want: mlb.CodeFormat, field: "rope_attn_factor"},
	{name: "attn factor with plain RoPE", patch: f("rope_attn_factor", 1), want: mlb.CodeFormat, field: "rope_attn_factor"},
	{name: "attn factor with llama3", patch: both(llama3, f("rope_attn_factor", 1)), want: mlb.CodeFormat, field: "rope_attn_factor"},
	{name: "qkv_bias 2", patch: u("qkv_bias", 2), want: mlb.CodeFormat, field: "qkv_bias"},
	{name: "qk_norm 2", patch: u("qk_norm", 2), want: mlb.CodeFormat, field: "qk_norm"},
	{name: "layer_flags 2", patch: u("layer_flags", 2), want: mlb.CodeFormat, field: "layer_flags"},
	{name: "post_norms 2", patch: u("post_norms", 2), want: mlb.CodeFormat, field: "post_norms"},
	{name: "scale_f16 2", patch: u("scale_f16", 2), want: mlb.CodeFormat, field: "scale_f16"},
	{name: "attn_gate 2", patch: u("attn_gate", 2), want: mlb.CodeFormat, field: "attn_gate"},
	{name: "act 2", patch: u("act", 2), want: mlb.CodeFormat, field: "act"},
	{name: "embed_scale negative", patch: f("embed_scale", -1), want: mlb.CodeFormat, field: "embed_scale"},
	{name: "embed_scale NaN", patch: f("embed_scale", nan), want: mlb.CodeFormat, field: "embed_scale"},
	{name: "attn_scale +Inf", patch: f("attn_scale", inf), want: mlb.CodeFormat, field: "attn_scale"},
	{name: "attn_scale negative", patch: f("attn_scale", -0.1), want: mlb.CodeFormat, field: "attn_scale"},
	{name: "attn_softcap NaN", patch: f("attn_softcap", nan), want: mlb.CodeFormat, field: "attn_softcap"},
	{name: "attn_softcap negative", patch: f("attn_softcap", -50), want: mlb.CodeFormat, field: "attn_softcap"},
	{name: "final_softcap -Inf", patch: f("final_softcap", -inf), want: mlb.CodeFormat, field: "final_softcap"},
	{name: "unknown flag bit 16", base: withFlags(0, 0), patch: setFlag(1, 16), want: mlb.CodeFormat, field: "layer 1"},
	{name: "unknown flag bit 128", base: withFlags(0, 0), patch: setFlag(0, 0x80|mlb.FlagSliding), want: mlb.CodeFormat, field: "layer 0"},
	{name: "local RoPE and no RoPE", base: withFlags(0, 0), patch: setFlag(1, mlb.FlagLocalRoPE|mlb.FlagNoRoPE), want: mlb.CodeFormat, field: "no RoPE"},
	{name: "rope_local_theta negative", patch: f("rope_local_theta", -1), want: mlb.CodeFormat, field: "rope_local_theta"},
	{name: "rope_local_theta NaN", patch: f("rope_local_theta", nan), want: mlb.CodeFormat, field: "rope_local_theta"},
	{name: "local RoPE layer without rope_local_theta", base: withFlags(mlb.FlagLocalRoPE, 0), patch: f("rope_local_theta", 0), want: mlb.CodeFormat, field: "rope_local_theta"},
	{name: "sliding_window above 2^24", patch: u("sliding_window", 1<<24+1), want: mlb.CodeFormat, field: "sliding_window"},
	{name: "rope_factor NaN with plain RoPE", patch: f("rope_factor", nan), want: mlb.CodeFormat, field: "rope_factor"},
	{name: "beta Inf with linear RoPE", patch: both(u("rope_type", 2), f("rope_factor", 2), f("rope_high_freq_factor", inf)), want: mlb.CodeFormat, field: "rope_high_freq_factor"},
	// Rules from the field notes.
	{name: "rope_theta 0", patch: f("rope_theta", 0), want: mlb.CodeFormat, field: "rope_theta"},
	{name: "rope_theta NaN", patch: f("rope_theta", nan), want: mlb.CodeFormat, field: "rope_theta"},
	{name: "norm_eps negative", patch: f("norm_eps", -1e-5), want: mlb.CodeFormat, field: "norm_eps"},
	{name: "q8_mask in a Q8_0 model", patch: u("q8_mask", 1), want: mlb.CodeFormat, field: "q8_mask"},
	{name: "q8_mask unknown bit", base: func(h *mlb.Header) { h.WType = mlb.WTypeQ4_0 }, patch: u("q8_mask", 128), want: mlb.CodeFormat, field: "q8_mask"},
	{name: "linear flag with another bit", base: linearBase, patch: setFlag(0, mlb.FlagLinear|mlb.FlagSliding), want: mlb.CodeFormat, field: "alone"},

	// ML_E_SHAPE
	{name: "dim 0", patch: u("dim", 0), want: mlb.CodeShape, field: "dim"},
	{name: "dim above 2^16", patch: u("dim", 1<<16+32), want: mlb.CodeShape, field: "dim"},
	{name: "n_layers 0", patch: u("n_layers", 0), want: mlb.CodeShape, field: "n_layers"},
	{name: "n_layers above 2^16", patch: u("n_layers", 1<<16+1), want: mlb.CodeShape, field: "n_layers"},
	{name: "n_heads 0", patch: u("n_heads", 0), want: mlb.CodeShape, field: "n_heads"},
	{name: "n_heads above 2^16", patch: u("n_heads", 1<<16+1), want: mlb.CodeShape, field: "n_heads"},
	{name: "n_kv_heads 0", patch: u("n_kv_heads", 0), want: mlb.CodeShape, field: "n_kv_heads"},
	{name: "n_kv_heads above 2^16", patch: u("n_kv_heads", 1<<16+1), want: mlb.CodeShape, field: "n_kv_heads"},
	{name: "hidden_dim 0", patch: u("hidden_dim", 0), want: mlb.CodeShape, field: "hidden_dim"},
	{name: "hidden_dim above 2^16", patch: u("hidden_dim", 1<<16+32), want: mlb.CodeShape, field: "hidden_dim"},
	{name: "vocab 0", patch: u("vocab", 0), want: mlb.CodeShape, field: "vocab"},
	{name: "vocab above 2^24", patch: u("vocab", 1<<24+1), want: mlb.CodeShape, field: "vocab"},
	{name: "max_seq 0", patch: u("max_seq", 0), want: mlb.CodeShape, field: "max_seq"},
	{name: "max_seq above 2^24", patch: u("max_seq", 1<<24+1), want: mlb.CodeShape, field: "max_seq"},
	{name: "dim not a multiple of 32", patch: u("dim", 48), want: mlb.CodeShape, field: "dim"},
	{name: "hidden_dim not a multiple of 32", patch: u("hidden_dim", 100), want: mlb.CodeShape, field: "hidden_dim"},
	{name: "n_heads does not divide dim", patch: both(u("n_heads", 3), u("n_kv_heads", 1)), want: mlb.CodeShape, field: "n_heads 3 does not divide dim 64"},
	{name: "n_kv_heads does not divide n_heads", patch: u("n_kv_heads", 3), want: mlb.CodeShape, field: "n_kv_heads"},
	{name: "odd head_dim from dim", patch: both(u("n_heads", 64), u("n_kv_heads", 64)), want: mlb.CodeShape, field: "head_dim 1 is odd"},
	{name: "odd head_dim override", patch: u("head_dim", 17), want: mlb.CodeShape, field: "odd"},
	{name: "q_dim not a multiple of 32", patch: u("head_dim", 10), want: mlb.CodeShape, field: "q_dim"},
	{name: "q_dim above 2^16", patch: u("head_dim", 1<<15), want: mlb.CodeShape, field: "q_dim"},
	{name: "vocab 2", patch: u("vocab", 2), want: mlb.CodeShape, field: "vocab"},
	// Rules from the field notes.
	{name: "rot_dim odd", patch: u("rot_dim", 3), want: mlb.CodeShape, field: "rot_dim"},
	{name: "rot_dim above head_dim", patch: u("rot_dim", 18), want: mlb.CodeShape, field: "rot_dim"},
	{name: "linear layer without lin_k_heads", base: linearBase, patch: both(u("lin_k_heads", 0), u("lin_v_heads", 0), u("lin_k_dim", 0), u("lin_v_dim", 0), u("lin_conv", 0)), want: mlb.CodeShape, field: "lin_k_heads"},
	{name: "lin_conv 0", base: linearBase, patch: u("lin_conv", 0), want: mlb.CodeShape, field: "lin_conv"},
	{name: "lin_v_heads not a multiple of 4", base: linearBase, patch: both(u("lin_v_heads", 6), u("lin_k_heads", 2)), want: mlb.CodeShape, field: "lin_v_heads"},
	{name: "lin_v_heads not a multiple of lin_k_heads", base: linearBase, patch: u("lin_k_heads", 3), want: mlb.CodeShape, field: "lin_v_heads"},
	{name: "lin_v_heads×lin_v_dim not a multiple of 32", base: linearBase, patch: u("lin_v_dim", 9), want: mlb.CodeShape, field: "lin_v_dim"},
	// krafla's extension (docs/FORMATS.md): mlbtest.Base's hidden_dim is 96.
	{name: "true_hidden_dim = hidden_dim", patch: u("true_hidden_dim", 96), want: mlb.CodeShape, field: "true_hidden_dim"},
	{name: "true_hidden_dim above hidden_dim", patch: u("true_hidden_dim", 97), want: mlb.CodeShape, field: "true_hidden_dim"},
	{name: "true_hidden_dim 32 below", patch: u("true_hidden_dim", 64), want: mlb.CodeShape, field: "true_hidden_dim"},
}

func linearBase(h *mlb.Header) {
	h.NLayers = 2
	h.LayerFlags = 1
	h.Flags = []uint8{mlb.FlagLinear, 0}
	h.LinKHeads, h.LinVHeads, h.LinKDim, h.LinVDim, h.LinConv = 2, 4, 16, 8, 4
}

// TestValidation runs each row through Open of a patched valid file, and the
// patched header through Validate and Create: all three give the row's code.
func TestValidation(t *testing.T) {
	for _, r := range validationRows {
		t.Run(r.name, func(t *testing.T) {
			h := mlbtest.Base()
			if r.base != nil {
				r.base(&h)
			}
			b := validBytes(t, h)
			if _, err := openBytes(t, b); err != nil {
				t.Fatalf("unpatched file: %v", err)
			}
			r.patch(b)
			_, err := openBytes(t, b)
			sentinel := map[mlb.Code]error{mlb.CodeFormat: mlb.ErrFormat, mlb.CodeShape: mlb.ErrShape}[r.want]
			wantCode(t, err, r.want, sentinel)
			if !strings.Contains(err.Error(), r.field) {
				t.Errorf("message %q does not contain %q", err, r.field)
			}
			// The writer refuses the same header (the magic is not a header field).
			var ph mlb.Header
			if ph.Unmarshal(b) != nil {
				return
			}
			if ph.LayerFlags == 1 && int(ph.NLayers) <= len(b)-mlb.HeaderSize {
				ph.Flags = b[mlb.HeaderSize : mlb.HeaderSize+int(ph.NLayers)]
			}
			wantCode(t, ph.Validate(), r.want, sentinel)
			_, err = mlb.Create(filepath.Join(t.TempDir(), "w.mlb"), &ph)
			wantCode(t, err, r.want, sentinel)
		})
	}
}

// TestValidationLimits checks that the limits themselves are accepted.
func TestValidationLimits(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func(h *mlb.Header)
	}{
		{"dim 2^16", func(h *mlb.Header) { h.Dim, h.NHeads, h.NKVHeads = 1<<16, 1<<11, 1<<11 }},
		{"n_layers 2^16", func(h *mlb.Header) { h.NLayers = 1 << 16 }},
		{"hidden_dim 2^16", func(h *mlb.Header) { h.HiddenDim = 1 << 16 }},
		{"vocab 2^24", func(h *mlb.Header) { h.Vocab = 1 << 24 }},
		{"max_seq 2^24", func(h *mlb.Header) { h.MaxSeq = 1 << 24 }},
		{"vocab 3", func(h *mlb.Header) { h.Vocab = 3 }},
		{"q_dim 2^16", func(h *mlb.Header) { h.HeadDim = 1 << 14 }},
		{"sliding_window 2^24", func(h *mlb.Header) { h.SlidingWindow = 1 << 24 }},
		{"rot_dim = head_dim", func(h *mlb.Header) { h.RotDim = 16 }},
		{"zero scales and caps", func(h *mlb.Header) {
			h.EmbedScale, h.AttnScale, h.AttnSoftcap, h.FinalSoftcap, h.NormEps = 0, 0, 0, 0, 0
		}},
	} {
		h := mlbtest.Base()
		c.f(&h)
		if err := h.Validate(); err != nil {
			t.Errorf("%s: got %v, want no error", c.name, err)
		}
		if _, _, err := mlb.BodyEnd(&h); err != nil {
			t.Errorf("%s: BodyEnd: %v", c.name, err)
		}
	}
}

// TestHugeHeaderSmallFile: a header at the limits in a tiny file is ML_E_FORMAT
// (too short), found without allocating the implied layout.
func TestHugeHeaderSmallFile(t *testing.T) {
	h := mlbtest.Base()
	h.NLayers, h.Dim, h.HiddenDim, h.Vocab = 1<<16, 1<<16, 1<<16, 1<<24
	h.NHeads, h.NKVHeads = 1<<11, 1<<11
	end, n, err := mlb.BodyEnd(&h)
	if err != nil {
		t.Fatal(err)
	}
	// 2^16 layers of seven 2^32-weight matrices and two 2^40-byte embeddings.
	if end < 1<<48 {
		t.Fatalf("BodyEnd %d, want above 2^48", end)
	}
	b := h.Marshal()
	allocs := testing.AllocsPerRun(3, func() {
		_, err = mlb.Parse(b)
	})
	wantCode(t, err, mlb.CodeFormat, mlb.ErrFormat)
	if !strings.Contains(err.Error(), "tok_emb.q") {
		t.Errorf("message %q does not name tok_emb.q", err)
	}
	if allocs > 20 {
		t.Errorf("Parse made %v allocations for %d tensors, want a handful", allocs, n)
	}
}

func TestEmptyAndShort(t *testing.T) {
	_, err := openBytes(t, nil)
	wantCode(t, err, mlb.CodeFormat, mlb.ErrFormat)
	if !strings.Contains(err.Error(), "empty") {
		t.Errorf("got %v, want it to say empty", err)
	}
	b := validBytes(t, mlbtest.Base())
	for _, n := range []int{1, 4, 100, mlb.HeaderSize - 1} {
		_, err := openBytes(t, b[:n])
		wantCode(t, err, mlb.CodeFormat, mlb.ErrFormat)
		if !strings.Contains(err.Error(), "header") {
			t.Errorf("%d bytes: got %v, want it to mention the header", n, err)
		}
	}
}

func TestOpenIO(t *testing.T) {
	dir := t.TempDir()
	_, err := mlb.Open(filepath.Join(dir, "missing.mlb"))
	wantCode(t, err, mlb.CodeIO, mlb.ErrIO)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v, want it to wrap os.ErrNotExist", err)
	}
	_, err = mlb.Open(dir) // a directory
	wantCode(t, err, mlb.CodeIO, mlb.ErrIO)
}
