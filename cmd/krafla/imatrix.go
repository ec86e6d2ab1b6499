package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/krafla/krafla/infer"
)

func init() { addCommand(newImatrixCmd) }

type imatrixOptions struct {
	modelOptions
	File   string
	Output string
	Chunk  int
}

func newImatrixCmd() *cobra.Command {
	var o imatrixOptions
	c := &cobra.Command{
		Use:   "imatrix MODEL.mlb -f TEXT",
		Short: "Collect an importance matrix (MLI1) for convert --imatrix",
		Long: `imatrix runs the text through the model in chunks of --chunk tokens, each from an
empty cache, and sums the squares of every matrix input per channel: for each
layer the inputs of wq/wk/wv, wo, w1/w3 and w2, then the classifier's. It
writes them as an MLI1 file (SPEC.md), which convert --imatrix reads to weight
the Q4_0 rounding.`,
		Example: `  krafla imatrix llama-q8.mlb -f calibration.txt -o llama.imatrix
  krafla convert ./Llama-3.2-1B --type q4_0 --imatrix llama.imatrix -o llama-q4.mlb`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.File == "" {
				return usageError{fmt.Errorf("-f is required\nRun '%s --help' for usage.", cmd.CommandPath())}
			}
			p, err := modelPath(cmd.Context(), args[0], cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return runImatrix(cmd.Context(), p, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.bind(c)
	c.Flags().StringVarP(&o.File, "file", "f", "", "calibration text file (required)")
	c.Flags().StringVarP(&o.Output, "output", "o", "", "output file (default: MODEL with the extension .imatrix)")
	c.Flags().IntVar(&o.Chunk, "chunk", 0, "tokens per chunk (0: 512, or the model's context if shorter)")
	return c
}

func runImatrix(ctx context.Context, path string, o imatrixOptions, out, errOut io.Writer) error {
	dst := o.Output
	if dst == "" {
		dst = strings.TrimSuffix(path, filepath.Ext(path)) + ".imatrix"
	}
	if err := checkOutputPath("-o", dst); err != nil {
		return usageError{err}
	}
	p, err := openChunkPass(path, o.File, o.modelOptions, o.Chunk)
	if err != nil {
		return err
	}
	defer p.Close()
	prog := progressTo(errOut)
	f, err := infer.Imatrix(ctx, p.s, p.ids, p.opt, func(done, total int) {
		fmt.Fprintf(prog, "\rchunk %d/%d", done, total)
		if done == total {
			fmt.Fprintln(prog)
		}
	})
	if err != nil {
		return fmt.Errorf("%s: %w", o.File, err)
	}
	if err := f.Write(dst); err != nil {
		return err
	}
	fmt.Fprintf(out, "%s: %d layers, %d layer tokens, %d classifier tokens\n", dst, f.NLayers, f.LayerTokens, f.ClassifierTokens)
	return nil
}
