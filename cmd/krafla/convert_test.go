package main

import (
	"bytes"
	"context"
	"encoding/json"
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
		{"type", convertOptions{Type: "q3_k", Threads: 1}},
		{"q8 class", convertOptions{Type: "q4_0", Q8: "wq", Threads: 1}},
		{"q8 with q8_0", convertOptions{Type: "q8_0", Q8: "w2", Threads: 1}},
		{"rule", convertOptions{Type: "q4_0", Q4Rule: "nearest", Threads: 1}},
		{"threads", convertOptions{Type: "q8_0", Threads: 0}},
		{"q4-rule with q8_0", convertOptions{Type: "q8_0", Q4Rule: "best", Threads: 1}},
		// The tokenizer would be written over the model.
		{"model named .mlt", convertOptions{Type: "q8_0", Threads: 1, Output: filepath.Join(dir, "m.mlt")}},
		{"model named .MLT", convertOptions{Type: "q8_0", Threads: 1, Output: filepath.Join(dir, "m.MLT"), NoTokenizer: true}},
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

// TestConvertOutputChecks: an output that cannot be written is refused
// before any work, naming -o and the path; an upper-case rule is accepted.
func TestConvertOutputChecks(t *testing.T) {
	ck := filepath.Join(t.TempDir(), "ck")
	if err := runSynth("llama", synthOptions{Output: ck, Shape: "tiny", DType: "bf16", Seed: 1, Shards: 1}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		out, want string
	}{
		{filepath.Join(dir, "no", "m.mlb"), "-o " + filepath.Join(dir, "no", "m.mlb") + ": folder " + filepath.Join(dir, "no") + " does not exist"},
		{dir, "-o " + dir + ": is a folder"},
	} {
		err := runConvert(context.Background(), ck, convertOptions{Output: tc.out, Type: "q8_0", Threads: 1}, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("-o %s: got %v, want an error containing %q", tc.out, err, tc.want)
		}
	}
	if err := runConvert(context.Background(), filepath.Join(ck, "config.json"), convertOptions{Output: filepath.Join(dir, "m.mlb"), Type: "q8_0", Threads: 1},
		&bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "config.json is not a folder") {
		t.Errorf("a file as DIR: got %v, want it refused as not a folder", err)
	}
	out := filepath.Join(dir, "m.mlb")
	if err := runConvert(context.Background(), ck, convertOptions{Output: out, Type: "Q4_0", Q4Rule: "ROUND", Threads: 1, NoTokenizer: true},
		&bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatalf("--type Q4_0 --q4-rule ROUND: %v", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "m.mlb" {
		t.Errorf("output folder holds %v, want only m.mlb (no tokenizer, no temporary files)", entries)
	}
}

// TestConvertReport: --report prints every quantized matrix with its error,
// worst first, and the padding note; --json prints the same for scripts.
func TestConvertReport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ck")
	if err := runSynth("llama", synthOptions{Output: dir, Shape: "stories260k", DType: "f32", Seed: 3, Shards: 1}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	o := convertOptions{Output: filepath.Join(t.TempDir(), "s.mlb"), Type: "q4_0", Threads: 1, NoTokenizer: true, Report: true}
	if err := runConvert(context.Background(), dir, o, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"note: FFN width 172 padded to 192", "relative RMSE, worst first", "blk.4.w2", "64 × 192", "tok_emb"} {
		if !strings.Contains(text, want) {
			t.Errorf("--report output lacks %q:\n%s", want, text)
		}
	}
	out.Reset()
	o.Report, o.JSON = false, true
	if err := runConvert(context.Background(), dir, o, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Type         string
		Notes        []string
		Quantization []struct {
			Name    string
			RelRMSE float64 `json:"rel_rmse"`
		}
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	// hfgen's llama at stories260k's shape: tok_emb, wcls and 7 matrices in each of 5 layers.
	if r.Type != "Q4_0, best fit" || len(r.Notes) != 1 || len(r.Quantization) != 2+5*7 {
		t.Fatalf("got type %q, %d notes, %d matrices; want Q4_0 best fit, 1, 37", r.Type, len(r.Notes), len(r.Quantization))
	}
	for i, e := range r.Quantization {
		if !(e.RelRMSE > 0) || i > 0 && e.RelRMSE > r.Quantization[i-1].RelRMSE {
			t.Errorf("entry %d %s: rel_rmse %v not positive and worst first", i, e.Name, e.RelRMSE)
		}
	}
}
