package mlb

import (
	"fmt"
	"math"
	"strconv"
)

func finite(f float32) bool { return !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) }

func off(name string) int64 {
	f, _ := FieldByName(name)
	return int64(f.Offset)
}

// Validate checks every header rule of SPEC.md's validation table (and the rules
// its field notes state) and returns an *Error with ML_E_FORMAT or ML_E_SHAPE for
// the first one broken, naming the field. When LayerFlags is 1 it also checks
// Flags, which must hold NLayers bytes, and when WType is 3 Types, which must
// hold a known code for every matrix. It does not look at the body.
func (h *Header) Validate() error {
	if err := h.validateFormat(); err != nil {
		return err
	}
	if err := h.validateShape(); err != nil {
		return err
	}
	if err := h.validateFlags(); err != nil {
		return err
	}
	return h.validateTypes(-1)
}

func bool01(name string, v uint32) error {
	if v > 1 {
		return formatErr(off(name), "%s is %d, want 0 or 1", name, v)
	}
	return nil
}

func (h *Header) validateFormat() error {
	if h.Version != Version {
		return formatErr(off("version"), "version %d is not supported, want %d", h.Version, Version)
	}
	if h.WType != WTypeQ8_0 && h.WType != WTypeQ4_0 && h.WType != WTypeMixed {
		return formatErr(off("wtype"), "unknown wtype %d, want 1 (Q8_0), 2 (Q4_0) or 3 (type table)", h.WType)
	}
	if !(h.RopeTheta > 0) || !finite(h.RopeTheta) {
		return formatErr(off("rope_theta"), "rope_theta %v must be finite and > 0", h.RopeTheta)
	}
	if !(h.NormEps >= 0) || !finite(h.NormEps) {
		return formatErr(off("norm_eps"), "norm_eps %v must be finite and >= 0", h.NormEps)
	}
	if err := h.validateRope(); err != nil {
		return err
	}
	if err := h.validatePair(); err != nil {
		return err
	}
	if h.Q8Mask&^maskKnown != 0 {
		return formatErr(off("q8_mask"), "q8_mask %#x has unknown bits (known: %#x)", h.Q8Mask, maskKnown)
	}
	if h.Q8Mask != 0 && h.WType != WTypeQ4_0 {
		return formatErr(off("q8_mask"), "q8_mask %#x set in a model of wtype %d, want 0 (only Q4_0 models have one)", h.Q8Mask, h.WType)
	}
	for _, b := range []struct {
		name string
		v    uint32
	}{{"qkv_bias", h.QKVBias}, {"qk_norm", h.QKNorm}, {"layer_flags", h.LayerFlags},
		{"post_norms", h.PostNorms}, {"scale_f16", h.ScaleF16}, {"attn_gate", h.AttnGate}} {
		if err := bool01(b.name, b.v); err != nil {
			return err
		}
	}
	if h.SlidingWindow > MaxWindow {
		return formatErr(off("sliding_window"), "sliding_window %d is above the limit %d", h.SlidingWindow, MaxWindow)
	}
	if !(h.RopeLocalTheta >= 0) || !finite(h.RopeLocalTheta) {
		return formatErr(off("rope_local_theta"), "rope_local_theta %v must be finite and >= 0", h.RopeLocalTheta)
	}
	if h.Act != ActSiLU && h.Act != ActGELU {
		return formatErr(off("act"), "unknown act %d, want 0 (SiLU) or 1 (GELU)", h.Act)
	}
	for _, s := range []struct {
		name string
		v    float32
	}{{"embed_scale", h.EmbedScale}, {"attn_scale", h.AttnScale},
		{"attn_softcap", h.AttnSoftcap}, {"final_softcap", h.FinalSoftcap}} {
		if !(s.v >= 0) || !finite(s.v) {
			return formatErr(off(s.name), "%s %v must be finite and >= 0", s.name, s.v)
		}
	}
	// Fields a RoPE type ignores must still be numbers: a NaN or infinity in a
	// header is never meaningful, and tools print these values.
	for _, f := range fields {
		if f.Float && !finite(*f.f(h)) {
			return formatErr(int64(f.Offset), "%s %v is not finite", f.Name, *f.f(h))
		}
	}
	return nil
}

func (h *Header) validateRope() error {
	pos := func(name string, v float32) error {
		if !(v > 0) || !finite(v) {
			return formatErr(off(name), "rope_type %d needs %s > 0, got %v", h.RopeType, name, v)
		}
		return nil
	}
	switch h.RopeType {
	case RopePlain:
	case RopeLlama3:
		if err := pos("rope_factor", h.RopeFactor); err != nil {
			return err
		}
		if err := pos("rope_low_freq_factor", h.RopeLowFreqFactor); err != nil {
			return err
		}
		if !(h.RopeHighFreqFactor > h.RopeLowFreqFactor) || !finite(h.RopeHighFreqFactor) {
			return formatErr(off("rope_high_freq_factor"), "llama3 RoPE needs rope_high_freq_factor %v > rope_low_freq_factor %v",
				h.RopeHighFreqFactor, h.RopeLowFreqFactor)
		}
		if h.RopeOrigMaxSeq == 0 {
			return formatErr(off("rope_orig_max_seq"), "llama3 RoPE needs rope_orig_max_seq > 0")
		}
	case RopeLinear:
		if err := pos("rope_factor", h.RopeFactor); err != nil {
			return err
		}
	case RopeYarn:
		if err := pos("rope_factor", h.RopeFactor); err != nil {
			return err
		}
		if err := pos("rope_low_freq_factor", h.RopeLowFreqFactor); err != nil {
			return err
		}
		if !(h.RopeHighFreqFactor > 0) || !(h.RopeHighFreqFactor < h.RopeLowFreqFactor) {
			return formatErr(off("rope_high_freq_factor"), "yarn RoPE needs 0 < beta_slow (rope_high_freq_factor %v) < beta_fast (rope_low_freq_factor %v)",
				h.RopeHighFreqFactor, h.RopeLowFreqFactor)
		}
		if h.RopeOrigMaxSeq == 0 {
			return formatErr(off("rope_orig_max_seq"), "yarn RoPE needs rope_orig_max_seq > 0")
		}
		if err := pos("rope_attn_factor", h.RopeAttnFactor); err != nil {
			return err
		}
	default:
		return formatErr(off("rope_type"), "unknown rope_type %d, want 0 to 3", h.RopeType)
	}
	if h.RopeType != RopeYarn && h.RopeAttnFactor != 0 {
		return formatErr(off("rope_attn_factor"), "rope_attn_factor %v set without yarn RoPE (rope_type %d), want 0", h.RopeAttnFactor, h.RopeType)
	}
	return nil
}

func limit(name string, v uint32, max uint32) error {
	if v == 0 {
		return shapeErr(off(name), "%s is 0", name)
	}
	if v > max {
		return shapeErr(off(name), "%s %d is above the limit %d", name, v, max)
	}
	return nil
}

func (h *Header) validateShape() error {
	for _, d := range []struct {
		name string
		v    uint32
		max  uint32
	}{{"dim", h.Dim, MaxDim}, {"n_layers", h.NLayers, MaxDim}, {"n_heads", h.NHeads, MaxDim},
		{"n_kv_heads", h.NKVHeads, MaxDim}, {"hidden_dim", h.HiddenDim, MaxDim},
		{"vocab", h.Vocab, MaxVocab}, {"max_seq", h.MaxSeq, MaxVocab}} {
		if err := limit(d.name, d.v, d.max); err != nil {
			return err
		}
	}
	if h.Dim%BlockSize != 0 {
		return shapeErr(off("dim"), "dim %d is not a multiple of %d", h.Dim, BlockSize)
	}
	if h.HiddenDim%BlockSize != 0 {
		return shapeErr(off("hidden_dim"), "hidden_dim %d is not a multiple of %d", h.HiddenDim, BlockSize)
	}
	// true_hidden_dim records the width before the converter padded it to a
	// multiple of 32; hidden_dim itself is written as 0, so a file has one form.
	if t := h.TrueHiddenDim; t != 0 && (t >= h.HiddenDim || t+BlockSize <= h.HiddenDim) {
		return shapeErr(off("true_hidden_dim"), "true_hidden_dim %d must be 0 or from %d to %d (hidden_dim %d is it rounded up to a multiple of %d)",
			t, h.HiddenDim-BlockSize+1, h.HiddenDim-1, h.HiddenDim, BlockSize)
	}
	if h.HeadDim == 0 && h.Dim%h.NHeads != 0 {
		return shapeErr(off("n_heads"), "n_heads %d does not divide dim %d (and head_dim is 0)", h.NHeads, h.Dim)
	}
	if h.NHeads%h.NKVHeads != 0 {
		return shapeErr(off("n_kv_heads"), "n_kv_heads %d does not divide n_heads %d", h.NKVHeads, h.NHeads)
	}
	// head_dim and n_heads are at most 2^16 here, so the product fits in 64 bits.
	hd := uint64(h.HeadDimEff())
	if hd%2 != 0 {
		return shapeErr(off("head_dim"), "head_dim %d is odd", hd)
	}
	qd := hd * uint64(h.NHeads)
	if qd > MaxDim {
		return shapeErr(off("head_dim"), "q_dim = head_dim %d × n_heads %d = %d is above the limit %d", hd, h.NHeads, qd, MaxDim)
	}
	if qd%BlockSize != 0 {
		return shapeErr(off("head_dim"), "q_dim = head_dim %d × n_heads %d = %d is not a multiple of %d", hd, h.NHeads, qd, BlockSize)
	}
	if h.Vocab < 3 {
		return shapeErr(off("vocab"), "vocab %d is below 3", h.Vocab)
	}
	if h.RotDim%2 != 0 || uint64(h.RotDim) > hd {
		return shapeErr(off("rot_dim"), "rot_dim %d must be even and at most head_dim %d", h.RotDim, hd)
	}
	return h.validateLinear()
}

// validateLinear checks the linear-attention sizes when the model has any.
func (h *Header) validateLinear() error {
	if h.LinKHeads|h.LinVHeads|h.LinKDim|h.LinVDim|h.LinConv == 0 {
		return nil
	}
	for _, d := range []struct {
		name string
		v    uint32
	}{{"lin_k_heads", h.LinKHeads}, {"lin_v_heads", h.LinVHeads}, {"lin_k_dim", h.LinKDim},
		{"lin_v_dim", h.LinVDim}, {"lin_conv", h.LinConv}} {
		if d.v == 0 {
			return shapeErr(off(d.name), "%s is 0, but linear attention needs lin_k_heads, lin_v_heads, lin_k_dim, lin_v_dim and lin_conv all set", d.name)
		}
		if err := limit(d.name, d.v, MaxDim); err != nil {
			return err
		}
	}
	if h.LinVHeads%h.LinKHeads != 0 || h.LinVHeads%4 != 0 {
		return shapeErr(off("lin_v_heads"), "lin_v_heads %d must be a multiple of lin_k_heads %d and of 4", h.LinVHeads, h.LinKHeads)
	}
	vd := uint64(h.LinVHeads) * uint64(h.LinVDim)
	if vd%BlockSize != 0 || vd > MaxDim {
		return shapeErr(off("lin_v_dim"), "lin_v_heads × lin_v_dim = %d must be a multiple of %d and at most %d", vd, BlockSize, MaxDim)
	}
	qkv := 2*uint64(h.LinKHeads)*uint64(h.LinKDim) + vd
	if qkv > 4*MaxDim {
		return shapeErr(off("lin_k_dim"), "2·lin_k_heads·lin_k_dim + lin_v_heads·lin_v_dim = %d is above the limit %d", qkv, 4*MaxDim)
	}
	return nil
}

// validateFlags checks the per-layer flag bytes.
func (h *Header) validateFlags() error {
	if h.LayerFlags == 0 {
		if len(h.Flags) != 0 {
			return formatErr(off("layer_flags"), "layer_flags is 0 but %d flag bytes are given", len(h.Flags))
		}
		return nil
	}
	if len(h.Flags) != int(h.NLayers) {
		return formatErr(HeaderSize, "layer_flags is 1 but %d flag bytes are given for %d layers", len(h.Flags), h.NLayers)
	}
	for l, f := range h.Flags {
		o := int64(HeaderSize + l)
		switch {
		case f&^flagsKnown != 0:
			return formatErr(o, "layer %d: unknown layer flag bits %#x", l, f&^flagsKnown)
		case f&FlagLocalRoPE != 0 && f&FlagNoRoPE != 0:
			return formatErr(o, "layer %d: flags %#x combine local RoPE (2) and no RoPE (4)", l, f)
		case f&FlagLocalRoPE != 0 && h.RopeLocalTheta == 0:
			return formatErr(o, "layer %d: local RoPE flag set but rope_local_theta is 0", l)
		case f&FlagLinear != 0 && f != FlagLinear:
			return formatErr(o, "layer %d: flags %#x combine linear attention (8) with other bits; it must be alone", l, f)
		case f&FlagLinear != 0 && h.LinKHeads == 0:
			return shapeErr(off("lin_k_heads"), "layer %d is linear attention but lin_k_heads is 0", l)
		}
	}
	return nil
}

// validateTypes checks a mixed file's type table: one code per matrix, each
// one this reader knows, lb and la Q8_0 (as in every other file), columns a
// whole number of the type's blocks, and the matrices of a padded FFN Q8_0 or
// Q4_0 (whose zero code the loader checks). tableOff is the table's offset in
// the file (-1 when unknown: the error then has none).
func (h *Header) validateTypes(tableOff int64) error {
	if h.WType != WTypeMixed {
		if len(h.Types) != 0 {
			return formatErr(off("wtype"), "wtype %d has no type table but %d type codes are given", h.WType, len(h.Types))
		}
		return nil
	}
	if n := h.numMatrices(); len(h.Types) != n {
		return formatErr(tableOff, "type table has %d codes for %d matrices", len(h.Types), n)
	}
	at := func(i int) int64 {
		if tableOff < 0 {
			return -1
		}
		return tableOff + int64(i)
	}
	var err error
	mi := 0
	walkMats(h, func(layer int, name string, class uint32, _ DType, _, cols int) {
		if class == 0 || err != nil {
			mi += min(int(class), 1)
			return
		}
		i := mi
		mi++
		if layer >= 0 {
			name = "blk." + strconv.Itoa(layer) + "." + name
		}
		c := h.Types[i]
		t, ok := TypeOfCode(c)
		switch {
		case !ok:
			err = &Error{Code: CodeFormat, Offset: at(i), Tensor: name,
				Msg: fmt.Sprintf("type table entry %d is %d, a type this reader does not know (known: 1 to %d)", i, c, len(typeCodes)-1)}
		case class == classQ8 && t != Q8_0:
			err = &Error{Code: CodeFormat, Offset: at(i), Tensor: name,
				Msg: fmt.Sprintf("type table entry %d is %v; lb and la must be Q8_0", i, t)}
		case cols%t.BlockElems() != 0:
			err = &Error{Code: CodeShape, Offset: at(i), Tensor: name,
				Msg: fmt.Sprintf("type %v needs columns in whole blocks of %d, but the matrix has %d", t, t.BlockElems(), cols)}
		case h.TrueHiddenDim != 0 && (class == MaskW13 || class == MaskW2) && t != Q8_0 && t != Q4_0:
			err = &Error{Code: CodeFormat, Offset: at(i), Tensor: name,
				Msg: fmt.Sprintf("type %v in a padded FFN (true_hidden_dim %d): its matrices must be Q8_0 or Q4_0", t, h.TrueHiddenDim)}
		}
	})
	return err
}

// validatePair checks the pair record (docs/FORMATS.md, "Model and tokenizer
// pair"): a version this reader knows, and an id exactly when there is one.
func (h *Header) validatePair() error {
	zero := h.PairID == [PairIDSize]byte{}
	switch {
	case h.PairVersion > 1:
		return formatErr(PairVersionOffset, "pair_version %d is unknown (0: no pair record, 1: pair_id names the .mlt written with this model)", h.PairVersion)
	case h.PairVersion == 0 && !zero:
		return formatErr(PairIDOffset, "pair_id is set but pair_version is 0 (no pair record); the bytes must be 0")
	case h.PairVersion == 1 && zero:
		return formatErr(PairIDOffset, "pair_id is zero with pair_version 1 (a pair record names a nonzero id)")
	}
	return nil
}
