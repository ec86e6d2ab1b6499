package convert

import (
	"fmt"
	"sort"
	"strings"

	"github.com/krafla/krafla/mlb"
)

// producer makes one tensor of the output. A matrix is read a chunk of
// rows at a time: output row r is row rowOf(r) of t, times scale. Vectors
// (norms, biases, small tensors) are made whole by vec.
type producer struct {
	t     *Tensor
	rows  int
	rowOf func(r int) int // nil: identity
	// srcRows, when not 0, is the rows that come from t: rows from srcRows
	// on are zero padding (w1, w3 of a padded FFN). Columns past t's are
	// zero padding too (w2).
	srcRows int
	scale   float32 // multiplies every value; 1 = none
	vec     func() ([]float32, error)
	srcs    []*Tensor // released after the tensor is written
}

// plan is everything Convert needs, decided before a byte is written.
type plan struct {
	family   family
	arch     string
	mh       *modelHeader
	prods    map[string]*producer
	warnings []string
	notes    []string // exact changes the summary mentions (FFN padding)
}

// Prefixes of tensors that belong to other parts of composite models and
// are dropped (ARCHITECTURES.md section 1, step 4).
var dropPrefixes = []string{"model.visual.", "visual.", "vision_tower.", "model.vision_tower.",
	"multi_modal_projector.", "model.multi_modal_projector.", "mtp.", "model.mtp."}

// stripName returns the name after the model prefix, or drop = true.
func stripName(n string) (string, bool) {
	for _, p := range dropPrefixes {
		if strings.HasPrefix(n, p) {
			return "", true
		}
	}
	if strings.HasSuffix(n, ".rotary_emb.inv_freq") {
		return "", true
	}
	for _, p := range []string{"model.language_model.", "language_model.model.", "model."} {
		if strings.HasPrefix(n, p) {
			return n[len(p):], false
		}
	}
	if n == "language_model.lm_head.weight" {
		return "lm_head.weight", false
	}
	return n, false
}

// isPrequantized recognises the tensors of GPTQ, AWQ, bitsandbytes, FP8
// and compressed-tensors checkpoints.
func isPrequantized(n string) bool {
	for _, s := range []string{".qweight", ".qzeros", ".g_idx", "weight_scale", "input_scale", ".absmax", ".quant_map", ".SCB", ".weight_packed"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// ropePerm maps an output row of a q- or k-shaped tensor (interleaved RoPE
// pairs) to its source row (rotate-half pairs): within each head of hd
// rows, new[2i+j] = old[i + j·rot/2] for i < rot/2, and rows from rot on
// pass through (ARCHITECTURES.md 3.1).
func ropePerm(hd, rot int) func(int) int {
	half := rot / 2
	return func(r int) int {
		h, e := r/hd, r%hd
		if e >= rot {
			return r
		}
		return h*hd + e/2 + (e%2)*half
	}
}

func buildPlan(c *config, ck *Checkpoint) (*plan, error) {
	f, arch, err := resolveFamily(c)
	if err != nil {
		return nil, err
	}
	mh, err := buildHeader(c, f)
	if err != nil {
		return nil, err
	}
	h := &mh.h
	if err := CheckShapes(h); err != nil {
		return nil, fmt.Errorf("%w (%s)", err, c.path)
	}
	p := &plan{family: f, arch: arch, mh: mh, prods: map[string]*producer{}}

	src := map[string]*Tensor{}
	for _, n := range ck.Names {
		if isPrequantized(n) {
			return nil, fmt.Errorf("convert: %s: tensor %q: pre-quantized checkpoints are not supported; dequantize to bf16/f16/f32 first", ck.Tensors[n].File, n)
		}
		s, drop := stripName(n)
		if drop {
			continue
		}
		if old, ok := src[s]; ok {
			return nil, fmt.Errorf("convert: tensors %q and %q both map to %q", old.Name, n, s)
		}
		src[s] = ck.Tensors[n]
	}
	used := map[string]bool{}
	var perr error
	get := func(name string, shape ...int) *Tensor {
		if perr != nil {
			return nil
		}
		t, ok := src[name]
		if !ok {
			perr = fmt.Errorf("convert: %s: tensor %q is missing (architecture %s)", ck.Dir, name, arch)
			return nil
		}
		used[name] = true
		if err := t.Readable(); err != nil {
			perr = err
			return nil
		}
		if len(t.Shape) != len(shape) {
			perr = fmt.Errorf("convert: %s: tensor %q has shape %v, want %v", t.File, t.Name, t.Shape, shape)
			return nil
		}
		for i := range shape {
			if t.Shape[i] != shape[i] {
				perr = fmt.Errorf("convert: %s: tensor %q has shape %v, want %v", t.File, t.Name, t.Shape, shape)
				return nil
			}
		}
		return t
	}

	dim, hid, phid := int(h.Dim), h.FFNDim(), int(h.HiddenDim) // phid: hid padded to a multiple of 32
	hd := h.HeadDimEff()
	qd, kvd := hd*int(h.NHeads), hd*int(h.NKVHeads)
	rot := mh.rot
	perm := ropePerm(hd, rot)
	normAdd := float32(0)
	if f.normPlus {
		normAdd = 1
	}

	mat := func(out string, t *Tensor, rows int, rowOf func(int) int, scale float64) {
		if t == nil {
			return
		}
		p.prods[out] = &producer{t: t, rows: rows, rowOf: rowOf, scale: float32(scale), srcs: []*Tensor{t}}
	}
	// vec makes an F32 tensor from t: out[i] = (t[idx(i)] + add) · mul.
	vec := func(out string, t *Tensor, idx func(int) int, add float32, mul float64) {
		if t == nil {
			return
		}
		m := float32(mul)
		p.prods[out] = &producer{srcs: []*Tensor{t}, vec: func() ([]float32, error) {
			v, err := t.F32()
			if err != nil {
				return nil, err
			}
			o := make([]float32, len(v))
			for i := range o {
				j := i
				if idx != nil {
					j = idx(i)
				}
				o[i] = v[j] + add
				if m != 1 {
					o[i] *= m
				}
			}
			return o, nil
		}}
	}

	emb := src["embed_tokens.weight"]
	if emb == nil {
		return nil, fmt.Errorf("convert: %s: tensor embed_tokens.weight is missing (architecture %s)", ck.Dir, arch)
	}
	if len(emb.Shape) != 2 || emb.Shape[1] != dim {
		return nil, fmt.Errorf("convert: %s: tensor %q has shape %v, want [vocab, %d]", emb.File, emb.Name, emb.Shape, dim)
	}
	vocab := emb.Shape[0]
	if vocab > mlb.MaxVocab {
		return nil, fmt.Errorf("convert: %s: tensor %q: vocab %d exceeds %d", emb.File, emb.Name, vocab, mlb.MaxVocab)
	}
	h.Vocab = uint32(vocab)
	mat("tok_emb", get("embed_tokens.weight", vocab, dim), vocab, nil, 1)

	for l := 0; l < int(h.NLayers); l++ {
		b := fmt.Sprintf("layers.%d.", l)
		o := fmt.Sprintf("blk.%d.", l)
		vec(o+"attn_norm", get(b+"input_layernorm.weight", dim), nil, normAdd, 1)
		if h.LayerFlag(l)&mlb.FlagLinear != 0 {
			K, V, dk, dv, kc := int(h.LinKHeads), int(h.LinVHeads), int(h.LinKDim), int(h.LinVDim), int(h.LinConv)
			ch := 2*K*dk + V*dv
			a := b + "linear_attn."
			mat(o+"lqkv", get(a+"in_proj_qkv.weight", ch, dim), ch, nil, 1)
			mat(o+"lz", get(a+"in_proj_z.weight", V*dv, dim), V*dv, nil, 1)
			mat(o+"lb", get(a+"in_proj_b.weight", V, dim), V, nil, 1)
			mat(o+"la", get(a+"in_proj_a.weight", V, dim), V, nil, 1)
			vec(o+"lconv", get(a+"conv1d.weight", ch, 1, kc), nil, 0, 1)
			vec(o+"dt_bias", get(a+"dt_bias", V), nil, 0, 1)
			vec(o+"A_log", get(a+"A_log", V), nil, 0, 1)
			vec(o+"lnorm", get(a+"norm.weight", dv), nil, 0, 1) // RMSNormGated: stored as g, no +1
			mat(o+"lout", get(a+"out_proj.weight", dim, V*dv), dim, nil, 1)
		} else {
			a := b + "self_attn."
			switch {
			case f.fused:
				qkv := get(a+"qkv_proj.weight", qd+2*kvd, dim)
				mat(o+"wq", qkv, qd, perm, 1)
				mat(o+"wk", qkv, kvd, func(r int) int { return qd + perm(r) }, 1)
				mat(o+"wv", qkv, kvd, func(r int) int { return qd + kvd + r }, 1)
			case f.gated:
				// q_proj holds, per head, hd query rows then hd gate rows.
				qg := get(a+"q_proj.weight", 2*qd, dim)
				mat(o+"wq", qg, qd, func(r int) int { s := perm(r); return 2*(s/hd)*hd + s%hd }, 1)
				mat(o+"wg", qg, qd, func(r int) int { return 2*(r/hd)*hd + hd + r%hd }, 1)
				mat(o+"wk", get(a+"k_proj.weight", kvd, dim), kvd, perm, 1)
				mat(o+"wv", get(a+"v_proj.weight", kvd, dim), kvd, nil, 1)
			default:
				mat(o+"wq", get(a+"q_proj.weight", qd, dim), qd, perm, 1)
				mat(o+"wk", get(a+"k_proj.weight", kvd, dim), kvd, perm, 1)
				mat(o+"wv", get(a+"v_proj.weight", kvd, dim), kvd, nil, 1)
			}
			mat(o+"wo", get(a+"o_proj.weight", dim, qd), dim, nil, mh.residual)
			if h.QKVBias != 0 {
				vec(o+"bq", get(a+"q_proj.bias", qd), perm, 0, 1)
				vec(o+"bk", get(a+"k_proj.bias", kvd), perm, 0, 1)
				vec(o+"bv", get(a+"v_proj.bias", kvd), nil, 0, 1)
			}
			if h.QKNorm != 0 {
				vec(o+"q_norm", get(a+"q_norm.weight", hd), perm, normAdd, 1)
				vec(o+"k_norm", get(a+"k_norm.weight", hd), perm, normAdd, 1)
			}
		}
		if f.sandwich {
			vec(o+"post_attn_norm", get(b+"post_attention_layernorm.weight", dim), nil, normAdd, 1)
			vec(o+"ffn_norm", get(b+"pre_feedforward_layernorm.weight", dim), nil, normAdd, 1)
			vec(o+"post_ffn_norm", get(b+"post_feedforward_layernorm.weight", dim), nil, normAdd, 1)
		} else {
			vec(o+"ffn_norm", get(b+"post_attention_layernorm.weight", dim), nil, normAdd, 1)
		}
		if f.fused {
			gu := get(b+"mlp.gate_up_proj.weight", 2*hid, dim)
			mat(o+"w1", gu, hid, nil, 1)
			mat(o+"w3", gu, hid, func(r int) int { return hid + r }, 1)
		} else {
			mat(o+"w1", get(b+"mlp.gate_proj.weight", hid, dim), hid, nil, 1)
			mat(o+"w3", get(b+"mlp.up_proj.weight", hid, dim), hid, nil, 1)
		}
		mat(o+"w2", get(b+"mlp.down_proj.weight", dim, hid), dim, nil, mh.residual) // columns padded to phid
		for _, n := range []string{"w1", "w3"} {
			if pr := p.prods[o+n]; pr != nil && phid != hid {
				pr.rows, pr.srcRows = phid, hid
			}
		}
	}
	if phid != hid {
		p.notes = append(p.notes, fmt.Sprintf("FFN width %d padded to %d with zero channels (exact: zero rows of w1 and w3, zero columns of w2; the header's true_hidden_dim records %d)", hid, phid, hid))
	}
	vec("final_norm", get("norm.weight", dim), nil, normAdd, 1/mh.logitScale)

	_, hasHead := src["lm_head.weight"]
	switch {
	case !hasHead:
		h.SharedClassifier = 1
	case mh.tied:
		// Hugging Face overwrites a tied lm_head with the embedding.
		h.SharedClassifier = 1
		used["lm_head.weight"] = true
		p.warnings = append(p.warnings, "lm_head.weight ignored: tie_word_embeddings is set")
	default:
		mat("wcls", get("lm_head.weight", vocab, dim), vocab, nil, 1)
	}
	if perr != nil {
		return nil, perr
	}
	var left []string
	for s, t := range src {
		if !used[s] {
			left = append(left, t.Name)
		}
	}
	if len(left) > 0 {
		sort.Strings(left)
		more := ""
		if len(left) > 5 {
			more = fmt.Sprintf(" and %d more", len(left)-5)
			left = left[:5]
		}
		return nil, fmt.Errorf("convert: %s: architecture %s: tensor %s%s not used by the mapping; the model has parts the .mlb format cannot hold", ck.Dir, arch, strings.Join(quoteAll(left), ", "), more)
	}
	return p, nil
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = fmt.Sprintf("%q", x)
	}
	return out
}
