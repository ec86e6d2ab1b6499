package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/krafla/krafla/mlt"
)

func init() { addCommand(newTokenizeCmd) }

type tokenizeOptions struct {
	Log    io.Writer // warnings; nil = discard
	Output string
}

func newTokenizeCmd() *cobra.Command {
	var o tokenizeOptions
	c := &cobra.Command{
		Use:   "tokenize PATH",
		Short: "Convert a Hugging Face tokenizer.json into an .mlt tokenizer",
		Long: `tokenize reads PATH, a tokenizer.json or a checkpoint folder holding one (and
tokenizer_config.json beside it when present), maps its normalizer,
pre-tokenizer, model, added tokens, post-processor and decoder onto an .mlt kind
and flags, and writes the .mlt file. What the flags of the original .mlt format
cannot say (NFKC and the other normalizers, Split regexes and their chains,
Metaspace schemes, added tokens with lstrip/rstrip/single_word, byte-fallback
vocabularies missing some <0xXX> tokens, ...) goes into the file's pipeline
section, and encoding then follows the Hugging Face tokenizers library step by
step. A tokenizer that no .mlt reproduces exactly (a Unigram or WordPiece model,
a regex construct without an exact equivalent, an unknown normalizer, ...) is
refused with a message naming the part.

The chat templates travel along: tokenizer_config.json's chat_template (one, or
a list of named ones), or chat_template.jinja / chat_template.json beside it,
with the bos_token and eos_token strings and generation_config.json's
eos_token_id as stop ids. krafla chat and run --chat use them.`,
		Example: `  krafla tokenize ./Llama-3.2-1B -o llama.mlt
  krafla tokenize tokenizer.json`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Log = cmd.ErrOrStderr()
			return runTokenize(cmd.Context(), args[0], o, cmd.OutOrStdout())
		},
	}
	c.Flags().StringVarP(&o.Output, "output", "o", "", "output file (default: the folder's name with .mlt, in the current directory)")
	return c
}

func runTokenize(ctx context.Context, path string, o tokenizeOptions, out io.Writer) error {
	if o.Output == "" {
		dir := path
		if st, err := os.Stat(path); err == nil && !st.IsDir() {
			dir = filepath.Dir(path)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return err
		}
		o.Output = filepath.Base(abs) + ".mlt"
	}
	// A bad output path fails now, not after seconds of parsing.
	if err := checkOutputPath("-o", o.Output); err != nil {
		return err
	}
	// FromHF does not watch ctx; an interrupt returns at once (nothing has
	// been written yet) and the parse ends with the process.
	type result struct {
		t   *mlt.Tokenizer
		err error
	}
	done := make(chan result, 1)
	go func() {
		t, err := mlt.FromHF(path)
		done <- result{t, err}
	}()
	var t *mlt.Tokenizer
	select {
	case r := <-done:
		if r.err != nil {
			return r.err
		}
		t = r.t
	case <-ctx.Done():
		return ctx.Err()
	}
	c, err := mlt.ReadHFChatWarn(path, t, func(s string) {
		if o.Log != nil {
			fmt.Fprintln(o.Log, "warning:", s)
		}
	})
	if err != nil {
		return err
	}
	t.SetChat(c)
	e, err := mlt.ReadHFEmbed(path)
	if err != nil {
		return err
	}
	if e != nil {
		t.SetEmbed(e)
	}
	if err := t.Write(o.Output); err != nil {
		return err
	}
	var added int
	for _, tok := range t.Tokens {
		if tok.Attr == mlt.AttrAdded {
			added++
		}
	}
	flags := strings.Join(mlt.FlagNames(t.Flags), ",")
	if flags == "" {
		flags = "none"
	}
	fmt.Fprintf(out, "wrote %s: kind %d (%s), flags %d (%s), %d tokens (%d added), %d merges, bos %d, eos %d\n",
		o.Output, t.Kind, t.Kind, t.Flags, flags, len(t.Tokens), added, len(t.Merges), t.BOS, t.EOS)
	if p := t.Pipeline; p != nil {
		fmt.Fprintf(out, "pipeline: %d normalizer(s), %d pre-tokenizer(s): %s\n", len(p.Normalizers), len(p.PreTokenizers), pipelineSummary(p))
	}
	if c != nil {
		fmt.Fprintf(out, "chat: %s, stop ids %v\n", chatTemplateNames(c), c.StopIDs)
	}
	return nil
}

// pipelineSummary names a pipeline's steps in order, normalizers first.
func pipelineSummary(p *mlt.Pipeline) string {
	var names []string
	for _, s := range append(append([]mlt.Step{}, p.Normalizers...), p.PreTokenizers...) {
		names = append(names, s.Op.String())
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
