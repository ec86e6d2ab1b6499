package infer

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// StopReason says why generation ended.
type StopReason int

const (
	StopLimit   StopReason = iota // the requested number of tokens was generated
	StopToken                     // an EOS or end-of-turn token was sampled
	StopContext                   // the context is full
	StopCancel                    // the context.Context was cancelled
)

func (r StopReason) String() string {
	switch r {
	case StopToken:
		return "end-of-sequence token"
	case StopContext:
		return "context full"
	case StopCancel:
		return "cancelled"
	}
	return "token limit"
}

// GenerateOptions configure Generate.
type GenerateOptions struct {
	MaxTokens int   // tokens to generate at most; < 0: until a stop token or the context is full
	Stop      []int // token ids that end generation (not emitted)
	Sampler   *Sampler
	// Logits, when set, receives the logits of every prompt position.
	Logits func(i int, logits []float32) error
	// Constraint, when set, restricts every draw (constrained decoding).
	Constraint Constraint
}

// Constraint restricts which tokens may be drawn (a grammar).
type Constraint interface {
	// Restrict sets the logits of the tokens that may not come next to -Inf.
	Restrict(logits []float32) error
	// Accept advances over a drawn token (not a stop token).
	Accept(tok int) error
	// Done reports that the output is complete and nothing may follow.
	Done() bool
}

// GenerateResult reports what Generate did.
type GenerateResult struct {
	Tokens         []int // the generated tokens, stop token excluded
	Reason         StopReason
	PromptTokens   int
	PromptTime     time.Duration
	GenerateTime   time.Duration // time of the tokens after the first
	GeneratedSteps int           // forward passes timed by GenerateTime
}

// Generate evaluates the prompt in batches, then samples up to MaxTokens
// tokens, calling emit with each one as soon as it is drawn.
func Generate(ctx context.Context, s *Session, prompt []int, opt GenerateOptions, emit func(tok int) error) (*GenerateResult, error) {
	if len(prompt) == 0 {
		return nil, errors.New("infer: empty prompt")
	}
	if s.pos+len(prompt) > s.ctx {
		return nil, fmt.Errorf("%w: the prompt has %d tokens, more than the context of %d (raise --ctx, at most max_seq %d)",
			ErrContextFull, len(prompt), s.ctx-s.pos, s.m.cfg.MaxSeq)
	}
	if opt.Sampler == nil {
		opt.Sampler = NewSampler(SamplerOptions{})
	}
	stop := map[int]bool{}
	for _, t := range opt.Stop {
		stop[t] = true
	}
	res := &GenerateResult{PromptTokens: len(prompt)}
	for _, t := range prompt {
		opt.Sampler.Accept(t)
	}
	var next int
	var work []float32
	var cerr error
	sample := func(logits []float32) int {
		if opt.Constraint == nil {
			return opt.Sampler.Sample(logits)
		}
		work = append(work[:0], logits...)
		if err := opt.Constraint.Restrict(work); err != nil && cerr == nil {
			cerr = err
		}
		return opt.Sampler.Sample(work)
	}
	t0 := time.Now()
	err := s.Eval(prompt, opt.Logits != nil, func(i int, logits []float32) error {
		if opt.Logits != nil {
			if err := opt.Logits(i, logits); err != nil {
				return err
			}
		}
		if i == len(prompt)-1 {
			next = sample(logits)
		}
		return nil
	})
	res.PromptTime = time.Since(t0)
	if err != nil {
		return res, err
	}
	t1 := time.Now()
	defer func() { res.GenerateTime = time.Since(t1) }()
	for {
		if opt.MaxTokens >= 0 && len(res.Tokens) >= opt.MaxTokens {
			res.Reason = StopLimit
			return res, nil
		}
		if cerr != nil {
			return res, cerr
		}
		if stop[next] {
			res.Reason = StopToken
			return res, nil
		}
		if opt.Constraint != nil {
			if err := opt.Constraint.Accept(next); err != nil {
				return res, err
			}
		}
		if ctx.Err() != nil {
			res.Reason = StopCancel
			return res, nil
		}
		res.Tokens = append(res.Tokens, next)
		opt.Sampler.Accept(next)
		if emit != nil {
			if err := emit(next); err != nil {
				return res, err
			}
		}
		if opt.MaxTokens >= 0 && len(res.Tokens) >= opt.MaxTokens {
			res.Reason = StopLimit
			return res, nil
		}
		if opt.Constraint != nil && opt.Constraint.Done() {
			res.Reason = StopToken
			return res, nil
		}
		if s.pos >= s.ctx {
			res.Reason = StopContext
			return res, nil
		}
		err := s.Eval([]int{next}, false, func(_ int, logits []float32) error {
			next = sample(logits)
			return nil
		})
		if err != nil {
			return res, err
		}
		res.GeneratedSteps++
	}
}
