package infer

import (
	"context"
	"fmt"
	"math"
)

// ChunkOptions say how a long token sequence is cut for perplexity and
// importance statistics: consecutive chunks of Chunk tokens, each evaluated
// from an empty cache; with BOS ≥ 0 every chunk is preceded by that token.
// A remainder shorter than a chunk is not used.
type ChunkOptions struct {
	Chunk int
	BOS   int // -1: none
}

func (o ChunkOptions) chunks(tokens []int, ctxLen int) ([][]int, error) {
	if o.Chunk < 2 {
		return nil, fmt.Errorf("infer: --chunk %d: must be at least 2", o.Chunk)
	}
	in := o.Chunk
	if o.BOS >= 0 {
		in++
	}
	if in > ctxLen {
		return nil, fmt.Errorf("infer: --chunk %d needs a context of %d, more than --ctx %d", o.Chunk, in, ctxLen)
	}
	if len(tokens) < o.Chunk {
		return nil, fmt.Errorf("infer: the text has %d tokens, shorter than one chunk of %d (use a longer text or a smaller --chunk)", len(tokens), o.Chunk)
	}
	var out [][]int
	for i := 0; i+o.Chunk <= len(tokens); i += o.Chunk {
		c := tokens[i : i+o.Chunk]
		if o.BOS >= 0 {
			c = append([]int{o.BOS}, c...)
		}
		out = append(out, c)
	}
	return out, nil
}

// PPLResult holds perplexity and, against a base model, KL divergence.
type PPLResult struct {
	Chunks, Scored int     // chunks evaluated, predictions scored
	NLL            float64 // mean negative log-likelihood (nats)
	PPL            float64 // exp(NLL)
	BaseNLL        float64 // the base model's, when one was given
	BasePPL        float64
	KLD            float64 // mean KL(base ‖ model) per prediction
	MaxKLD         float64
	Top1           float64 // fraction of predictions whose argmax agrees with the base
}

// Perplexity scores every prediction within each chunk: the token after each
// position (the first token of a chunk is scored only when BOS precedes it).
// With base non-nil (another quantization of the same model, same vocabulary)
// it also measures KL divergence and top-1 agreement; progress, if set, is
// called after each chunk.
func Perplexity(ctx context.Context, s, base *Session, tokens []int, opt ChunkOptions, progress func(done, total int, r *PPLResult)) (*PPLResult, error) {
	chunks, err := opt.chunks(tokens, s.ctx)
	if err != nil {
		return nil, err
	}
	vocab := s.m.cfg.Vocab
	if base != nil {
		if base.m.cfg.Vocab != vocab {
			return nil, fmt.Errorf("infer: --kld: base model vocab %d differs from %d", base.m.cfg.Vocab, vocab)
		}
		if len(chunks[0]) > base.ctx {
			return nil, fmt.Errorf("infer: --kld: chunk of %d tokens exceeds the base model's context %d", len(chunks[0]), base.ctx)
		}
	}
	r := &PPLResult{}
	var nll, bnll, kld float64
	var agree int
	baseLP := make([]float64, 0)
	lp := make([]float64, vocab)
	for ci, in := range chunks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s.Reset()
		if base != nil {
			base.Reset()
		}
		// Batch by batch, so that both models' logits of a position are at hand
		// without holding a whole chunk of them.
		for b0 := 0; b0 < len(in); b0 += s.batch {
			b1 := min(b0+s.batch, len(in))
			if base != nil {
				baseLP = baseLP[:0]
				err := base.Eval(in[b0:b1], true, func(i int, logits []float32) error {
					baseLP = append(baseLP, make([]float64, vocab)...)
					LogSoftmax(baseLP[len(baseLP)-vocab:], logits)
					return nil
				})
				if err != nil {
					return nil, err
				}
			}
			err := s.Eval(in[b0:b1], true, func(i int, logits []float32) error {
				p := b0 + i // position in the chunk
				if p+1 >= len(in) {
					return nil
				}
				want := in[p+1]
				LogSoftmax(lp, logits)
				nll -= lp[want]
				r.Scored++
				if base != nil {
					bl := baseLP[i*vocab : (i+1)*vocab]
					bnll -= bl[want]
					k := klDiv(bl, lp)
					kld += k
					r.MaxKLD = math.Max(r.MaxKLD, k)
					if argmax(bl) == argmax(lp) {
						agree++
					}
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
		r.Chunks = ci + 1
		r.NLL = nll / float64(r.Scored)
		r.PPL = math.Exp(r.NLL)
		if base != nil {
			r.BaseNLL = bnll / float64(r.Scored)
			r.BasePPL = math.Exp(r.BaseNLL)
			r.KLD = kld / float64(r.Scored)
			r.Top1 = float64(agree) / float64(r.Scored)
		}
		if progress != nil {
			progress(ci+1, len(chunks), r)
		}
	}
	return r, nil
}

// klDiv returns KL(base ‖ model) = Σ p_base·(log p_base − log p_model) of two
// log-probability vectors; terms whose base probability underflows are skipped.
func klDiv(base, model []float64) float64 {
	var k float64
	for t, b := range base {
		if b > -700 {
			k += math.Exp(b) * (b - model[t])
		}
	}
	return k
}

// LogSoftmax writes the float64 log-probabilities of the logits (the maximum
// subtracted, exponentials summed in increasing index order).
func LogSoftmax(out []float64, logits []float32) {
	m := math.Inf(-1)
	for _, v := range logits {
		m = math.Max(m, float64(v))
	}
	var sum float64
	for _, v := range logits {
		sum += math.Exp(float64(v) - m)
	}
	ls := m + math.Log(sum)
	for i, v := range logits {
		out[i] = float64(v) - ls
	}
}
