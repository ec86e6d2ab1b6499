package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/krafla/krafla/asm"
	"github.com/krafla/krafla/chat"
	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/internal/atomicfile"
	"github.com/krafla/krafla/internal/cputime"
	"github.com/krafla/krafla/internal/pair"
	"github.com/krafla/krafla/mlt"
)

func init() { addCommand(newRunCmd) }

// modelOptions are the flags every command that runs a model shares.
type modelOptions struct {
	Tokenizer string // .mlt path; "": the model's path with .mlt
	Ctx       int
	Threads   int
	KV        infer.KVType // --kv, for the commands that bind it (bindKV)
}

// bindKV adds --kv, the KV cache element type.
func (o *modelOptions) bindKV(c *cobra.Command) {
	c.Flags().Var(kvFlag{&o.KV}, "kv", "KV cache element type: f32, or f16 (half the memory and cache reads; docs/FORMATS.md, Runtime arithmetic)")
}

// kvFlag is the pflag.Value of --kv.
type kvFlag struct{ t *infer.KVType }

func (f kvFlag) String() string {
	if f.t == nil {
		return infer.KVF32.String()
	}
	return f.t.String()
}

func (f kvFlag) Set(s string) error {
	k, err := infer.ParseKVType(s)
	if err == nil {
		*f.t = k
	}
	return err
}

func (f kvFlag) Type() string { return "type" }

func (o *modelOptions) bind(c *cobra.Command) {
	c.Flags().StringVarP(&o.Tokenizer, "tokenizer", "t", "", "tokenizer .mlt (default: MODEL with the extension .mlt)")
	c.Flags().IntVar(&o.Ctx, "ctx", 0, "context length: positions the KV cache holds (default min(max_seq, 4096), at most max_seq)")
	c.Flags().IntVar(&o.Threads, "threads", runtime.NumCPU(), "worker threads (results are identical for any value)")
}

type runOptions struct {
	modelOptions
	Prompt   string
	N        int
	Chat     bool
	Template string
	Logits   string
	Imatrix  string
	Verbose  bool
	NoHuge   bool
	Sampling infer.SamplerOptions
	Schema   string // --json-schema FILE
	Grammar  string // --grammar FILE (GBNF)
}

func newRunCmd() *cobra.Command {
	var o runOptions
	c := &cobra.Command{
		Use:   "run MODEL.mlb [-p PROMPT]",
		Short: "Generate text from a prompt, streaming it as it comes",
		Long: `run evaluates the prompt in batches, then samples tokens and prints them as
they are generated. Without -p (or with -p "") generation starts from the
BOS token alone, as llama2.c's run does, when the tokenizer adds one; a
tokenizer without BOS needs a prompt. It stops at the token limit, at the tokenizer's EOS or
end-of-turn tokens, or when the context is full. Prefill and generation speed
and the cache size go to stderr.

Sampling is greedy with --temp 0; otherwise the logits pass through the
repetition penalty, temperature, top-k, min-p and top-p before a draw seeded
by --seed. The same model, prompt, options and seed give the same text with
any thread count.`,
		Example: `  krafla run llama.mlb -p "The capital of France is" -n 32 --temp 0
  krafla run stories260K.mlb --temp 0 -n 200          # a story from BOS alone
  krafla run qwen.mlb --chat -p "Write a haiku about lava"
  krafla run llama.mlb -p "Hello" -n 0 --logits hello.f32   # [n_tokens][vocab] float32`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.N < -1 {
				return usageError{fmt.Errorf("-n %d: want a count of tokens, or -1 for no limit", o.N)}
			}
			if err := checkSampling(&o.Sampling); err != nil {
				return err
			}
			p, err := modelPath(cmd.Context(), args[0], cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return runRun(cmd.Context(), p, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.bind(c)
	o.bindKV(c)
	f := c.Flags()
	f.StringVarP(&o.Prompt, "prompt", "p", "", "the prompt text (none: start from the BOS token)")
	f.IntVarP(&o.N, "max-tokens", "n", 256, "tokens to generate at most (-1: until a stop token or a full context)")
	f.BoolVar(&o.Chat, "chat", false, "render the prompt as a user turn with the model's chat template (as krafla chat does)")
	f.StringVar(&o.Template, "template", "", "chat template FILE for --chat (a .jinja file or a tokenizer_config.json; implies --chat)")
	f.StringVar(&o.Logits, "logits", "", "write the float32 logits of every prompt position to FILE (little-endian [n_tokens][vocab])")
	f.StringVar(&o.Imatrix, "imatrix", "", "also write the importance matrix (MLI1) of this run's tokens to FILE")
	f.BoolVarP(&o.Verbose, "verbose", "v", false, "print the model shape, kernel variant and token ids to stderr")
	f.BoolVar(&o.NoHuge, "no-huge-pages", false, "repack the weights into ordinary memory instead of huge pages (more TLB misses: slower generation)")
	f.StringVar(&o.Schema, "json-schema", "", "constrain the output to JSON valid against the JSON Schema in FILE")
	f.StringVar(&o.Grammar, "grammar", "", "constrain the output to the GBNF grammar (llama.cpp syntax) in FILE")
	bindSampling(c, &o.Sampling)
	return c
}

// bindSampling adds the sampler's flags (run and chat share them).
func bindSampling(c *cobra.Command, s *infer.SamplerOptions) {
	f := c.Flags()
	f.Float32Var(&s.Temp, "temp", 0.8, "sampling temperature (0: greedy)")
	f.IntVar(&s.TopK, "top-k", 40, "keep the K most likely tokens (0: all)")
	f.Float32Var(&s.TopP, "top-p", 0.95, "keep the most likely tokens up to this probability mass (1: all)")
	f.Float32Var(&s.MinP, "min-p", 0.05, "drop tokens below this fraction of the top probability (0: none)")
	f.Float32Var(&s.RepeatPenalty, "repeat-penalty", 1, "penalty on the last --repeat-last-n tokens (1: none)")
	f.IntVar(&s.RepeatLastN, "repeat-last-n", 64, "tokens the repetition penalty looks back on")
	f.Uint64Var(&s.Seed, "seed", 0, "random seed of the sampler")
}

func checkSampling(s *infer.SamplerOptions) error {
	switch {
	case s.Temp < 0 || math.IsNaN(float64(s.Temp)):
		return usageError{fmt.Errorf("--temp %v: must be 0 or more", s.Temp)}
	case s.TopK < 0:
		return usageError{fmt.Errorf("--top-k %d: must be 0 or more", s.TopK)}
	case !(s.TopP >= 0 && s.TopP <= 1):
		return usageError{fmt.Errorf("--top-p %v: must be between 0 and 1", s.TopP)}
	case !(s.MinP >= 0 && s.MinP <= 1):
		return usageError{fmt.Errorf("--min-p %v: must be between 0 and 1", s.MinP)}
	case !(s.RepeatPenalty > 0):
		return usageError{fmt.Errorf("--repeat-penalty %v: must be above 0", s.RepeatPenalty)}
	case s.RepeatLastN < 0:
		return usageError{fmt.Errorf("--repeat-last-n %d: must be 0 or more", s.RepeatLastN)}
	}
	return nil
}

// loadModel opens the model and its tokenizer and checks that they fit together.
func loadModel(path string, o modelOptions) (*infer.Model, *mlt.Tokenizer, error) {
	if err := asm.Init(); err != nil {
		return nil, nil, err
	}
	if o.Threads < 1 {
		return nil, nil, usageError{fmt.Errorf("--threads %d: must be at least 1", o.Threads)}
	}
	if o.Ctx < 0 {
		return nil, nil, usageError{fmt.Errorf("--ctx %d: must be positive", o.Ctx)}
	}
	m, err := infer.Open(path)
	if err != nil {
		return nil, nil, err
	}
	tp := o.Tokenizer
	if tp == "" {
		tp = strings.TrimSuffix(path, filepath.Ext(path)) + ".mlt"
	}
	// The tokenizer must be the one written with the model (an interrupted
	// convert's half-renamed pair is completed first).
	tok, err := pair.OpenTokenizer(path, m.PairID(), tp)
	if err != nil {
		m.Close()
		if o.Tokenizer == "" && errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("no tokenizer beside the model (%s); give one with -t: %w", tp, err)
		}
		return nil, nil, err
	}
	if err := infer.CheckTokenizer(m, tok); err != nil {
		m.Close()
		return nil, nil, fmt.Errorf("%s and %s: %w", tp, path, err)
	}
	return m, tok, nil
}

// hugePages copies the model's weights into transparent huge pages, which
// speeds generation up (no TLB miss every 4 KiB of weights) at the cost of a
// second copy in memory; a system without them just keeps the file mapping.
func hugePages(m *infer.Model, verbose bool, errOut io.Writer) {
	t0 := time.Now()
	n, err := m.CopyToHugePages()
	switch {
	case err != nil:
		fmt.Fprintf(errOut, "warning: %v; using the weights in the file mapping\n", err)
	case verbose:
		fmt.Fprintf(errOut, "weights: %s repacked into huge pages in %v\n", mib(n), time.Since(t0).Round(time.Millisecond))
	}
}

// cacheLine prints the session's cache: its element type (what --kv set, read
// back from the session), size and context.
func cacheLine(w io.Writer, s *infer.Session) {
	size := mib(s.CacheBytes())
	if b := s.CacheBytes(); b < 1<<20 {
		size = fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	fmt.Fprintf(w, "cache: %s, %s for a context of %d positions\n", s.KV(), size, s.Ctx())
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func runRun(ctx context.Context, path string, o runOptions, out, errOut io.Writer) error {
	for _, p := range []struct{ flag, path string }{{"--logits", o.Logits}, {"--imatrix", o.Imatrix}} {
		if p.path == "" {
			continue
		}
		if err := checkOutputPath(p.flag, p.path); err != nil {
			return usageError{err}
		}
	}
	m, tok, err := loadModel(path, o.modelOptions)
	if err != nil {
		return err
	}
	defer m.Close()
	if !o.NoHuge {
		hugePages(m, o.Verbose, errOut)
	}
	cfg := m.Config()
	text := o.Prompt
	prompt, stop := []int(nil), tok.StopTokens()
	if o.Chat || o.Template != "" {
		// The model's own template, as krafla chat renders a first turn;
		// it writes bos_token itself, so Encode adds none.
		tmpl, err := chatTemplate(tok, o.Template, "")
		if err != nil {
			return err
		}
		ms, err := chat.Messages([]chat.Message{{Role: "user", Content: o.Prompt}})
		if err != nil {
			return err
		}
		if text, err = tmpl.Render(ms, chat.RenderOptions{AddGenerationPrompt: true}); err != nil {
			return err
		}
		prompt, stop = chat.Encode(tok, text), tmpl.StopIDs()
	} else {
		prompt = tok.EncodePrompt(text)
	}
	switch {
	case len(prompt) == 0 && text == "":
		return usageError{fmt.Errorf("no prompt, and the tokenizer adds no BOS token to start from: give one with -p")}
	case len(prompt) == 0:
		return usageError{errors.New("-p: the prompt encodes to no tokens")}
	}
	s, err := m.NewSession(infer.SessionOptions{Ctx: o.Ctx, Threads: o.Threads, KV: o.KV})
	if err != nil {
		return err
	}
	defer s.Close()
	if len(prompt) > s.Ctx() {
		return fmt.Errorf("the prompt has %d tokens, more than the context of %d positions (raise --ctx, at most max_seq %d)", len(prompt), s.Ctx(), cfg.MaxSeq)
	}
	if o.Verbose {
		fmt.Fprintf(errOut, "model: %s: dim %d, %d layers, %d/%d heads of %d, ffn %d, vocab %d, max_seq %d, weights %s\n",
			path, cfg.Dim, cfg.NLayers, cfg.NHeads, cfg.NKVHeads, cfg.HeadDim, cfg.HiddenDim, cfg.Vocab, cfg.MaxSeq, mib(m.WeightBytes()))
		fmt.Fprintf(errOut, "kernels: %s; threads: %d\n", asm.Features(), s.Threads())
		fmt.Fprintf(errOut, "prompt tokens: %v\n", prompt)
	}
	cacheLine(errOut, s)

	opt := infer.GenerateOptions{MaxTokens: o.N, Stop: stop, Sampler: infer.NewSampler(o.Sampling)}
	if opt.Constraint, err = loadConstraint(o.Schema, o.Grammar, tok, stop); err != nil {
		return err
	}
	var lw *logitsWriter
	if o.Logits != "" {
		if lw, err = newLogitsWriter(o.Logits); err != nil {
			return err
		}
		defer lw.abort()
		opt.Logits = lw.write
	}
	if o.Imatrix != "" {
		s.StartImatrix()
	}
	sd := tok.NewStreamDecoder()
	cpu0 := cputime.Process()
	res, err := infer.Generate(ctx, s, prompt, opt, func(id int) error {
		_, err := io.WriteString(out, sd.Add(id))
		return err
	})
	cpu := cputime.Process() - cpu0
	if err != nil {
		return err
	}
	if _, err := io.WriteString(out, sd.Flush()); err != nil {
		return err
	}
	if o.N != 0 {
		fmt.Fprintln(out)
	}
	if lw != nil {
		if err := lw.close(); err != nil {
			return err
		}
	}
	if o.Imatrix != "" {
		if err := s.TakeImatrix().Write(o.Imatrix); err != nil {
			return err
		}
	}
	if o.Verbose {
		fmt.Fprintf(errOut, "generated tokens: %v\n", res.Tokens)
	}
	fmt.Fprintf(errOut, "prefill: %s in %.3f s, %.1f tokens/s\n", plural(res.PromptTokens, "token"), res.PromptTime.Seconds(), float64(res.PromptTokens)/res.PromptTime.Seconds())
	if res.GeneratedSteps > 0 {
		fmt.Fprintf(errOut, "generation: %s in %.3f s, %.1f tokens/s\n", plural(res.GeneratedSteps, "token"), res.GenerateTime.Seconds(), float64(res.GeneratedSteps)/res.GenerateTime.Seconds())
	}
	if o.Verbose && cpu0 > 0 {
		fmt.Fprintf(errOut, "cpu: %.6f s in prefill and generation (all threads)\n", cpu.Seconds())
	}
	switch res.Reason {
	case infer.StopContext:
		fmt.Fprintf(errOut, "stopped: the context of %d positions is full (raise --ctx, at most max_seq %d)\n", s.Ctx(), cfg.MaxSeq)
	case infer.StopCancel:
		fmt.Fprintln(errOut, "stopped: interrupted")
	case infer.StopToken:
		fmt.Fprintln(errOut, "stopped: end-of-sequence token")
	}
	return nil
}

// logitsWriter writes rows of float32 logits to a temporary file renamed into
// place by close.
type logitsWriter struct {
	f   *atomicfile.File
	w   *bufio.Writer
	buf []byte
}

func newLogitsWriter(path string) (*logitsWriter, error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--logits: %w", err)
	}
	return &logitsWriter{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

func (l *logitsWriter) write(_ int, logits []float32) error {
	l.buf = l.buf[:0]
	for _, v := range logits {
		l.buf = binary.LittleEndian.AppendUint32(l.buf, math.Float32bits(v))
	}
	if _, err := l.w.Write(l.buf); err != nil {
		return fmt.Errorf("--logits %s: %w", l.f.Target(), err)
	}
	return nil
}

func (l *logitsWriter) close() error {
	err := l.w.Flush()
	if err == nil {
		err = l.f.Commit(nil)
	}
	if err != nil {
		l.f.Abort()
		return fmt.Errorf("--logits %s: %w", l.f.Target(), err)
	}
	return nil
}

// abort removes the temporary file unless close committed it.
func (l *logitsWriter) abort() { l.f.Abort() }

// progressTo returns w when it is a terminal (progress lines redraw with \r),
// else io.Discard, so logs and pipes get only the results.
func progressTo(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			return w
		}
	}
	return io.Discard
}

// plural writes n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
