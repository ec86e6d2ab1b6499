package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/krafla/krafla/convert/hfgen"
)

func init() { addCommand(newSynthCmd) }

type synthOptions struct {
	Output string
	Shape  string
	DType  string
	Seed   uint64
	Shards int
	Embed  string
	// ExcludePrompt: include_prompt false in the embedding checkpoint.
	ExcludePrompt bool
}

func newSynthCmd() *cobra.Command {
	var o synthOptions
	c := &cobra.Command{
		Use:   "synth ARCH -o DIR",
		Short: "Write a Hugging Face style checkpoint with random weights (for demos, tests and benchmarks)",
		Long: `synth writes config.json, model.safetensors (or shards) with deterministic
random weights and a small byte-level tokenizer.json into DIR, using the real
tensor names and config keys of ARCH, so that krafla convert and krafla run can
be tried without downloading a model. The model computes but says nothing.
The checkpoint is written beside DIR and moved into place when complete; over
an existing DIR it replaces the files synth writes and removes the weight
files (shards, index) of an earlier checkpoint.

Architectures: ` + strings.Join(hfgen.Archs, ", ") + `
Shapes: tiny (every architecture), smollm2-135m and llama-3.2-1b (llama and
llama3 only: the real sizes of those models).`,
		Example: `  krafla synth llama -o /tmp/tiny && krafla convert /tmp/tiny -o tiny.mlb
  krafla synth llama --shape llama-3.2-1b -o /tmp/l1b   # 2.5 GB of bf16`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSynthCtx(cmd.Context(), args[0], o, cmd.OutOrStdout())
		},
	}
	f := c.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "checkpoint folder to write, created with its parents (required)")
	f.StringVar(&o.Shape, "shape", "tiny", "tiny, smollm2-135m or llama-3.2-1b")
	f.StringVar(&o.DType, "dtype", "bf16", "bf16, f16 or f32")
	f.Uint64Var(&o.Seed, "seed", 1, "random seed (the same seed gives the same files)")
	f.IntVar(&o.Shards, "shards", 1, "split the weights into this many files with an index")
	f.StringVar(&o.Embed, "embedding", "", "write a head-less embedding checkpoint (the *Model class, no lm_head, sentence-transformers files) pooling by last, mean, cls or max")
	f.BoolVar(&o.ExcludePrompt, "exclude-prompt", false, "with --embedding: include_prompt false (the prompt's tokens are not pooled; not with cls)")
	return c
}

// runSynthCtx writes the checkpoint into a temporary folder beside DIR and
// moves it into place when complete, so that an interrupt leaves nothing
// behind and a checkpoint written over an earlier one keeps none of its
// weight files (a stale shard index would make convert read old tensors).
func runSynthCtx(ctx context.Context, arch string, o synthOptions, out io.Writer) error {
	if !slices.Contains(hfgen.Archs, arch) {
		return usageError{fmt.Errorf("unknown architecture %q (want one of %s)", arch, strings.Join(hfgen.Archs, ", "))}
	}
	if !slices.Contains(hfgen.Shapes, o.Shape) {
		return usageError{fmt.Errorf("--shape %q: want one of %s", o.Shape, strings.Join(hfgen.Shapes, ", "))}
	}
	// hfgen's rule: the full-size shapes exist for llama and llama3 only.
	if o.Shape != "tiny" && arch != "llama" && arch != "llama3" {
		return usageError{fmt.Errorf("--shape %s: only for llama and llama3 (tiny works with every architecture)", o.Shape)}
	}
	if o.DType != "bf16" && o.DType != "f16" && o.DType != "f32" {
		return usageError{fmt.Errorf("--dtype %q: want bf16, f16 or f32", o.DType)}
	}
	if o.Output == "" {
		return usageError{fmt.Errorf("-o DIR is required")}
	}
	if o.Embed != "" && !slices.Contains(hfgen.EmbeddingPoolings, o.Embed) {
		return usageError{fmt.Errorf("--embedding %q: want one of %s", o.Embed, strings.Join(hfgen.EmbeddingPoolings, ", "))}
	}
	if o.ExcludePrompt && (o.Embed == "" || o.Embed == "cls") {
		return usageError{fmt.Errorf("--exclude-prompt needs --embedding last, mean or max")}
	}
	if o.Shards < 1 {
		return usageError{fmt.Errorf("--shards %d: want at least 1", o.Shards)}
	}
	dir := filepath.Clean(o.Output)
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return fmt.Errorf("-o %s: is a file, want a folder", o.Output)
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("-o %s: %w", o.Output, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp")
	if err != nil {
		return fmt.Errorf("-o %s: %w", o.Output, err)
	}
	err = hfgen.WriteContext(ctx, tmp, arch, hfgen.Options{Shape: o.Shape, DType: o.DType, Seed: o.Seed, Shards: o.Shards, Embedding: o.Embed, ExcludePrompt: o.ExcludePrompt})
	if err == nil {
		err = synthInstall(tmp, dir, out)
	}
	os.RemoveAll(tmp)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s: %s, shape %s, %s, seed %d\n", o.Output, arch, o.Shape, o.DType, o.Seed)
	return nil
}

// synthWeightFile reports whether name is one of the weight files synth
// writes (the single file, a shard or the shard index).
func synthWeightFile(name string) bool {
	if name == "model.safetensors" || name == "model.safetensors.index.json" {
		return true
	}
	ok, _ := filepath.Match("model-[0-9]*-of-[0-9]*.safetensors", name)
	return ok
}

// synthInstall moves the finished checkpoint tmp to dir: a rename when dir
// does not exist, else file by file after removing the weight files of an
// earlier checkpoint that the new one does not have.
func synthInstall(tmp, dir string, out io.Writer) error {
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return os.Rename(tmp, dir)
	}
	newFiles, err := os.ReadDir(tmp)
	if err != nil {
		return err
	}
	fresh := map[string]bool{}
	for _, e := range newFiles {
		fresh[e.Name()] = true
	}
	old, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range old {
		if !e.IsDir() && synthWeightFile(e.Name()) && !fresh[e.Name()] {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
			fmt.Fprintf(out, "removed %s (left by an earlier checkpoint)\n", filepath.Join(dir, e.Name()))
		}
	}
	for _, e := range newFiles {
		if err := os.Rename(filepath.Join(tmp, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
