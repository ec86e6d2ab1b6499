package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/krafla/krafla/mlt"
)

func init() { addCommand(newDecodeCmd) }

type decodeOptions struct {
	Tokenizer string
	JSONL     bool
}

func newDecodeCmd() *cobra.Command {
	var o decodeOptions
	c := &cobra.Command{
		Use:   "decode -t TOK.mlt ID...",
		Short: "Print the text of token ids",
		Long: `decode prints the text of the ids as Hugging Face's decode does with special
tokens kept, followed by a newline. The ids may be separate arguments or one
argument separated by spaces or commas, so the output of encode can be given
back quoted. With --jsonl it reads lines of JSON objects {"ids": [...]} from
standard input instead and writes one line {"text": ...} for each (the lines
encode --jsonl writes).`,
		Example: `  krafla decode -t llama.mlt 128000 9906 1917
  krafla decode -t llama.mlt "$(krafla encode -t llama.mlt 'Hello world')"
  printf '{"ids":[9906,1917]}\n' | krafla decode -t llama.mlt --jsonl`,
		Args: func(c *cobra.Command, args []string) error {
			if o.JSONL && len(args) != 0 {
				return usageError{fmt.Errorf("--jsonl reads the ids from standard input and takes no ID argument")}
			}
			if !o.JSONL && len(args) == 0 {
				return usageError{fmt.Errorf("decode needs at least one ID")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Tokenizer == "" {
				return usageError{fmt.Errorf("-t TOK.mlt is required")}
			}
			if o.JSONL {
				t, err := mlt.Open(o.Tokenizer)
				if err != nil {
					return err
				}
				return runDecodeJSONL(cmd.Context(), t, o, cmd.InOrStdin(), cmd.OutOrStdout())
			}
			return runDecode(o, args, cmd.OutOrStdout())
		},
	}
	c.Flags().StringVarP(&o.Tokenizer, "tokenizer", "t", "", "the .mlt tokenizer (required)")
	c.Flags().BoolVar(&o.JSONL, "jsonl", false, `read {"ids": [...]} lines on standard input, write {"text": ...} lines`)
	return c
}

func runDecode(o decodeOptions, args []string, out io.Writer) error {
	var ids []int
	for _, arg := range args {
		for _, a := range strings.FieldsFunc(arg, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
			v, err := strconv.Atoi(a)
			if err != nil || v < 0 {
				return usageError{fmt.Errorf("id %q is not a non-negative integer", a)}
			}
			ids = append(ids, v)
		}
	}
	if len(ids) == 0 {
		return usageError{fmt.Errorf("decode needs at least one ID, got only separators")}
	}
	t, err := mlt.Open(o.Tokenizer)
	if err != nil {
		return err
	}
	if err := checkIDs(t, o.Tokenizer, ids); err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, t.Decode(ids))
	return err
}

// checkIDs refuses ids outside the vocabulary of t (read from path).
func checkIDs(t *mlt.Tokenizer, path string, ids []int) error {
	for _, id := range ids {
		if id < 0 || id >= len(t.Tokens) {
			return fmt.Errorf("id %d is outside the vocabulary of %s (%d tokens)", id, path, len(t.Tokens))
		}
	}
	return nil
}

func runDecodeJSONL(ctx context.Context, t *mlt.Tokenizer, o decodeOptions, in io.Reader, out io.Writer) error {
	r := bufio.NewReaderSize(in, 1<<20)
	w := bufio.NewWriter(out)
	for line := 1; ; line++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		l, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(l)) > 0 { // blank lines are skipped
			ids, perr := jsonlField[[]int](l, "ids", "an array of token ids")
			if perr != nil {
				return fmt.Errorf("stdin line %d: %v", line, perr)
			}
			if cerr := checkIDs(t, o.Tokenizer, ids); cerr != nil {
				return fmt.Errorf("stdin line %d: %v", line, cerr)
			}
			b, merr := json.Marshal(struct {
				Text string `json:"text"`
			}{t.Decode(ids)})
			if merr != nil {
				return merr
			}
			if _, werr := w.Write(append(b, '\n')); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("stdin: %w", err)
		}
	}
	return w.Flush()
}
