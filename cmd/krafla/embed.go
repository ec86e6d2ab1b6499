package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/krafla/krafla/embed"
	"github.com/krafla/krafla/mlt"
)

func init() { addCommand(newEmbedCmd) }

type embedOptions struct {
	Tokenizer   string
	Threads     int
	File        string
	Query       string // the task of the query prompt; "": none
	Prompt      string
	JSON        bool
	Pooling     string
	NoNormalize bool
	Dimensions  int
	Tokens      int // tokens per forward pass
	Verbose     bool
}

func newEmbedCmd() *cobra.Command {
	var o embedOptions
	c := &cobra.Command{
		Use:   "embed MODEL [TEXT...] [-f FILE] [--query TASK] [--json]",
		Short: "Print the embedding vector of each text",
		Long: `embed prints one vector per input: each TEXT argument, or each line of
FILE (-f; - reads standard input). The model's tokenizer adds its special
tokens (Qwen3-Embedding's appends EOS), the final-norm hidden states are
pooled as the model's sentence-transformers files said at conversion (last
token, mean, max or first token; mean for a model without them; without the
prompt's tokens where the model's include_prompt is false) and L2-normalized
unless the model says not. --query TASK puts the model's query prompt before
each input with TASK as its instruction ("Instruct: TASK\nQuery:" for
Qwen3-Embedding); --prompt NAME puts a prompt as the model ships it. Inputs are batched; each vector is the same bits as the input
embedded alone.

Plain output is a line of numbers per input; --json prints
{"embeddings": [[...], ...], "tokens": [...], "pooling": ..., "normalized": ...}.`,
		Example: `  krafla embed qwen3-embedding.mlb "The capital of China is Beijing."
  krafla embed qwen3-embedding.mlb --query "Given a question, find the answer" "What is the capital of China?"
  krafla embed model.mlb -f sentences.txt --json > vectors.json`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := modelPath(cmd.Context(), args[0], cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return runEmbed(cmd.Context(), p, args[1:], o, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := c.Flags()
	f.StringVarP(&o.Tokenizer, "tokenizer", "t", "", "tokenizer .mlt (default: MODEL with the extension .mlt)")
	f.IntVar(&o.Threads, "threads", runtime.NumCPU(), "worker threads (results are identical for any value)")
	f.StringVarP(&o.File, "file", "f", "", "embed each line of FILE (- for standard input)")
	f.StringVar(&o.Query, "query", "", "put the model's query prompt before each input, with TASK as its instruction (--prompt query: the prompt as shipped)")
	f.StringVar(&o.Prompt, "prompt", "", "put the model's prompt called NAME before each input (config_sentence_transformers.json's prompts: query, document, …)")
	f.BoolVar(&o.JSON, "json", false, "print JSON instead of lines of numbers")
	f.StringVar(&o.Pooling, "pooling", "", "override the model's pooling: last, mean, cls or max")
	f.BoolVar(&o.NoNormalize, "no-normalize", false, "do not L2-normalize the vectors")
	f.IntVar(&o.Dimensions, "dimensions", 0, "keep the first N values of each vector and renormalize (Matryoshka models)")
	f.IntVar(&o.Tokens, "batch-tokens", 512, "tokens per forward pass, over all the inputs it holds (results are identical for any value)")
	f.BoolVarP(&o.Verbose, "verbose", "v", false, "print the token count and embedding speed to stderr")
	return c
}

// minArgs is cobra.MinimumNArgs reported as a usage error.
func minArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.MinimumNArgs(n)(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

func runEmbed(ctx context.Context, path string, texts []string, o embedOptions, in io.Reader, out, errw io.Writer) error {
	if o.File != "" {
		r := in
		if o.File != "-" {
			f, err := os.Open(o.File)
			if err != nil {
				return err
			}
			defer f.Close()
			r = f
		}
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			texts = append(texts, sc.Text())
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("-f %s: %w", o.File, err)
		}
	}
	if len(texts) == 0 {
		return usageError{fmt.Errorf("no input: give TEXT arguments or -f FILE")}
	}
	if o.Query != "" && o.Prompt != "" {
		return usageError{fmt.Errorf("--query and --prompt both choose a prompt; give one")}
	}
	if o.Dimensions < 0 {
		return usageError{fmt.Errorf("--dimensions %d: must be positive", o.Dimensions)}
	}
	var opt embed.Options
	if o.Pooling != "" {
		p, err := embed.ParsePooling(o.Pooling)
		if err != nil {
			return usageError{err}
		}
		opt.Pooling = p
	}
	opt.NoNormalize = o.NoNormalize
	if o.Tokens < 1 {
		return usageError{fmt.Errorf("--batch-tokens %d: must be at least 1", o.Tokens)}
	}
	opt.Tokens = o.Tokens
	m, tok, err := loadModel(path, modelOptions{Tokenizer: o.Tokenizer, Threads: o.Threads})
	if err != nil {
		return err
	}
	defer m.Close()
	hugePages(m, o.Verbose, errw)
	opt.Threads = o.Threads
	e, err := embed.New(m, tok, opt)
	if err != nil {
		return err
	}
	defer e.Close()
	name, task := o.Prompt, ""
	if o.Query != "" {
		name, task = "query", o.Query
	}
	prompt, err := e.Prompt(name, task)
	if err != nil {
		return err
	}
	inputs := make([][]int, len(texts))
	counts := make([]int, len(texts))
	skips := make([]int, len(texts))
	skip := e.PromptTokens(prompt)
	for i, s := range texts {
		if inputs[i], err = e.Tokenize(prompt, s); err != nil {
			return err
		}
		counts[i] = len(inputs[i])
		skips[i] = skip
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	t0 := time.Now()
	vecs, err := e.EmbedSkip(inputs, skips)
	if err != nil {
		return err
	}
	if o.Verbose {
		n := 0
		for _, c := range counts {
			n += c
		}
		d := time.Since(t0)
		fmt.Fprintf(errw, "embedded %d inputs, %d tokens in %.3f s: %.1f tokens/s (%s pooling, %d threads, %d tokens a pass)\n",
			len(inputs), n, d.Seconds(), float64(n)/d.Seconds(), mlt.PoolName(e.Pooling()), o.Threads, o.Tokens)
	}
	if o.Dimensions > e.Dim() {
		return usageError{fmt.Errorf("--dimensions %d: the model's vectors have %d", o.Dimensions, e.Dim())}
	}
	for i := range vecs {
		vecs[i] = embed.Truncate(vecs[i], o.Dimensions)
	}
	w := bufio.NewWriter(out)
	if o.JSON {
		j := struct {
			Embeddings [][]jsonF32 `json:"embeddings"`
			Tokens     []int       `json:"tokens"`
			Pooling    string      `json:"pooling"`
			Normalized bool        `json:"normalized"`
		}{Tokens: counts, Pooling: mlt.PoolName(e.Pooling()), Normalized: e.Normalize() || o.Dimensions > 0}
		for _, v := range vecs {
			jv := make([]jsonF32, len(v))
			for k, x := range v {
				jv[k] = jsonF32(x)
			}
			j.Embeddings = append(j.Embeddings, jv)
		}
		b, err := json.Marshal(j)
		if err != nil {
			return err
		}
		w.Write(b)
		w.WriteByte('\n')
		return w.Flush()
	}
	for _, v := range vecs {
		parts := make([]string, len(v))
		for k, x := range v {
			parts[k] = strconv.FormatFloat(float64(x), 'g', -1, 32)
		}
		w.WriteString(strings.Join(parts, " "))
		w.WriteByte('\n')
	}
	return w.Flush()
}

// jsonF32 marshals as the shortest decimal that reads back as the same
// float32 (encoding/json would print the float64 digits).
type jsonF32 float32

func (f jsonF32) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(f), 'g', -1, 32), nil
}
