package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/krafla/krafla/mlt"
)

func init() { addCommand(newDecodeCmd) }

type decodeOptions struct {
	Tokenizer string
}

func newDecodeCmd() *cobra.Command {
	var o decodeOptions
	c := &cobra.Command{
		Use:   "decode -t TOK.mlt ID...",
		Short: "Print the text of token ids",
		Long: `decode prints the text of the ids as Hugging Face's decode does with special
tokens kept, followed by a newline.`,
		Example: `  krafla decode -t llama.mlt 128000 9906 1917`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{fmt.Errorf("decode needs at least one ID\nRun '%s --help' for usage.", c.CommandPath())}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Tokenizer == "" {
				return usageError{fmt.Errorf("-t TOK.mlt is required\nRun '%s --help' for usage.", cmd.CommandPath())}
			}
			return runDecode(o, args, cmd.OutOrStdout())
		},
	}
	c.Flags().StringVarP(&o.Tokenizer, "tokenizer", "t", "", "the .mlt tokenizer (required)")
	return c
}

func runDecode(o decodeOptions, args []string, out io.Writer) error {
	ids := make([]int, len(args))
	for i, a := range args {
		v, err := strconv.Atoi(a)
		if err != nil || v < 0 {
			return usageError{fmt.Errorf("ID %q is not a non-negative integer", a)}
		}
		ids[i] = v
	}
	t, err := mlt.Open(o.Tokenizer)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if id >= len(t.Tokens) {
			return fmt.Errorf("id %d is outside the vocabulary of %s (%d tokens)", id, o.Tokenizer, len(t.Tokens))
		}
	}
	_, err = fmt.Fprintln(out, t.Decode(ids))
	return err
}
