package convert

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/quantize"
)

func TestRefusals(t *testing.T) {
	moe := map[string]any{"architectures": []string{"MixtralForCausalLM"}, "model_type": "mixtral"}
	tests := []struct {
		name string
		arch string
		gen  hfgen.Options
		opt  Options
		want []string // all must appear in the error
	}{
		{"mixtral", "llama", hfgen.Options{Config: moe}, Options{}, []string{"MixtralForCausalLM", "mixture of experts"}},
		{"qwen3-next", "llama", hfgen.Options{Config: map[string]any{"architectures": []string{"Qwen3NextForCausalLM"}, "model_type": "qwen3_next"}},
			Options{}, []string{"Qwen3NextForCausalLM", "mixture of experts"}},
		{"olmo2", "llama", hfgen.Options{Config: map[string]any{"architectures": []string{"Olmo2ForCausalLM"}, "model_type": "olmo2"}},
			Options{}, []string{"olmo2", "post-norm"}},
		{"unknown", "llama", hfgen.Options{Config: map[string]any{"architectures": []string{"FooForCausalLM"}, "model_type": "foo"}},
			Options{}, []string{"FooForCausalLM", "not supported"}},
		{"experts key", "llama", hfgen.Options{Config: map[string]any{"num_local_experts": 8}}, Options{}, []string{"num_local_experts", "mixture of experts"}},
		{"attention_bias", "llama", hfgen.Options{Config: map[string]any{"attention_bias": true}}, Options{}, []string{"attention_bias", "o_proj"}},
		{"mlp_bias", "granite", hfgen.Options{Config: map[string]any{"mlp_bias": true}}, Options{}, []string{"mlp_bias"}},
		{"gelu llama", "llama", hfgen.Options{Config: map[string]any{"hidden_act": "gelu"}}, Options{}, []string{"hidden_act", "gelu"}},
		{"dynamic rope", "llama", hfgen.Options{Config: map[string]any{"rope_scaling": map[string]any{"type": "dynamic", "factor": 2.0}}},
			Options{}, []string{"rope_scaling", "dynamic"}},
		{"longrope", "phi3", hfgen.Options{Config: map[string]any{"rope_scaling": map[string]any{"type": "longrope", "short_factor": []float64{1}}}},
			Options{}, []string{"rope_scaling", "longrope"}},
		{"yarn truncate", "llama", hfgen.Options{Config: map[string]any{"rope_scaling": map[string]any{"rope_type": "yarn", "factor": 4.0, "truncate": false}}},
			Options{}, []string{"truncate"}},
		{"local rope scaling", "gemma3", hfgen.Options{Config: map[string]any{"rope_parameters": map[string]any{
			"full_attention":    map[string]any{"rope_type": "default", "rope_theta": 1e6},
			"sliding_attention": map[string]any{"rope_type": "linear", "factor": 2.0, "rope_theta": 1e4}}}},
			Options{}, []string{"sliding_attention", "linear"}},
		{"bidirectional", "gemma3", hfgen.Options{Config: map[string]any{"use_bidirectional_attention": true}}, Options{}, []string{"bidirectional"}},
		{"quantization_config", "qwen2", hfgen.Options{Config: map[string]any{"quantization_config": map[string]any{"quant_method": "gptq"}}},
			Options{}, []string{"quantization_config", "dequantize"}},
		{"fp8 scales", "llama", hfgen.Options{Extra: map[string][]int{"model.layers.0.mlp.down_proj.weight_scale": {1}}},
			Options{}, []string{"weight_scale", "pre-quantized"}},
		{"o_proj bias", "llama", hfgen.Options{Extra: map[string][]int{"model.layers.1.self_attn.o_proj.bias": {64}}},
			Options{}, []string{"model.layers.1.self_attn.o_proj.bias", "not used"}},
		{"expert tensor", "qwen3", hfgen.Options{Extra: map[string][]int{"model.layers.0.mlp.experts.0.up_proj.weight": {128, 64}}},
			Options{}, []string{"experts.0.up_proj", "not used"}},
		{"missing layer", "llama", hfgen.Options{Config: map[string]any{"num_hidden_layers": 3}}, Options{}, []string{"layers.2.", "missing"}},
		{"shape", "mistral", hfgen.Options{Config: map[string]any{"intermediate_size": 96}}, Options{}, []string{"mlp.gate_proj.weight", "shape"}},
		{"bad layer_types", "qwen3_5", hfgen.Options{Config: map[string]any{"layer_types": []string{"linear_attention", "chunked_attention"}}},
			Options{}, []string{"layer_types", "chunked_attention"}},
		{"zero sliding_window_pattern", "gemma3", hfgen.Options{DeleteConfig: []string{"layer_types"}, Config: map[string]any{"sliding_window_pattern": 0}},
			Options{}, []string{"sliding_window_pattern", "> 0"}},
		{"zero full_attention_interval", "qwen3_5", hfgen.Options{DeleteConfig: []string{"layer_types"}, Config: map[string]any{"full_attention_interval": 0}},
			Options{}, []string{"full_attention_interval", "> 0"}},
		{"zero no_rope_layer_interval", "smollm3", hfgen.Options{DeleteConfig: []string{"no_rope_layers"}, Config: map[string]any{"no_rope_layer_interval": 0}},
			Options{}, []string{"no_rope_layer_interval", "> 0"}},
		{"q8 mask on q8_0", "llama", hfgen.Options{}, Options{Q8Mask: 1}, []string{"Q4_0"}},
		{"q4 rule", "llama", hfgen.Options{}, Options{Type: quantize.TypeQ4_0, Q4Rule: "nearest"}, []string{"nearest"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := hfgen.Write(dir, tc.arch, tc.gen); err != nil {
				t.Fatal(err)
			}
			tc.opt.Out = filepath.Join(t.TempDir(), "out.mlb")
			tc.opt.NoTokenizer = true
			_, err := Convert(context.Background(), dir, tc.opt)
			if err == nil {
				t.Fatalf("got nil error, want one containing %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want it to contain %q", err, w)
				}
			}
			if _, serr := os.Stat(tc.opt.Out); !errors.Is(serr, os.ErrNotExist) {
				t.Errorf("output exists after a refusal: %v", serr)
			}
			left, _ := os.ReadDir(filepath.Dir(tc.opt.Out)) // temporary files included
			if len(left) != 0 {
				t.Errorf("files left behind: %v", left)
			}
		})
	}
}

func TestRefuseDType(t *testing.T) {
	for _, dt := range []string{"F64", "I8", "F8_E4M3"} {
		t.Run(dt, func(t *testing.T) {
			dir := t.TempDir()
			if err := hfgen.Write(dir, "llama", hfgen.Options{}); err != nil {
				t.Fatal(err)
			}
			// Replace the weights by a file whose embedding has another dtype.
			n := 320 * 64 * dtypeSizes[dt]
			hdr := `{"model.embed_tokens.weight":{"dtype":"` + dt + `","shape":[320,64],"data_offsets":[0,` + itoa(n) + `]}}`
			b := make([]byte, 8, 8+len(hdr)+n)
			binary.LittleEndian.PutUint64(b, uint64(len(hdr)))
			b = append(append(b, hdr...), make([]byte, n)...)
			if err := os.WriteFile(filepath.Join(dir, "model.safetensors"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Convert(context.Background(), dir, Options{Out: filepath.Join(t.TempDir(), "o.mlb"), NoTokenizer: true})
			if err == nil || !strings.Contains(err.Error(), dt) || !strings.Contains(err.Error(), "model.embed_tokens.weight") {
				t.Errorf("got %v, want an error naming %s and the tensor", err, dt)
			}
		})
	}
}

func itoa(n int) string {
	s := ""
	for {
		s = string(rune('0'+n%10)) + s
		n /= 10
		if n == 0 {
			return s
		}
	}
}

func TestParseQ8Classes(t *testing.T) {
	tests := []struct {
		in   string
		want uint32
		err  bool
	}{
		{"", 0, false}, {"tok_emb", 1, false}, {"wcls,wqk", 6, false}, {"wv, wo,w13,w2", 8 | 16 | 32 | 64, false}, {"wq", 0, true},
	}
	for _, tc := range tests {
		got, err := ParseQ8Classes(tc.in)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("ParseQ8Classes(%q): got %d, %v, want %d, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// An output folder that does not exist is an I/O error that names the
// output, not a header that "does not validate", and the config.json of a
// checkpoint that is not JSON is called invalid JSON.
func TestOutputAndConfigErrors(t *testing.T) {
	dir := t.TempDir()
	if err := hfgen.Write(dir, "llama", hfgen.Options{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "missing", "o.mlb")
	_, err := Convert(context.Background(), dir, Options{Out: out, NoTokenizer: true})
	if !errors.Is(err, mlb.ErrIO) || !strings.Contains(err.Error(), out) || strings.Contains(err.Error(), "does not validate") {
		t.Errorf("missing output folder: got %v, want an ML_E_IO error naming %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"architectures": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Convert(context.Background(), dir, Options{Out: filepath.Join(t.TempDir(), "o.mlb"), NoTokenizer: true})
	if err == nil || !strings.Contains(err.Error(), "config.json: invalid JSON") {
		t.Errorf("truncated config.json: got %v, want \"config.json: invalid JSON\"", err)
	}
}
