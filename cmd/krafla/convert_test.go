package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlt"
)

func TestSynthConvert(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ck")
	var out bytes.Buffer
	if err := runSynth("gemma3", synthOptions{Output: dir, Shape: "tiny", DType: "f16", Seed: 2, Shards: 2}, &out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "model.safetensors.index.json")); err != nil {
		t.Errorf("shards: %v", err)
	}
	mlbPath := filepath.Join(t.TempDir(), "g.mlb")
	out.Reset()
	err := runConvert(context.Background(), dir, convertOptions{Output: mlbPath, Type: "q4_0", Q8: "tok_emb,w2", Threads: 2},
		&out, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Q4_0, round fit") {
		t.Errorf("output: got %q, want it to name Q4_0 and the round rule", out.String())
	}
	f, err := mlb.Open(mlbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, want := f.Header.Q8Mask, uint32(mlb.MaskTokEmb|mlb.MaskW2); got != want {
		t.Errorf("q8_mask: got %d, want %d", got, want)
	}
	if _, err := mlt.Open(strings.TrimSuffix(mlbPath, ".mlb") + ".mlt"); err != nil {
		t.Errorf("tokenizer: %v", err)
	}
}

func TestConvertUsage(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		o    convertOptions
	}{
		{"type", convertOptions{Type: "q5_k", Threads: 1}},
		{"q8 class", convertOptions{Type: "q4_0", Q8: "wq", Threads: 1}},
		{"q8 with q8_0", convertOptions{Type: "q8_0", Q8: "w2", Threads: 1}},
		{"rule", convertOptions{Type: "q4_0", Q4Rule: "nearest", Threads: 1}},
		{"threads", convertOptions{Type: "q8_0", Threads: 0}},
	}
	for _, tc := range tests {
		err := runConvert(context.Background(), dir, tc.o, &bytes.Buffer{}, &bytes.Buffer{})
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%s: got %v, want a usage error", tc.name, err)
		}
	}
	for _, o := range []synthOptions{{Shape: "tiny", DType: "bf16", Output: dir, Shards: 1}} {
		var ue usageError
		if err := runSynth("mixtral", o, &bytes.Buffer{}); !errors.As(err, &ue) {
			t.Errorf("synth mixtral: got %v, want a usage error", err)
		}
		o.Shape = "huge"
		if err := runSynth("llama", o, &bytes.Buffer{}); !errors.As(err, &ue) {
			t.Errorf("synth --shape huge: got %v, want a usage error", err)
		}
	}
}
