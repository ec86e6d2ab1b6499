package convert

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/mlb"
)

// TestConfigVariants checks header fields for config spellings and
// defaults the plain hfgen configs do not use (ARCHITECTURES.md 1–3, 6).
func TestConfigVariants(t *testing.T) {
	tests := []struct {
		name  string
		arch  string
		gen   hfgen.Options
		check func(h *mlb.Header) string
	}{
		{"gemma3 nested rope_parameters", "gemma3", hfgen.Options{DeleteConfig: []string{"rope_theta", "rope_local_base_freq", "rope_scaling"},
			Config: map[string]any{"rope_parameters": map[string]any{
				"full_attention":    map[string]any{"rope_type": "linear", "factor": 8.0, "rope_theta": 2e6},
				"sliding_attention": map[string]any{"rope_type": "default", "rope_theta": 5e4}}}},
			func(h *mlb.Header) string {
				return cmp(h.RopeTheta, 2e6, h.RopeLocalTheta, 5e4, h.RopeType, mlb.RopeLinear, h.RopeFactor, 8)
			}},
		{"llama v5 rope_parameters", "llama", hfgen.Options{DeleteConfig: []string{"rope_theta"}, Config: map[string]any{
			"rope_parameters": map[string]any{"rope_type": "llama3", "rope_theta": 5e5, "factor": 8.0, "low_freq_factor": 1.0,
				"high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}},
			func(h *mlb.Header) string {
				return cmp(h.RopeTheta, 5e5, h.RopeType, mlb.RopeLlama3, h.RopeFactor, 8, h.RopeOrigMaxSeq, 8192)
			}},
		{"llama absent rope_theta and eps", "llama", hfgen.Options{DeleteConfig: []string{"rope_theta", "rms_norm_eps"}},
			func(h *mlb.Header) string { return cmp(h.RopeTheta, 10000, h.NormEps, float32(1e-6)) }},
		{"mistral window null", "mistral", hfgen.Options{Config: map[string]any{"sliding_window": nil}},
			func(h *mlb.Header) string { return cmp(h.SlidingWindow, 0) }},
		{"mistral window absent", "mistral", hfgen.Options{DeleteConfig: []string{"sliding_window"}},
			func(h *mlb.Header) string { return cmp(h.SlidingWindow, 4096, h.LayerFlags, 0) }},
		{"mistral layer_types", "mistral", hfgen.Options{Config: map[string]any{"layer_types": []string{"sliding_attention", "full_attention"}}},
			func(h *mlb.Header) string { return cmp(h.LayerFlags, 1, h.Flags[0], mlb.FlagSliding, h.Flags[1], 0) }},
		{"qwen2 sliding layers", "qwen2", hfgen.Options{Config: map[string]any{"use_sliding_window": true}},
			func(h *mlb.Header) string {
				return cmp(h.SlidingWindow, 32, h.Flags[0], 0, h.Flags[1], mlb.FlagSliding) // max_window_layers 1
			}},
		{"qwen3 yarn explicit factor", "qwen3", hfgen.Options{Config: map[string]any{"max_position_embeddings": 40960,
			"rope_scaling": map[string]any{"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}},
			func(h *mlb.Header) string {
				return cmp(h.RopeFactor, 4, h.RopeOrigMaxSeq, 32768, h.RopeAttnFactor, float32(0.1*math.Log(4)+1), h.MaxSeq, 40960)
			}},
		{"yarn null factor", "llama", hfgen.Options{Config: map[string]any{"max_position_embeddings": 4096,
			"rope_scaling": map[string]any{"rope_type": "yarn", "factor": nil, "original_max_position_embeddings": 1024, "beta_fast": 16.0, "beta_slow": 2.0}}},
			func(h *mlb.Header) string {
				return cmp(h.RopeFactor, 4, h.RopeLowFreqFactor, 16, h.RopeHighFreqFactor, 2)
			}},
		{"yarn mscale ratio", "llama", hfgen.Options{Config: map[string]any{
			"rope_scaling": map[string]any{"rope_type": "yarn", "factor": 40.0, "original_max_position_embeddings": 64, "mscale": 1.0, "mscale_all_dim": 0.5}}},
			func(h *mlb.Header) string {
				want := (0.1*math.Log(40) + 1) / (0.05*math.Log(40) + 1)
				return cmp(h.RopeAttnFactor, float32(want))
			}},
		{"yarn attention_factor", "llama", hfgen.Options{Config: map[string]any{
			"rope_scaling": map[string]any{"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 64, "attention_factor": 1.5}}},
			func(h *mlb.Header) string { return cmp(h.RopeAttnFactor, 1.5) }},
		{"smollm3 no_rope_layers", "smollm3", hfgen.Options{Config: map[string]any{"no_rope_layers": []int{0, 1}}},
			func(h *mlb.Header) string { return cmp(h.Flags[0], mlb.FlagNoRoPE, h.Flags[1], 0) }},
		{"smollm3 sliding NoPE layers", "smollm3", hfgen.Options{Config: map[string]any{"use_sliding_window": true, "sliding_window": 16}},
			func(h *mlb.Header) string {
				return cmp(h.SlidingWindow, 16, h.Flags[0], 0, h.Flags[1], mlb.FlagNoRoPE|mlb.FlagSliding)
			}},
		{"qwen3_5 interval", "qwen3_5", hfgen.Options{DeleteConfig: []string{"layer_types"}},
			func(h *mlb.Header) string { return cmp(h.Flags[0], mlb.FlagLinear, h.Flags[1], 0) }},
		{"qwen3_5 top-level partial_rotary_factor", "qwen3_5", hfgen.Options{Config: map[string]any{"partial_rotary_factor": 0.5}},
			func(h *mlb.Header) string { return cmp(h.RotDim, 8) }},
		{"gemma2 layer_types", "gemma2", hfgen.Options{Config: map[string]any{"layer_types": []string{"full_attention", "sliding_attention"}}},
			func(h *mlb.Header) string { return cmp(h.Flags[0], 0, h.Flags[1], mlb.FlagSliding) }},
		{"gemma2 default pattern", "gemma2", hfgen.Options{DeleteConfig: []string{"layer_types"}},
			func(h *mlb.Header) string { return cmp(h.Flags[0], mlb.FlagSliding, h.Flags[1], 0) }},
		{"gemma3 sliding_window_pattern", "gemma3", hfgen.Options{DeleteConfig: []string{"layer_types"}, Config: map[string]any{"sliding_window_pattern": 2}},
			func(h *mlb.Header) string { return cmp(h.Flags[0], mlb.FlagSliding|mlb.FlagLocalRoPE, h.Flags[1], 0) }},
		{"gemma3 pattern longer than the model", "gemma3", hfgen.Options{DeleteConfig: []string{"layer_types"}, Config: map[string]any{"sliding_window_pattern": 6}},
			func(h *mlb.Header) string {
				return cmp(h.Flags[0], mlb.FlagSliding|mlb.FlagLocalRoPE, h.Flags[1], mlb.FlagSliding|mlb.FlagLocalRoPE)
			}},
		{"gemma2 null softcaps", "gemma2", hfgen.Options{Config: map[string]any{"attn_logit_softcapping": nil, "final_logit_softcapping": nil}},
			func(h *mlb.Header) string { return cmp(h.AttnSoftcap, 0, h.FinalSoftcap, 0) }},
		{"gemma2 default softcaps", "gemma2", hfgen.Options{DeleteConfig: []string{"attn_logit_softcapping", "final_logit_softcapping", "query_pre_attn_scalar"}},
			func(h *mlb.Header) string {
				return cmp(h.AttnSoftcap, 50, h.FinalSoftcap, 30, h.AttnScale, float32(1.0/16))
			}},
		{"gemma hidden_act ignored", "gemma", hfgen.Options{Config: map[string]any{"hidden_act": "relu"}},
			func(h *mlb.Header) string { return cmp(h.Act, mlb.ActGELU) }},
		{"tied with lm_head present", "llama3", hfgen.Options{Extra: map[string][]int{"lm_head.weight": {320, 64}}},
			func(h *mlb.Header) string { return cmp(h.SharedClassifier, 1) }},
		{"untied without lm_head", "granite", hfgen.Options{Config: map[string]any{"tie_word_embeddings": false}},
			func(h *mlb.Header) string { return cmp(h.SharedClassifier, 1) }},
		{"max_seq capped", "llama", hfgen.Options{Config: map[string]any{"max_position_embeddings": 1 << 25}},
			func(h *mlb.Header) string { return cmp(h.MaxSeq, 1<<24) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := hfgen.Write(dir, tc.arch, tc.gen); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "o.mlb")
			rep, err := Convert(context.Background(), dir, Options{Out: out, NoTokenizer: true})
			if err != nil {
				t.Fatal(err)
			}
			if msg := tc.check(&rep.Header); msg != "" {
				t.Error(msg)
			}
			if strings.Contains(tc.name, "lm_head present") && len(rep.Warnings) == 0 {
				t.Errorf("got no warning for an ignored lm_head.weight")
			}
		})
	}
}
