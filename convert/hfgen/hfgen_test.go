package hfgen_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/krafla/krafla/convert"
	"github.com/krafla/krafla/convert/hfgen"
)

func TestWriteEveryArch(t *testing.T) {
	for _, arch := range hfgen.Archs {
		t.Run(arch, func(t *testing.T) {
			dir := t.TempDir()
			if err := hfgen.Write(dir, arch, hfgen.Options{Seed: 1}); err != nil {
				t.Fatal(err)
			}
			ck, err := convert.OpenCheckpoint(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer ck.Close()
			if len(ck.Names) < 10 {
				t.Errorf("got %d tensors, want at least 10", len(ck.Names))
			}
			for _, n := range ck.Names {
				if ck.Tensors[n].DType != "BF16" {
					t.Errorf("%s: got dtype %s, want BF16", n, ck.Tensors[n].DType)
				}
			}
			var cfg map[string]any
			b, err := os.ReadFile(filepath.Join(dir, "config.json"))
			if err != nil || json.Unmarshal(b, &cfg) != nil {
				t.Fatalf("config.json: %v", err)
			}
			if a, ok := cfg["architectures"].([]any); !ok || len(a) != 1 {
				t.Errorf("architectures: got %v, want one name", cfg["architectures"])
			}
		})
	}
}

func TestTokenizer(t *testing.T) {
	dir := t.TempDir()
	if err := hfgen.Write(dir, "llama", hfgen.Options{}); err != nil {
		t.Fatal(err)
	}
	var tok struct {
		Model struct {
			Vocab  map[string]int `json:"vocab"`
			Merges []string       `json:"merges"`
		} `json:"model"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err := json.Unmarshal(b, &tok); err != nil {
		t.Fatal(err)
	}
	if got := len(tok.Model.Vocab); got != hfgen.TokenizerSize {
		t.Errorf("vocab: got %d tokens, want %d", got, hfgen.TokenizerSize)
	}
	ids := map[int]bool{}
	for _, id := range tok.Model.Vocab {
		if id < 0 || id >= hfgen.TokenizerSize || ids[id] {
			t.Errorf("id %d out of range or repeated", id)
		}
		ids[id] = true
	}
	// Every merge joins two tokens of the vocabulary into a third.
	for _, m := range tok.Model.Merges {
		var l, r string
		for i := 0; i < len(m); i++ {
			if m[i] == ' ' {
				l, r = m[:i], m[i+1:]
			}
		}
		if _, ok := tok.Model.Vocab[l]; !ok {
			t.Errorf("merge %q: left not in vocab", m)
		}
		if _, ok := tok.Model.Vocab[r]; !ok {
			t.Errorf("merge %q: right not in vocab", m)
		}
		if _, ok := tok.Model.Vocab[l+r]; !ok {
			t.Errorf("merge %q: result not in vocab", m)
		}
	}
}

func TestDeterministicAndSharded(t *testing.T) {
	one, two, other, sh := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	for _, c := range []struct {
		dir string
		opt hfgen.Options
	}{{one, hfgen.Options{Seed: 7}}, {two, hfgen.Options{Seed: 7}}, {other, hfgen.Options{Seed: 8}}, {sh, hfgen.Options{Seed: 7, Shards: 3}}} {
		if err := hfgen.Write(c.dir, "qwen2", c.opt); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := os.ReadFile(filepath.Join(one, "model.safetensors"))
	b, _ := os.ReadFile(filepath.Join(two, "model.safetensors"))
	c, _ := os.ReadFile(filepath.Join(other, "model.safetensors"))
	if !bytes.Equal(a, b) {
		t.Errorf("same seed: files differ")
	}
	if bytes.Equal(a, c) {
		t.Errorf("different seeds: files equal")
	}
	ck1, err := convert.OpenCheckpoint(one)
	if err != nil {
		t.Fatal(err)
	}
	defer ck1.Close()
	ck3, err := convert.OpenCheckpoint(sh)
	if err != nil {
		t.Fatal(err)
	}
	defer ck3.Close()
	if len(ck3.Files) != 3 {
		t.Errorf("shards: got %d files, want 3", len(ck3.Files))
	}
	if len(ck1.Names) != len(ck3.Names) {
		t.Fatalf("tensors: got %d sharded, want %d", len(ck3.Names), len(ck1.Names))
	}
	for _, n := range ck1.Names {
		x, _ := ck1.Tensors[n].F32()
		y, err := ck3.Tensors[n].F32()
		if err != nil || len(x) != len(y) {
			t.Fatalf("%s: %v", n, err)
		}
		for i := range x {
			if x[i] != y[i] {
				t.Fatalf("%s[%d]: got %v sharded, want %v", n, i, y[i], x[i])
			}
		}
	}
}

func TestOptions(t *testing.T) {
	dir := t.TempDir()
	if err := hfgen.Write(dir, "nope", hfgen.Options{}); err == nil {
		t.Errorf("unknown arch: got nil error")
	}
	if err := hfgen.Write(dir, "gemma", hfgen.Options{Shape: "llama-3.2-1b"}); err == nil {
		t.Errorf("big shape for gemma: got nil error")
	}
	if err := hfgen.Write(dir, "llama", hfgen.Options{DType: "f64"}); err == nil {
		t.Errorf("f64: got nil error")
	}
	if err := hfgen.Write(dir, "llama", hfgen.Options{DType: "f16", Config: map[string]any{"mlp_bias": true},
		DeleteConfig: []string{"rope_theta"}, Extra: map[string][]int{"model.layers.0.mlp.down_proj.bias": {64}}}); err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	b, _ := os.ReadFile(filepath.Join(dir, "config.json"))
	json.Unmarshal(b, &cfg)
	if cfg["mlp_bias"] != true || cfg["rope_theta"] != nil || cfg["torch_dtype"] != "float16" {
		t.Errorf("config: got mlp_bias %v rope_theta %v torch_dtype %v, want true, absent, float16", cfg["mlp_bias"], cfg["rope_theta"], cfg["torch_dtype"])
	}
	ck, err := convert.OpenCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	if tn := ck.Tensors["model.layers.0.mlp.down_proj.bias"]; tn == nil || tn.DType != "F16" {
		t.Errorf("extra tensor: got %v, want an F16 tensor", tn)
	}
}

// TestVocab: Options.Vocab sets the embedding and output rows and
// vocab_size; below the tokenizer's size it is refused unless NoTokenizer.
func TestVocab(t *testing.T) {
	dir := t.TempDir()
	if err := hfgen.Write(dir, "llama", hfgen.Options{Vocab: 1000}); err != nil {
		t.Fatal(err)
	}
	ck, err := convert.OpenCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	for _, n := range []string{"model.embed_tokens.weight", "lm_head.weight"} {
		if got := ck.Tensors[n].Shape; len(got) != 2 || got[0] != 1000 || got[1] != 64 {
			t.Errorf("%s: got shape %v, want [1000 64]", n, got)
		}
	}
	var cfg map[string]any
	b, _ := os.ReadFile(filepath.Join(dir, "config.json"))
	json.Unmarshal(b, &cfg)
	if cfg["vocab_size"] != 1000.0 {
		t.Errorf("vocab_size: got %v, want 1000", cfg["vocab_size"])
	}
	if err := hfgen.Write(t.TempDir(), "llama", hfgen.Options{Vocab: hfgen.TokenizerSize - 1}); err == nil {
		t.Errorf("vocabulary below the tokenizer: got nil error")
	}
	if err := hfgen.Write(t.TempDir(), "llama", hfgen.Options{Vocab: 100, NoTokenizer: true}); err != nil {
		t.Errorf("vocabulary 100 without a tokenizer: %v", err)
	}
}
