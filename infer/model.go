package infer

import (
	"fmt"
	"sync"

	"github.com/krafla/krafla/asm"
	"github.com/krafla/krafla/quantize"
)

// qmat is a quantized matrix: rows × cols weights as the file holds them,
// row-major, Q8_0 (q8) or Q4_0 (q4), with one float32 scale per block of 32,
// and pk, the same matrix repacked into the kernels' layout (asm.Packed),
// which the forward pass reads; f16 when every scale is a binary16 value (as
// those of a file with f16 scales are), which pk then stores in 2 bytes.
type qmat struct {
	q8         []int8
	q4         []byte
	d          []float32
	rows, cols int
	f16        bool
	pk         asm.Packed

	// A ggml block type of a mixed file (gt ≠ 0): gb holds the blocks as the
	// file does, row by row, and the products run the pure-Go definitions of
	// asm/dot_ggml.go on them (not packed).
	gt quantize.GGMLType
	gb []byte
	// viaQ8: a Q5_0 or IQ4_NL matrix, whose integer weights fit int8: it
	// is packed as Q8_0 (asm.Q5_0AsQ8_0, asm.IQ4_NLAsQ8_0) and multiplied
	// by the packed kernels, the same bits as the definitions; gb still
	// serves embedding rows. (IQ4_NL in the Q4_0 layout where packIQ4,
	// Q5_0 in its own where packQ5: fewer bytes, the same bits.)
	viaQ8 bool
	// k4, k6: a Q4_K (Q6_K) matrix that the active kernel variant
	// multiplies in the packed interleaved layout (asm.PackQ4_K into pk4,
	// asm.PackQ6_K into pk6, when packing, as packIQ4 is decided); its
	// products are the same bits as DotsRowsQ4_K's (DotsRowsQ6_K's).
	k4, k6 bool
	pk4    asm.PackedQ4K
	pk6    asm.PackedQ6K
	// kx: an IQ4_XS matrix in its packed interleaved layout (asm.PackIQ4_XS
	// into pkx), as k4; the same bits as DotsRowsIQ4_XS's.
	kx  bool
	pkx asm.PackedIQ4XS
	// k5: a Q5_K matrix in its packed interleaved layout (asm.PackQ5_K into
	// pk5), as k4; the same bits as DotsRowsQ5_K's.
	k5  bool
	pk5 asm.PackedQ5K
}

func (w *qmat) isQ4() bool { return w.q4 != nil }

// blocked reports whether w is of a ggml block type (gt, gb).
func (w *qmat) blocked() bool { return w.gt != 0 }

// packed reports whether the products of w read the packed layout (pk).
func (w *qmat) packed() bool { return !w.blocked() || w.viaQ8 }

// packIQ4 reports an IQ4_NL matrix that the active kernel variant
// multiplies in the Q4_0 layout (asm.PackIQ4_NL: half the bytes of the Q8_0
// form, the same bits); asked when packing (packedBytes and packInto of one
// ensurePacked or CopyToHugePages), a variant chosen later multiplies it
// too, by the definition's loop.
func (w *qmat) packIQ4() bool { return w.viaQ8 && w.gt == quantize.GGMLIQ4_NL && asm.PacksIQ4_NL() }

// packQ5 reports a Q5_0 matrix that the active kernel variant multiplies
// in its own packed layout (asm.PackQ5_0: 5.5 bits a weight against the
// Q8_0 form's 8.5, the same bits); asked when packing, as packIQ4 is.
func (w *qmat) packQ5() bool { return w.viaQ8 && w.gt == quantize.GGMLQ5_0 && asm.PacksQ5_0() }

// packQ4K reports a Q4_K matrix that the active kernel variant multiplies
// in the packed interleaved layout (asm.PacksQ4_K); asked when packing, as
// packIQ4 is; a variant chosen later multiplies it too, by the
// definition's loop.
func (w *qmat) packQ4K() bool { return w.gt == quantize.GGMLQ4_K && asm.PacksQ4_K() }

// packQ6K is packQ4K for Q6_K (asm.PacksQ6_K).
func (w *qmat) packQ6K() bool { return w.gt == quantize.GGMLQ6_K && asm.PacksQ6_K() }

// packIQ4XS is packQ4K for IQ4_XS (asm.PacksIQ4_XS).
func (w *qmat) packIQ4XS() bool { return w.gt == quantize.GGMLIQ4_XS && asm.PacksIQ4_XS() }

// packQ5K is packQ4K for Q5_K (asm.PacksQ5_K).
func (w *qmat) packQ5K() bool { return w.gt == quantize.GGMLQ5_K && asm.PacksQ5_K() }

// packQ4 reports whether w's packed layout is Q4_0's.
func (w *qmat) packQ4() bool { return w.isQ4() || w.packIQ4() }

// asQ8 writes a viaQ8 matrix's weights and scales as Q8_0.
func (w *qmat) asQ8() ([]int8, []float32) {
	q, d := make([]int8, w.rows*w.cols), make([]float32, w.rows*w.cols/32)
	if w.gt == quantize.GGMLQ5_0 {
		asm.Q5_0AsQ8_0(w.gb, q, d)
	} else {
		asm.IQ4_NLAsQ8_0(w.gb, q, d)
	}
	return q, d
}

// superK reports whether w multiplies Q8_K activations (superblocks of 256).
func (w *qmat) superK() bool { return w.blocked() && w.gt.BlockElems() == asm.QK }

// gRow returns the blocks of row r of a blocked matrix.
func (w *qmat) gRow(r int) []byte {
	rb := w.cols / w.gt.BlockElems() * w.gt.BlockBytes()
	return w.gb[r*rb : (r+1)*rb : (r+1)*rb]
}

// rowBytes is the size of one row's quants.
func (w *qmat) rowBytes() int {
	if w.isQ4() {
		return w.cols / 2
	}
	return w.cols
}

// bytes is the size of the quants and scales as the kernels read them (2
// bytes a scale when f16).
func (w *qmat) bytes() int64 {
	if w.blocked() {
		return int64(len(w.gb))
	}
	sb := 4
	if w.f16 {
		sb = 2
	}
	return int64(w.rows) * int64(w.rowBytes()+w.cols/32*sb)
}

// layer holds one layer's weights; which fields are set depends on the header.
type layer struct {
	attnNorm         []float32 // (dim)
	wq, wk, wv, wo   qmat      // (q_dim, dim), (kv_dim, dim), (kv_dim, dim), (dim, q_dim)
	wg               *qmat     // (q_dim, dim), attn_gate only
	bq, bk, bv       []float32 // (q_dim), (kv_dim), (kv_dim): qkv_bias only
	qNorm, kNorm     []float32 // (head_dim) each: qk_norm only
	lqkv, lz, lb, la qmat      // linear: (C, dim), (V·dv, dim), (V, dim), (V, dim)
	lconv            []float32 // linear: (C, lin_conv)
	dtBias, aLog     []float32 // linear: (V)
	lnorm            []float32 // linear: (dv)
	lout             qmat      // linear: (dim, V·dv)
	ffnNorm          []float32 // (dim)
	w1, w2, w3       qmat      // (hidden, dim), (dim, hidden), (hidden, dim)
	postAttnNorm     []float32 // (dim): post_norms only
	postFFNNorm      []float32
}

// Model is a loaded model: its configuration and its weights, which point into
// the file's mapping (scales converted to float32 by the loader where they are
// f16).
type Model struct {
	cfg       Config
	tokEmb    qmat // (vocab, dim)
	layers    []layer
	finalNorm []float32 // (dim)
	wcls      *qmat     // (vocab, dim); &tokEmb when shared
	ropes     [2]*rope  // global, local (nil when no layer uses it)
	closer    func() error
	huge      func() error // releases the huge-page copy of the weights
	weightB   int64
	packOnce  sync.Once // the weights repacked (ensurePacked, CopyToHugePages)
	anyK      bool      // some matrix multiplies Q8_K activations (qmat.superK)
	pair      [16]byte  // the header's pair_id: the tokenizer written with it (zero: no record)
}

// PairID is the id of the tokenizer written with the model (the header's
// pair_id), zero when the file has no pair record.
func (m *Model) PairID() [16]byte { return m.pair }

// Config returns the model's resolved configuration.
func (m *Model) Config() Config { return m.cfg }

// WeightBytes is the size of the weights the forward pass reads.
func (m *Model) WeightBytes() int64 { return m.weightB }

// Close releases the file mapping; the model must not be used afterwards.
func (m *Model) Close() error {
	var err error
	if m.huge != nil {
		err = m.huge()
		m.huge = nil
	}
	if m.closer == nil {
		return err
	}
	if e := m.closer(); err == nil {
		err = e
	}
	m.closer = nil
	return err
}

// tensorSource hands out the named tensors of a model file.
type tensorSource interface {
	// f32 returns the F32 tensor name of n values.
	f32(name string, n int) ([]float32, error)
	// mat returns the quantized matrix name of rows × cols.
	mat(name string, rows, cols int) (qmat, error)
}

// build assembles a Model from a resolved configuration and a tensor source.
func build(cfg Config, src tensorSource) (*Model, error) {
	if err := cfg.resolve(); err != nil {
		return nil, err
	}
	m := &Model{cfg: cfg}
	c := &m.cfg
	var err error
	f32 := func(name string, n int) []float32 {
		if err != nil {
			return nil
		}
		var v []float32
		v, err = src.f32(name, n)
		return v
	}
	mat := func(name string, rows, cols int) qmat {
		if err != nil {
			return qmat{}
		}
		var w qmat
		w, err = src.mat(name, rows, cols)
		if err == nil {
			m.weightB += w.bytes()
		}
		return w
	}
	m.tokEmb = mat("tok_emb", c.Vocab, c.Dim)
	m.layers = make([]layer, c.NLayers)
	for l := range m.layers {
		L := &m.layers[l]
		p := fmt.Sprintf("blk.%d.", l)
		L.attnNorm = f32(p+"attn_norm", c.Dim)
		if c.isLinear(l) {
			C, V := c.LinQKV(), c.LinV
			L.lqkv = mat(p+"lqkv", C, c.Dim)
			L.lz = mat(p+"lz", c.LinVDim(), c.Dim)
			L.lb = mat(p+"lb", V, c.Dim)
			L.la = mat(p+"la", V, c.Dim)
			L.lconv = f32(p+"lconv", C*c.LinConv)
			L.dtBias = f32(p+"dt_bias", V)
			L.aLog = f32(p+"A_log", V)
			L.lnorm = f32(p+"lnorm", c.LinDV)
			L.lout = mat(p+"lout", c.Dim, c.LinVDim())
		} else {
			L.wq = mat(p+"wq", c.QDim, c.Dim)
			L.wk = mat(p+"wk", c.KVDim, c.Dim)
			L.wv = mat(p+"wv", c.KVDim, c.Dim)
			L.wo = mat(p+"wo", c.Dim, c.QDim)
			if c.AttnGate {
				g := mat(p+"wg", c.QDim, c.Dim)
				L.wg = &g
			}
			if c.QKVBias {
				L.bq = f32(p+"bq", c.QDim)
				L.bk = f32(p+"bk", c.KVDim)
				L.bv = f32(p+"bv", c.KVDim)
			}
			if c.QKNorm {
				L.qNorm = f32(p+"q_norm", c.HeadDim)
				L.kNorm = f32(p+"k_norm", c.HeadDim)
			}
		}
		L.ffnNorm = f32(p+"ffn_norm", c.Dim)
		L.w1 = mat(p+"w1", c.HiddenDim, c.Dim)
		L.w2 = mat(p+"w2", c.Dim, c.HiddenDim)
		L.w3 = mat(p+"w3", c.HiddenDim, c.Dim)
		if c.PostNorms {
			L.postAttnNorm = f32(p+"post_attn_norm", c.Dim)
			L.postFFNNorm = f32(p+"post_ffn_norm", c.Dim)
		}
	}
	m.finalNorm = f32("final_norm", c.Dim)
	if c.SharedClassifier {
		m.wcls = &m.tokEmb
	} else {
		w := mat("wcls", c.Vocab, c.Dim)
		m.wcls = &w
	}
	if err != nil {
		return nil, err
	}
	for _, w := range m.mats() {
		m.anyK = m.anyK || w.superK()
	}
	for l := range c.NLayers {
		f := c.LayerFlags[l]
		if f&(flagLinear|flagNoRoPE) != 0 {
			continue
		}
		if f&flagLocalRoPE != 0 {
			if m.ropes[1] == nil {
				m.ropes[1] = newRope(c, true)
			}
		} else if m.ropes[0] == nil {
			m.ropes[0] = newRope(c, false)
		}
	}
	return m, nil
}
