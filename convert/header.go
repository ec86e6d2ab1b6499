package convert

import (
	"math"

	"github.com/krafla/krafla/mlb"
)

// modelHeader is the header of a family's config, minus what depends on
// the options (wtype, q8_mask, scale_f16) and the tensors (vocab,
// shared_classifier). It also returns rot_dim and the Granite folds.
type modelHeader struct {
	h          mlb.Header
	rot        int     // rotated dimensions per head
	tied       bool    // tie_word_embeddings (or its class default)
	residual   float64 // Granite residual_multiplier, folded into wo and w2
	logitScale float64 // Granite logits_scaling, divided out of final_norm
}

func buildHeader(c *config, f family) (*modelHeader, error) {
	m := &modelHeader{residual: 1, logitScale: 1}
	h := &m.h
	h.Version = mlb.Version
	if v, ok := c.topFirst("quantization_config"); ok && v != nil {
		return nil, c.errf("quantization_config", "pre-quantized checkpoints (GPTQ, AWQ, FP8, bitsandbytes, compressed-tensors) are not supported; dequantize to bf16/f16/f32 first")
	}
	for _, k := range []string{"num_local_experts", "num_experts", "n_routed_experts"} {
		n, err := c.intKey(k, 0)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			return nil, c.errf(k, "%d experts: mixture of experts does not fit the .mlb format", n)
		}
	}
	if f.name == "gemma3" {
		if b, err := c.boolKey("use_bidirectional_attention", false); err != nil || b {
			if err != nil {
				return nil, err
			}
			return nil, c.errf("use_bidirectional_attention", "bidirectional attention (EmbeddingGemma) does not fit the format")
		}
	}

	req := func(key string, def int) (uint32, error) {
		v, err := c.intKey(key, def)
		if err != nil {
			return 0, err
		}
		if v <= 0 {
			return 0, c.errf(key, "missing or zero")
		}
		if v > mlb.MaxDim && key != "max_position_embeddings" {
			return 0, c.errf(key, "%d exceeds the format's limit of %d", v, mlb.MaxDim)
		}
		return uint32(v), nil
	}
	var err error
	if h.Dim, err = req("hidden_size", 0); err != nil {
		return nil, err
	}
	if h.NLayers, err = req("num_hidden_layers", 0); err != nil {
		return nil, err
	}
	if h.NHeads, err = req("num_attention_heads", f.nHeads); err != nil {
		return nil, err
	}
	kvDef := f.nKV
	if kvDef == 0 {
		kvDef = int(h.NHeads)
	}
	if h.NKVHeads, err = req("num_key_value_heads", kvDef); err != nil {
		return nil, err
	}
	hid, err := req("intermediate_size", 0)
	if err != nil {
		return nil, err
	}
	if _, err := PadFFN(h, int(hid)); err != nil {
		return nil, err
	}
	maxPos, err := req("max_position_embeddings", f.maxPos)
	if err != nil {
		return nil, err
	}
	h.MaxSeq = min(maxPos, mlb.MaxVocab) // the format's limit; longer contexts are cut
	eps, err := c.floatKey("rms_norm_eps", f.eps)
	if err != nil {
		return nil, err
	}
	h.NormEps = float32(eps)
	hd := f.headDim
	if hd == 0 {
		hd = int(h.Dim) / int(h.NHeads)
	}
	if v, ok := c.raw("head_dim"); ok && v == nil {
		hd = int(h.Dim) / int(h.NHeads) // explicit null: dim / n_heads
	} else if hd, err = c.intKey("head_dim", hd); err != nil {
		return nil, err
	}
	if hd <= 0 || hd > mlb.MaxDim {
		return nil, c.errf("head_dim", "%d out of range", hd)
	}
	if int(h.Dim)%int(h.NHeads) != 0 || hd != int(h.Dim)/int(h.NHeads) {
		h.HeadDim = uint32(hd)
	}

	// Activation.
	if f.gemma {
		h.Act = mlb.ActGELU // always the tanh form (ARCHITECTURES.md 6.6)
	} else {
		act, err := c.strKey("hidden_act", "silu")
		if err != nil {
			return nil, err
		}
		if act != "silu" && act != "swish" {
			return nil, c.errf("hidden_act", "activation %q does not fit the format (only SiLU, and GELU-tanh for Gemma)", act)
		}
	}
	// Biases that have no array.
	if !f.qkvBias {
		if b, err := c.boolKey("attention_bias", false); err != nil || b {
			if err != nil {
				return nil, err
			}
			return nil, c.errf("attention_bias", "true adds an o_proj bias, which the format cannot hold")
		}
	} else {
		h.QKVBias = 1
	}
	if b, err := c.boolKey("mlp_bias", false); err != nil || b {
		if err != nil {
			return nil, err
		}
		return nil, c.errf("mlp_bias", "MLP biases do not fit the format")
	}

	if m.rot, err = rope(c, f, h, hd, int(maxPos)); err != nil {
		return nil, err
	}
	if m.tied, err = c.boolKey("tie_word_embeddings", f.tied); err != nil {
		return nil, err
	}
	if f.qkNorm {
		h.QKNorm = 1
	}
	if err := layerFlags(c, f, m); err != nil {
		return nil, err
	}

	switch f.name {
	case "gemma", "gemma2", "gemma3":
		h.EmbedScale = float32(math.Sqrt(float64(h.Dim)))
		if f.name != "gemma" {
			h.PostNorms = 1
			q, err := c.floatKey("query_pre_attn_scalar", 256)
			if err != nil {
				return nil, err
			}
			if q <= 0 {
				return nil, c.errf("query_pre_attn_scalar", "%v must be > 0", q)
			}
			h.AttnScale = float32(1 / math.Sqrt(q))
			// Gemma 2 defaults to 50 and 30 when absent; an explicit null
			// (Gemma 3's configs) means no cap.
			softcap := func(key string, def float64) (float64, error) {
				if v, ok := c.raw(key); ok && v == nil || f.name != "gemma2" {
					def = 0
				}
				return c.floatKey(key, def)
			}
			a, err := softcap("attn_logit_softcapping", 50)
			if err != nil {
				return nil, err
			}
			fl, err := softcap("final_logit_softcapping", 30)
			if err != nil {
				return nil, err
			}
			h.AttnSoftcap, h.FinalSoftcap = float32(a), float32(fl)
		}
	case "granite":
		em, err1 := c.floatKey("embedding_multiplier", 1)
		am, err2 := c.floatKey("attention_multiplier", 1)
		rm, err3 := c.floatKey("residual_multiplier", 1)
		ls, err4 := c.floatKey("logits_scaling", 1)
		if err := firstErr(err1, err2, err3, err4); err != nil {
			return nil, err
		}
		if ls == 0 {
			return nil, c.errf("logits_scaling", "0 would divide by zero")
		}
		h.EmbedScale, h.AttnScale = float32(em), float32(am)
		m.residual, m.logitScale = rm, ls
	case "qwen3_5":
		gate, err := c.boolKey("attn_output_gate", true)
		if err != nil {
			return nil, err
		}
		if !gate {
			return nil, c.errf("attn_output_gate", "false is not supported (Hugging Face gates unconditionally)")
		}
		h.AttnGate = 1
		keys := []struct {
			k   string
			def int
			p   *uint32
		}{{"linear_num_key_heads", 16, &h.LinKHeads}, {"linear_num_value_heads", 32, &h.LinVHeads},
			{"linear_key_head_dim", 128, &h.LinKDim}, {"linear_value_head_dim", 128, &h.LinVDim},
			{"linear_conv_kernel_dim", 4, &h.LinConv}}
		for _, k := range keys {
			if *k.p, err = req(k.k, k.def); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

// layerFlags sets sliding_window and the per-layer flags.
func layerFlags(c *config, f family, m *modelHeader) error {
	h := &m.h
	n := int(h.NLayers)
	flags := make([]uint8, n)
	var err error
	window := func(def int) (uint32, error) {
		w, err := c.intKey("sliding_window", def)
		if err != nil {
			return 0, err
		}
		if w > mlb.MaxWindow {
			return 0, c.errf("sliding_window", "%d exceeds %d", w, mlb.MaxWindow)
		}
		return uint32(w), nil
	}
	// typed sets bit on the layers that layer_types names kind; false when the key is
	// absent, so the caller falls back to the architecture's fixed pattern.
	typed := func(kind string, bit uint8) (bool, error) {
		lt, err := layerTypes(c, n, "full_attention", kind)
		for i, t := range lt {
			if t == kind {
				flags[i] |= bit
			}
		}
		return lt != nil, err
	}
	// sliding reads the window (def when absent) and marks the layers that
	// layer_types calls sliding; false when layer_types is absent.
	sliding := func(def int, bit uint8) (bool, error) {
		var err error
		if h.SlidingWindow, err = window(def); err != nil {
			return false, err
		}
		return typed("sliding_attention", bit)
	}
	// notEvery sets bit on every layer except each p-th (1-based): HF's periodic
	// patterns, in which the p-th layer is the full-attention one.
	notEvery := func(p int, bit uint8) {
		for i := 0; i < n; i++ {
			if (i+1)%p != 0 {
				flags[i] |= bit
			}
		}
	}
	// interval reads a period key; 0 would divide by zero in notEvery.
	interval := func(key string, def int) (int, error) {
		p, err := c.intKey(key, def)
		if err == nil && p == 0 {
			err = c.errf(key, "must be > 0")
		}
		return p, err
	}
	switch f.name {
	case "mistral":
		// Absent key: MistralConfig's 4096; explicit null: no window.
		def := 4096
		if v, ok := c.raw("sliding_window"); ok && v == nil {
			def = 0
		}
		if _, err := sliding(def, mlb.FlagSliding); err != nil {
			return err
		}
	case "qwen2", "qwen3":
		use, err := c.boolKey("use_sliding_window", false)
		if err != nil || !use {
			return err
		}
		ok, err := sliding(4096, mlb.FlagSliding)
		if err != nil {
			return err
		}
		if !ok {
			mwl, err := c.intKey("max_window_layers", 28)
			if err != nil {
				return err
			}
			for i := mwl; i < n; i++ {
				flags[i] |= mlb.FlagSliding
			}
		}
	case "smollm3":
		var usesRope []bool
		if v, ok := c.raw("no_rope_layers"); ok && v != nil {
			l, ok := v.([]any)
			if !ok || len(l) != n {
				return c.errf("no_rope_layers", "want a list of %d entries", n)
			}
			for _, e := range l {
				x, err := c.intVal("no_rope_layers", e)
				if err != nil {
					return err
				}
				usesRope = append(usesRope, x != 0)
			}
		} else {
			iv, err := interval("no_rope_layer_interval", 4)
			if err != nil {
				return err
			}
			for i := 0; i < n; i++ {
				usesRope = append(usesRope, (i+1)%iv != 0)
			}
		}
		use, err := c.boolKey("use_sliding_window", false)
		if err != nil {
			return err
		}
		if use {
			if h.SlidingWindow, err = window(0); err != nil {
				return err
			}
		}
		for i, r := range usesRope {
			if !r {
				flags[i] |= mlb.FlagNoRoPE
				if h.SlidingWindow != 0 {
					flags[i] |= mlb.FlagSliding
				}
			}
		}
	case "gemma2":
		ok, err := sliding(4096, mlb.FlagSliding)
		if err != nil {
			return err
		}
		if !ok {
			notEvery(2, mlb.FlagSliding)
		}
	case "gemma3":
		ok, err := sliding(4096, mlb.FlagSliding|mlb.FlagLocalRoPE)
		if err != nil {
			return err
		}
		if !ok {
			p, err := interval("sliding_window_pattern", 6)
			if err != nil {
				return err
			}
			notEvery(p, mlb.FlagSliding|mlb.FlagLocalRoPE)
		}
	case "qwen3_5":
		ok, err := typed("linear_attention", mlb.FlagLinear)
		if err != nil {
			return err
		}
		if !ok {
			iv, err := interval("full_attention_interval", 4)
			if err != nil {
				return err
			}
			notEvery(iv, mlb.FlagLinear)
		}
	case "phi3":
		if h.SlidingWindow, err = window(0); err != nil {
			return err
		}
	}
	for _, fl := range flags {
		if fl != 0 {
			h.LayerFlags = 1
			h.Flags = flags
			break
		}
	}
	return nil
}
