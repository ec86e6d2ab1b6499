package convert

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/krafla/krafla/gguf"
	"github.com/krafla/krafla/internal/pair"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlt"
	"github.com/krafla/krafla/quantize"
)

// IsGGUF reports whether the file at path starts with the GGUF magic.
func IsGGUF(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var m [4]byte
	_, err = io.ReadFull(f, m[:])
	return err == nil && string(m[:]) == gguf.Magic
}

// GGUFImportType is the type a GGUF import without --type should ask for so
// that nothing is requantized that could be kept: quantize.TypeKeep when a
// tensor of the file (every file of a split set) holds blocks that only a
// mixed .mlb keeps (Q4_1, Q5_0, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS: a Q4_K_M
// file), else 0, the default that keeps Q8_0 and Q4_0 classes as they are.
func GGUFImportType(path string) (quantize.Type, error) {
	f, err := gguf.OpenSplit(path)
	if err != nil {
		return 0, fmt.Errorf("convert: %w", err)
	}
	defer f.Close()
	for _, t := range f.Tensors {
		if t.Type != gguf.Q8_0 && t.Type != gguf.Q4_0 && ggufKeep[t.Type] != 0 {
			return quantize.TypeKeep, nil
		}
	}
	return 0, nil
}

// ggufArch is what differs between the llama.cpp architectures that fit.
type ggufArch struct {
	family   string // the report's family
	neox     bool   // llama.cpp runs it with NeoX RoPE: q/k rows are in Hugging Face's rotate-half order
	qkvBias  bool   // q/k/v biases (Qwen2)
	qkNorm   bool   // per-head q/k RMSNorm (Qwen3, Gemma 3)
	gemma    bool   // GELU-tanh, embedding scale √dim, norms stored with the +1 already added
	sandwich bool   // post-attention and post-FFN norms (Gemma 2/3)
	fused    bool   // attn_qkv and a double-height ffn_up (Phi-3)
}

// ggufArchs maps general.architecture (llama.cpp's LLM_ARCH names) to the
// mapping. Mistral's dense models are written as "llama".
var ggufArchs = map[string]ggufArch{
	"llama":   {family: "llama"},
	"qwen2":   {family: "qwen2", neox: true, qkvBias: true},
	"qwen3":   {family: "qwen3", neox: true, qkNorm: true},
	"gemma":   {family: "gemma", neox: true, gemma: true},
	"gemma2":  {family: "gemma2", neox: true, gemma: true, sandwich: true},
	"gemma3":  {family: "gemma3", neox: true, gemma: true, sandwich: true, qkNorm: true},
	"phi3":    {family: "phi3", neox: true, fused: true},
	"granite": {family: "granite"},
	"smollm3": {family: "smollm3"},
}

// ggufRefused gives the reason for llama.cpp architectures that do not fit
// the .mlb format (ARCHITECTURES.md section 8).
var ggufRefused = map[string]string{
	"qwen2moe": "mixture of experts", "qwen3moe": "mixture of experts", "qwen3next": "mixture of experts",
	"granitemoe": "mixture of experts", "dbrx": "mixture of experts", "olmoe": "mixture of experts",
	"deepseek2": "MLA attention and mixture of experts", "deepseek": "mixture of experts",
	"llama4":  "mixture of experts, chunked attention and NoPE temperature scaling",
	"gpt-oss": "mixture of experts, attention sinks and yarn with truncate=false",
	"olmo2":   "post-norm only blocks and q/k RMSNorm over the whole q_dim", "olmo": "non-parametric LayerNorm",
	"command-r": "LayerNorm, parallel attention+MLP block and logit_scale", "cohere2": "LayerNorm, parallel attention+MLP block and logit_scale",
	"stablelm": "LayerNorm with bias", "phi2": "LayerNorm with bias and a non-gated MLP", "gpt2": "LayerNorm with bias and a non-gated MLP",
	"gptj": "LayerNorm with bias and parallel blocks", "gptneox": "LayerNorm with bias and parallel blocks",
	"falcon": "LayerNorm with bias and parallel blocks", "mpt": "LayerNorm with bias", "bloom": "LayerNorm with bias",
	"starcoder2": "LayerNorm with bias and a non-gated MLP", "nemotron": "squared-ReLU non-gated MLP and LayerNorm1p",
	"gemma3n": "AltUp, per-layer inputs and KV sharing", "mamba": "SSM blocks", "mamba2": "SSM blocks",
	"jamba": "SSM blocks", "granitehybrid": "SSM blocks", "falcon-h1": "SSM blocks",
	"glm4": "GLM-4 would fit but its mapping has no reference check yet", "chatglm": "a different attention layout",
	"bert": "an encoder, not a decoder", "t5": "an encoder-decoder",
}

// ggufPlan is everything ConvertGGUF decides before writing.
type ggufPlan struct {
	f        *gguf.File
	arch     string
	a        ggufArch
	h        mlb.Header
	srcHid   int // the file's feed_forward_length
	prods    map[string]*ggufProd
	notes    []string
	warnings []string
}

// ggufProd makes one tensor of the output from a GGUF tensor: output row r is
// source row rowOf(r) (-1: a zero row of FFN padding), cols values wide
// (zero padded past the source's), times scale.
type ggufProd struct {
	src   *gguf.Tensor
	rows  int
	cols  int
	rowOf func(int) int // nil: identity
	entry func(int) int // one-row tensors: output entry i is source entry entry(i) (nil: identity)
	scale float32
}

// srcCols returns the source tensor's row length (ne[0]).
func srcCols(t *gguf.Tensor) int {
	if len(t.Shape) == 0 {
		return 1
	}
	return int(t.Shape[0])
}

// meta reads the architecture's metadata with llama.cpp's key names.
type meta struct {
	f    *gguf.File
	arch string
	path string
}

func (m meta) errf(key, format string, args ...any) error {
	return fmt.Errorf("convert: %s: key %s: "+format, append([]any{m.path, key}, args...)...)
}

// uint reads arch.key as a positive integer (a per-layer array must hold one
// value); def < 0 makes the key required.
func (m meta) uint(key string, def int) (int, error) {
	k := m.arch + "." + key
	v, ok := m.f.Lookup(k)
	if !ok {
		if def < 0 {
			return 0, m.errf(k, "missing")
		}
		return def, nil
	}
	if v.Type == gguf.TypeArray {
		xs, ok := v.Ints()
		if !ok || len(xs) == 0 {
			return 0, m.errf(k, "not an integer array")
		}
		for _, x := range xs {
			if x != xs[0] {
				return 0, m.errf(k, "differs between layers (%v); the .mlb format has one value for all layers", xs)
			}
		}
		v = gguf.Int64(xs[0])
	}
	n, ok := v.Uint()
	if !ok || n > math.MaxInt32 {
		return 0, m.errf(k, "%v is not a non-negative integer", v)
	}
	return int(n), nil
}

// float reads arch.key as a finite number; absent gives def.
func (m meta) float(key string, def float64) (float64, error) {
	k := m.arch + "." + key
	v, ok := m.f.Lookup(k)
	if !ok {
		return def, nil
	}
	x, ok := v.Float()
	if !ok {
		if n, isInt := v.Int(); isInt {
			x, ok = float64(n), true
		}
	}
	if !ok || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, m.errf(k, "%v is not a number", v)
	}
	return x, nil
}

// ggufHeader maps the metadata onto an .mlb header (without wtype, q8_mask
// and scale_f16, which depend on the tensors and the options).
func ggufHeader(p *ggufPlan, path string) error {
	m := meta{f: p.f, arch: p.arch, path: path}
	h := &p.h
	h.Version = mlb.Version
	if n, err := m.uint("expert_count", 0); err != nil || n > 0 {
		if err != nil {
			return err
		}
		return m.errf(p.arch+".expert_count", "%d experts: mixture of experts does not fit the .mlb format", n)
	}
	req := func(key string, dst *uint32) error {
		n, err := m.uint(key, -1)
		if err == nil && (n <= 0 || n > mlb.MaxDim) {
			err = m.errf(p.arch+"."+key, "%d out of range 1..%d", n, mlb.MaxDim)
		}
		*dst = uint32(n)
		return err
	}
	if err := firstErr(req("embedding_length", &h.Dim), req("block_count", &h.NLayers),
		req("attention.head_count", &h.NHeads)); err != nil {
		return err
	}
	kv, err := m.uint("attention.head_count_kv", int(h.NHeads))
	if err != nil {
		return err
	}
	if kv <= 0 || kv > int(h.NHeads) {
		return m.errf(p.arch+".attention.head_count_kv", "%d out of range 1..%d", kv, h.NHeads)
	}
	h.NKVHeads = uint32(kv)
	hid, err := m.uint("feed_forward_length", -1)
	if err != nil {
		return err
	}
	p.srcHid = hid
	// A krafla export of a padded FFN stores the padded width and the true one.
	if v, ok := p.f.Uint(keyTrueHidden); ok {
		if v == 0 || PaddedWidth(int(v)) != hid {
			return fmt.Errorf("convert: %s: key %s: %d does not pad to feed_forward_length %d", path, keyTrueHidden, v, hid)
		}
		hid = int(v)
	}
	if _, err := PadFFN(h, hid); err != nil {
		return err
	}
	ctxLen, err := m.uint("context_length", 2048)
	if err != nil {
		return err
	}
	h.MaxSeq = uint32(min(max(ctxLen, 1), mlb.MaxVocab))
	eps, err := m.float("attention.layer_norm_rms_epsilon", 1e-5)
	if err != nil {
		return err
	}
	h.NormEps = float32(eps)
	theta, err := m.float("rope.freq_base", 10000)
	if err != nil {
		return err
	}
	h.RopeTheta = float32(theta)
	hd0 := 0
	if h.Dim%h.NHeads == 0 {
		hd0 = int(h.Dim / h.NHeads)
	}
	hd, err := m.uint("attention.key_length", hd0)
	if err != nil {
		return err
	}
	if vd, err := m.uint("attention.value_length", hd); err != nil || vd != hd {
		if err != nil {
			return err
		}
		return m.errf(p.arch+".attention.value_length", "%d differs from key_length %d; the format has one head size", vd, hd)
	}
	if hd <= 0 || hd > mlb.MaxDim {
		return m.errf(p.arch+".attention.key_length", "head size %d out of range", hd)
	}
	if hd != hd0 {
		h.HeadDim = uint32(hd)
	}
	rot, err := m.uint("rope.dimension_count", hd)
	if err != nil {
		return err
	}
	if rot <= 0 || rot > hd || rot%2 != 0 {
		return m.errf(p.arch+".rope.dimension_count", "%d rotated dimensions for head size %d, want an even number in 2..%d", rot, hd, hd)
	}
	if rot != hd {
		h.RotDim = uint32(rot)
	}
	if err := ggufRope(p, m); err != nil {
		return err
	}
	if p.a.qkvBias {
		h.QKVBias = 1
	}
	if p.a.qkNorm {
		h.QKNorm = 1
	}
	n := int(h.NLayers)
	flags := make([]uint8, n)
	window, err := m.uint("attention.sliding_window", 0)
	if err != nil {
		return err
	}
	if window > mlb.MaxWindow {
		return m.errf(p.arch+".attention.sliding_window", "%d exceeds %d", window, mlb.MaxWindow)
	}
	// Layer patterns llama.cpp fixes in code (llama-model.cpp load_hparams).
	switch p.arch {
	case "gemma2":
		h.SlidingWindow = uint32(window)
		for i := range flags {
			if i%2 == 0 { // set_swa_pattern(2): every second layer is full
				flags[i] |= mlb.FlagSliding
			}
		}
	case "gemma3":
		h.SlidingWindow = uint32(window)
		local, err := m.float("rope.freq_base_swa", 10000)
		if err != nil {
			return err
		}
		h.RopeLocalTheta = float32(local)
		for i := range flags {
			if (i+1)%6 != 0 { // set_swa_pattern(6)
				flags[i] |= mlb.FlagSliding | mlb.FlagLocalRoPE
			}
		}
	case "smollm3":
		for i := range flags {
			if (i+1)%4 == 0 { // n_no_rope_layer_step = 4
				flags[i] |= mlb.FlagNoRoPE
			}
		}
	case "llama", "phi3":
		h.SlidingWindow = uint32(window) // Mistral v0.1, Phi-3 mini
	}
	// A krafla export records flags llama.cpp's fixed patterns cannot.
	if v, ok := p.f.Lookup(keyLayerFlags); ok {
		fs, ok := v.Ints()
		if !ok || len(fs) != n {
			return fmt.Errorf("convert: %s: key %s: want %d integers", path, keyLayerFlags, n)
		}
		for i, x := range fs {
			if x < 0 || x > 255 {
				return fmt.Errorf("convert: %s: key %s: layer %d flags %d out of range", path, keyLayerFlags, i, x)
			}
			flags[i] = uint8(x)
		}
	}
	for _, fl := range flags {
		if fl != 0 {
			h.LayerFlags, h.Flags = 1, flags
			break
		}
	}
	if p.a.gemma {
		h.Act = mlb.ActGELU
		h.EmbedScale = float32(math.Sqrt(float64(h.Dim)))
	}
	if p.a.sandwich {
		h.PostNorms = 1
		// llama.cpp derives the score scale from the model size, not from a
		// key: 1/√(n_embd/n_head) for the 27B models, 1/√head_dim otherwise.
		q := float64(hd)
		if (p.arch == "gemma2" && n == 46) || (p.arch == "gemma3" && n == 62) {
			q = float64(h.Dim) / float64(h.NHeads)
		}
		h.AttnScale = float32(1 / math.Sqrt(q))
		if v, ok := p.f.Float(keyAttnScale); ok {
			h.AttnScale = float32(v) // query_pre_attn_scalar, recorded by a krafla export
		}
	}
	if p.arch == "gemma2" {
		a, err1 := m.float("attn_logit_softcapping", 50)
		fc, err2 := m.float("final_logit_softcapping", 30)
		if err := firstErr(err1, err2); err != nil {
			return err
		}
		h.AttnSoftcap, h.FinalSoftcap = float32(a), float32(fc)
	}
	if p.arch == "granite" {
		es, err1 := m.float("embedding_scale", 1)
		as, err2 := m.float("attention.scale", 0)
		if err := firstErr(err1, err2); err != nil {
			return err
		}
		h.EmbedScale, h.AttnScale = float32(es), float32(as)
	}
	return nil
}

// ggufRope reads RoPE scaling: rope.scaling.type linear, or llama3 as
// convert_hf_to_gguf writes it (a rope_freqs tensor of per-frequency factors).
func ggufRope(p *ggufPlan, m meta) error {
	h := &p.h
	typ, _ := p.f.String(p.arch + ".rope.scaling.type")
	factor, err := m.float("rope.scaling.factor", 0)
	if err != nil {
		return err
	}
	switch typ {
	case "", "none":
	case "linear":
		if factor <= 0 {
			return m.errf(p.arch+".rope.scaling.factor", "linear RoPE scaling needs a factor > 0, not %v", factor)
		}
		if factor != 1 {
			h.RopeType, h.RopeFactor = mlb.RopeLinear, float32(factor)
		}
	case "yarn":
		if factor <= 0 {
			return m.errf(p.arch+".rope.scaling.factor", "YaRN needs a factor > 0, not %v", factor)
		}
		orig, err := m.uint("rope.scaling.original_context_length", -1)
		if err != nil {
			return err
		}
		bf, err1 := m.float("rope.scaling.yarn_beta_fast", 32)
		bs, err2 := m.float("rope.scaling.yarn_beta_slow", 1)
		af, err3 := m.float("rope.scaling.attn_factor", 1)
		ext, err4 := m.float("rope.scaling.yarn_ext_factor", 1)
		lm, err5 := m.float("rope.scaling.yarn_log_multiplier", 0)
		if err := firstErr(err1, err2, err3, err4, err5); err != nil {
			return err
		}
		if ext != 1 || lm != 0 {
			return m.errf(p.arch+".rope.scaling", "YaRN with ext_factor %v and log multiplier %v does not fit the format (1 and 0 do)", ext, lm)
		}
		h.RopeType, h.RopeFactor, h.RopeOrigMaxSeq = mlb.RopeYarn, float32(factor), uint32(orig)
		h.RopeLowFreqFactor, h.RopeHighFreqFactor = float32(bf), float32(bs)
		// ggml multiplies cos and sin by attn_factor · (1 + 0.1 ln factor);
		// rope_attn_factor is that product.
		h.RopeAttnFactor = float32(af * yarnMscale(factor))
		if v, ok := p.f.Float(keyRopeAttn); ok {
			h.RopeAttnFactor = float32(v)
		}
	default:
		return m.errf(p.arch+".rope.scaling.type", "RoPE scaling %q is not imported (plain, linear, yarn and Llama 3 are)", typ)
	}
	rf := p.f.Tensor("rope_freqs.weight")
	if rf == nil {
		return nil
	}
	if h.RopeType != mlb.RopePlain {
		return fmt.Errorf("convert: %s: both rope.scaling.type %q and a rope_freqs tensor", m.path, typ)
	}
	freqs, err := ggufFloats(rf)
	if err != nil {
		return err
	}
	rot := h.RotDimEff()
	if len(freqs) != rot/2 {
		return fmt.Errorf("convert: %s: tensor rope_freqs.weight has %d factors, want %d (rot_dim / 2)", m.path, len(freqs), rot/2)
	}
	f, lo, hi, orig, ok := llama3Params(freqs, float64(h.RopeTheta), rot)
	if !ok {
		return fmt.Errorf("convert: %s: tensor rope_freqs.weight holds RoPE factors that no Llama 3 scaling (factor, low and high frequency factors, original context) reproduces; the .mlb format cannot store arbitrary factors", m.path)
	}
	h.RopeType = mlb.RopeLlama3
	h.RopeFactor, h.RopeLowFreqFactor, h.RopeHighFreqFactor, h.RopeOrigMaxSeq = float32(f), float32(lo), float32(hi), uint32(orig)
	return nil
}

// yarnMscale is YaRN's attention scale for a context factor f (ggml's
// rope_yarn and transformers: 0.1 ln f + 1 above 1).
func yarnMscale(f float64) float64 {
	if f <= 1 {
		return 1
	}
	return 1 + 0.1*math.Log(f)
}

// llama3Factors computes the rope_freqs factors as convert_hf_to_gguf does
// for rope_type llama3 (float64, stored as f32).
func llama3Factors(theta float64, rot int, f, lo, hi float64, orig int) []float32 {
	out := make([]float32, rot/2)
	lw, hw := float64(orig)/lo, float64(orig)/hi
	for i := range out {
		freq := 1 / math.Pow(theta, float64(2*i)/float64(rot))
		wl := 2 * math.Pi / freq
		switch {
		case wl < hw:
			out[i] = 1
		case wl > lw:
			out[i] = float32(f)
		default:
			s := (float64(orig)/wl - lo) / (hi - lo)
			out[i] = float32(1 / ((1-s)/f + s))
		}
	}
	return out
}

// llama3Params recovers the Llama 3 scaling parameters from the factors.
// Only the ratios of orig, lo and hi are determined by them; the released
// models' low 1, high 4 and original context 8192 are tried first, and the
// factors must be reproduced exactly.
func llama3Params(freqs []float32, theta float64, rot int) (f, lo, hi float64, orig int, ok bool) {
	for _, x := range freqs {
		f = max(f, float64(x))
	}
	if f <= 1 {
		return 0, 0, 0, 0, false
	}
	same := func(lo, hi float64, orig int) bool {
		g := llama3Factors(theta, rot, f, lo, hi, orig)
		for i := range g {
			if g[i] != freqs[i] {
				return false
			}
		}
		return true
	}
	for _, c := range []struct {
		lo, hi float64
		orig   int
	}{{1, 4, 8192}, {1, 4, 4096}, {1, 4, 2048}, {1, 4, 16384}, {1, 2, 8192}} {
		if same(c.lo, c.hi, c.orig) {
			return f, c.lo, c.hi, c.orig, true
		}
	}
	return 0, 0, 0, 0, false
}

// ggufFloats reads a small F32 or F16 tensor's values.
func ggufFloats(t *gguf.Tensor) ([]float32, error) {
	out := make([]float32, t.Elems())
	if err := gguf.Dequantize(t.Type, t.Data, out); err != nil {
		return nil, fmt.Errorf("convert: tensor %s: %w", t.Name, err)
	}
	return out, nil
}

// ggufTensors maps the GGUF tensors onto the .mlb body (llama.cpp's names,
// llama-arch.cpp), refusing any tensor the mapping does not use.
func ggufTensors(p *ggufPlan, path string) error {
	f, h := p.f, &p.h
	used := map[string]bool{"rope_freqs.weight": true}
	var perr error
	get := func(name string, shape ...int) *gguf.Tensor {
		if perr != nil {
			return nil
		}
		t := f.Tensor(name)
		if t == nil {
			perr = fmt.Errorf("convert: %s: tensor %s is missing (architecture %s)", path, name, p.arch)
			return nil
		}
		used[name] = true
		want := make([]uint64, len(shape))
		for i, s := range shape { // ggml order: reversed
			want[len(shape)-1-i] = uint64(s)
		}
		got := t.Shape
		for len(got) > len(want) && got[len(got)-1] == 1 {
			got = got[:len(got)-1]
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			perr = fmt.Errorf("convert: %s: tensor %s has shape %v, want %v (ggml order)", path, name, t.Shape, want)
			return nil
		}
		return t
	}
	dim, hid, phid := int(h.Dim), p.srcHid, int(h.HiddenDim)
	hd := h.HeadDimEff()
	qd, kvd := hd*int(h.NHeads), hd*int(h.NKVHeads)
	var perm func(int) int // q/k rows: rotate-half → interleaved pairs
	if p.a.neox {
		perm = ropePerm(hd, h.RotDimEff())
	}
	shift := func(off int, pf func(int) int) func(int) int {
		return func(r int) int {
			if pf != nil {
				r = pf(r)
			}
			return off + r
		}
	}
	padRows := func(r int) int { // rows of w1/w3 past the true width are zero
		if r >= hid {
			return -1
		}
		return r
	}
	prod := func(out string, t *gguf.Tensor, rows, cols int, rowOf func(int) int, scale float64) {
		if t != nil {
			p.prods[out] = &ggufProd{src: t, rows: rows, cols: cols, rowOf: rowOf, scale: float32(scale)}
		}
	}
	// vec makes a one-row tensor whose entry i is the source's entry(i): the
	// q/k biases and norms follow wq's and wk's rows.
	vec := func(out string, t *gguf.Tensor, n int, entry func(int) int) {
		if t != nil {
			p.prods[out] = &ggufProd{src: t, rows: 1, cols: n, entry: entry, scale: 1}
		}
	}
	residual, logitScale := 1.0, 1.0
	if p.arch == "granite" {
		m := meta{f: f, arch: p.arch, path: path}
		var err1, err2 error
		residual, err1 = m.float("residual_scale", 1)
		logitScale, err2 = m.float("logit_scale", 1)
		if err := firstErr(err1, err2); err != nil {
			return err
		}
		if logitScale == 0 {
			return m.errf("granite.logit_scale", "0 would divide by zero")
		}
	}

	emb := f.Tensor("token_embd.weight")
	if emb == nil || len(emb.Shape) != 2 || int(emb.Shape[0]) != dim {
		return fmt.Errorf("convert: %s: tensor token_embd.weight is missing or not [%d, vocab]", path, dim)
	}
	vocab := int(emb.Shape[1])
	if vocab < 3 || vocab > mlb.MaxVocab {
		return fmt.Errorf("convert: %s: vocabulary of %d rows out of range 3..%d", path, vocab, mlb.MaxVocab)
	}
	h.Vocab = uint32(vocab)
	prod("tok_emb", get("token_embd.weight", vocab, dim), vocab, dim, nil, 1)
	for l := 0; l < int(h.NLayers); l++ {
		b := fmt.Sprintf("blk.%d.", l) // the same prefix in both formats
		o := b
		prod(o+"attn_norm", get(b+"attn_norm.weight", dim), 1, dim, nil, 1)
		if p.a.fused {
			qkv := get(b+"attn_qkv.weight", qd+2*kvd, dim)
			prod(o+"wq", qkv, qd, dim, perm, 1)
			prod(o+"wk", qkv, kvd, dim, shift(qd, perm), 1)
			prod(o+"wv", qkv, kvd, dim, shift(qd+kvd, nil), 1)
		} else {
			prod(o+"wq", get(b+"attn_q.weight", qd, dim), qd, dim, perm, 1)
			prod(o+"wk", get(b+"attn_k.weight", kvd, dim), kvd, dim, perm, 1)
			prod(o+"wv", get(b+"attn_v.weight", kvd, dim), kvd, dim, nil, 1)
		}
		prod(o+"wo", get(b+"attn_output.weight", dim, qd), dim, qd, nil, residual)
		if h.QKVBias != 0 {
			vec(o+"bq", get(b+"attn_q.bias", qd), qd, perm)
			vec(o+"bk", get(b+"attn_k.bias", kvd), kvd, perm)
			vec(o+"bv", get(b+"attn_v.bias", kvd), kvd, nil)
		}
		if h.QKNorm != 0 {
			vec(o+"q_norm", get(b+"attn_q_norm.weight", hd), hd, perm)
			vec(o+"k_norm", get(b+"attn_k_norm.weight", hd), hd, perm)
		}
		if p.a.sandwich {
			prod(o+"post_attn_norm", get(b+"post_attention_norm.weight", dim), 1, dim, nil, 1)
			prod(o+"post_ffn_norm", get(b+"post_ffw_norm.weight", dim), 1, dim, nil, 1)
		}
		prod(o+"ffn_norm", get(b+"ffn_norm.weight", dim), 1, dim, nil, 1)
		if p.a.fused {
			gu := get(b+"ffn_up.weight", 2*hid, dim)
			prod(o+"w1", gu, phid, dim, padRows, 1)
			prod(o+"w3", gu, phid, dim, func(r int) int {
				if r >= hid {
					return -1
				}
				return hid + r
			}, 1)
		} else {
			prod(o+"w1", get(b+"ffn_gate.weight", hid, dim), phid, dim, padRows, 1)
			prod(o+"w3", get(b+"ffn_up.weight", hid, dim), phid, dim, padRows, 1)
		}
		prod(o+"w2", get(b+"ffn_down.weight", dim, hid), dim, phid, nil, residual)
	}
	prod("final_norm", get("output_norm.weight", dim), 1, dim, nil, 1/logitScale)
	if out := f.Tensor("output.weight"); out == nil || sameTensor(out, emb) {
		h.SharedClassifier = 1
		if out != nil {
			used["output.weight"] = true
			p.notes = append(p.notes, "output.weight equals token_embd.weight: the classifier is shared")
		}
	} else {
		prod("wcls", get("output.weight", vocab, dim), vocab, dim, nil, 1)
	}
	if perr != nil {
		return perr
	}
	var left []string
	for _, t := range f.Tensors {
		if !used[t.Name] {
			left = append(left, t.Name)
		}
	}
	if len(left) > 0 {
		more := ""
		if len(left) > 5 {
			more = fmt.Sprintf(" and %d more", len(left)-5)
			left = left[:5]
		}
		return fmt.Errorf("convert: %s: architecture %s: tensor %s%s not used by the mapping; the model has parts the .mlb format cannot hold",
			path, p.arch, strings.Join(quoteAll(left), ", "), more)
	}
	return nil
}

func sameTensor(a, b *gguf.Tensor) bool {
	return a.Type == b.Type && fmt.Sprint(a.Shape) == fmt.Sprint(b.Shape) && string(a.Data) == string(b.Data)
}

// Quantized source types that hold about 4 bits per weight: their class
// stays Q4_0 in an automatic choice; anything finer goes to Q8_0.
var ggufFourBit = map[gguf.Type]bool{gguf.Q4_0: true, gguf.Q4_1: true, gguf.Q2_K: true, gguf.Q3_K: true, gguf.Q4_K: true}

// maskClass returns the q8_mask bit of an output matrix.
func maskClass(name string) uint32 {
	switch {
	case name == "tok_emb":
		return mlb.MaskTokEmb
	case name == "wcls":
		return mlb.MaskWcls
	}
	switch name[strings.LastIndexByte(name, '.')+1:] {
	case "wq", "wk", "wg", "lqkv":
		return mlb.MaskWQK
	case "wv", "lz":
		return mlb.MaskWV
	case "wo", "lout":
		return mlb.MaskWO
	case "w1", "w3":
		return mlb.MaskW13
	}
	return mlb.MaskW2
}

// ConvertGGUF converts the GGUF file at path (or the split set whose first
// file it is, PREFIX-00001-of-0000N.gguf) to opt.Out and its tokenizer to
// the .mlt beside it. Q8_0 and Q4_0 tensors are copied bit for bit (their f16
// scales kept, so the output has f16 scales); F32, F16 and BF16 are quantized
// with krafla's rules; other ggml types are dequantized exactly as ggml does
// and requantized, and the report names them. With opt.Type 0 the weight type
// follows the file: Q4_0 where a class of matrices is 4-bit throughout, Q8_0
// elsewhere.
func ConvertGGUF(ctx context.Context, path string, opt Options) (*Report, error) {
	start := time.Now()
	if opt.Out == "" {
		return nil, errors.New("convert: no output file given")
	}
	if opt.Imatrix != "" {
		return nil, errors.New("convert: --imatrix is not used for GGUF input (its quantized tensors are copied or requantized as they are)")
	}
	if opt.GGML != 0 {
		return nil, fmt.Errorf("convert: %v output takes safetensors input; a GGUF file's own types are kept with --type keep", opt.GGML)
	}
	logw := opt.Log
	if logw == nil {
		logw = io.Discard
	}
	f, err := gguf.OpenSplit(path) // a split set's other files are found beside the first
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	defer f.Close()
	if len(f.Splits) > 1 {
		fmt.Fprintf(logw, "reading a split set of %d files: %s ... %s\n", len(f.Splits), filepath.Base(f.Splits[0]), filepath.Base(f.Splits[len(f.Splits)-1]))
	}
	arch, _ := f.String("general.architecture")
	a, ok := ggufArchs[arch]
	if !ok {
		if why, bad := ggufRefused[arch]; bad {
			return nil, fmt.Errorf("convert: %s: architecture %s does not fit the .mlb format: %s", path, arch, why)
		}
		return nil, fmt.Errorf("convert: %s: GGUF architecture %q is not supported (supported: llama incl. Mistral, qwen2, qwen3, gemma, gemma2, gemma3, phi3, granite, smollm3)", path, arch)
	}
	p := &ggufPlan{f: f, arch: arch, a: a, prods: map[string]*ggufProd{}}
	if err := ggufHeader(p, path); err != nil {
		return nil, err
	}
	if err := ggufTensors(p, path); err != nil {
		return nil, err
	}
	h := &p.h
	if err := CheckShapes(h); err != nil {
		return nil, err
	}
	if h.TrueHiddenDim != 0 {
		p.notes = append(p.notes, fmt.Sprintf("FFN width %d padded to %d with zero channels (exact: zero rows of w1 and w3, zero columns of w2; the header's true_hidden_dim records %d)",
			h.TrueHiddenDim, h.HiddenDim, h.TrueHiddenDim))
	}
	if err := ggufTypes(p, opt); err != nil {
		return nil, err
	}
	tok, twarn, err := ggufTokenizer(f, path, int(h.Vocab), opt.NoTokenizer)
	if err != nil {
		return nil, err
	}
	p.warnings = append(p.warnings, twarn...)
	if v, ok := f.Lookup(arch + ".pooling_type"); ok && tok != nil {
		// An embedding model (llama.cpp's pooling types: 0 none, 1 mean,
		// 2 cls, 3 last, 4 rank); llama.cpp's callers L2-normalize.
		switch n, _ := v.Int(); n {
		case 0:
		case mlt.PoolMean, mlt.PoolCLS, mlt.PoolLast:
			tok.SetEmbed(&mlt.Embed{Pooling: uint8(n), Normalize: true})
		default:
			return nil, fmt.Errorf("convert: %s: %s.pooling_type %v: krafla pools by mean (1), cls (2) or last token (3)", path, arch, v)
		}
	}
	rep := &Report{Arch: arch, Family: a.family, Out: opt.Out, Notes: p.notes, Warnings: p.warnings}
	for _, s := range p.warnings {
		fmt.Fprintln(logw, "warning:", s)
	}
	rule := quantize.BestFit
	switch opt.Q4Rule {
	case "", "best":
	case "round":
		rule = quantize.Round
	default:
		return nil, fmt.Errorf("convert: unknown Q4_0 rule %q (want best or round)", opt.Q4Rule)
	}
	if h.WType == mlb.WTypeQ4_0 {
		rep.Q4Rule = rule.String()
	}

	if tok != nil {
		pair.Bind(h, tok) // the model and the tokenizer name each other
	}
	w, err := createModel(opt.Out, h, path)
	if err != nil {
		return nil, err
	}
	done := false
	defer func() {
		if !done {
			w.Abort()
		}
	}()
	var total int64 // progress counts source bytes
	for _, t := range w.Remaining() {
		total += int64(len(p.prods[t.Name].src.Data))
	}
	bar := newBar(opt.Progress, total)
	lossy := map[string][]string{} // source type → tensors requantized from it
	for {
		ti, more := w.Next()
		if !more {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pr := p.prods[ti.Name]
		if pr == nil {
			return nil, fmt.Errorf("convert: internal error: no source for %s", ti.Name)
		}
		if bar != nil {
			bar.Describe(ti.Name)
		}
		switch {
		case ti.Type == mlb.F32:
			v, err := pr.floats(ti.Rows, ti.Cols)
			if err != nil {
				return nil, err
			}
			if err := w.WriteF32(ti.Name, v); err != nil {
				return nil, err
			}
		case ti.Type.Blocked():
			if err := w.WriteBlocks(ti.Name, pr.blockRows(ti.Rows)); err != nil {
				return nil, err
			}
		case ti.Type.Quantized():
			var acc *errSums // --report: the error of what this import quantizes
			if opt.Measure {
				acc = &errSums{}
			}
			q, s, how, err := pr.quantized(ctx, ti, h.ScaleF16 != 0, rule, opt.Threads, acc)
			if err != nil {
				return nil, err
			}
			if acc != nil && acc.w > 0 { // w stays 0 for copied blocks
				rep.Errors = append(rep.Errors, tensorError(ti, acc, false))
			}
			if how != "" {
				lossy[how] = append(lossy[how], pr.src.Name)
			}
			if err := w.WriteMatrix(ti.Name, q, s); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("convert: internal error: tensor %s of type %v", ti.Name, ti.Type)
		}
		rep.SourceBytes += int64(len(pr.src.Data))
		rep.Tensors++
		if bar != nil {
			bar.Add64(int64(len(pr.src.Data)))
		}
	}
	if bar != nil {
		bar.Finish()
	}
	if len(lossy) > 0 {
		var hows []string
		for how := range lossy {
			hows = append(hows, how)
		}
		sort.Strings(hows)
		for _, how := range hows {
			ns := lossy[how]
			list := strings.Join(ns[:min(len(ns), 6)], ", ")
			if len(ns) > 6 {
				list += fmt.Sprintf(" and %d more", len(ns)-6)
			}
			s := fmt.Sprintf("lost precision: %d tensors %s: %s", len(ns), how, list)
			rep.Warnings = append(rep.Warnings, s)
			fmt.Fprintln(logw, "warning:", s)
		}
	}
	worstFirst(rep.Errors)
	rep.PeakRSS = peakRSS()
	warn := func(format string, args ...any) {
		s := fmt.Sprintf(format, args...)
		rep.Warnings = append(rep.Warnings, s)
		fmt.Fprintln(logw, "warning:", s)
	}
	if err := commitOutputs(w, tok, opt.Out, warn); err != nil {
		return nil, err
	}
	done = true
	st, err := os.Stat(opt.Out)
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	rep.Header, rep.OutBytes = *h, st.Size()
	if tok != nil {
		rep.Tokenizer = TokenizerPath(opt.Out)
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// ggufTypes sets wtype, q8_mask and scale_f16 from the options or, with
// opt.Type 0, from the source types.
func ggufTypes(p *ggufPlan, opt Options) error {
	h := &p.h
	probe := *h // the tensor list as Q8_0, before the types are chosen
	probe.WType, probe.Q8Mask = mlb.WTypeQ8_0, 0
	mats, err := mlb.Tensors(&probe)
	if err != nil {
		return fmt.Errorf("convert: the mapped header does not validate: %w", err)
	}
	copyable := false
	switch opt.Type {
	case quantize.TypeQ8_0, quantize.TypeQ4_0:
		h.WType, h.Q8Mask = uint32(opt.Type), opt.Q8Mask
	case 0:
		four := map[uint32]bool{} // class → every source 4-bit
		for _, t := range mats {
			if !t.Type.Quantized() {
				continue
			}
			c := maskClass(t.Name)
			if t.Name == "tok_emb" && h.SharedClassifier != 0 {
				c = mlb.MaskTokEmb
			}
			is4 := ggufFourBit[p.prods[t.Name].src.Type]
			if v, seen := four[c]; !seen || v {
				four[c] = is4
			}
		}
		h.WType = mlb.WTypeQ8_0
		for _, v := range four {
			if v {
				h.WType = mlb.WTypeQ4_0
			}
		}
		if h.WType == mlb.WTypeQ4_0 {
			for c, v := range four {
				if !v {
					h.Q8Mask |= c
				}
			}
		}
	case quantize.TypeKeep:
		h.WType, h.ScaleF16 = mlb.WTypeMixed, 1
		if opt.Q8Mask != 0 {
			return errors.New("convert: --q8 does not apply to --type keep (every matrix keeps its own type)")
		}
		h.Types = nil
		var kept []string
		for _, t := range mats {
			if !t.Type.Quantized() {
				continue
			}
			typ, ok := keepType(p.prods[t.Name], t, h)
			if !ok {
				kept = append(kept, t.Name)
			}
			h.Types = append(h.Types, mlb.TypeCode(typ))
		}
		if len(kept) > 0 {
			p.notes = append(p.notes, fmt.Sprintf("--type keep: %d matrices cannot keep their GGUF type and are Q8_0: %s", len(kept), strings.Join(kept[:min(len(kept), 6)], ", ")))
		}
		return nil
	default:
		return fmt.Errorf("convert: unknown type %d (want Q8_0, Q4_0 or keep)", opt.Type)
	}
	for _, t := range mats {
		if pr := p.prods[t.Name]; pr != nil && (pr.src.Type == gguf.Q8_0 || pr.src.Type == gguf.Q4_0) {
			copyable = true
		}
	}
	if opt.F16Scales || copyable {
		h.ScaleF16 = 1
	}
	return nil
}

// ggufKeep maps the GGUF types a mixed .mlb holds to its matrix types.
var ggufKeep = map[gguf.Type]mlb.DType{
	gguf.Q8_0: mlb.Q8_0, gguf.Q4_0: mlb.Q4_0, gguf.Q4_1: mlb.Q4_1, gguf.Q5_0: mlb.Q5_0,
	gguf.Q4_K: mlb.Q4_K, gguf.Q5_K: mlb.Q5_K, gguf.Q6_K: mlb.Q6_K, gguf.IQ4_NL: mlb.IQ4_NL, gguf.IQ4_XS: mlb.IQ4_XS,
}

// keepType is the type a matrix keeps under --type keep: its source's, when
// the .mlb can hold the source's blocks unchanged (no multiplier folded in,
// no FFN padding, every output row a source row, lb and la Q8_0); else Q8_0
// (ok false), requantized from the source's values.
func keepType(pr *ggufProd, t mlb.TensorInfo, h *mlb.Header) (typ mlb.DType, ok bool) {
	if pr == nil {
		return mlb.Q8_0, false
	}
	typ, ok = ggufKeep[pr.src.Type]
	if !ok || pr.scale != 1 || srcCols(pr.src) != t.Cols || pr.rows != t.Rows || t.Cols%typ.BlockElems() != 0 {
		return mlb.Q8_0, false
	}
	if strings.HasSuffix(t.Name, ".lb") || strings.HasSuffix(t.Name, ".la") {
		return mlb.Q8_0, typ == mlb.Q8_0
	}
	if pr.rowOf != nil {
		for r := range t.Rows {
			if pr.rowOf(r) < 0 {
				return mlb.Q8_0, false
			}
		}
	}
	c := maskClass(t.Name)
	if h.TrueHiddenDim != 0 && (c == mlb.MaskW13 || c == mlb.MaskW2) && typ != mlb.Q8_0 && typ != mlb.Q4_0 {
		return mlb.Q8_0, false
	}
	return typ, true
}

// blockRows returns the producer's ggml blocks row by row in rowOf order: a
// Blocked matrix kept bit for bit (keepType has checked the rows).
func (pr *ggufProd) blockRows(rows int) []byte {
	t := pr.src
	rb := srcCols(t) / t.Type.BlockSize() * t.Type.BlockBytes()
	if pr.rowOf == nil {
		return t.Data[:rows*rb]
	}
	out := make([]byte, 0, rows*rb)
	for r := range rows {
		sr := pr.rowOf(r)
		out = append(out, t.Data[sr*rb:(sr+1)*rb]...)
	}
	return out
}

// floats returns the producer's rows × cols values as float32.
func (pr *ggufProd) floats(rows, cols int) ([]float32, error) {
	out := make([]float32, rows*cols)
	if err := pr.rowsF32(out, 0, rows, cols); err != nil {
		return nil, err
	}
	return out, nil
}

// rowsF32 fills dst with output rows r0..r1 (cols wide).
func (pr *ggufProd) rowsF32(dst []float32, r0, r1, cols int) error {
	t := pr.src
	sc := srcCols(t)
	rowBytes := sc / t.Type.BlockSize() * t.Type.BlockBytes()
	if pr.rows == 1 && pr.entry != nil {
		v, err := ggufFloats(t)
		if err != nil {
			return err
		}
		for i := range dst[:cols] {
			dst[i] = v[pr.entry(i)] * pr.scale
		}
		return nil
	}
	for r := r0; r < r1; r++ {
		d := dst[(r-r0)*cols : (r-r0+1)*cols]
		sr := r
		if pr.rowOf != nil {
			sr = pr.rowOf(r)
		}
		if sr < 0 {
			clear(d)
			continue
		}
		if err := gguf.Dequantize(t.Type, t.Data[sr*rowBytes:(sr+1)*rowBytes], d[:sc]); err != nil {
			return fmt.Errorf("convert: tensor %s: %w", t.Name, err)
		}
		clear(d[sc:])
		if pr.scale != 1 {
			for i := range d {
				d[i] *= pr.scale
			}
		}
	}
	return nil
}

// quantized produces the quants and scales of an output matrix. how is ""
// when nothing was lost (a copy, or floats quantized with our rules), else
// what happened.
// With acc set it sums the quantization error of the blocks it quantizes
// (copied blocks are not measured: nothing is lost in them).
func (pr *ggufProd) quantized(ctx context.Context, ti mlb.TensorInfo, f16 bool, rule quantize.Q4Rule, threads int, acc *errSums) (q, s []byte, how string, err error) {
	t := pr.src
	qt := quantize.TypeQ8_0
	if ti.Type == mlb.Q4_0 {
		qt = quantize.TypeQ4_0
	}
	if pr.rows != ti.Rows || pr.cols != ti.Cols {
		return nil, nil, "", fmt.Errorf("convert: internal error: %s: producer %d×%d for %d×%d", ti.Name, pr.rows, pr.cols, ti.Rows, ti.Cols)
	}
	same := (t.Type == gguf.Q8_0 && qt == quantize.TypeQ8_0) || (t.Type == gguf.Q4_0 && qt == quantize.TypeQ4_0)
	if same && f16 && pr.scale == 1 && srcCols(t) == ti.Cols {
		q, s, clamped := copyBlocks(t, qt, ti.Rows, ti.Cols, pr.rowOf)
		if clamped > 0 {
			how = fmt.Sprintf("Q8_0 with quants of -128 (%d, set to -127: the format refuses -128)", clamped)
		}
		return q, s, how, nil
	}
	switch t.Type {
	case gguf.F32, gguf.F16, gguf.BF16:
	default:
		how = fmt.Sprintf("dequantized from %s and requantized to %s", t.Type, strings.ToUpper(qt.String()))
		if pr.scale != 1 {
			how += " (scaled by a Granite multiplier)"
		}
	}
	per := max(1, chunkBytes/(4*ti.Cols))
	buf := make([]float32, min(per, ti.Rows)*ti.Cols)
	qo := quantize.Options{Name: ti.Name, F16Scales: f16, Q4Rule: rule, Threads: threads}
	for r0 := 0; r0 < ti.Rows; r0 += per {
		if err := ctx.Err(); err != nil {
			return nil, nil, "", err
		}
		r1 := min(ti.Rows, r0+per)
		x := buf[:(r1-r0)*ti.Cols]
		if err := pr.rowsF32(x, r0, r1, ti.Cols); err != nil {
			return nil, nil, "", err
		}
		cq, cs, err := quantize.Matrix(qt, x, r1-r0, ti.Cols, qo)
		if err != nil {
			return nil, nil, "", fmt.Errorf("convert: %w", err)
		}
		if acc != nil {
			acc.add(x, ti.Cols, qt, cq, cs, f16, nil)
		}
		q, s = append(q, cq...), append(s, cs...)
	}
	return q, s, how, nil
}

// copyBlocks splits ggml Q8_0 / Q4_0 blocks (an f16 scale, then the quants:
// Q4_0's byte j holds element j in the low nibble and j+16 in the high one,
// exactly SPEC.md's layout) into the .mlb's quant and scale arrays, rows
// picked by rowOf (-1: a zero row). It returns how many Q8_0 quants of -128
// were set to -127.
func copyBlocks(t *gguf.Tensor, qt quantize.Type, rows, cols int, rowOf func(int) int) (q, s []byte, clamped int) {
	nb := cols / quantize.BlockSize
	bb := t.Type.BlockBytes()
	qb := bb - 2
	q = make([]byte, 0, rows*nb*qb)
	s = make([]byte, 0, rows*nb*2)
	for r := range rows {
		sr := r
		if rowOf != nil {
			sr = rowOf(r)
		}
		if sr < 0 {
			q = append(q, make([]byte, nb*qb)...)
			s = append(s, make([]byte, nb*2)...)
			continue
		}
		row := t.Data[sr*nb*bb : (sr+1)*nb*bb]
		for b := range nb {
			blk := row[b*bb : (b+1)*bb]
			s = append(s, blk[0], blk[1])
			at := len(q)
			q = append(q, blk[2:]...)
			if qt == quantize.TypeQ8_0 {
				for i := at; i < len(q); i++ {
					if q[i] == 0x80 {
						q[i] = 0x81
						clamped++
					}
				}
			}
		}
	}
	return q, s, clamped
}
