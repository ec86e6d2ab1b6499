package mlb

import (
	"encoding/binary"
	"math"
)

// Sizes fixed by the format.
const (
	Magic      = "MLB1"
	Version    = 1
	HeaderSize = 256 // the body starts here
	Align      = 64  // every array starts at a multiple of this and is zero padded to it
	BlockSize  = 32  // weights per quantization block (one scale each)
)

// Limits of SPEC.md (with SPEC-NOTES.md's reading of the garbled sentence).
const (
	MaxDim    = 1 << 16 // dim, n_layers, n_heads, n_kv_heads, hidden_dim, q_dim (and the linear-attention sizes)
	MaxVocab  = 1 << 24 // vocab and max_seq
	MaxWindow = 1 << 24 // sliding_window
)

// Weight types (wtype).
const (
	WTypeQ8_0  = 1
	WTypeQ4_0  = 2
	WTypeMixed = 3 // krafla extension: a type table gives each matrix's type (docs/FORMATS.md)
)

// RoPE types (rope_type).
const (
	RopePlain  = 0
	RopeLlama3 = 1
	RopeLinear = 2
	RopeYarn   = 3
)

// FFN activations (act).
const (
	ActSiLU = 0
	ActGELU = 1 // tanh approximation
)

// Layer flag bits (the per-layer bytes after the header).
const (
	FlagSliding   = 1 // the layer attends through the sliding window
	FlagLocalRoPE = 2 // the layer uses rope_local_theta, unscaled
	FlagNoRoPE    = 4 // queries and keys are not rotated
	FlagLinear    = 8 // linear attention (gated delta rule), alone
	flagsKnown    = FlagSliding | FlagLocalRoPE | FlagNoRoPE | FlagLinear
)

// q8_mask bits: matrix classes of a Q4_0 model stored as Q8_0.
const (
	MaskTokEmb = 1
	MaskWcls   = 2
	MaskWQK    = 4  // wq, wk, wg, lqkv
	MaskWV     = 8  // wv, lz
	MaskWO     = 16 // wo, lout
	MaskW13    = 32 // w1, w3
	MaskW2     = 64 // w2
	maskKnown  = 127
)

// Header holds every field of the 256-byte .mlb header, in offset order, and the
// per-layer flag bytes that follow it when LayerFlags is 1.
type Header struct {
	Version, Dim, NLayers, NHeads, NKVHeads, HiddenDim, Vocab, MaxSeq uint32
	RopeTheta, NormEps                                                float32
	WType, SharedClassifier, RopeType                                 uint32
	RopeFactor, RopeLowFreqFactor, RopeHighFreqFactor                 float32
	RopeOrigMaxSeq, Q8Mask, QKVBias, HeadDim, QKNorm                  uint32
	RopeAttnFactor                                                    float32
	SlidingWindow, LayerFlags                                         uint32
	RopeLocalTheta                                                    float32
	Act, PostNorms                                                    uint32
	EmbedScale, AttnScale                                             float32
	ScaleF16                                                          uint32
	AttnSoftcap, FinalSoftcap                                         float32
	RotDim, AttnGate, LinKHeads, LinVHeads, LinKDim, LinVDim, LinConv uint32
	TrueHiddenDim                                                     uint32 // krafla's extension at 160 (docs/FORMATS.md)
	// The model–tokenizer pair (krafla's extension at 164, docs/FORMATS.md):
	// PairVersion 1 says that PairID is the id the .mlt written with this
	// model carries; 0 (and a zero PairID) is a file without the record.
	PairVersion uint32
	PairID      [PairIDSize]byte

	Flags []uint8 // the per-layer flag bytes (body), len NLayers when LayerFlags == 1
	Types []uint8 // the type table (body): one type code per matrix in file order, when WType == WTypeMixed
}

// Field describes one header field as SPEC.md names it.
type Field struct {
	Name    string // SPEC.md's name, e.g. "n_kv_heads"
	Offset  int
	Float   bool // f32; otherwise u32
	Meaning string
	u       func(*Header) *uint32
	f       func(*Header) *float32
}

// Value returns the field's value in h as a uint32 or float32 inside an any.
func (fd Field) Value(h *Header) any {
	if fd.Float {
		return *fd.f(h)
	}
	return *fd.u(h)
}

func u32f(name string, off int, meaning string, p func(*Header) *uint32) Field {
	return Field{Name: name, Offset: off, Meaning: meaning, u: p}
}

func f32f(name string, off int, meaning string, p func(*Header) *float32) Field {
	return Field{Name: name, Offset: off, Float: true, Meaning: meaning, f: p}
}

// ReservedStart is where the header's zero padding begins: SPEC.md's fields end
// at 160, and krafla's extensions take bytes 160 to 183 (true_hidden_dim, then
// pair_version and pair_id). The loader refuses a file with any other byte of
// 184 to 255 set: a field it does not know would change what the file means.
const ReservedStart = 184

// The pair record (docs/FORMATS.md, "Model and tokenizer pair").
const (
	PairVersionOffset = 164 // u32 pair_version: 0 none, 1 pair_id holds the pair's id
	PairIDOffset      = 168 // u8[16] pair_id
	PairIDSize        = 16
)

// SetPair records id as the pair's id (pair_version 1); a zero id removes
// the record.
func (h *Header) SetPair(id [PairIDSize]byte) {
	h.PairID = id
	h.PairVersion = 0
	if id != ([PairIDSize]byte{}) {
		h.PairVersion = 1
	}
}

// fields lists the header after the magic, in offset order (4 to 163).
var fields = []Field{
	u32f("version", 4, "format version, 1", func(h *Header) *uint32 { return &h.Version }),
	u32f("dim", 8, "model width", func(h *Header) *uint32 { return &h.Dim }),
	u32f("n_layers", 12, "transformer layers", func(h *Header) *uint32 { return &h.NLayers }),
	u32f("n_heads", 16, "query heads", func(h *Header) *uint32 { return &h.NHeads }),
	u32f("n_kv_heads", 20, "key/value heads (GQA)", func(h *Header) *uint32 { return &h.NKVHeads }),
	u32f("hidden_dim", 24, "FFN width", func(h *Header) *uint32 { return &h.HiddenDim }),
	u32f("vocab", 28, "vocabulary size", func(h *Header) *uint32 { return &h.Vocab }),
	u32f("max_seq", 32, "longest context", func(h *Header) *uint32 { return &h.MaxSeq }),
	f32f("rope_theta", 36, "RoPE base", func(h *Header) *float32 { return &h.RopeTheta }),
	f32f("norm_eps", 40, "RMSNorm epsilon", func(h *Header) *float32 { return &h.NormEps }),
	u32f("wtype", 44, "1 = Q8_0, 2 = Q4_0, 3 = per-matrix type table", func(h *Header) *uint32 { return &h.WType }),
	u32f("shared_classifier", 48, "non-zero: tok_emb is the classifier", func(h *Header) *uint32 { return &h.SharedClassifier }),
	u32f("rope_type", 52, "0 plain, 1 llama3, 2 linear, 3 yarn", func(h *Header) *uint32 { return &h.RopeType }),
	f32f("rope_factor", 56, "RoPE scaling factor", func(h *Header) *float32 { return &h.RopeFactor }),
	f32f("rope_low_freq_factor", 60, "llama3: low freq factor; yarn: beta_fast", func(h *Header) *float32 { return &h.RopeLowFreqFactor }),
	f32f("rope_high_freq_factor", 64, "llama3: high freq factor; yarn: beta_slow", func(h *Header) *float32 { return &h.RopeHighFreqFactor }),
	u32f("rope_orig_max_seq", 68, "llama3, yarn: original context", func(h *Header) *uint32 { return &h.RopeOrigMaxSeq }),
	u32f("q8_mask", 72, "Q4_0: matrix classes kept as Q8_0", func(h *Header) *uint32 { return &h.Q8Mask }),
	u32f("qkv_bias", 76, "q, k, v projections have biases", func(h *Header) *uint32 { return &h.QKVBias }),
	u32f("head_dim", 80, "head size; 0 = dim / n_heads", func(h *Header) *uint32 { return &h.HeadDim }),
	u32f("qk_norm", 84, "per-head RMSNorm of q and k", func(h *Header) *uint32 { return &h.QKNorm }),
	f32f("rope_attn_factor", 88, "yarn: factor on cos and sin", func(h *Header) *float32 { return &h.RopeAttnFactor }),
	u32f("sliding_window", 92, "0 = full attention; else window length", func(h *Header) *uint32 { return &h.SlidingWindow }),
	u32f("layer_flags", 96, "per-layer flag bytes follow the header", func(h *Header) *uint32 { return &h.LayerFlags }),
	f32f("rope_local_theta", 100, "RoPE base of local-RoPE layers", func(h *Header) *float32 { return &h.RopeLocalTheta }),
	u32f("act", 104, "0 = SiLU, 1 = GELU (tanh)", func(h *Header) *uint32 { return &h.Act }),
	u32f("post_norms", 108, "post-attention and post-FFN norms", func(h *Header) *uint32 { return &h.PostNorms }),
	f32f("embed_scale", 112, "embedding factor; 0 = 1", func(h *Header) *float32 { return &h.EmbedScale }),
	f32f("attn_scale", 116, "score factor; 0 = 1/sqrt(head_dim)", func(h *Header) *float32 { return &h.AttnScale }),
	u32f("scale_f16", 120, "quant scales stored as f16", func(h *Header) *uint32 { return &h.ScaleF16 }),
	f32f("attn_softcap", 124, "attention score softcap; 0 = none", func(h *Header) *float32 { return &h.AttnSoftcap }),
	f32f("final_softcap", 128, "logit softcap; 0 = none", func(h *Header) *float32 { return &h.FinalSoftcap }),
	u32f("rot_dim", 132, "rotated dims per head; 0 = all", func(h *Header) *uint32 { return &h.RotDim }),
	u32f("attn_gate", 136, "attention output gate wg", func(h *Header) *uint32 { return &h.AttnGate }),
	u32f("lin_k_heads", 140, "linear attention key heads", func(h *Header) *uint32 { return &h.LinKHeads }),
	u32f("lin_v_heads", 144, "linear attention value heads", func(h *Header) *uint32 { return &h.LinVHeads }),
	u32f("lin_k_dim", 148, "linear attention key head size", func(h *Header) *uint32 { return &h.LinKDim }),
	u32f("lin_v_dim", 152, "linear attention value head size", func(h *Header) *uint32 { return &h.LinVDim }),
	u32f("lin_conv", 156, "causal convolution taps", func(h *Header) *uint32 { return &h.LinConv }),
	u32f("true_hidden_dim", 160, "FFN width before zero padding; 0 = hidden_dim", func(h *Header) *uint32 { return &h.TrueHiddenDim }),
}

// Fields returns the header fields after the magic (offsets 4 to 160), in order.
func Fields() []Field { return append([]Field(nil), fields...) }

// FieldByName returns the field SPEC.md calls name.
func FieldByName(name string) (Field, bool) {
	for _, f := range fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// Marshal encodes the 256-byte header (magic, fields, zero padding). The layer
// flags and the type table are not part of it: they are the body's first arrays.
func (h *Header) Marshal() []byte {
	b := make([]byte, HeaderSize)
	copy(b, Magic)
	for _, f := range fields {
		if f.Float {
			binary.LittleEndian.PutUint32(b[f.Offset:], math.Float32bits(*f.f(h)))
		} else {
			binary.LittleEndian.PutUint32(b[f.Offset:], *f.u(h))
		}
	}
	binary.LittleEndian.PutUint32(b[PairVersionOffset:], h.PairVersion)
	copy(b[PairIDOffset:], h.PairID[:])
	return b
}

// Unmarshal decodes the 256-byte header at the start of b. It checks only the
// length and the magic; Validate checks the values. Flags and Types are left
// nil: they are in the body (the loader fills them).
func (h *Header) Unmarshal(b []byte) error {
	if len(b) == 0 {
		return formatErr(0, "empty file")
	}
	if len(b) < HeaderSize {
		return formatErr(int64(len(b)), "file of %d bytes is shorter than the %d-byte header", len(b), HeaderSize)
	}
	if string(b[:4]) != Magic {
		if string(b[:4]) == "GGUF" { // the file people most often name .mlb by mistake
			return formatErr(0, "bad magic %q, want %q: this looks like a GGUF file: convert it with `krafla convert FILE`", b[:4], Magic)
		}
		return formatErr(0, "bad magic %q, want %q", b[:4], Magic)
	}
	*h = Header{}
	for _, f := range fields {
		v := binary.LittleEndian.Uint32(b[f.Offset:])
		if f.Float {
			*f.f(h) = math.Float32frombits(v)
		} else {
			*f.u(h) = v
		}
	}
	h.PairVersion = binary.LittleEndian.Uint32(b[PairVersionOffset:])
	copy(h.PairID[:], b[PairIDOffset:])
	return nil
}

// HeadDimEff is head_dim, or dim / n_heads when head_dim is 0 (0 if n_heads is 0).
func (h *Header) HeadDimEff() int {
	if h.HeadDim != 0 {
		return int(h.HeadDim)
	}
	if h.NHeads == 0 {
		return 0
	}
	return int(h.Dim / h.NHeads)
}

// QDim is head_dim × n_heads, the width of the queries.
func (h *Header) QDim() int { return h.HeadDimEff() * int(h.NHeads) }

// KVDim is head_dim × n_kv_heads, the width of the keys and values.
func (h *Header) KVDim() int { return h.HeadDimEff() * int(h.NKVHeads) }

// RotDimEff is the number of dimensions RoPE rotates in each head: rot_dim, or
// head_dim when rot_dim is 0.
func (h *Header) RotDimEff() int {
	if h.RotDim != 0 {
		return int(h.RotDim)
	}
	return h.HeadDimEff()
}

// LayerFlag returns the effective flags of layer l: the stored byte when
// layer_flags is 1, else FlagSliding for every layer when sliding_window is set.
// FlagSliding is cleared when sliding_window is 0 (a window of 0 is full attention).
func (h *Header) LayerFlag(l int) uint8 {
	var f uint8
	if h.LayerFlags != 0 {
		if l >= 0 && l < len(h.Flags) {
			f = h.Flags[l]
		}
	} else {
		f = FlagSliding
	}
	if h.SlidingWindow == 0 {
		f &^= FlagSliding
	}
	return f
}

// FFNDim is the model's true FFN width: true_hidden_dim, or hidden_dim when it
// is 0. Channels from FFNDim to hidden_dim are zero padding (zero rows of w1
// and w3, zero columns of w2) and contribute nothing.
func (h *Header) FFNDim() int {
	if h.TrueHiddenDim != 0 {
		return int(h.TrueHiddenDim)
	}
	return int(h.HiddenDim)
}

// LinQKVDim is 2·K·dk + V·dv, the channels a linear-attention layer projects to.
func (h *Header) LinQKVDim() int {
	return 2*int(h.LinKHeads)*int(h.LinKDim) + int(h.LinVHeads)*int(h.LinVDim)
}

// LinVDimTotal is V·dv, the value (and gate) channels of a linear-attention layer.
func (h *Header) LinVDimTotal() int { return int(h.LinVHeads) * int(h.LinVDim) }

// LinearLayers reports the number of linear-attention layers.
func (h *Header) LinearLayers() int {
	n := 0
	for l := 0; l < int(h.NLayers); l++ {
		if h.LayerFlag(l)&FlagLinear != 0 {
			n++
		}
	}
	return n
}
