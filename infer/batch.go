package infer

import "fmt"

// BatchOptions configure a Batch.
type BatchOptions struct {
	Ctx     int // the largest context of the sessions it evaluates; 0: min(max_seq, 4096)
	Threads int // worker threads; 0: 1
	Tokens  int // tokens one Eval takes at most, over all sessions; 0: DefaultBatch
}

// Batch evaluates the tokens of several sessions in one forward pass: every
// matrix product takes the rows of all of them, so the weights are read once
// for all, while attention (and a linear layer's recurrence) reads each
// session's own cache. A session's logits are bit-identical to those of the
// same tokens evaluated by Session.Eval, whatever else shares the pass: each
// row goes through the operations of its sequence alone (the quantized
// products give every output row the bits of the matrix-vector product).
//
// A Batch owns scratch buffers and a worker pool; the sessions keep only their
// caches and positions. A Batch is not safe for concurrent use, and neither is
// a session while a Batch evaluates it.
type Batch struct {
	s    *Session // scratch and pool; its own caches are unused
	tok  []int
	item []int // the item of each classified row
}

// BatchItem is one session's part of a Batch.Eval.
type BatchItem struct {
	Session *Session
	Tokens  []int // evaluated at the session's position, which advances by len(Tokens)
	Logits  bool  // emit the logits of the last token
}

// NewBatch allocates the scratch of passes of up to opt.Tokens tokens and
// starts the worker pool.
func (m *Model) NewBatch(opt BatchOptions) (*Batch, error) {
	ctx, err := m.context(opt.Ctx)
	if err != nil {
		return nil, err
	}
	n := opt.Tokens
	if n <= 0 {
		n = DefaultBatch
	}
	s := &Session{m: m, ctx: ctx, batch: n, pool: newPool(opt.Threads)}
	s.scratch(n, ctx)
	return &Batch{s: s}, nil
}

// Tokens is the number of tokens one Eval takes at most.
func (b *Batch) Tokens() int { return b.s.batch }

// Close stops the worker pool.
func (b *Batch) Close() { b.s.Close() }

// Eval runs every item's tokens through the model in one pass, then calls
// emit(i, logits) for each item i that asked for logits, in item order. The
// logits slice is reused after emit returns; emit may be nil. Items without tokens are
// skipped. Nothing is evaluated when an item is invalid (another model's
// session, a session twice, a full context, a token outside the vocabulary,
// more tokens than Tokens in all). Importance matrices are not collected.
func (b *Batch) Eval(items []BatchItem, emit func(i int, logits []float32) error) error {
	if ran, err := b.pass(items); err != nil || !ran {
		return err
	}
	var fn func(j int, logits []float32) error
	if emit != nil {
		fn = func(j int, logits []float32) error { return emit(b.item[j], logits) }
	}
	return b.s.classify(b.s.rows, fn)
}

// pass checks the items and runs their tokens through the layers, leaving
// the last residuals in s.x (the items' rows in order) and the rows to
// classify in s.rows; false when there were no tokens.
func (b *Batch) pass(items []BatchItem) (bool, error) {
	s := b.s
	c := &s.m.cfg
	total := 0
	for i, it := range items {
		ss := it.Session
		switch {
		case ss == nil:
			return false, fmt.Errorf("infer: batch item %d: no session", i)
		case ss.m != s.m:
			return false, fmt.Errorf("infer: batch item %d: the session belongs to another model", i)
		case ss.ctx > s.ctx:
			return false, fmt.Errorf("infer: batch item %d: the session's context of %d exceeds the batch's %d", i, ss.ctx, s.ctx)
		case ss.pos+len(it.Tokens) > ss.ctx:
			return false, fmt.Errorf("%w: batch item %d: %d tokens at position %d exceed --ctx %d", ErrContextFull, i, len(it.Tokens), ss.pos, ss.ctx)
		}
		for j := range i {
			if items[j].Session == ss && len(items[j].Tokens) > 0 && len(it.Tokens) > 0 {
				return false, fmt.Errorf("infer: batch items %d and %d: the same session", j, i)
			}
		}
		for j, t := range it.Tokens {
			if t < 0 || t >= c.Vocab {
				return false, fmt.Errorf("infer: batch item %d: token %d at index %d outside the vocabulary of %d", i, t, j, c.Vocab)
			}
		}
		total += len(it.Tokens)
	}
	if total > s.batch {
		return false, fmt.Errorf("infer: a batch of %d tokens exceeds the %d it was made for", total, s.batch)
	}
	if total == 0 {
		return false, nil
	}
	s.seqs, s.rows, b.tok, b.item = s.seqs[:0], s.rows[:0], b.tok[:0], b.item[:0]
	for i, it := range items {
		if len(it.Tokens) == 0 {
			continue
		}
		s.seqs = append(s.seqs, seq{layers: it.Session.layers, pos0: it.Session.pos, off: len(b.tok), n: len(it.Tokens)})
		b.tok = append(b.tok, it.Tokens...)
		if it.Logits {
			s.rows = append(s.rows, len(b.tok)-1)
			b.item = append(b.item, i)
		}
	}
	s.layerPass(b.tok, s.seqs)
	for _, it := range items {
		it.Session.pos += len(it.Tokens)
	}
	return true, nil
}
