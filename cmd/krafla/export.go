package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/krafla/krafla/convert"
)

func init() { addCommand(newExportCmd) }

type exportOptions struct {
	Output    string
	Tokenizer string
}

func newExportCmd() *cobra.Command {
	var o exportOptions
	c := &cobra.Command{
		Use:   "export MODEL.mlb -o MODEL.gguf",
		Short: "Write an .mlb model (and its .mlt tokenizer) as a GGUF file for llama.cpp and ollama",
		Long: `export writes MODEL.mlb as a GGUF v3 file that llama.cpp, ollama and LM
Studio load: llama.cpp's architecture names (llama, qwen2, qwen3, gemma,
gemma2, gemma3, granite, smollm3), metadata keys and tensor names, and the
tokenizer and chat template of the .mlt (MODEL.mlt beside the model unless -t
names another).

Q8_0 and Q4_0 matrices become ggml Q8_0 and Q4_0 blocks byte for byte when the
model stores f16 scales (convert --f16-scales; every GGUF import does); f32
scales are rounded to f16, and export says so. Converting the GGUF back with
krafla convert gives the same .mlb, bit for bit.

Where llama.cpp computes something other than the model describes (it fixes
Gemma's layer pattern and score scale in code, its llama architecture ignores
a sliding window), export says so; its output then differs from krafla run's.
Linear attention (Qwen3.5) is not exported.`,
		Example: `  krafla export llama.mlb -o llama.gguf
  krafla export qwen3.mlb -o qwen3.gguf -t qwen3-chat.mlt
  ollama create mymodel -f Modelfile    # Modelfile: FROM ./llama.gguf`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := modelPath(cmd.Context(), args[0], cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return runExport(p, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	c.Flags().StringVarP(&o.Output, "output", "o", "", "the GGUF file to write (required)")
	c.Flags().StringVarP(&o.Tokenizer, "tokenizer", "t", "", "tokenizer .mlt (default: MODEL with the extension .mlt)")
	return c
}

func runExport(in string, o exportOptions, out, errw io.Writer) error {
	if o.Output == "" {
		return usageError{fmt.Errorf("-o is required: name the GGUF file to write")}
	}
	if strings.EqualFold(o.Output, in) {
		return usageError{fmt.Errorf("-o %s would overwrite the model", o.Output)}
	}
	if err := checkOutputPath("-o", o.Output); err != nil {
		return err
	}
	rep, err := convert.ExportGGUF(in, o.Output, convert.ExportOptions{Tokenizer: o.Tokenizer, Log: errw})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s: %s, %d tensors, %.1f MB\n", rep.Out, rep.Arch, rep.Tensors, float64(rep.Bytes)/1e6)
	if rep.Tokenizer != "" {
		fmt.Fprintf(out, "tokenizer and chat template from %s\n", rep.Tokenizer)
	}
	return nil
}
