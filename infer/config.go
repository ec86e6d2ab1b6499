package infer

import (
	"fmt"
	"math"
)

// Layer flag bits, as in the .mlb body (SPEC.md "layer_flags").
const (
	flagSliding   = 1
	flagLocalRoPE = 2
	flagNoRoPE    = 4
	flagLinear    = 8
)

// Activations of the FFN gate.
const (
	actSiLU = 0
	actGELU = 1
)

// RoPE scaling types.
const (
	ropePlain  = 0
	ropeLlama3 = 1
	ropeLinear = 2
	ropeYarn   = 3
)

// Config is the part of an .mlb header the forward pass reads, with the derived
// values resolved (head_dim, q_dim, rot_dim, per-layer flags). It is filled from
// mlb.Header by Open; tests may build one directly.
type Config struct {
	Dim, NLayers, NHeads, NKVHeads, HiddenDim, Vocab, MaxSeq int
	HeadDim, QDim, KVDim, RotDim                             int // resolved: never 0

	RopeTheta, NormEps float32
	RopeType           int
	RopeFactor         float32
	RopeLow, RopeHigh  float32 // llama3 low/high freq factors; yarn beta_fast/beta_slow
	RopeOrigMaxSeq     int
	RopeAttnFactor     float32 // yarn only; 0 means 1
	RopeLocalTheta     float32

	QKVBias, QKNorm, PostNorms, AttnGate, SharedClassifier bool

	SlidingWindow int
	// LayerFlags holds one flag byte per layer (len NLayers). When the file has
	// no flag bytes but a sliding window, every layer carries flagSliding.
	LayerFlags []uint8

	Act                       int
	EmbedScale, AttnScale     float32 // resolved: never 0
	AttnSoftcap, FinalSoftcap float32

	LinK, LinV, LinDK, LinDV, LinConv int
}

// LinQKV is the number of channels of a linear-attention layer's lqkv output.
func (c *Config) LinQKV() int { return 2*c.LinK*c.LinDK + c.LinV*c.LinDV }

// LinVDim is V·dv, the width of a linear-attention layer's output.
func (c *Config) LinVDim() int { return c.LinV * c.LinDV }

func (c *Config) isLinear(l int) bool { return c.LayerFlags[l]&flagLinear != 0 }
func (c *Config) isSliding(l int) bool {
	return c.SlidingWindow > 0 && c.LayerFlags[l]&flagSliding != 0
}

// resolve fills the derived fields and checks what the forward pass relies on.
// The loader (package mlb) has validated the file already; these checks keep a
// hand-built Config from indexing out of range.
func (c *Config) resolve() error {
	if c.Dim <= 0 || c.NLayers <= 0 || c.NHeads <= 0 || c.NKVHeads <= 0 || c.HiddenDim <= 0 || c.Vocab < 3 || c.MaxSeq <= 0 {
		return fmt.Errorf("infer: config: dim %d, n_layers %d, n_heads %d, n_kv_heads %d, hidden_dim %d and max_seq %d must be positive, vocab %d at least 3",
			c.Dim, c.NLayers, c.NHeads, c.NKVHeads, c.HiddenDim, c.MaxSeq, c.Vocab)
	}
	if c.Dim%32 != 0 || c.HiddenDim%32 != 0 {
		return fmt.Errorf("infer: config: dim %d and hidden_dim %d must be multiples of 32", c.Dim, c.HiddenDim)
	}
	if c.NHeads%c.NKVHeads != 0 {
		return fmt.Errorf("infer: config: n_heads %d not a multiple of n_kv_heads %d", c.NHeads, c.NKVHeads)
	}
	if c.HeadDim == 0 {
		if c.Dim%c.NHeads != 0 {
			return fmt.Errorf("infer: config: dim %d not a multiple of n_heads %d", c.Dim, c.NHeads)
		}
		c.HeadDim = c.Dim / c.NHeads
	}
	if c.HeadDim%2 != 0 {
		return fmt.Errorf("infer: config: odd head_dim %d", c.HeadDim)
	}
	c.QDim = c.HeadDim * c.NHeads
	c.KVDim = c.HeadDim * c.NKVHeads
	if c.QDim%32 != 0 {
		return fmt.Errorf("infer: config: q_dim %d not a multiple of 32", c.QDim)
	}
	if c.RotDim == 0 {
		c.RotDim = c.HeadDim
	}
	if c.RotDim%2 != 0 || c.RotDim > c.HeadDim {
		return fmt.Errorf("infer: config: rot_dim %d must be even and at most head_dim %d", c.RotDim, c.HeadDim)
	}
	if c.EmbedScale == 0 {
		c.EmbedScale = 1
	}
	if c.AttnScale == 0 {
		c.AttnScale = float32(1 / math.Sqrt(float64(c.HeadDim)))
	}
	if c.RopeType == ropeYarn && c.RopeAttnFactor == 0 {
		c.RopeAttnFactor = 1
	}
	if c.RopeType != ropeYarn {
		c.RopeAttnFactor = 1
	}
	if c.LayerFlags == nil {
		c.LayerFlags = make([]uint8, c.NLayers)
		if c.SlidingWindow > 0 {
			for i := range c.LayerFlags {
				c.LayerFlags[i] = flagSliding
			}
		}
	}
	if len(c.LayerFlags) != c.NLayers {
		return fmt.Errorf("infer: config: %d layer flags for %d layers", len(c.LayerFlags), c.NLayers)
	}
	for l, f := range c.LayerFlags {
		if f&flagLinear != 0 {
			if c.LinK <= 0 || c.LinV <= 0 || c.LinDK <= 0 || c.LinDV <= 0 || c.LinConv <= 0 || c.LinV%c.LinK != 0 {
				return fmt.Errorf("infer: config: layer %d is linear attention, which needs lin_k_heads %d, lin_v_heads %d, lin_k_dim %d, lin_v_dim %d and lin_conv %d positive, lin_v_heads a multiple of lin_k_heads",
					l, c.LinK, c.LinV, c.LinDK, c.LinDV, c.LinConv)
			}
		}
	}
	return nil
}
