// Package mlbtest writes small valid random .mlb models for tests, through the
// real mlb.Writer, and lists headers that cover every feature of the format.
package mlbtest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/krafla/krafla/mlb"
	"github.com/x448/float16"
)

var counter atomic.Int64

// Write writes a small valid random model with header h into dir and returns its
// path. Quants are uniform over their whole range ([-127, 127] for Q8_0, any
// nibble for Q4_0); scales are positive and sized so that a row's dot product
// with a unit-scale vector stays near 1; norm weights are near 1; biases and the
// linear-attention parameters are small. The same h and seed give the same bytes.
func Write(t testing.TB, dir string, h mlb.Header, seed int64) string {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("model-%d-%d.mlb", seed, counter.Add(1)))
	if err := writeFile(path, h, seed); err != nil {
		t.Fatalf("mlbtest.Write: %v", err)
	}
	return path
}

// writeFile writes the model of Write at path.
func writeFile(path string, h mlb.Header, seed int64) error {
	w, err := mlb.Create(path, &h)
	if err != nil {
		return err
	}
	defer w.Abort()
	if err := Fill(w, seed); err != nil {
		return err
	}
	return w.Close()
}

// Fill writes every tensor of w's header as Write does, leaving w to be
// closed (or prepared and committed) by the caller.
func Fill(w *mlb.Writer, seed int64) error {
	h := *w.Header()
	var err error
	r := rand.New(rand.NewSource(seed))
	for {
		ti, ok := w.Next()
		if !ok {
			break
		}
		left := len(w.Remaining())
		if ti.Type.Blocked() {
			err = w.WriteBlocks(ti.Name, RandomBlocks(r, ti.Type, ti.Rows*ti.Cols/ti.Type.BlockElems(), ti.Cols))
		} else if ti.Type.Quantized() {
			q, d := randomMatrix(r, ti, h.ScaleF16 != 0)
			zeroFFNPadding(&h, ti, q)
			err = w.WriteMatrix(ti.Name, q, d)
		} else {
			err = w.WriteF32(ti.Name, randomF32(r, ti))
		}
		if err != nil {
			return err
		}
		// A write that succeeds moves on by exactly one tensor (a writer
		// that does not would loop here forever).
		if next, ok := w.Next(); ok && (next.Name == ti.Name || len(w.Remaining()) != left-1) {
			return fmt.Errorf("mlbtest: %s written, but the writer expects %s next with %d left (want %d)", ti.Name, next.Name, len(w.Remaining()), left-1)
		}
	}
	return nil
}

// zeroFFNPadding stores the zero code in the weights that true_hidden_dim
// makes padding: rows true_hidden_dim.. of w1 and w3, columns true_hidden_dim..
// of w2 (the loader checks them).
func zeroFFNPadding(h *mlb.Header, ti mlb.TensorInfo, q []byte) {
	n := int(h.TrueHiddenDim)
	if n == 0 {
		return
	}
	set := func(r, c int) {
		i := r*ti.Cols + c
		if ti.Type == mlb.Q8_0 {
			q[i] = 0
			return
		}
		p := &q[i/mlb.BlockSize*16+i%16]
		if i%mlb.BlockSize < 16 {
			*p = *p&0xf0 | 8
		} else {
			*p = *p&0x0f | 8<<4
		}
	}
	switch {
	case strings.HasSuffix(ti.Name, ".w1"), strings.HasSuffix(ti.Name, ".w3"):
		for r := n; r < ti.Rows; r++ {
			for c := 0; c < ti.Cols; c++ {
				set(r, c)
			}
		}
	case strings.HasSuffix(ti.Name, ".w2"):
		for r := 0; r < ti.Rows; r++ {
			for c := n; c < ti.Cols; c++ {
				set(r, c)
			}
		}
	}
}

// randomMatrix returns random quants and encoded scales for a quantized tensor.
func randomMatrix(r *rand.Rand, ti mlb.TensorInfo, f16 bool) (q, scales []byte) {
	n := ti.Rows * ti.Cols
	var qstd float64
	if ti.Type == mlb.Q8_0 {
		q = make([]byte, n)
		for i := range q {
			q[i] = byte(int8(r.Intn(255) - 127))
		}
		qstd = 73.3 // std of the uniform distribution on [-127, 127]
	} else {
		q = make([]byte, n/2)
		r.Read(q)
		qstd = 4.6 // std of nibble-8 on [-8, 7]
	}
	nb := n / mlb.BlockSize
	base := 1 / (qstd * math.Sqrt(float64(ti.Cols)))
	if f16 {
		scales = make([]byte, 2*nb)
	} else {
		scales = make([]byte, 4*nb)
	}
	for i := 0; i < nb; i++ {
		d := float32(base * (0.5 + r.Float64()))
		if f16 {
			binary.LittleEndian.PutUint16(scales[2*i:], float16.Fromfloat32(d).Bits())
		} else {
			binary.LittleEndian.PutUint32(scales[4*i:], math.Float32bits(d))
		}
	}
	return q, scales
}

// f16Fields lists, per ggml block type, the byte offsets of its binary16
// super-scales (d, and dmin or m where it has one) inside a block.
var f16Fields = map[mlb.DType][]int{
	mlb.Q4_1: {0, 2}, mlb.Q5_0: {0}, mlb.Q4_K: {0, 2}, mlb.Q5_K: {0, 2},
	mlb.Q6_K: {208}, mlb.IQ4_NL: {0}, mlb.IQ4_XS: {0},
}

// RandomBlocks returns n random blocks of a Blocked type t for rows of cols
// weights: every quant and sub-scale bit random, the binary16 super-scales
// positive and sized like randomMatrix's scales (dmin and m a quarter of d).
func RandomBlocks(r *rand.Rand, t mlb.DType, n, cols int) []byte {
	bb := t.BlockBytes()
	b := make([]byte, n*bb)
	r.Read(b)
	base := 1 / (8 * 40 * math.Sqrt(float64(cols))) // sub-scales up to ~63, quants up to ~127
	for i := 0; i < n; i++ {
		for k, o := range f16Fields[t] {
			d := float32(base * (0.5 + r.Float64()))
			if k > 0 {
				d /= 4
			}
			binary.LittleEndian.PutUint16(b[i*bb+o:], float16.Fromfloat32(d).Bits())
		}
	}
	return b
}

// Mixed returns Base as a mixed file (wtype 3) whose type table gives the
// matrices, in file order, the types of types in turn (dim 256 and FFN 256 so
// that every type fits every matrix).
func Mixed(types ...mlb.DType) mlb.Header {
	h := Base()
	h.WType, h.Dim, h.HiddenDim, h.NHeads, h.NKVHeads = mlb.WTypeMixed, 256, 256, 8, 4
	h.Types = make([]uint8, h.NumMatrices())
	for i := range h.Types {
		h.Types[i] = mlb.TypeCode(types[i%len(types)])
	}
	return h
}

// randomF32 returns values for an F32 tensor chosen by its role: norms near 1,
// A_log in [-1, 0.5], the rest (biases, dt_bias, lconv) small.
func randomF32(r *rand.Rand, ti mlb.TensorInfo) []float32 {
	v := make([]float32, ti.Rows*ti.Cols)
	name := ti.Name
	if i := lastDot(name); i >= 0 {
		name = name[i+1:]
	}
	for i := range v {
		switch {
		case len(name) >= 4 && name[len(name)-4:] == "norm":
			v[i] = float32(1 + 0.1*r.NormFloat64())
		case name == "A_log":
			v[i] = float32(-1 + 1.5*r.Float64())
		case name == "lconv":
			v[i] = float32(0.3 * r.NormFloat64())
		default:
			v[i] = float32(0.05 * r.NormFloat64())
		}
	}
	return v
}

func lastDot(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return i
		}
	}
	return -1
}

// Case is a named header for table-driven tests.
type Case struct {
	Name   string
	Header mlb.Header
}

// Base returns a small valid Q8_0 Llama-like header: dim 64, 2 layers, 4 heads of
// 16 with 2 KV heads (GQA), FFN 96, vocab 67, max_seq 64.
func Base() mlb.Header {
	return mlb.Header{
		Version: 1, Dim: 64, NLayers: 2, NHeads: 4, NKVHeads: 2, HiddenDim: 96,
		Vocab: 67, MaxSeq: 64, RopeTheta: 10000, NormEps: 1e-5, WType: mlb.WTypeQ8_0,
	}
}

// CaseHeader returns the header of the case called name, failing the test
// when there is none.
func CaseHeader(t testing.TB, name string) mlb.Header {
	t.Helper()
	for _, c := range Cases() {
		if c.Name == name {
			return c.Header
		}
	}
	t.Fatalf("mlbtest: no case %q", name)
	return mlb.Header{}
}

// Cases returns headers covering every feature of the format, each valid, each
// small (a few hundred KB at most).
func Cases() []Case {
	var cs []Case
	add := func(name string, f func(h *mlb.Header)) {
		h := Base()
		f(&h)
		cs = append(cs, Case{name, h})
	}
	add("q8", func(h *mlb.Header) {})
	add("q8_mha_shared", func(h *mlb.Header) { h.NKVHeads = 4; h.SharedClassifier = 1 })
	add("q4", func(h *mlb.Header) { h.WType = mlb.WTypeQ4_0 })
	add("q4_shared", func(h *mlb.Header) { h.WType = mlb.WTypeQ4_0; h.SharedClassifier = 1 })
	for _, m := range []uint32{mlb.MaskTokEmb, mlb.MaskWcls, mlb.MaskWQK, mlb.MaskWV, mlb.MaskWO, mlb.MaskW13, mlb.MaskW2} {
		add(fmt.Sprintf("q4_mask%d", m), func(h *mlb.Header) { h.WType = mlb.WTypeQ4_0; h.Q8Mask = m })
	}
	add("q4_mask_wcls_shared", func(h *mlb.Header) { h.WType = mlb.WTypeQ4_0; h.Q8Mask = mlb.MaskWcls; h.SharedClassifier = 1 })
	add("q4_mask_all_f16", func(h *mlb.Header) { h.WType = mlb.WTypeQ4_0; h.Q8Mask = 127; h.ScaleF16 = 1 })
	add("q8_f16", func(h *mlb.Header) { h.ScaleF16 = 1 })
	add("q4_f16", func(h *mlb.Header) { h.WType = mlb.WTypeQ4_0; h.ScaleF16 = 1 })
	add("qwen2_bias", func(h *mlb.Header) { h.QKVBias = 1; h.RopeTheta = 1e6; h.NormEps = 1e-6 })
	add("qwen3_qknorm_headdim", func(h *mlb.Header) { h.QKNorm = 1; h.HeadDim = 32; h.NHeads = 4; h.NKVHeads = 1 })
	add("headdim_override_small", func(h *mlb.Header) { h.HeadDim = 8; h.NHeads = 8; h.NKVHeads = 4 })
	add("rope_llama3", func(h *mlb.Header) {
		h.RopeType = mlb.RopeLlama3
		h.RopeFactor, h.RopeLowFreqFactor, h.RopeHighFreqFactor, h.RopeOrigMaxSeq = 8, 1, 4, 32
		h.RopeTheta = 500000
	})
	add("rope_linear", func(h *mlb.Header) { h.RopeType = mlb.RopeLinear; h.RopeFactor = 4 })
	add("rope_yarn", func(h *mlb.Header) {
		h.RopeType = mlb.RopeYarn
		h.RopeFactor, h.RopeLowFreqFactor, h.RopeHighFreqFactor, h.RopeOrigMaxSeq = 4, 32, 1, 32
		h.RopeAttnFactor = float32(0.1*math.Log(4) + 1)
	})
	add("sliding_all", func(h *mlb.Header) { h.SlidingWindow = 8 })
	add("mistral_sliding_gqa", func(h *mlb.Header) { h.SlidingWindow = 16; h.NKVHeads = 1 })
	add("gemma2", func(h *mlb.Header) {
		h.Act = mlb.ActGELU
		h.PostNorms = 1
		h.SharedClassifier = 1
		h.AttnSoftcap, h.FinalSoftcap = 50, 30
		h.EmbedScale = 8
		h.AttnScale = 0.25
		h.SlidingWindow = 8
		h.LayerFlags = 1
		h.Flags = []uint8{mlb.FlagSliding, 0}
	})
	add("gemma3_local_rope", func(h *mlb.Header) {
		h.WType = mlb.WTypeQ4_0
		h.Q8Mask = mlb.MaskTokEmb
		h.SharedClassifier = 1
		h.Act = mlb.ActGELU
		h.PostNorms = 1
		h.QKNorm = 1
		h.HeadDim = 32
		h.NLayers = 3
		h.SlidingWindow = 8
		h.RopeTheta = 1e6
		h.RopeLocalTheta = 10000
		h.RopeType = mlb.RopeLinear
		h.RopeFactor = 8
		h.EmbedScale = 8
		h.LayerFlags = 1
		h.Flags = []uint8{mlb.FlagSliding | mlb.FlagLocalRoPE, mlb.FlagSliding | mlb.FlagLocalRoPE, 0}
	})
	add("smollm3_no_rope", func(h *mlb.Header) {
		h.NLayers = 4
		h.LayerFlags = 1
		h.Flags = []uint8{0, 0, 0, mlb.FlagNoRoPE}
	})
	add("qwen35_linear", func(h *mlb.Header) {
		h.NLayers = 4
		h.LayerFlags = 1
		h.Flags = []uint8{mlb.FlagLinear, mlb.FlagLinear, mlb.FlagLinear, 0}
		h.AttnGate = 1
		h.QKNorm = 1
		h.HeadDim = 32
		h.RotDim = 8
		h.LinKHeads, h.LinVHeads, h.LinKDim, h.LinVDim, h.LinConv = 2, 4, 16, 8, 4
		h.SharedClassifier = 1
	})
	add("qwen35_linear_q4_mask", func(h *mlb.Header) {
		h.WType = mlb.WTypeQ4_0
		h.Q8Mask = mlb.MaskWV | mlb.MaskWO
		h.ScaleF16 = 1
		h.NLayers = 2
		h.LayerFlags = 1
		h.Flags = []uint8{mlb.FlagLinear, 0}
		h.AttnGate = 1
		h.RotDim = 4
		h.LinKHeads, h.LinVHeads, h.LinKDim, h.LinVDim, h.LinConv = 1, 4, 8, 16, 3
	})
	add("everything", func(h *mlb.Header) { // every header field non-zero
		h.WType = mlb.WTypeQ4_0
		h.SharedClassifier = 1
		h.RopeType = mlb.RopeYarn
		h.RopeFactor, h.RopeLowFreqFactor, h.RopeHighFreqFactor, h.RopeOrigMaxSeq = 4, 32, 1, 32
		h.RopeAttnFactor = 1.1
		h.Q8Mask = mlb.MaskWcls | mlb.MaskW2
		h.QKVBias, h.QKNorm, h.HeadDim = 1, 1, 16
		h.SlidingWindow = 4
		h.LayerFlags = 1
		h.NLayers = 4
		h.Flags = []uint8{mlb.FlagSliding | mlb.FlagLocalRoPE, mlb.FlagNoRoPE, mlb.FlagLinear, 0}
		h.RopeLocalTheta = 10000
		h.Act, h.PostNorms = mlb.ActGELU, 1
		h.EmbedScale, h.AttnScale = 8, 0.25
		h.ScaleF16 = 1
		h.AttnSoftcap, h.FinalSoftcap = 50, 30
		h.RotDim, h.AttnGate = 8, 1
		h.LinKHeads, h.LinVHeads, h.LinKDim, h.LinVDim, h.LinConv = 2, 4, 8, 8, 4
		h.TrueHiddenDim = 86 // hidden_dim 96 holds 10 zero channels
	})
	add("one_layer_vocab3", func(h *mlb.Header) { h.NLayers = 1; h.Vocab = 3; h.NHeads = 2; h.NKVHeads = 2; h.MaxSeq = 1 })
	return cs
}
