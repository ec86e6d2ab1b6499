package infer

import (
	"errors"
	"fmt"

	"github.com/krafla/krafla/asm"
)

// ErrContextFull is returned by Eval when the tokens would not fit in the
// session's context.
var ErrContextFull = errors.New("infer: context is full")

// DefaultBatch is the number of prompt tokens that go through each layer together.
const DefaultBatch = 128

// SessionOptions configure a Session.
type SessionOptions struct {
	Ctx     int    // positions the KV cache holds; 0: min(max_seq, 4096); at most max_seq
	Threads int    // worker threads; 0: 1
	Batch   int    // prompt tokens per layer pass; 0: DefaultBatch
	KV      KVType // attention cache element type; 0: KVF32
}

// Session is one sequence being evaluated: its KV cache, recurrent states,
// scratch buffers and worker pool. A Session is not safe for concurrent use.
type Session struct {
	m      *Model
	ctx    int
	batch  int
	pos    int
	pool   *pool
	layers []layerState
	imat   *imatCollector

	// Scratch, sized for one batch of B tokens.
	x, xn, t []float32 // (B, dim): residual, normalized, projection output
	q, g, o  []float32 // (B, q_dim): queries, gate, attention output
	k, v     []float32 // (B, kv_dim)
	kt       []float32 // k in the key cache's block layout (keyIndex), row i as slot i
	h1, h3   []float32 // (B, hidden_dim)
	qa       []int8    // (B, max input width): quantized activations
	da       []float32 // (B, max input width / 32)
	qk       []int8    // Q8_K activations, when a matrix multiplies them: (B, max input width)
	dk       []float32 // (B, max input width / 256)
	bk       []int16   // (B, max input width / 16)
	u, z     []float32 // linear: (B, C), (B, V·dv)
	lb, la   []float32 // linear: (B, V)
	cos, sin [2][]float32
	scores   [][]float32 // per thread: (ctx)
	attnBuf  [][]float32 // per thread: an attention tile's queries and block scores
	logits   []float32   // (B, vocab)
	seqs     []seq       // the sequences of the current pass
	rowSeq   []int       // (B): each row's index in seqs
	rows     []int       // the rows the classifier runs on
	tiles    []attnTile  // the attention's work items of the current layer
}

// layerState is the memory one layer keeps between calls.
type layerState struct {
	k, v  []float32 // attention: (slots, kv_dim); slot of position p = p mod slots
	k16   []uint16  // the same in f16 (KVF16; then k, v are nil)
	v16   []uint16
	slots int
	conv  []float32 // linear: (lin_conv−1, C) the last pre-convolution inputs, oldest first
	s     []float32 // linear: (V, dk, dv) the delta-rule states
}

// context resolves a context length: 0 means min(max_seq, 4096).
func (m *Model) context(ctx int) (int, error) {
	if ctx == 0 {
		ctx = min(m.cfg.MaxSeq, 4096)
	}
	if ctx < 1 || ctx > m.cfg.MaxSeq {
		return 0, fmt.Errorf("infer: --ctx %d: must be between 1 and the model's max_seq %d", ctx, m.cfg.MaxSeq)
	}
	return ctx, nil
}

// CacheBytes is the memory a session's KV caches and recurrent states take
// for a context of ctx positions (0: the default) of element type kv, as
// Session.CacheBytes will report it, computed without allocating.
func (m *Model) CacheBytes(ctx int, kv KVType) (int64, error) {
	ctx, err := m.context(ctx)
	if err != nil {
		return 0, err
	}
	if kv != KVF32 && kv != KVF16 {
		return 0, fmt.Errorf("infer: %v: unknown KV cache type", kv)
	}
	return m.cacheBytes(ctx, kv), nil
}

func (m *Model) cacheBytes(ctx int, kv KVType) int64 {
	c := &m.cfg
	var need int64
	for l := range c.NLayers {
		switch {
		case c.isLinear(l):
			need += 4 * int64(c.LinConv-1) * int64(c.LinQKV())
			need += 4 * int64(c.LinV) * int64(c.LinDK) * int64(c.LinDV)
		case c.isSliding(l):
			need += kv.bytes() * kvLen(min(ctx, c.SlidingWindow), c.KVDim)
		default:
			need += kv.bytes() * kvLen(ctx, c.KVDim)
		}
	}
	return need
}

// NewSession allocates the caches and starts the worker pool.
func (m *Model) NewSession(opt SessionOptions) (*Session, error) {
	c := &m.cfg
	ctx, err := m.context(opt.Ctx)
	if err != nil {
		return nil, err
	}
	if opt.KV != KVF32 && opt.KV != KVF16 {
		return nil, fmt.Errorf("infer: %v: unknown KV cache type", opt.KV)
	}
	b := opt.Batch
	if b <= 0 {
		b = DefaultBatch
	}
	b = min(b, ctx)
	// Size the caches before allocating them: a context the machine cannot
	// hold gets a message, not an out-of-memory crash.
	need := m.cacheBytes(ctx, opt.KV)
	if mem := physicalMemory(); need > mem {
		return nil, fmt.Errorf("infer: a context of %d positions needs a %.1f GiB cache, more than the machine's %.1f GiB of memory; lower --ctx",
			ctx, float64(need)/(1<<30), float64(mem)/(1<<30))
	}
	s := &Session{m: m, ctx: ctx, batch: b, pool: newPool(opt.Threads)}
	s.layers = make([]layerState, c.NLayers)
	for l := range s.layers {
		ls := &s.layers[l]
		if c.isLinear(l) {
			ls.conv = make([]float32, (c.LinConv-1)*c.LinQKV())
			ls.s = make([]float32, c.LinV*c.LinDK*c.LinDV)
			continue
		}
		ls.slots = ctx
		if c.isSliding(l) {
			ls.slots = min(ctx, c.SlidingWindow)
		}
		ls.alloc(opt.KV, c.KVDim)
	}
	s.scratch(b, ctx)
	return s, nil
}

// scratch allocates the buffers of a pass of b rows attending to at most ctx
// positions.
func (s *Session) scratch(b, ctx int) {
	c := &s.m.cfg
	// The linear-attention buffers are empty for a model without such
	// layers (its lin_* sizes are 0).
	in := max(c.Dim, c.QDim, c.HiddenDim, c.LinVDim())
	s.u = make([]float32, b*c.LinQKV())
	s.z = make([]float32, b*c.LinVDim())
	s.lb = make([]float32, b*c.LinV)
	s.la = make([]float32, b*c.LinV)
	s.x = make([]float32, b*c.Dim)
	s.xn = make([]float32, b*c.Dim)
	s.t = make([]float32, b*c.Dim)
	s.q = make([]float32, b*c.QDim)
	s.o = make([]float32, b*max(c.QDim, c.LinVDim()))
	if c.AttnGate {
		s.g = make([]float32, b*c.QDim)
	}
	s.k = make([]float32, b*c.KVDim)
	s.v = make([]float32, b*c.KVDim)
	s.kt = make([]float32, blockLen(b, c.KVDim))
	s.h1 = make([]float32, b*c.HiddenDim)
	s.h3 = make([]float32, b*c.HiddenDim)
	s.qa = make([]int8, b*in)
	s.da = make([]float32, b*in/32)
	if s.m.anyK {
		s.qk = make([]int8, b*in)
		s.dk = make([]float32, b*in/asm.QK)
		s.bk = make([]int16, b*in/16)
	}
	for i := range s.cos {
		s.cos[i] = make([]float32, b*c.RotDim/2)
		s.sin[i] = make([]float32, b*c.RotDim/2)
	}
	s.scores = make([][]float32, s.pool.threads)
	s.attnBuf = make([][]float32, s.pool.threads)
	for i := range s.scores {
		s.scores[i] = make([]float32, ctx)
	}
}

// Close stops the worker pool.
func (s *Session) Close() { s.pool.close() }

// Pos is the number of tokens evaluated so far.
func (s *Session) Pos() int { return s.pos }

// Ctx is the number of positions the session holds.
func (s *Session) Ctx() int { return s.ctx }

// Threads is the number of worker threads.
func (s *Session) Threads() int { return s.pool.threads }

// Reset empties the caches, so the next token is at position 0.
func (s *Session) Reset() {
	s.pos = 0
	for l := range s.layers {
		clear(s.layers[l].conv)
		clear(s.layers[l].s)
	}
}

// KV is the element type of the session's attention caches as allocated
// (KVF32 for a model without attention layers).
func (s *Session) KV() KVType {
	for _, ls := range s.layers {
		if ls.k16 != nil {
			return KVF16
		}
	}
	return KVF32
}

// CacheBytes is the memory of the KV caches and recurrent states.
func (s *Session) CacheBytes() int64 {
	var n int64
	for _, ls := range s.layers {
		n += 4*int64(len(ls.k)+len(ls.v)+len(ls.conv)+len(ls.s)) + 2*int64(len(ls.k16)+len(ls.v16))
	}
	return n
}

// Eval runs tokens through the model at the current position, in batches.
// With all set, emit is called for every token with its logits; otherwise only
// for the last one. The logits slice is reused after emit returns. emit may be
// nil.
func (s *Session) Eval(tokens []int, all bool, emit func(i int, logits []float32) error) error {
	c := &s.m.cfg
	if s.pos+len(tokens) > s.ctx {
		return fmt.Errorf("%w: %d tokens at position %d exceed --ctx %d", ErrContextFull, len(tokens), s.pos, s.ctx)
	}
	for i, t := range tokens {
		if t < 0 || t >= c.Vocab {
			return fmt.Errorf("infer: token %d at index %d outside the vocabulary of %d", t, i, c.Vocab)
		}
	}
	for start := 0; start < len(tokens); start += s.batch {
		end := min(start+s.batch, len(tokens))
		var first int // first token of the batch that needs logits
		switch {
		case all:
			first = 0
		case end == len(tokens):
			first = end - start - 1
		default: // no logits: end = start+s.batch, and row s.batch is past the batch
			first = s.batch
		}
		var fn func(i int, logits []float32) error
		if emit != nil {
			fn = func(i int, logits []float32) error { return emit(start+i, logits) }
		}
		if err := s.forward(tokens[start:end], first, fn); err != nil {
			return err
		}
	}
	return nil
}
