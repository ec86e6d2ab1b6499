package infer

import (
	"fmt"

	"github.com/krafla/krafla/asm"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/quantize"
)

// Open maps and validates the .mlb file at path (package mlb does every check of
// SPEC.md) and returns the model, its weights used in place.
func Open(path string) (*Model, error) {
	f, err := mlb.Open(path)
	if err != nil {
		return nil, err
	}
	m, err := FromFile(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m.closer = f.Close
	return m, nil
}

// FromFile builds a model over an open file; closing the model does not close f.
func FromFile(f *mlb.File) (*Model, error) {
	m, err := build(ConfigOf(&f.Header), fileSource{f})
	if err != nil {
		return nil, err
	}
	m.pair = f.Header.PairID
	return m, nil
}

// ConfigOf translates an .mlb header into the forward pass's configuration.
func ConfigOf(h *mlb.Header) Config {
	c := Config{
		Dim: int(h.Dim), NLayers: int(h.NLayers), NHeads: int(h.NHeads), NKVHeads: int(h.NKVHeads),
		HiddenDim: int(h.HiddenDim), Vocab: int(h.Vocab), MaxSeq: int(h.MaxSeq),
		HeadDim: h.HeadDimEff(), RotDim: h.RotDimEff(),
		RopeTheta: h.RopeTheta, NormEps: h.NormEps,
		RopeType: int(h.RopeType), RopeFactor: h.RopeFactor,
		RopeLow: h.RopeLowFreqFactor, RopeHigh: h.RopeHighFreqFactor,
		RopeOrigMaxSeq: int(h.RopeOrigMaxSeq), RopeAttnFactor: h.RopeAttnFactor,
		RopeLocalTheta: h.RopeLocalTheta,
		QKVBias:        h.QKVBias != 0, QKNorm: h.QKNorm != 0, PostNorms: h.PostNorms != 0,
		AttnGate: h.AttnGate != 0, SharedClassifier: h.SharedClassifier != 0,
		SlidingWindow: int(h.SlidingWindow),
		Act:           int(h.Act), EmbedScale: h.EmbedScale, AttnScale: h.AttnScale,
		AttnSoftcap: h.AttnSoftcap, FinalSoftcap: h.FinalSoftcap,
		LinK: int(h.LinKHeads), LinV: int(h.LinVHeads), LinDK: int(h.LinKDim), LinDV: int(h.LinVDim),
		LinConv: int(h.LinConv),
	}
	c.LayerFlags = make([]uint8, c.NLayers)
	for l := range c.LayerFlags {
		c.LayerFlags[l] = h.LayerFlag(l)
	}
	return c
}

// fileSource hands out the tensors of an mlb.File, checking their shapes.
type fileSource struct{ f *mlb.File }

func (s fileSource) get(name string, rows, cols int) (*mlb.Tensor, error) {
	t := s.f.Tensor(name)
	if t == nil {
		return nil, fmt.Errorf("infer: tensor %q missing", name)
	}
	if t.Rows*t.Cols != rows*cols || (t.Type.Quantized() && (t.Rows != rows || t.Cols != cols)) {
		return nil, fmt.Errorf("infer: tensor %q is %d×%d, want %d×%d", name, t.Rows, t.Cols, rows, cols)
	}
	return t, nil
}

func (s fileSource) f32(name string, n int) ([]float32, error) {
	t, err := s.get(name, 1, n)
	if err != nil {
		return nil, err
	}
	if t.Type != mlb.F32 || len(t.F32) != n {
		return nil, fmt.Errorf("infer: tensor %q: type %v, want %d F32 values", name, t.Type, n)
	}
	return t.F32, nil
}

func (s fileSource) mat(name string, rows, cols int) (qmat, error) {
	t, err := s.get(name, rows, cols)
	if err != nil {
		return qmat{}, err
	}
	w := qmat{d: t.D, rows: rows, cols: cols}
	if t.Type.Blocked() {
		// mlb's type codes are quantize's GGMLType values.
		w.gt, w.gb = quantize.GGMLType(mlb.TypeCode(t.Type)), t.Q
		if w.gt.BlockElems() != t.Type.BlockElems() || len(t.Q) != rows*cols/w.gt.BlockElems()*w.gt.BlockBytes() {
			return qmat{}, fmt.Errorf("infer: tensor %q: %d block bytes do not fit %v %d×%d", name, len(t.Q), t.Type, rows, cols)
		}
		if w.gt == quantize.GGMLQ5_0 || w.gt == quantize.GGMLIQ4_NL {
			// Packed as Q8_0 at the first product, with binary16 scales:
			// each d is a block's binary16 widened exactly (asm.F16ToF32),
			// which asm.ScalesFitF16 accepts for all 65536 values, NaN
			// payloads included (their low 13 bits are zero).
			w.viaQ8, w.f16 = true, true
		}
		return w, nil
	}
	switch t.Type {
	case mlb.Q8_0:
		w.q8 = t.Q8()
	case mlb.Q4_0:
		w.q4 = t.Q
	default:
		return qmat{}, fmt.Errorf("infer: tensor %q: type %v, want a quantized matrix", name, t.Type)
	}
	if len(w.d) != rows*cols/32 || len(t.Q) != rows*w.rowBytes() {
		return qmat{}, fmt.Errorf("infer: tensor %q: %d quant bytes and %d scales do not fit %d×%d", name, len(t.Q), len(w.d), rows, cols)
	}
	w.f16 = asm.ScalesFitF16(w.d)
	return w, nil
}
