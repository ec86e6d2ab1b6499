package hfgen

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/x448/float16"

	"github.com/krafla/krafla/internal/atomicfile"
)

// Archs lists the architectures Write knows, each a Hugging Face family in
// one configuration:
//
//	llama         LlamaForCausalLM, plain RoPE, separate lm_head
//	llama3        Llama 3.2 style: llama3 RoPE scaling, tied embeddings
//	llama-linear  linear RoPE scaling (legacy "type" key)
//	llama-yarn    yarn RoPE scaling
//	mistral       MistralForCausalLM, sliding window, head_dim ≠ dim/heads
//	qwen2         Qwen2ForCausalLM, q/k/v biases, tied
//	qwen3         Qwen3ForCausalLM, q/k norms, head_dim ≠ dim/heads
//	smollm3       SmolLM3ForCausalLM, every second layer without RoPE
//	gemma         GemmaForCausalLM, MQA, norms stored as g−1, the embedding
//	              drawn divided by √hidden_size to offset its multiplier
//	gemma2        Gemma2ForCausalLM, softcaps, post norms, sliding layers
//	gemma3        Gemma3ForCausalLM (gemma3_text), local RoPE base, q/k norms
//	gemma3-mm     Gemma3ForConditionalGeneration: nested text_config relying on
//	              class defaults, language_model.model. prefix, vision tensors
//	qwen3_5       Qwen3_5ForConditionalGeneration: linear attention, gated
//	              attention with partial RoPE, vision and MTP tensors
//	phi3          Phi3ForCausalLM, fused qkv_proj and gate_up_proj
//	granite       GraniteForCausalLM, Granite 3's embedding/attention/residual/logit
//	              multipliers, with weights drawn to offset them (see granite below)
var Archs = []string{"llama", "llama3", "llama-linear", "llama-yarn", "mistral", "qwen2", "qwen3",
	"smollm3", "gemma", "gemma2", "gemma3", "gemma3-mm", "qwen3_5", "phi3", "granite"}

// Shapes lists the sizes Write knows. "tiny" works with every architecture;
// the others only with "llama" and "llama3", and give the real config of
// that model (with random weights).
var Shapes = []string{"tiny", "smollm2-135m", "llama-3.2-1b", "stories260k", "stories15m", "stories15m-201k", "k256"}

// Options choose the size, precision and layout of a checkpoint.
type Options struct {
	Shape  string // one of Shapes; "" = "tiny"
	DType  string // "bf16" (default), "f16" or "f32"
	Seed   uint64 // weights are a function of the seed and the tensor name
	Shards int    // >1: split into that many files plus model.safetensors.index.json

	NoTokenizer bool // skip tokenizer.json and tokenizer_config.json
	// Vocab, when > 0, replaces the shape's vocabulary size (the rows of the
	// embedding and the output), e.g. to fit a real tokenizer copied in
	// afterwards; at least TokenizerSize unless NoTokenizer.
	Vocab int

	// Embedding, when set ("last", "mean", "cls" or "max"), writes a head-less
	// embedding checkpoint as sentence-transformers saves one: the
	// architecture's *Model class, tensor names without the "model."
	// prefix, no lm_head, and modules.json, 1_Pooling/config.json and
	// config_sentence_transformers.json (Qwen3-Embedding's query prompt).
	// With "last", the tokenizer's post-processor appends <|endoftext|>, as
	// Qwen3-Embedding's does.
	Embedding string
	// ExcludePrompt writes include_prompt false in 1_Pooling/config.json
	// (the prompt's tokens are not pooled, as INSTRUCTOR and GritLM pool);
	// with Embedding "last", "mean" or "max".
	ExcludePrompt bool

	// Config sets keys of config.json (of text_config where the architecture
	// nests one) after the architecture's own; a nil value writes null.
	Config map[string]any
	// DeleteConfig removes keys (of text_config where nested).
	DeleteConfig []string
	// Extra adds tensors (name → shape) of random values, e.g. to check
	// that a converter refuses tensors it does not consume.
	Extra map[string][]int
}

// tensor kinds: how the random values are drawn.
const (
	kMatrix   = iota // uniform ±1/√cols
	kEmbed           // uniform ±1
	kNorm            // 1 ± 0.2
	kNormZero        // ±0.2 (norms stored as g−1)
	kBias            // ±0.1
	kSmall           // ±0.5
)

type tensorSpec struct {
	name  string
	shape []int
	kind  int
	scale float32 // multiplies the drawn values; 0 leaves them as drawn
}

// dims of a shape.
type dims struct {
	dim, layers, heads, kv, headDim, hidden, vocab, maxPos int
}

func shapeDims(shape string) (dims, error) {
	switch shape {
	case "", "tiny":
		return dims{dim: 64, layers: 2, heads: 4, kv: 2, headDim: 16, hidden: 128, vocab: 320, maxPos: 256}, nil
	case "smollm2-135m":
		return dims{dim: 576, layers: 30, heads: 9, kv: 3, headDim: 64, hidden: 1536, vocab: 49152, maxPos: 8192}, nil
	case "llama-3.2-1b":
		return dims{dim: 2048, layers: 16, heads: 32, kv: 8, headDim: 64, hidden: 8192, vocab: 128256, maxPos: 131072}, nil
	case "stories260k": // llama2.c's stories260K: an FFN width (172) that is not a multiple of 32
		return dims{dim: 64, layers: 5, heads: 8, kv: 4, headDim: 8, hidden: 172, vocab: 512, maxPos: 512}, nil
	case "k256": // tiny, but every matrix a whole number of K-quant superblocks (256) wide
		return dims{dim: 256, layers: 2, heads: 4, kv: 2, headDim: 64, hidden: 512, vocab: 320, maxPos: 256}, nil
	case "stories15m": // llama2.c's stories15M: 15M parameters, tens of MB, for tests that need a conversion to last a while
		return dims{dim: 288, layers: 6, heads: 6, kv: 6, headDim: 48, hidden: 768, vocab: 32000, maxPos: 256}, nil
	case "stories15m-201k": // stories15m with gpt-oss's 201088 embedding rows, for its o200k tokenizer (a cheap forward at a 200k vocabulary)
		return dims{dim: 288, layers: 6, heads: 6, kv: 6, headDim: 48, hidden: 768, vocab: 201088, maxPos: 256}, nil
	}
	return dims{}, fmt.Errorf("hfgen: unknown shape %q (want one of %s)", shape, strings.Join(Shapes, ", "))
}

// Write writes a checkpoint of arch (one of Archs) into dir, creating it.
func Write(dir, arch string, opt Options) error {
	return WriteContext(context.Background(), dir, arch, opt)
}

// WriteContext is Write that stops with ctx.Err() between chunks of weights
// once ctx is done; what it wrote by then is left for the caller to remove.
func WriteContext(ctx context.Context, dir, arch string, opt Options) error {
	d, err := shapeDims(opt.Shape)
	if err != nil {
		return err
	}
	if opt.Vocab > 0 {
		if opt.Vocab < TokenizerSize && !opt.NoTokenizer {
			return fmt.Errorf("hfgen: vocabulary %d is smaller than the tokenizer's %d tokens", opt.Vocab, TokenizerSize)
		}
		d.vocab = opt.Vocab
	}
	if opt.Shape != "" && opt.Shape != "tiny" && arch != "llama" && arch != "llama3" {
		return fmt.Errorf("hfgen: shape %q is only available for llama and llama3, not %q", opt.Shape, arch)
	}
	dt := opt.DType
	if dt == "" {
		dt = "bf16"
	}
	if dt != "bf16" && dt != "f16" && dt != "f32" {
		return fmt.Errorf("hfgen: unknown dtype %q (want bf16, f16 or f32)", dt)
	}
	cfg, text, specs, err := build(arch, opt.Shape, d)
	if err != nil {
		return err
	}
	if opt.Embedding != "" {
		if specs, err = headLess(arch, cfg, specs, opt.Embedding); err != nil {
			return err
		}
	}
	if opt.ExcludePrompt && (opt.Embedding == "" || opt.Embedding == "cls") {
		return fmt.Errorf("hfgen: ExcludePrompt needs Embedding last, mean or max, not %q", opt.Embedding)
	}
	torch := map[string]string{"bf16": "bfloat16", "f16": "float16", "f32": "float32"}[dt]
	text["torch_dtype"] = torch
	for k, v := range opt.Config {
		text[k] = v
	}
	for _, k := range opt.DeleteConfig {
		delete(text, k)
	}
	extra := make([]string, 0, len(opt.Extra))
	for name := range opt.Extra {
		extra = append(extra, name)
	}
	sort.Strings(extra)
	for _, name := range extra {
		specs = append(specs, tensorSpec{name, opt.Extra[name], kSmall, 0})
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cb, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), cb, 0o644); err != nil {
		return err
	}
	if !opt.NoTokenizer {
		if err := writeTokenizer(dir, opt.Embedding == "last"); err != nil {
			return err
		}
	}
	if opt.Embedding != "" {
		if err := writeSentenceTransformers(dir, opt.Embedding, !opt.ExcludePrompt, d.dim); err != nil {
			return err
		}
	}
	return writeWeights(ctx, dir, specs, dt, opt.Seed, opt.Shards)
}

// llama3Rope is Llama 3.2's rope_scaling (a fresh map each call, since
// Options.Config may patch the config afterwards).
func llama3Rope() map[string]any {
	return map[string]any{"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
		"original_max_position_embeddings": 8192}
}

// build returns the config (and the map inside it that holds the text
// model's keys: the config itself, or its text_config) and the tensors.
func build(arch, shape string, d dims) (cfg, text map[string]any, specs []tensorSpec, err error) {
	cfg = map[string]any{
		"hidden_size": d.dim, "num_hidden_layers": d.layers, "num_attention_heads": d.heads,
		"num_key_value_heads": d.kv, "intermediate_size": d.hidden, "vocab_size": d.vocab,
		"max_position_embeddings": d.maxPos, "rms_norm_eps": 1e-5, "hidden_act": "silu",
		"bos_token_id": EOS, "eos_token_id": EOS, "initializer_range": 0.02,
	}
	text = cfg
	set := func(kv ...any) {
		for i := 0; i < len(kv); i += 2 {
			text[kv[i].(string)] = kv[i+1]
		}
	}
	prefix := "model."
	tied := false
	hd := d.headDim
	qdim, kvdim := d.heads*hd, d.kv*hd
	var (
		qkvBias, qkNorm, gemmaNorms, sandwich, fused, qGate bool
	)
	scales := map[string]float32{} // name without prefix or layer → tensorSpec.scale
	arches := func(a, mt string) { cfg["architectures"] = []string{a}; cfg["model_type"] = mt }
	switch arch {
	case "llama":
		arches("LlamaForCausalLM", "llama")
		set("rope_theta", 10000.0, "tie_word_embeddings", false, "attention_bias", false, "mlp_bias", false)
		switch shape {
		case "smollm2-135m":
			set("rope_theta", 100000.0, "tie_word_embeddings", true)
			tied = true
		case "llama-3.2-1b":
			set("rope_theta", 500000.0, "tie_word_embeddings", true, "rope_scaling", llama3Rope())
			tied = true
		}
	case "llama3":
		arches("LlamaForCausalLM", "llama")
		set("rope_theta", 500000.0, "tie_word_embeddings", true, "rope_scaling", llama3Rope())
		tied = true
	case "llama-linear":
		arches("LlamaForCausalLM", "llama")
		set("rope_scaling", map[string]any{"type": "linear", "factor": 2.0})
	case "llama-yarn":
		arches("LlamaForCausalLM", "llama")
		set("rope_theta", 1000000.0, "rope_scaling", map[string]any{"rope_type": "yarn", "factor": 4.0,
			"original_max_position_embeddings": 64})
	case "mistral":
		arches("MistralForCausalLM", "mistral")
		hd = 32
		set("head_dim", hd, "sliding_window", 32, "rope_theta", 1000000.0)
	case "qwen2":
		arches("Qwen2ForCausalLM", "qwen2")
		set("rope_theta", 1000000.0, "rms_norm_eps", 1e-6, "tie_word_embeddings", true,
			"use_sliding_window", false, "sliding_window", 32, "max_window_layers", 1)
		tied, qkvBias = true, true
	case "qwen3":
		arches("Qwen3ForCausalLM", "qwen3")
		hd = 32
		set("head_dim", hd, "rope_theta", 1000000.0, "rms_norm_eps", 1e-6, "tie_word_embeddings", true,
			"attention_bias", false, "use_sliding_window", false)
		tied, qkNorm = true, true
	case "smollm3":
		arches("SmolLM3ForCausalLM", "smollm3")
		set("rope_theta", 2000000.0, "tie_word_embeddings", true, "no_rope_layer_interval", 2)
		tied = true
	case "gemma":
		// Gemma multiplies the embedding by √hidden_size. Drawn as for the
		// other families, that would swamp what the layers add (each final
		// state within cos 0.998 of its own embedding row), so a forward
		// pass with a wrong embedding, attention or residual scale would
		// still agree with the reference. The embedding is drawn divided by
		// √hidden_size, as a trained Gemma's is small (its rows' scale
		// meets the multiplier); the tied classifier then gives logits of
		// llama's size. Gemma 2 and 3 normalize each layer's output (post
		// norms), so their layers are not swamped and are drawn as drawn.
		arches("GemmaForCausalLM", "gemma")
		d.kv = 1
		set("num_key_value_heads", 1, "head_dim", hd, "hidden_act", "gelu", "rms_norm_eps", 1e-6)
		tied, gemmaNorms = true, true
		scales = map[string]float32{"embed_tokens.weight": float32(1 / math.Sqrt(float64(d.dim)))}
	case "gemma2":
		arches("Gemma2ForCausalLM", "gemma2")
		set("head_dim", hd, "hidden_activation", "gelu_pytorch_tanh", "hidden_act", "gelu_pytorch_tanh",
			"query_pre_attn_scalar", 24, "attn_logit_softcapping", 50.0, "final_logit_softcapping", 30.0,
			"sliding_window", 32, "rms_norm_eps", 1e-6, "tie_word_embeddings", true)
		tied, gemmaNorms, sandwich = true, true, true
	case "gemma3":
		arches("Gemma3ForCausalLM", "gemma3_text")
		set("head_dim", hd, "hidden_activation", "gelu_pytorch_tanh", "query_pre_attn_scalar", 16,
			"sliding_window", 32, "sliding_window_pattern", 2, "rope_theta", 1000000.0,
			"rope_local_base_freq", 10000.0, "rope_scaling", map[string]any{"rope_type": "linear", "factor": 8.0},
			"attn_logit_softcapping", nil, "final_logit_softcapping", nil, "rms_norm_eps", 1e-6)
		tied, gemmaNorms, sandwich, qkNorm = true, true, true, true
	case "gemma3-mm":
		// A 4B-style composite config: the text part leaves most keys to the
		// Gemma3TextConfig defaults (rope_theta 1e6, local base 1e4,
		// query_pre_attn_scalar 256, eps 1e-6, pattern 6, tied embeddings).
		text = map[string]any{"model_type": "gemma3_text", "hidden_size": d.dim, "intermediate_size": d.hidden,
			"num_hidden_layers": d.layers, "num_attention_heads": d.heads, "num_key_value_heads": d.kv,
			"head_dim": hd, "sliding_window": 32, "max_position_embeddings": d.maxPos,
			"rope_scaling": map[string]any{"rope_type": "linear", "factor": 8.0}}
		cfg = map[string]any{"architectures": []string{"Gemma3ForConditionalGeneration"}, "model_type": "gemma3",
			"text_config": text, "vision_config": map[string]any{"model_type": "siglip_vision_model", "hidden_size": 32},
			"mm_tokens_per_image": 256, "boi_token_index": 255999, "eoi_token_index": 256000, "image_token_index": 262144,
			"eos_token_id": []int{EOS, EOS + 2}, "bos_token_id": EOS}
		prefix = "language_model.model."
		tied, gemmaNorms, sandwich, qkNorm = true, true, true, true
		specs = append(specs,
			tensorSpec{"vision_tower.vision_model.embeddings.patch_embedding.weight", []int{32, 3, 2, 2}, kMatrix, 0},
			tensorSpec{"multi_modal_projector.mm_input_projection_weight", []int{32, d.dim}, kMatrix, 0})
	case "qwen3_5":
		text = map[string]any{"model_type": "qwen3_5_text", "hidden_size": d.dim, "intermediate_size": d.hidden,
			"num_hidden_layers": d.layers, "num_attention_heads": d.heads, "num_key_value_heads": d.kv,
			"head_dim": hd, "max_position_embeddings": d.maxPos, "rms_norm_eps": 1e-6, "hidden_act": "silu",
			"vocab_size": d.vocab, "layer_types": []string{"linear_attention", "full_attention"},
			"linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 16,
			"linear_value_head_dim": 16, "linear_conv_kernel_dim": 4, "attn_output_gate": true,
			"attention_bias": false, "full_attention_interval": 2, "tie_word_embeddings": false,
			"rope_parameters": map[string]any{"rope_type": "default", "rope_theta": 10000000.0,
				"partial_rotary_factor": 0.25, "mrope_section": []int{1, 1, 0}, "mrope_interleaved": true}}
		cfg = map[string]any{"architectures": []string{"Qwen3_5ForConditionalGeneration"}, "model_type": "qwen3_5",
			"text_config": text, "vision_config": map[string]any{"hidden_size": 32}, "tie_word_embeddings": false,
			"eos_token_id": EOS}
		prefix = "model.language_model."
		gemmaNorms, qkNorm, qGate = true, true, true
		specs = append(specs,
			tensorSpec{"model.visual.patch_embed.proj.weight", []int{32, 3, 2, 2, 2}, kMatrix, 0},
			tensorSpec{"mtp.fc.weight", []int{d.dim, 2 * d.dim}, kMatrix, 0},
			tensorSpec{"mtp.layers.0.input_layernorm.weight", []int{d.dim}, kNormZero, 0})
	case "phi3":
		arches("Phi3ForCausalLM", "phi3")
		set("rope_theta", 10000.0, "sliding_window", 48, "tie_word_embeddings", false, "partial_rotary_factor", 1.0,
			"resid_pdrop", 0.0, "original_max_position_embeddings", d.maxPos)
		fused = true
	case "granite":
		// Granite 3's multipliers. Drawn as for the other families, the
		// embedding times 12 would swamp what the layers add times 0.22
		// (each state within cos 0.9999 of its own embedding row), and
		// scores times 1/128 would leave the attention uniform, so a
		// forward pass that got any multiplier wrong would still agree
		// with the reference. A trained model's weights offset its
		// multipliers; these are drawn so that each multiplier meets a
		// signal of the other families' size: the embedding divided by
		// embedding_multiplier, q and k times √(1/(√hd·attention_multiplier)),
		// o_proj and down_proj divided by residual_multiplier, and the final
		// norm times logits_scaling·embedding_multiplier (the tied
		// classifier reads the small embedding).
		arches("GraniteForCausalLM", "granite")
		em, am, rm, ls := 12.0, 0.0078125, 0.22, 8.0
		set("embedding_multiplier", em, "attention_multiplier", am, "residual_multiplier", rm,
			"logits_scaling", ls, "tie_word_embeddings", true, "rope_theta", 10000000.0, "attention_bias", false,
			"mlp_bias", false)
		tied = true
		qk := float32(math.Sqrt(1 / (math.Sqrt(float64(hd)) * am)))
		scales = map[string]float32{"embed_tokens.weight": float32(1 / em), "self_attn.q_proj.weight": qk,
			"self_attn.k_proj.weight": qk, "self_attn.o_proj.weight": float32(1 / rm),
			"mlp.down_proj.weight": float32(1 / rm), "norm.weight": float32(ls * em)}
	default:
		return nil, nil, nil, fmt.Errorf("hfgen: unknown architecture %q (want one of %s)", arch, strings.Join(Archs, ", "))
	}
	qdim, kvdim = d.heads*hd, d.kv*hd
	norm := kNorm
	if gemmaNorms {
		norm = kNormZero
	}
	add := func(name string, kind int, shape ...int) {
		key := name
		if strings.HasPrefix(key, "layers.") {
			key = key[strings.IndexByte(key[len("layers."):], '.')+len("layers.")+1:]
		}
		specs = append(specs, tensorSpec{prefix + name, shape, kind, scales[key]})
	}
	add("embed_tokens.weight", kEmbed, d.vocab, d.dim)
	for l := 0; l < d.layers; l++ {
		p := fmt.Sprintf("layers.%d.", l)
		add(p+"input_layernorm.weight", norm, d.dim)
		linear := qGate && l%2 == 0 // layer_types of qwen3_5 above
		switch {
		case linear:
			K, V, dk, dv, conv := 2, 4, 16, 16, 4
			c := 2*K*dk + V*dv
			add(p+"linear_attn.in_proj_qkv.weight", kMatrix, c, d.dim)
			add(p+"linear_attn.in_proj_z.weight", kMatrix, V*dv, d.dim)
			add(p+"linear_attn.in_proj_b.weight", kMatrix, V, d.dim)
			add(p+"linear_attn.in_proj_a.weight", kMatrix, V, d.dim)
			add(p+"linear_attn.conv1d.weight", kSmall, c, 1, conv)
			add(p+"linear_attn.dt_bias", kSmall, V)
			add(p+"linear_attn.A_log", kSmall, V)
			add(p+"linear_attn.norm.weight", kNorm, dv)
			add(p+"linear_attn.out_proj.weight", kMatrix, d.dim, V*dv)
		case fused:
			add(p+"self_attn.qkv_proj.weight", kMatrix, qdim+2*kvdim, d.dim)
			add(p+"self_attn.o_proj.weight", kMatrix, d.dim, qdim)
		default:
			qrows := qdim
			if qGate {
				qrows = 2 * qdim
			}
			add(p+"self_attn.q_proj.weight", kMatrix, qrows, d.dim)
			add(p+"self_attn.k_proj.weight", kMatrix, kvdim, d.dim)
			add(p+"self_attn.v_proj.weight", kMatrix, kvdim, d.dim)
			add(p+"self_attn.o_proj.weight", kMatrix, d.dim, qdim)
			if qkvBias {
				add(p+"self_attn.q_proj.bias", kBias, qdim)
				add(p+"self_attn.k_proj.bias", kBias, kvdim)
				add(p+"self_attn.v_proj.bias", kBias, kvdim)
			}
			if qkNorm {
				add(p+"self_attn.q_norm.weight", norm, hd)
				add(p+"self_attn.k_norm.weight", norm, hd)
			}
		}
		add(p+"post_attention_layernorm.weight", norm, d.dim)
		if sandwich {
			add(p+"pre_feedforward_layernorm.weight", norm, d.dim)
			add(p+"post_feedforward_layernorm.weight", norm, d.dim)
		}
		if fused {
			add(p+"mlp.gate_up_proj.weight", kMatrix, 2*d.hidden, d.dim)
		} else {
			add(p+"mlp.gate_proj.weight", kMatrix, d.hidden, d.dim)
			add(p+"mlp.up_proj.weight", kMatrix, d.hidden, d.dim)
		}
		add(p+"mlp.down_proj.weight", kMatrix, d.dim, d.hidden)
	}
	add("norm.weight", norm, d.dim)
	if !tied {
		specs = append(specs, tensorSpec{"lm_head.weight", []int{d.vocab, d.dim}, kMatrix, 0})
	}
	return cfg, text, specs, nil
}

// rng is xorshift64*: fast, and the same numbers on every machine.
type rng uint64

func (r *rng) next() uint64 {
	x := uint64(*r)
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	*r = rng(x)
	return x * 2685821657736338717
}

// uniform returns a float in [-1, 1).
func (r *rng) uniform() float32 { return float32(int32(r.next()>>32)) / (1 << 31) }

func seedFor(seed uint64, name string) rng {
	h := fnv.New64a()
	h.Write([]byte(name))
	s := h.Sum64() ^ (seed * 0x9E3779B97F4A7C15)
	if s == 0 {
		s = 1
	}
	return rng(s)
}

// values fills v with the random values of a tensor, continuing r.
func values(v []float32, kind int, cols int, r *rng) {
	for i := range v {
		u := r.uniform()
		switch kind {
		case kMatrix:
			v[i] = u / float32(math.Sqrt(float64(cols)))
		case kEmbed:
			v[i] = u
		case kNorm:
			v[i] = 1 + 0.2*u
		case kNormZero:
			v[i] = 0.2 * u
		case kBias:
			v[i] = 0.1 * u
		default:
			v[i] = 0.5 * u
		}
	}
}

func elems(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// writeWeights writes the tensors into one file or n shards, generating the
// values chunk by chunk so that memory stays small for the full-size shapes.
func writeWeights(ctx context.Context, dir string, specs []tensorSpec, dt string, seed uint64, shards int) error {
	size := map[string]int{"bf16": 2, "f16": 2, "f32": 4}[dt]
	stName := map[string]string{"bf16": "BF16", "f16": "F16", "f32": "F32"}[dt]
	total := 0
	for _, s := range specs {
		total += elems(s.shape) * size
	}
	if shards < 1 {
		shards = 1
	}
	if shards > len(specs) {
		shards = len(specs)
	}
	// Contiguous groups of about total/shards bytes.
	groups := make([][]tensorSpec, 0, shards)
	cur, acc := []tensorSpec{}, 0
	for i, s := range specs {
		cur = append(cur, s)
		acc += elems(s.shape) * size
		left := len(specs) - i - 1
		if len(groups) < shards-1 && (acc >= total*(len(groups)+1)/shards || left == shards-1-len(groups)) {
			groups = append(groups, cur)
			cur = nil
		}
	}
	if len(cur) > 0 {
		groups = append(groups, cur)
	}
	weightMap := map[string]string{}
	for gi, g := range groups {
		name := "model.safetensors"
		if len(groups) > 1 {
			name = fmt.Sprintf("model-%05d-of-%05d.safetensors", gi+1, len(groups))
		}
		for _, s := range g {
			weightMap[s.name] = name
		}
		if err := writeFile(ctx, filepath.Join(dir, name), g, stName, size, seed); err != nil {
			return err
		}
	}
	if len(groups) > 1 {
		idx := map[string]any{"metadata": map[string]any{"total_size": total}, "weight_map": weightMap}
		b, _ := json.MarshalIndent(idx, "", "  ")
		return os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), b, 0o644)
	}
	return nil
}

func writeFile(ctx context.Context, path string, specs []tensorSpec, stName string, size int, seed uint64) error {
	// The header is a JSON object; encoding/json sorts map keys, which is
	// what the Python writer does too, so the data follows that order.
	sorted := append([]tensorSpec(nil), specs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	hdr := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	off := 0
	for _, s := range sorted {
		n := elems(s.shape) * size
		hdr[s.name] = map[string]any{"dtype": stName, "shape": s.shape, "data_offsets": []int{off, off + n}}
		off += n
	}
	hb, err := json.Marshal(hdr)
	if err != nil {
		return err
	}
	for len(hb)%8 != 0 {
		hb = append(hb, ' ')
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	defer f.Abort() // after Commit: nothing
	w := bufio.NewWriterSize(f, 1<<20)
	var lb [8]byte
	binary.LittleEndian.PutUint64(lb[:], uint64(len(hb)))
	w.Write(lb[:])
	w.Write(hb)
	buf := make([]float32, 1<<16)
	out := make([]byte, len(buf)*size)
	for _, s := range sorted {
		r := seedFor(seed, s.name)
		cols := 1
		if len(s.shape) > 1 {
			cols = elems(s.shape[1:])
		}
		for left := elems(s.shape); left > 0; {
			if err := ctx.Err(); err != nil {
				return err
			}
			n := min(left, len(buf))
			values(buf[:n], s.kind, cols, &r)
			if s.scale != 0 {
				for i := range buf[:n] {
					buf[i] *= s.scale
				}
			}
			encode(out[:n*size], buf[:n], stName)
			if _, err := w.Write(out[:n*size]); err != nil {
				return err
			}
			left -= n
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Commit(nil)
}

func encode(dst []byte, v []float32, dt string) {
	switch dt {
	case "F32":
		for i, x := range v {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(x))
		}
	case "F16":
		for i, x := range v {
			binary.LittleEndian.PutUint16(dst[2*i:], float16.Fromfloat32(x).Bits())
		}
	case "BF16":
		for i, x := range v {
			b := math.Float32bits(x)
			b += 0x7fff + (b>>16)&1 // round to nearest even (values are finite)
			binary.LittleEndian.PutUint16(dst[2*i:], uint16(b>>16))
		}
	}
}

// EmbeddingPoolings lists the values of Options.Embedding.
var EmbeddingPoolings = []string{"last", "mean", "cls", "max"}

// headModels maps the causal-LM class of each plain architecture to its
// head-less class (what AutoModel saves).
var headModels = map[string]string{
	"LlamaForCausalLM": "LlamaModel", "MistralForCausalLM": "MistralModel", "Qwen2ForCausalLM": "Qwen2Model",
	"Qwen3ForCausalLM": "Qwen3Model", "SmolLM3ForCausalLM": "SmolLM3Model", "GemmaForCausalLM": "GemmaModel",
	"Gemma2ForCausalLM": "Gemma2Model", "Gemma3ForCausalLM": "Gemma3TextModel", "Phi3ForCausalLM": "Phi3Model",
	"GraniteForCausalLM": "GraniteModel",
}

// headLess turns a causal-LM checkpoint into the head-less one AutoModel
// saves: the *Model class, names without "model.", no lm_head.
func headLess(arch string, cfg map[string]any, specs []tensorSpec, pooling string) ([]tensorSpec, error) {
	ok := false
	for _, p := range EmbeddingPoolings {
		ok = ok || p == pooling
	}
	if !ok {
		return nil, fmt.Errorf("hfgen: embedding pooling %q (want one of %s)", pooling, strings.Join(EmbeddingPoolings, ", "))
	}
	a, _ := cfg["architectures"].([]string)
	if len(a) != 1 || headModels[a[0]] == "" {
		return nil, fmt.Errorf("hfgen: %s has no head-less embedding form here (composite checkpoints do not)", arch)
	}
	cfg["architectures"] = []string{headModels[a[0]]}
	out := specs[:0]
	for _, s := range specs {
		if s.name == "lm_head.weight" {
			continue
		}
		s.name = strings.TrimPrefix(s.name, "model.")
		out = append(out, s)
	}
	return out, nil
}

// writeSentenceTransformers writes the module list, the pooling config and
// the prompts of a sentence-transformers checkpoint, as Qwen3-Embedding's.
func writeSentenceTransformers(dir, pooling string, includePrompt bool, dim int) error {
	files := map[string]any{
		"modules.json": []map[string]any{
			{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
			{"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
			{"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
		},
		"1_Pooling/config.json": map[string]any{
			"word_embedding_dimension": dim, "pooling_mode_cls_token": pooling == "cls",
			"pooling_mode_mean_tokens": pooling == "mean", "pooling_mode_max_tokens": pooling == "max",
			"pooling_mode_mean_sqrt_len_tokens": false, "pooling_mode_weightedmean_tokens": false,
			"pooling_mode_lasttoken": pooling == "last", "include_prompt": includePrompt,
		},
		"config_sentence_transformers.json": map[string]any{
			"prompts": map[string]string{
				"query":    "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:",
				"document": "",
			},
			"default_prompt_name": nil, "similarity_fn_name": "cosine",
		},
	}
	for name, v := range files {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
