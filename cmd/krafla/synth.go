package main

import (
	"fmt"
	"io"
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

Architectures: ` + strings.Join(hfgen.Archs, ", ") + `
Shapes: tiny (every architecture), smollm2-135m and llama-3.2-1b (llama and
llama3 only: the real sizes of those models).`,
		Example: `  krafla synth llama -o /tmp/tiny && krafla convert /tmp/tiny -o tiny.mlb
  krafla synth llama --shape llama-3.2-1b -o /tmp/l1b   # 2.5 GB of bf16`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSynth(args[0], o, cmd.OutOrStdout())
		},
	}
	f := c.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "folder to write (required)")
	f.StringVar(&o.Shape, "shape", "tiny", "tiny, smollm2-135m or llama-3.2-1b")
	f.StringVar(&o.DType, "dtype", "bf16", "bf16, f16 or f32")
	f.Uint64Var(&o.Seed, "seed", 1, "random seed (the same seed gives the same files)")
	f.IntVar(&o.Shards, "shards", 1, "split the weights into this many files with an index")
	return c
}

func runSynth(arch string, o synthOptions, out io.Writer) error {
	if !slices.Contains(hfgen.Archs, arch) {
		return usageError{fmt.Errorf("unknown architecture %q (want one of %s)", arch, strings.Join(hfgen.Archs, ", "))}
	}
	if !slices.Contains(hfgen.Shapes, o.Shape) {
		return usageError{fmt.Errorf("--shape %q: want one of %s", o.Shape, strings.Join(hfgen.Shapes, ", "))}
	}
	if o.DType != "bf16" && o.DType != "f16" && o.DType != "f32" {
		return usageError{fmt.Errorf("--dtype %q: want bf16, f16 or f32", o.DType)}
	}
	if o.Output == "" {
		return usageError{fmt.Errorf("-o DIR is required")}
	}
	if o.Shards < 1 {
		return usageError{fmt.Errorf("--shards %d: want at least 1", o.Shards)}
	}
	if err := hfgen.Write(o.Output, arch, hfgen.Options{Shape: o.Shape, DType: o.DType, Seed: o.Seed, Shards: o.Shards}); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s: %s, shape %s, %s, seed %d\n", o.Output, arch, o.Shape, o.DType, o.Seed)
	return nil
}
