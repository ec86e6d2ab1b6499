package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/krafla/krafla/infer"
)

func init() { addCommand(newPPLCmd) }

type pplOptions struct {
	modelOptions
	File  string
	Chunk int
	KLD   string
}

func newPPLCmd() *cobra.Command {
	var o pplOptions
	c := &cobra.Command{
		Use:   "ppl MODEL.mlb -f TEXT",
		Short: "Perplexity over a text, and KL divergence against another quantization",
		Long: `ppl cuts the tokenized text into chunks of --chunk tokens, evaluates each from
an empty cache (after BOS when the tokenizer adds one) and reports the
perplexity of the predictions inside the chunks. With --kld BASE.mlb it runs
the same chunks through BASE (another quantization of the same model, same
tokenizer) and reports the mean KL divergence KL(base ‖ model) per prediction
and how often both models rank the same token first.`,
		Example: `  krafla ppl llama-q4.mlb -f wiki.txt --chunk 512 --kld llama-q8.mlb`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.File == "" {
				return usageError{fmt.Errorf("-f is required\nRun '%s --help' for usage.", cmd.CommandPath())}
			}
			p, err := modelPath(cmd.Context(), args[0], cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return runPPL(cmd.Context(), p, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.bind(c)
	o.bindKV(c)
	c.Flags().StringVarP(&o.File, "file", "f", "", "text file (required)")
	c.Flags().IntVar(&o.Chunk, "chunk", 0, "tokens per chunk (0: 512, or the model's context if shorter)")
	c.Flags().StringVar(&o.KLD, "kld", "", "base model .mlb to compare against")
	return c
}

// chunkSession opens a session whose context holds one chunk (and BOS). A
// chunk of 0 means 512 tokens, or less where the model's context is shorter;
// it returns the chunk length it settled on.
func chunkSession(m *infer.Model, o modelOptions, chunk int, bos bool) (*infer.Session, int, error) {
	extra := 0
	if bos {
		extra = 1
	}
	max := m.Config().MaxSeq
	if chunk == 0 {
		chunk = min(512, max-extra)
		if o.Ctx > 0 {
			chunk = min(chunk, o.Ctx-extra)
		}
	}
	if chunk < 2 {
		return nil, 0, usageError{fmt.Errorf("--chunk %d: must be at least 2", chunk)}
	}
	need := chunk + extra
	ctx := o.Ctx
	if ctx == 0 {
		ctx = need
	}
	if need > max {
		return nil, 0, fmt.Errorf("--chunk %d needs %d positions, more than the model's max_seq %d", chunk, need, max)
	}
	if ctx < need {
		return nil, 0, usageError{fmt.Errorf("--chunk %d needs %d positions, more than --ctx %d", chunk, need, ctx)}
	}
	s, err := m.NewSession(infer.SessionOptions{Ctx: ctx, Threads: o.Threads, KV: o.KV})
	return s, chunk, err
}

func readText(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("-f: %w", err)
	}
	return string(b), nil
}

// chunkPass is what ppl and imatrix share: the model, a session whose context
// holds one chunk, the tokenized text of -f, and the chunk options (BOS before
// each chunk when the tokenizer adds one).
type chunkPass struct {
	m   *infer.Model
	s   *infer.Session
	ids []int
	opt infer.ChunkOptions
}

// openChunkPass loads the model at path with its tokenizer, reads and
// tokenizes the text file, and opens the session; Close releases them.
func openChunkPass(path, file string, o modelOptions, chunk int) (*chunkPass, error) {
	m, tok, err := loadModel(path, o)
	if err != nil {
		return nil, err
	}
	text, err := readText(file)
	if err != nil {
		m.Close()
		return nil, err
	}
	bos := infer.AddBOS(tok)
	s, chunk, err := chunkSession(m, o, chunk, bos)
	if err != nil {
		m.Close()
		return nil, err
	}
	p := &chunkPass{m: m, s: s, ids: tok.Encode(text, false), opt: infer.ChunkOptions{Chunk: chunk, BOS: -1}}
	if bos {
		p.opt.BOS = int(tok.BOS)
	}
	return p, nil
}

func (p *chunkPass) Close() {
	p.s.Close()
	p.m.Close()
}

func runPPL(ctx context.Context, path string, o pplOptions, out, errOut io.Writer) error {
	p, err := openChunkPass(path, o.File, o.modelOptions, o.Chunk)
	if err != nil {
		return err
	}
	defer p.Close()
	prog := progressTo(errOut)
	var base *infer.Session
	if o.KLD != "" {
		bm, err := infer.Open(o.KLD)
		if err != nil {
			return fmt.Errorf("--kld: %w", err)
		}
		defer bm.Close()
		if bc, mc := bm.Config(), p.m.Config(); bc.Vocab != mc.Vocab || bc.Dim != mc.Dim || bc.NLayers != mc.NLayers {
			return fmt.Errorf("--kld %s: not the same model as %s (vocab %d, dim %d, %d layers against %d, %d, %d)",
				o.KLD, path, bc.Vocab, bc.Dim, bc.NLayers, mc.Vocab, mc.Dim, mc.NLayers)
		}
		bo := o.modelOptions
		bo.KV = infer.KVF32 // --kv is MODEL's: the base keeps f32, so ppl M --kv f16 --kld M measures the f16 cache
		if base, _, err = chunkSession(bm, bo, p.opt.Chunk, p.opt.BOS >= 0); err != nil {
			return fmt.Errorf("--kld: %w", err)
		}
		defer base.Close()
	}
	r, err := infer.Perplexity(ctx, p.s, base, p.ids, p.opt, func(done, total int, r *infer.PPLResult) {
		fmt.Fprintf(prog, "\rchunk %d/%d: ppl %.4f", done, total, r.PPL)
		if done == total {
			fmt.Fprintln(prog)
		}
	})
	if err != nil {
		return fmt.Errorf("%s: %w", o.File, err)
	}
	fmt.Fprintf(out, "tokens: %d in %d chunks of %d, %d predictions scored\n", len(p.ids), r.Chunks, p.opt.Chunk, r.Scored)
	fmt.Fprintf(out, "perplexity: %.4f (mean NLL %.5f)\n", r.PPL, r.NLL)
	if base != nil {
		fmt.Fprintf(out, "base perplexity: %.4f (mean NLL %.5f)\n", r.BasePPL, r.BaseNLL)
		fmt.Fprintf(out, "KL divergence: mean %.6f, max %.6f\n", r.KLD, r.MaxKLD)
		fmt.Fprintf(out, "top-1 agreement: %.2f%%\n", 100*r.Top1)
	}
	return nil
}
