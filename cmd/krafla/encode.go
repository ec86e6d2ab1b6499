package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/krafla/krafla/mlt"
)

func init() { addCommand(newEncodeCmd) }

type encodeOptions struct {
	Tokenizer string
	NoSpecial bool
	JSONL     bool
}

func newEncodeCmd() *cobra.Command {
	var o encodeOptions
	c := &cobra.Command{
		Use:   "encode -t TOK.mlt [--no-special] TEXT",
		Short: "Print the token ids of a text",
		Long: `encode prints the ids of TEXT, separated by spaces, with the special tokens
the tokenizer adds around a text (BOS, or its post-processor's template), as
Hugging Face's encode with add_special_tokens does; --no-special leaves them
out. With --jsonl it reads lines of JSON
objects {"text": ...} from standard input instead and writes one line
{"ids": [...]} for each.`,
		Example: `  krafla encode -t llama.mlt "Hello world"
  printf '{"text":"Hello"}\n' | krafla encode -t llama.mlt --jsonl`,
		Args: func(c *cobra.Command, args []string) error {
			if o.JSONL && len(args) != 0 {
				return usageError{fmt.Errorf("--jsonl reads the texts from standard input and takes no TEXT argument")}
			}
			if o.JSONL {
				return nil
			}
			return exactArgs(1)(c, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Tokenizer == "" {
				return usageError{fmt.Errorf("-t TOK.mlt is required")}
			}
			t, err := mlt.Open(o.Tokenizer)
			if err != nil {
				return err
			}
			if o.JSONL {
				return runEncodeJSONL(cmd.Context(), t, o, cmd.InOrStdin(), cmd.OutOrStdout())
			}
			return runEncode(t, o, args[0], cmd.OutOrStdout())
		},
	}
	c.Flags().StringVarP(&o.Tokenizer, "tokenizer", "t", "", "the .mlt tokenizer (required)")
	c.Flags().BoolVar(&o.NoSpecial, "no-special", false, "leave out the special tokens the tokenizer adds around a text (BOS, EOS of its template)")
	c.Flags().BoolVar(&o.NoSpecial, "no-bos", false, "the old name of --no-special")
	_ = c.Flags().MarkDeprecated("no-bos", "use --no-special (it leaves out every special token the tokenizer adds, not only BOS)")
	c.Flags().BoolVar(&o.JSONL, "jsonl", false, `read {"text": ...} lines on standard input, write {"ids": [...]} lines`)
	return c
}

func runEncode(t *mlt.Tokenizer, o encodeOptions, text string, out io.Writer) error {
	ids := t.Encode(text, !o.NoSpecial)
	b := make([]byte, 0, len(ids)*7)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(id), 10)
	}
	b = append(b, '\n')
	_, err := out.Write(b)
	return err
}

func runEncodeJSONL(ctx context.Context, t *mlt.Tokenizer, o encodeOptions, in io.Reader, out io.Writer) error {
	r := bufio.NewReaderSize(in, 1<<20)
	w := bufio.NewWriter(out)
	var ids []int
	var b []byte
	for line := 1; ; line++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		l, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(l)) > 0 { // blank lines are skipped
			text, perr := jsonlField[string](l, "text", "a string")
			if perr != nil {
				return fmt.Errorf("stdin line %d: %v", line, perr)
			}
			ids = t.AppendEncode(ids[:0], text, !o.NoSpecial)
			b = append(b[:0], `{"ids":[`...)
			for i, id := range ids {
				if i > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendInt(b, int64(id), 10)
			}
			b = append(b, "]}\n"...)
			if _, werr := w.Write(b); werr != nil {
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

// jsonlField reads field of the JSON object in line as a T; the errors say
// what the line should hold (want describes a T) rather than Go types.
func jsonlField[T any](line []byte, field, want string) (T, error) {
	var zero T
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil || obj == nil {
		msg := "not a JSON object"
		var se *json.SyntaxError
		if errors.As(err, &se) {
			msg = "invalid JSON: " + se.Error()
		}
		return zero, fmt.Errorf("%s; want {%q: %s}", msg, field, want)
	}
	raw, ok := obj[field]
	if !ok {
		return zero, fmt.Errorf("no %q field", field)
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		shown := string(bytes.TrimSpace(raw))
		if len(shown) > 40 {
			shown = shown[:40] + "..."
		}
		return zero, fmt.Errorf("%q is %s, want %s", field, shown, want)
	}
	return v, nil
}
