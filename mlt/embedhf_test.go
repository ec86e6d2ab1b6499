package mlt

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReadHFEmbed(t *testing.T) {
	modules := func(types ...string) []any {
		var out []any
		for i, ty := range types {
			p := ""
			if strings.HasSuffix(ty, "Pooling") {
				p = "1_Pooling"
			}
			out = append(out, map[string]any{"idx": i, "name": "x", "path": p, "type": "sentence_transformers.models." + ty})
		}
		return out
	}
	pool := func(mode string, extra ...any) map[string]any {
		m := map[string]any{"word_embedding_dimension": 64, "pooling_mode_cls_token": false, "pooling_mode_mean_tokens": false,
			"pooling_mode_max_tokens": false, "pooling_mode_lasttoken": false, "include_prompt": true}
		m[mode] = true
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i].(string)] = extra[i+1]
		}
		return m
	}
	qwen := map[string]any{"prompts": map[string]string{"query": "Instruct: x\nQuery:", "document": ""}, "default_prompt_name": nil}
	for _, tc := range []struct {
		name  string
		files map[string]any
		want  *Embed
		err   string
	}{
		{"none", nil, nil, ""},
		{"qwen3-embedding", map[string]any{"modules.json": modules("Transformer", "Pooling", "Normalize"),
			"1_Pooling/config.json": pool("pooling_mode_lasttoken"), "config_sentence_transformers.json": qwen},
			&Embed{Pooling: PoolLast, Normalize: true, Prompts: []NamedPrompt{{"document", ""}, {"query", "Instruct: x\nQuery:"}}}, ""},
		{"no normalize module", map[string]any{"modules.json": modules("Transformer", "Pooling"), "1_Pooling/config.json": pool("pooling_mode_cls_token")},
			&Embed{Pooling: PoolCLS}, ""},
		{"prompts only", map[string]any{"config_sentence_transformers.json": map[string]any{"prompts": map[string]string{"q": "query: "}, "default_prompt_name": "q"}},
			&Embed{Pooling: PoolMean, Normalize: true, Prompts: []NamedPrompt{{"q", "query: "}}, DefaultPrompt: "q"}, ""},
		{"dense", map[string]any{"modules.json": modules("Transformer", "Pooling", "Dense"), "1_Pooling/config.json": pool("pooling_mode_mean_tokens")},
			nil, `module 2 is "sentence_transformers.models.Dense"`},
		{"max pooling", map[string]any{"modules.json": modules("Transformer", "Pooling", "Normalize"), "1_Pooling/config.json": pool("pooling_mode_max_tokens")},
			&Embed{Pooling: PoolMax, Normalize: true}, ""},
		{"weightedmean", map[string]any{"modules.json": modules("Transformer", "Pooling"), "1_Pooling/config.json": pool("pooling_mode_weightedmean_tokens")},
			nil, "pooling_mode_weightedmean_tokens is not supported"},
		{"mean_sqrt_len", map[string]any{"modules.json": modules("Transformer", "Pooling"), "1_Pooling/config.json": pool("pooling_mode_mean_sqrt_len_tokens")},
			nil, "pooling_mode_mean_sqrt_len_tokens is not supported"},
		{"no mode keys", map[string]any{"modules.json": modules("Transformer", "Pooling"), "1_Pooling/config.json": map[string]any{"word_embedding_dimension": 64}},
			&Embed{Pooling: PoolMean}, ""},
		{"all modes false", map[string]any{"modules.json": modules("Transformer", "Pooling"), "1_Pooling/config.json": map[string]any{"pooling_mode_cls_token": false}},
			nil, "no pooling_mode_* is true"},
		{"st5 pooling_mode", map[string]any{"modules.json": modules("Transformer", "Pooling"),
			"1_Pooling/config.json": map[string]any{"embedding_dimension": 64, "pooling_mode": "max", "include_prompt": false}},
			&Embed{Pooling: PoolMax, ExcludePrompt: true}, ""},
		{"st5 pooling_mode list", map[string]any{"modules.json": modules("Transformer", "Pooling"),
			"1_Pooling/config.json": map[string]any{"embedding_dimension": 64, "pooling_mode": []string{"lasttoken"}, "pooling_mode_cls_token": true}},
			&Embed{Pooling: PoolLast}, ""},
		{"st5 two modes", map[string]any{"modules.json": modules("Transformer", "Pooling"),
			"1_Pooling/config.json": map[string]any{"pooling_mode": []string{"mean", "max"}}},
			nil, "several modes at once"},
		{"st5 unknown mode", map[string]any{"modules.json": modules("Transformer", "Pooling"),
			"1_Pooling/config.json": map[string]any{"pooling_mode": "weightedmean"}},
			nil, `pooling_mode "weightedmean" is not supported`},
		{"st5 mode not a string", map[string]any{"modules.json": modules("Transformer", "Pooling"),
			"1_Pooling/config.json": map[string]any{"pooling_mode": 3}},
			nil, "pooling_mode is 3, not a mode name"},
		{"two modes", map[string]any{"modules.json": modules("Transformer", "Pooling"), "1_Pooling/config.json": pool("pooling_mode_cls_token", "pooling_mode_mean_tokens", true)},
			nil, "several pooling modes"},
		{"include_prompt false", map[string]any{"modules.json": modules("Transformer", "Pooling", "Normalize"), "1_Pooling/config.json": pool("pooling_mode_mean_tokens", "include_prompt", false)},
			&Embed{Pooling: PoolMean, Normalize: true, ExcludePrompt: true}, ""},
		{"include_prompt false with cls", map[string]any{"modules.json": modules("Transformer", "Pooling"), "1_Pooling/config.json": pool("pooling_mode_cls_token", "include_prompt", false)},
			nil, "include_prompt false with cls pooling"},
		{"include_prompt not a bool", map[string]any{"modules.json": modules("Transformer", "Pooling"), "1_Pooling/config.json": pool("pooling_mode_mean_tokens", "include_prompt", "no")},
			nil, "include_prompt is no, not a bool"},
		{"pooling config missing", map[string]any{"modules.json": modules("Transformer", "Pooling")}, nil, "1_Pooling/config.json"},
		{"unknown default prompt", map[string]any{"config_sentence_transformers.json": map[string]any{"prompts": map[string]string{}, "default_prompt_name": "q"}},
			nil, `default prompt "q" is not one of the prompts`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, v := range tc.files {
				b, _ := json.Marshal(v)
				p := filepath.Join(dir, filepath.FromSlash(name))
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := ReadHFEmbed(dir)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %+v, %v; want an error containing %q", got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
