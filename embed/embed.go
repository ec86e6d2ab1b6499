package embed

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/mlt"
)

// Pooling modes; the values are the .mlt embedding section's.
const (
	Mean = mlt.PoolMean
	CLS  = mlt.PoolCLS
	Last = mlt.PoolLast
	Max  = mlt.PoolMax
)

// ParsePooling reads "mean", "cls", "last" or "max".
func ParsePooling(s string) (uint8, error) {
	switch s {
	case "mean":
		return Mean, nil
	case "cls":
		return CLS, nil
	case "last", "lasttoken":
		return Last, nil
	case "max":
		return Max, nil
	}
	return 0, fmt.Errorf("embed: pooling %q: want mean, cls, last or max", s)
}

// Options configure an Embedder.
type Options struct {
	Threads int // worker threads; 0: 1
	// Tokens is the number of tokens one forward pass takes, over all the
	// inputs it holds; 0: 512. Longer inputs span several passes.
	Tokens int
	// Pooling overrides the model's (0: the tokenizer's embedding section,
	// else Mean).
	Pooling uint8
	// NoNormalize turns off L2 normalization even where the model asks for it.
	NoNormalize bool
	KV          infer.KVType
}

// Embedder makes embeddings with one model. It is not safe for concurrent
// use.
type Embedder struct {
	m         *infer.Model
	tok       *mlt.Tokenizer
	pooling   uint8
	normalize bool
	exclude   bool // leave the prompt's tokens out of pooling
	tokens    int
	threads   int
	kv        infer.KVType
	b         *infer.Batch // built on first use
}

// ErrTooLong is matched by the error for an input longer than the model's
// context.
var ErrTooLong = errors.New("input longer than the context")

// ErrPromptOnly is matched by the error for an input whose tokens are all
// left out of pooling (EmbedSkip).
var ErrPromptOnly = errors.New("no token after the prompt to pool")

// New makes an Embedder for m and its tokenizer.
func New(m *infer.Model, tok *mlt.Tokenizer, opt Options) (*Embedder, error) {
	if tok != nil {
		if err := infer.CheckTokenizer(m, tok); err != nil {
			return nil, err
		}
	}
	e := &Embedder{m: m, tok: tok, pooling: Mean, normalize: !opt.NoNormalize, tokens: opt.Tokens, threads: opt.Threads, kv: opt.KV}
	if tok != nil && tok.Embed != nil {
		e.pooling = tok.Embed.Pooling
		e.normalize = tok.Embed.Normalize && !opt.NoNormalize
		e.exclude = tok.Embed.ExcludePrompt
	}
	if opt.Pooling != 0 {
		if opt.Pooling < Mean || opt.Pooling > Max {
			return nil, fmt.Errorf("embed: pooling %d unknown", opt.Pooling)
		}
		e.pooling = opt.Pooling
	}
	if e.exclude && e.pooling == CLS {
		return nil, fmt.Errorf("embed: cls pooling cannot leave out the prompt's tokens, as the model's pooling (include_prompt false) asks")
	}
	if e.tokens <= 0 {
		e.tokens = 512
	}
	return e, nil
}

// Close stops the worker threads.
func (e *Embedder) Close() {
	if e.b != nil {
		e.b.Close()
		e.b = nil
	}
}

// Pooling is the pooling mode in use.
func (e *Embedder) Pooling() uint8 { return e.pooling }

// ExcludePrompt reports whether the prompt's tokens are left out of pooling
// (the model's include_prompt false).
func (e *Embedder) ExcludePrompt() bool { return e.exclude }

// Normalize reports whether vectors are L2-normalized.
func (e *Embedder) Normalize() bool { return e.normalize }

// Dim is the length of the vectors.
func (e *Embedder) Dim() int { return e.m.Config().Dim }

// MaxTokens is the longest input, in tokens: the model's context.
func (e *Embedder) MaxTokens() int { return e.m.Config().MaxSeq }

// Prompt returns the text put before an input: the model's prompt called
// name ("" the default prompt, if any). A non-empty task replaces the task
// of a prompt of Qwen3-Embedding's form "Instruct: TASK\nQuery:"; a prompt of
// another form cannot take one.
func (e *Embedder) Prompt(name, task string) (string, error) {
	var em *mlt.Embed
	if e.tok != nil {
		em = e.tok.Embed
	}
	if name == "" {
		if em == nil || em.DefaultPrompt == "" {
			if task != "" {
				return "", fmt.Errorf("embed: a task needs a prompt to put it in")
			}
			return "", nil
		}
		name = em.DefaultPrompt
	}
	p, ok := em.Prompt(name)
	if !ok && name == "query" && em == nil {
		// No sentence-transformers files: Qwen3-Embedding's documented form.
		p, ok = "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:", true
	}
	if !ok {
		return "", fmt.Errorf("embed: the model has no %q prompt", name)
	}
	if task == "" {
		return p, nil
	}
	const head, tail = "Instruct: ", "\nQuery:"
	i := strings.LastIndex(p, tail)
	if !strings.HasPrefix(p, head) || i < len(head) {
		return "", fmt.Errorf("embed: the %q prompt %q is not of the form \"Instruct: TASK\\nQuery:\", so a task cannot be put in it", name, p)
	}
	return head + task + p[i:], nil
}

// Tokenize encodes prompt + text with the special tokens the tokenizer adds
// (BOS, or the post-processor's template: Qwen3-Embedding's EOS).
func (e *Embedder) Tokenize(prompt, text string) ([]int, error) {
	if e.tok == nil {
		return nil, fmt.Errorf("embed: the model has no tokenizer")
	}
	return e.tok.Encode(prompt+text, true), nil
}

// PromptTokens is how many leading tokens of an input that Tokenize made
// from prompt and a text are left out of pooling: none unless the model's
// pooling excludes the prompt (include_prompt false), else the prompt's
// tokens as sentence-transformers counts them (SentenceTransformer's
// _get_prompt_length): the prompt encoded alone with the special tokens,
// less one when its last token is special (the template's EOS or SEP, BOS,
// EOS), so a BOS before the prompt is left out too.
func (e *Embedder) PromptTokens(prompt string) int {
	if !e.exclude || prompt == "" || e.tok == nil {
		return 0
	}
	ids := e.tok.Encode(prompt, true)
	n := len(ids)
	if n > 0 && isSpecial(e.tok, ids[n-1]) {
		n--
	}
	return n
}

// isSpecial reports whether id is BOS, EOS or a token of the
// post-processor's templates: the special tokens the tokenizer adds, what
// Hugging Face's all_special_ids holds of them.
func isSpecial(t *mlt.Tokenizer, id int) bool {
	if id == int(t.BOS) || id == int(t.EOS) {
		return true
	}
	if t.Post != nil {
		for _, tmpl := range [][]mlt.PostItem{t.Post.Single, t.Post.Pair} {
			for _, it := range tmpl {
				for _, x := range it.IDs {
					if int(x) == id {
						return true
					}
				}
			}
		}
	}
	return false
}

// Embed returns one vector per input (token ids), in order; every token is
// pooled.
func (e *Embedder) Embed(inputs [][]int) ([][]float32, error) {
	return e.EmbedSkip(inputs, nil)
}

// EmbedSkip is Embed leaving the first skip[i] tokens of input i out of
// pooling (PromptTokens; nil skips none): they are still evaluated, and the
// tokens after them attend to them, as sentence-transformers masks the
// prompt only in its Pooling module. Mean and max pooling then need a token
// after them; last-token pooling reads the last token either way.
func (e *Embedder) EmbedSkip(inputs [][]int, skip []int) ([][]float32, error) {
	c := e.m.Config()
	if skip != nil && len(skip) != len(inputs) {
		return nil, fmt.Errorf("embed: %d skip counts for %d inputs", len(skip), len(inputs))
	}
	for i, in := range inputs {
		switch {
		case len(in) == 0:
			return nil, fmt.Errorf("embed: input %d has no tokens", i)
		case len(in) > c.MaxSeq:
			return nil, fmt.Errorf("embed: input %d: %d tokens, more than the context of %d: %w", i, len(in), c.MaxSeq, ErrTooLong)
		case skip != nil && skip[i] < 0:
			return nil, fmt.Errorf("embed: input %d: skip count %d is negative", i, skip[i])
		case skip != nil && skip[i] >= len(in):
			return nil, fmt.Errorf("embed: input %d: its %d tokens are all the prompt's (%d): %w", i, len(in), skip[i], ErrPromptOnly)
		}
		for j, t := range in {
			if t < 0 || t >= c.Vocab {
				return nil, fmt.Errorf("embed: input %d: token %d at index %d outside the vocabulary of %d", i, t, j, c.Vocab)
			}
		}
	}
	if e.b == nil {
		b, err := e.m.NewBatch(infer.BatchOptions{Ctx: c.MaxSeq, Threads: e.threads, Tokens: e.tokens})
		if err != nil {
			return nil, err
		}
		e.b = b
	}
	type run struct {
		in   int // input index
		s    *infer.Session
		skip int       // leading tokens not pooled
		done int       // tokens evaluated
		acc  []float64 // mean: running sums
		vec  []float32
	}
	out := make([][]float32, len(inputs))
	var active []*run
	defer func() {
		for _, r := range active {
			r.s.Close()
		}
	}()
	next := 0
	var items []infer.BatchItem
	var runs []*run
	for next < len(inputs) || len(active) > 0 {
		// Start inputs while the pass has room: each pass takes up to
		// e.tokens tokens, from as many inputs as fit.
		budget := e.tokens
		for _, r := range active {
			budget -= min(len(inputs[r.in])-r.done, budget)
		}
		for budget > 0 && next < len(inputs) {
			s, err := e.m.NewCache(len(inputs[next]), e.kv)
			if err != nil {
				return nil, err
			}
			r := &run{in: next, s: s, vec: make([]float32, c.Dim)}
			if skip != nil {
				r.skip = skip[next]
			}
			switch e.pooling {
			case Mean:
				r.acc = make([]float64, c.Dim)
			case Max:
				for k := range r.vec {
					r.vec[k] = float32(math.Inf(-1))
				}
			}
			active = append(active, r)
			budget -= min(len(inputs[next]), budget)
			next++
		}
		items, runs = items[:0], runs[:0]
		left := e.tokens
		for _, r := range active {
			if left == 0 {
				break
			}
			n := min(len(inputs[r.in])-r.done, left)
			items = append(items, infer.BatchItem{Session: r.s, Tokens: inputs[r.in][r.done : r.done+n]})
			runs = append(runs, r)
			left -= n
		}
		err := e.b.EvalHidden(items, func(i, j int, h []float32) error {
			r := runs[i]
			pos := r.done + j
			switch {
			case e.pooling == Mean && pos >= r.skip:
				for k, v := range h {
					r.acc[k] += float64(v)
				}
			case e.pooling == Max && pos >= r.skip:
				for k, v := range h {
					r.vec[k] = max(r.vec[k], v)
				}
			case e.pooling == CLS:
				if pos == 0 {
					copy(r.vec, h)
				}
			case e.pooling == Last:
				if pos == len(inputs[r.in])-1 {
					copy(r.vec, h)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		kept := active[:0]
		for _, r := range active {
			for i, it := range items {
				if runs[i] == r {
					r.done += len(it.Tokens)
				}
			}
			if r.done < len(inputs[r.in]) {
				kept = append(kept, r)
				continue
			}
			if e.pooling == Mean {
				n := float64(len(inputs[r.in]) - r.skip)
				for k, v := range r.acc {
					r.vec[k] = float32(v / n)
				}
			}
			if e.normalize {
				Normalize(r.vec)
			}
			out[r.in] = r.vec
			r.s.Close()
		}
		active = kept
	}
	return out, nil
}

// Normalize scales v to unit L2 norm in place (the norm summed in float64);
// a zero vector stays zero.
func Normalize(v []float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return
	}
	n := math.Sqrt(ss)
	for i, x := range v {
		v[i] = float32(float64(x) / n)
	}
}

// Truncate keeps the first d values of v (Matryoshka embeddings) and
// renormalizes them; d ≤ 0 or ≥ len(v) returns v unchanged.
func Truncate(v []float32, d int) []float32 {
	if d <= 0 || d >= len(v) {
		return v
	}
	v = v[:d:d]
	Normalize(v)
	return v
}
