package infer

// EvalHidden runs every item's tokens through the model in one pass, as Eval
// does, and then calls emit(i, j, h) for each token j of each item i, in
// order, with h its hidden state after the final norm (what the classifier
// would multiply; dim values, reused after emit returns). Logits are not
// computed, and the items' Logits fields are ignored. Each row's values are
// bit-identical to those of the same tokens evaluated alone (Batch's rule),
// so an embedding pooled from them does not depend on what else shares the
// pass.
func (b *Batch) EvalHidden(items []BatchItem, emit func(i, j int, h []float32) error) error {
	ran, err := b.pass(items)
	if err != nil || !ran {
		return err
	}
	s := b.s
	c := &s.m.cfg
	if emit == nil {
		return nil
	}
	dim := c.Dim
	h := s.xn[:dim]
	row := 0
	for i, it := range items {
		for j := range it.Tokens {
			// The classifier's own normalization (classify), row by row.
			rmsNorm(h, s.x[row*dim:(row+1)*dim], s.m.finalNorm, c.NormEps)
			row++
			if err := emit(i, j, h); err != nil {
				return err
			}
		}
	}
	return nil
}

// NewCache makes a session for a Batch to evaluate: the caches of ctx
// positions and the smallest scratch, with no worker threads of its own
// (the Batch's pool does the work). Close it like any session.
func (m *Model) NewCache(ctx int, kv KVType) (*Session, error) {
	return m.NewSession(SessionOptions{Ctx: ctx, Threads: 1, Batch: 1, KV: kv})
}
