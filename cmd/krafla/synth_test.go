package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/krafla/krafla/internal/testenv"
	"github.com/krafla/krafla/mlt"
)

// runSynth is runSynthCtx without a deadline, for the tests that need a
// checkpoint.
func runSynth(arch string, o synthOptions, out io.Writer) error {
	return runSynthCtx(context.Background(), arch, o, out)
}

// TestSynthOverwrite: a checkpoint written over a sharded one keeps none of
// the old shards or the index, and convert reads the new one.
func TestSynthOverwrite(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "ck")
	if err := runSynth("llama", synthOptions{Output: dir, Shape: "tiny", DType: "bf16", Seed: 1, Shards: 3}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if err := runSynth("qwen3", synthOptions{Output: dir, Shape: "tiny", DType: "bf16", Seed: 1, Shards: 1}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	got := testenv.DirNames(t, dir)
	want := []string{"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"}
	if !slices.Equal(got, want) {
		t.Errorf("files: got %v, want %v", got, want)
	}
	if got := testenv.DirNames(t, root); !slices.Equal(got, []string{"ck"}) {
		t.Errorf("beside the checkpoint: got %v, want only ck (no temporary folder)", got)
	}
	out := filepath.Join(t.TempDir(), "q.mlb")
	if err := runConvert(context.Background(), dir, convertOptions{Output: out, Type: "q8_0", Threads: 1, NoTokenizer: true}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Errorf("convert of the overwritten checkpoint: %v", err)
	}
}

// TestSynthEmbedding: --embedding max --exclude-prompt writes a Pooling
// config that convert reads as max pooling leaving the prompt out.
func TestSynthEmbedding(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ck")
	if err := runSynth("qwen3", synthOptions{Output: dir, Shape: "tiny", DType: "bf16", Seed: 1, Shards: 1, Embed: "max", ExcludePrompt: true}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	e, err := mlt.ReadHFEmbed(dir)
	if err != nil {
		t.Fatal(err)
	}
	if e == nil || e.Pooling != mlt.PoolMax || !e.ExcludePrompt || !e.Normalize {
		t.Errorf("embedding %+v, want max pooling, normalized, excluding the prompt", e)
	}
}

func TestSynthErrors(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		arch  string
		o     synthOptions
		usage bool
	}{
		{"full-size shape of another architecture", "qwen3", synthOptions{Output: filepath.Join(root, "a"), Shape: "smollm2-135m", DType: "bf16", Shards: 1}, true},
		{"output is a file", "llama", synthOptions{Output: file, Shape: "tiny", DType: "bf16", Shards: 1}, false},
		{"unknown embedding pooling", "qwen3", synthOptions{Output: filepath.Join(root, "c"), Shape: "tiny", DType: "bf16", Shards: 1, Embed: "weightedmean"}, true},
		{"exclude-prompt with cls", "qwen3", synthOptions{Output: filepath.Join(root, "c"), Shape: "tiny", DType: "bf16", Shards: 1, Embed: "cls", ExcludePrompt: true}, true},
		{"exclude-prompt without an embedding", "qwen3", synthOptions{Output: filepath.Join(root, "c"), Shape: "tiny", DType: "bf16", Shards: 1, ExcludePrompt: true}, true},
	}
	for _, tc := range tests {
		err := runSynth(tc.arch, tc.o, &bytes.Buffer{})
		var ue usageError
		if err == nil || errors.As(err, &ue) != tc.usage {
			t.Errorf("%s: got %v, want an error (usage error: %v)", tc.name, err, tc.usage)
		}
	}
	if got := testenv.DirNames(t, root); !slices.Equal(got, []string{"f"}) {
		t.Errorf("after the errors: got %v, want only f", got)
	}
	// An interrupted synth stops and leaves nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := runSynthCtx(ctx, "llama", synthOptions{Output: filepath.Join(root, "b"), Shape: "tiny", DType: "bf16", Shards: 1}, &bytes.Buffer{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted synth: got %v, want context.Canceled", err)
	}
	if got := testenv.DirNames(t, root); !slices.Equal(got, []string{"f"}) {
		t.Errorf("after an interrupt: got %v, want only f", got)
	}
}
