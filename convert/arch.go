package convert

import (
	"fmt"
	"math"
	"strings"

	"github.com/krafla/krafla/mlb"
)

// family holds what differs between the architectures that fit, with the
// Hugging Face config-class defaults for absent keys.
type family struct {
	name      string
	tied      bool    // default of tie_word_embeddings
	normPlus  bool    // RMSNorm weights stored as g−1 (Gemma, Qwen3.5)
	sandwich  bool    // Gemma 2/3 norm names and post norms
	gemma     bool    // GELU-tanh, embedding scale √dim
	qkNorm    bool    // per-head q/k RMSNorm
	qkvBias   bool    // q/k/v biases without a config key (Qwen2)
	fused     bool    // fused qkv_proj and gate_up_proj (Phi-3)
	gated     bool    // Qwen3.5: q_proj holds query and gate per head; linear attention
	headDim   int     // default head_dim; 0 = dim / n_heads
	nHeads    int     // default num_attention_heads; 0 = required
	nKV       int     // default num_key_value_heads; 0 = n_heads
	ropeTheta float64 // default rope_theta
	eps       float64 // default rms_norm_eps
	maxPos    int     // default max_position_embeddings
	prf       float64 // default partial_rotary_factor
	q4Round   bool    // --q4-rule default round (quantization-aware checkpoints)
}

var families = map[string]family{
	"llama":   {name: "llama", ropeTheta: 1e4, eps: 1e-6, maxPos: 2048, prf: 1},
	"mistral": {name: "mistral", nKV: 8, ropeTheta: 1e4, eps: 1e-6, maxPos: 131072, prf: 1},
	"qwen2":   {name: "qwen2", qkvBias: true, ropeTheta: 1e4, eps: 1e-6, maxPos: 32768, prf: 1},
	"qwen3":   {name: "qwen3", qkNorm: true, headDim: 128, ropeTheta: 1e4, eps: 1e-6, maxPos: 32768, prf: 1},
	"smollm3": {name: "smollm3", tied: true, ropeTheta: 2e6, eps: 1e-6, maxPos: 32768, prf: 1},
	"gemma":   {name: "gemma", tied: true, normPlus: true, gemma: true, headDim: 256, ropeTheta: 1e4, eps: 1e-6, maxPos: 8192, prf: 1},
	"gemma2": {name: "gemma2", tied: true, normPlus: true, sandwich: true, gemma: true, headDim: 256, ropeTheta: 1e4,
		eps: 1e-6, maxPos: 8192, prf: 1},
	"gemma3": {name: "gemma3", tied: true, normPlus: true, sandwich: true, gemma: true, qkNorm: true, headDim: 256,
		nHeads: 8, nKV: 4, ropeTheta: 1e6, eps: 1e-6, maxPos: 131072, prf: 1, q4Round: true},
	"qwen3_5": {name: "qwen3_5", normPlus: true, qkNorm: true, gated: true, headDim: 256, ropeTheta: 1e7, eps: 1e-6,
		maxPos: 32768, prf: 0.25},
	"phi3":    {name: "phi3", fused: true, ropeTheta: 1e4, eps: 1e-5, maxPos: 4096, prf: 1},
	"granite": {name: "granite", ropeTheta: 1e4, eps: 1e-6, maxPos: 2048, prf: 1},
}

// archNames maps architectures[0] and model_type values to a family.
var archNames = map[string]string{
	"LlamaForCausalLM": "llama", "llama": "llama",
	"MistralForCausalLM": "mistral", "mistral": "mistral",
	"Qwen2ForCausalLM": "qwen2", "qwen2": "qwen2",
	"Qwen3ForCausalLM": "qwen3", "qwen3": "qwen3",
	"SmolLM3ForCausalLM": "smollm3", "smollm3": "smollm3",
	"GemmaForCausalLM": "gemma", "gemma": "gemma",
	"Gemma2ForCausalLM": "gemma2", "gemma2": "gemma2",
	"Gemma3ForCausalLM": "gemma3", "gemma3_text": "gemma3",
	"Gemma3ForConditionalGeneration": "gemma3", "gemma3": "gemma3",
	"Qwen3_5ForConditionalGeneration": "qwen3_5", "qwen3_5": "qwen3_5",
	"Qwen3_5ForCausalLM": "qwen3_5", "qwen3_5_text": "qwen3_5",
	"Phi3ForCausalLM": "phi3", "phi3": "phi3",
	"GraniteForCausalLM": "granite", "granite": "granite",
	// Head-less checkpoints (AutoModel's classes, embedding models such as
	// Qwen3-Embedding): no lm_head, so the embedding is the shared classifier.
	"LlamaModel": "llama", "MistralModel": "mistral", "Qwen2Model": "qwen2", "Qwen3Model": "qwen3",
	"SmolLM3Model": "smollm3", "GemmaModel": "gemma", "Gemma2Model": "gemma2", "Gemma3TextModel": "gemma3",
	"Phi3Model": "phi3", "GraniteModel": "granite",
}

// refused maps model_type values (and a few class names) of architectures
// that do not fit the format to the reason (ARCHITECTURES.md section 8).
var refused = map[string]string{}

func init() {
	add := func(reason string, names ...string) {
		for _, n := range names {
			refused[n] = reason
		}
	}
	add("mixture of experts", "mixtral", "qwen2_moe", "qwen3_moe", "qwen3_next", "qwen3_5_moe", "qwen3_5_moe_text",
		"granitemoe", "granitemoeshared", "dbrx", "olmoe", "hunyuan_v1_moe", "ernie4_5_moe", "Qwen3NextForCausalLM",
		"MixtralForCausalLM", "Qwen3MoeForCausalLM", "Qwen2MoeForCausalLM")
	add("MLA attention and mixture of experts", "deepseek_v2", "deepseek_v3", "kimi_k2", "minicpm3")
	add("mixture of experts, attention sinks and yarn with truncate=false", "gpt_oss")
	add("mixture of experts, chunked attention and NoPE temperature scaling", "llama4", "llama4_text")
	add("post-norm only blocks and q/k RMSNorm over the whole q_dim", "olmo2", "olmo3")
	add("non-parametric LayerNorm", "olmo")
	add("LayerNorm, parallel attention+MLP block and logit_scale", "cohere", "cohere2")
	add("LayerNorm with bias, non-gated MLP and parallel blocks", "stablelm", "phi", "gpt2", "gptj", "gpt_neox",
		"falcon", "mpt", "bloom", "starcoder2")
	add("non-gated MLP (squared ReLU / xIELU)", "nemotron", "arcee", "apertus")
	add("AltUp, per-layer inputs and KV sharing", "gemma3n", "gemma3n_text")
	add("RG-LRU recurrent blocks", "recurrent_gemma")
	add("SSM blocks other than the gated delta rule", "mamba", "mamba2", "jamba", "falcon_h1", "granitemoehybrid",
		"zamba", "zamba2")
	add("GLM-4 would fit (ARCHITECTURES.md 6.13) but its mapping has no reference check yet, so krafla does not convert it", "glm", "glm4", "GlmForCausalLM", "Glm4ForCausalLM")
}

// resolveFamily picks the family from architectures[0], else model_type.
func resolveFamily(c *config) (family, string, error) {
	var names []string
	if v, ok := c.top["architectures"].([]any); ok && len(v) > 0 {
		if s, ok := v[0].(string); ok {
			names = append(names, s)
		}
	}
	if c.text != nil {
		if s, ok := c.text["model_type"].(string); ok {
			names = append(names, s)
		}
	}
	if s, ok := c.top["model_type"].(string); ok {
		names = append(names, s)
	}
	if len(names) == 0 {
		return family{}, "", fmt.Errorf("convert: %s: neither architectures nor model_type is set", c.path)
	}
	for _, n := range names {
		if why, ok := refused[n]; ok {
			return family{}, n, fmt.Errorf("convert: %s: architecture %s does not fit the .mlb format: %s", c.path, n, why)
		}
	}
	for _, n := range names {
		if f, ok := archNames[n]; ok {
			return families[f], n, nil
		}
	}
	return family{}, names[0], fmt.Errorf("convert: %s: architecture %s is not supported (supported: Llama, Mistral, Qwen2, Qwen3, SmolLM3, Gemma 1/2/3, Qwen3.5, Phi-3, Granite)", c.path, names[0])
}

// dictNum reads a number from a rope dict; absent or null gives def.
func dictNum(c *config, m map[string]any, key string, def float64) (float64, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return def, nil
	}
	f, ok := num(v)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, c.errf("rope "+key, "%v is not a number", v)
	}
	return f, nil
}

func ropeType(m map[string]any) string {
	if s, ok := m["rope_type"].(string); ok {
		return s
	}
	if s, ok := m["type"].(string); ok {
		return s
	}
	return "default"
}

// rope fills the RoPE fields of h from rope_parameters (new saves) or
// rope_theta + rope_scaling (old saves), and returns rot_dim.
func rope(c *config, f family, h *mlb.Header, headDim, maxPos int) (rot int, err error) {
	rp, err := c.dict("rope_parameters")
	if err != nil {
		return 0, err
	}
	legacy := false
	if rp == nil {
		if rp, err = c.dict("rope_scaling"); err != nil {
			return 0, err
		}
		legacy = true
	}
	if rp == nil {
		rp = map[string]any{}
	}
	var local map[string]any
	if full, ok := rp["full_attention"].(map[string]any); ok {
		local, _ = rp["sliding_attention"].(map[string]any)
		rp = full
	} else if s, ok := rp["sliding_attention"].(map[string]any); ok {
		local, rp = s, map[string]any{}
	}
	if local != nil && ropeType(local) != "default" {
		return 0, c.errf("rope_parameters.sliding_attention", "RoPE scaling %q on local layers does not fit the format", ropeType(local))
	}
	theta, err := c.floatKey("rope_theta", f.ropeTheta)
	if err != nil {
		return 0, err
	}
	if !legacy {
		if theta, err = dictNum(c, rp, "rope_theta", theta); err != nil {
			return 0, err
		}
	}
	h.RopeTheta = float32(theta)
	if f.name == "gemma3" {
		lt, err := c.floatKey("rope_local_base_freq", 1e4)
		if err != nil {
			return 0, err
		}
		if local != nil {
			if lt, err = dictNum(c, local, "rope_theta", lt); err != nil {
				return 0, err
			}
		}
		h.RopeLocalTheta = float32(lt)
	}
	prf, err := c.floatKey("partial_rotary_factor", math.NaN())
	if err != nil {
		return 0, err
	}
	if math.IsNaN(prf) {
		if prf, err = dictNum(c, rp, "partial_rotary_factor", f.prf); err != nil {
			return 0, err
		}
	}
	if !(prf > 0 && prf <= 1) {
		return 0, c.errf("partial_rotary_factor", "%v must be in (0, 1]", prf)
	}
	rot = int(float64(headDim) * prf)
	if rot%2 != 0 || rot == 0 {
		return 0, c.errf("partial_rotary_factor", "%v × head_dim %d gives %d rotated dimensions, want an even number > 0", prf, headDim, rot)
	}
	if rot != headDim {
		h.RotDim = uint32(rot)
	}

	typ := ropeType(rp)
	orig := func() (uint32, error) {
		o, err := c.intKey("original_max_position_embeddings", -1)
		if err != nil {
			return 0, err
		}
		if o < 0 {
			v, err := dictNum(c, rp, "original_max_position_embeddings", float64(maxPos))
			if err != nil {
				return 0, err
			}
			o = int(v)
		}
		if o <= 0 {
			return 0, c.errf("original_max_position_embeddings", "%d must be > 0", o)
		}
		return uint32(o), nil
	}
	if f.fused && typ != "default" {
		return 0, c.errf("rope_scaling", "Phi-3 RoPE scaling %q (longrope: per-frequency factor lists) does not fit the format", typ)
	}
	switch typ {
	case "default", "mrope":
		h.RopeType = mlb.RopePlain
	case "llama3":
		h.RopeType = mlb.RopeLlama3
		fa, err1 := dictNum(c, rp, "factor", 0)
		lo, err2 := dictNum(c, rp, "low_freq_factor", 0)
		hi, err3 := dictNum(c, rp, "high_freq_factor", 0)
		if err := firstErr(err1, err2, err3); err != nil {
			return 0, err
		}
		o, err := orig()
		if err != nil {
			return 0, err
		}
		switch {
		case !(float32(fa) > 0) || math.IsInf(fa, 0):
			return 0, c.errf("rope_scaling.factor", "llama3 RoPE needs factor > 0, got %v", fa)
		case !(float32(lo) > 0) || math.IsInf(lo, 0):
			return 0, c.errf("rope_scaling.low_freq_factor", "llama3 RoPE needs low_freq_factor > 0, got %v", lo)
		case !(float32(hi) > float32(lo)) || math.IsInf(hi, 0):
			return 0, c.errf("rope_scaling.high_freq_factor", "llama3 RoPE needs high_freq_factor %v > low_freq_factor %v", hi, lo)
		}
		h.RopeFactor, h.RopeLowFreqFactor, h.RopeHighFreqFactor, h.RopeOrigMaxSeq = float32(fa), float32(lo), float32(hi), o
	case "linear":
		h.RopeType = mlb.RopeLinear
		fa, err := dictNum(c, rp, "factor", 0)
		if err != nil {
			return 0, err
		}
		if !(float32(fa) > 0) || math.IsInf(fa, 0) {
			return 0, c.errf("rope_scaling.factor", "linear RoPE needs factor > 0, got %v", fa)
		}
		h.RopeFactor = float32(fa)
	case "yarn":
		if tr, ok := rp["truncate"].(bool); ok && !tr {
			return 0, c.errf("rope_scaling.truncate", "yarn with truncate=false does not fit the format")
		}
		h.RopeType = mlb.RopeYarn
		o, err := orig()
		if err != nil {
			return 0, err
		}
		fa, err := dictNum(c, rp, "factor", 0)
		if err != nil {
			return 0, err
		}
		if fa == 0 {
			fa = float64(maxPos) / float64(o)
		}
		bf, err1 := dictNum(c, rp, "beta_fast", 0)
		bs, err2 := dictNum(c, rp, "beta_slow", 0)
		af, err3 := dictNum(c, rp, "attention_factor", 0)
		ms, err4 := dictNum(c, rp, "mscale", 0)
		msa, err5 := dictNum(c, rp, "mscale_all_dim", 0)
		if err := firstErr(err1, err2, err3, err4, err5); err != nil {
			return 0, err
		}
		if bf == 0 {
			bf = 32
		}
		if bs == 0 {
			bs = 1
		}
		mscale := func(s, m float64) float64 {
			if s <= 1 {
				return 1
			}
			return 0.1*m*math.Log(s) + 1
		}
		if af == 0 {
			if ms != 0 && msa != 0 {
				af = mscale(fa, ms) / mscale(fa, msa)
			} else {
				af = mscale(fa, 1)
			}
		}
		switch {
		case !(float32(fa) > 0) || math.IsInf(fa, 0):
			return 0, c.errf("rope_scaling.factor", "yarn RoPE needs factor > 0, got %v", fa)
		case !(float32(bs) > 0) || !(float32(bs) < float32(bf)) || math.IsInf(bf, 0):
			return 0, c.errf("rope_scaling.beta_slow", "yarn RoPE needs 0 < beta_slow %v < beta_fast %v", bs, bf)
		case !(float32(af) > 0) || math.IsInf(af, 0):
			return 0, c.errf("rope_scaling.attention_factor", "yarn RoPE needs an attention factor > 0, got %v", af)
		}
		h.RopeFactor, h.RopeLowFreqFactor, h.RopeHighFreqFactor = float32(fa), float32(bf), float32(bs)
		h.RopeOrigMaxSeq, h.RopeAttnFactor = o, float32(af)
	case "dynamic":
		return 0, c.errf("rope_scaling", "dynamic NTK RoPE scaling does not fit the format")
	case "longrope", "su":
		return 0, c.errf("rope_scaling", "%s RoPE scaling (per-frequency factor lists) does not fit the format", typ)
	default:
		return 0, c.errf("rope_scaling", "unknown RoPE type %q", typ)
	}
	return rot, nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// layerTypes reads layer_types, checking its length and values.
func layerTypes(c *config, n int, allowed ...string) ([]string, error) {
	lt, err := c.strList("layer_types")
	if err != nil || lt == nil {
		return nil, err
	}
	if len(lt) != n {
		return nil, c.errf("layer_types", "%d entries for %d layers", len(lt), n)
	}
	for i, t := range lt {
		ok := false
		for _, a := range allowed {
			ok = ok || t == a
		}
		if !ok {
			return nil, c.errf("layer_types", "layer %d is %q, which does not fit this architecture (want one of %s)", i, t, strings.Join(allowed, ", "))
		}
	}
	return lt, nil
}
