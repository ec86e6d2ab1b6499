package serve

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"time"

	"github.com/krafla/krafla/grammar"
	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/mlt"
)

// errShutdown ends the requests still running when the grace period is over.
var errShutdown = errors.New("the server is shutting down")

// scheduler is the one goroutine that owns the model, the batch and the
// slots. Each step evaluates, in one Batch.Eval, the next token of every
// generating slot and then chunks of the prompts still pending, up to the
// batch's token budget; handlers reach it only through the queue and their
// request's output.
type scheduler struct {
	m     *infer.Model
	tok   *mlt.Tokenizer
	batch *infer.Batch
	slots []*slot
	queue chan *request
	met   *metrics
	step  uint64
	items []infer.BatchItem
	owner []*slot   // the slot of each item
	lp    []float64 // scratch: log probabilities of one row
	// beforeStep, when set (tests), runs before every step that has work.
	beforeStep func()
	maxItems   int // the most sequences one step evaluated
	lastBusy   int // the busy slots last added to met.busy
}

func newScheduler(m *infer.Model, tok *mlt.Tokenizer, cfg *Config, met *metrics) (*scheduler, error) {
	b, err := m.NewBatch(infer.BatchOptions{Ctx: cfg.Ctx, Threads: cfg.Threads, Tokens: max(cfg.BatchTokens, cfg.Parallel)})
	if err != nil {
		return nil, err
	}
	s := &scheduler{m: m, tok: tok, batch: b, queue: make(chan *request, cfg.Queue), met: met}
	for i := range cfg.Parallel {
		sess, err := m.NewSession(infer.SessionOptions{Ctx: cfg.Ctx, Threads: 1, Batch: 1, KV: cfg.KV})
		if err != nil {
			s.close()
			return nil, err
		}
		s.slots = append(s.slots, &slot{id: i, sess: sess})
	}
	return s, nil
}

func (s *scheduler) close() {
	for _, sl := range s.slots {
		sl.sess.Close()
	}
	s.batch.Close()
}

// submit queues r without waiting; false means the queue is full.
func (s *scheduler) submit(r *request) bool {
	s.met.queued.Add(1) // before the send, so the gauge never goes below 0
	select {
	case s.queue <- r:
		return true
	default:
		s.met.queued.Add(-1)
		return false
	}
}

// run steps until ctx is done, then ends every request still running or
// queued with errShutdown.
func (s *scheduler) run(ctx context.Context) {
	defer s.abortAll()
	for {
		if s.busy() == 0 {
			select {
			case r := <-s.queue:
				s.met.queued.Add(-1)
				s.admit(r)
			case <-ctx.Done():
				return
			}
		}
		if ctx.Err() != nil {
			return
		}
		s.admitQueued()
		s.reap(time.Now())
		if s.busy() == 0 {
			continue
		}
		if s.beforeStep != nil {
			s.beforeStep()
		}
		if err := s.stepOnce(); err != nil {
			// A failed pass leaves the caches unknown: end every request.
			for _, sl := range s.slots {
				if sl.req != nil {
					s.end(sl, "", err)
				}
				sl.sess.Reset()
				sl.cached = sl.cached[:0]
			}
		}
	}
}

func (s *scheduler) busy() int {
	n := 0
	for _, sl := range s.slots {
		if sl.req != nil {
			n++
		}
	}
	// The gauge is the server's, shared by every loaded model: add the change.
	s.met.busy.Add(int64(n - s.lastBusy))
	s.lastBusy = n
	return n
}

// admitQueued gives queued requests the free slots.
func (s *scheduler) admitQueued() {
	for s.busy() < len(s.slots) {
		select {
		case r := <-s.queue:
			s.met.queued.Add(-1)
			s.admit(r)
		default:
			return
		}
	}
}

// admit starts r on the free slot whose cache shares the longest prefix with
// its prompt, else the least recently used one, reusing that prefix.
func (s *scheduler) admit(r *request) {
	if r.ctx.Err() != nil {
		r.out.finish(result{err: r.ctx.Err()})
		return
	}
	var best *slot
	bestLen := -1
	for _, sl := range s.slots {
		if sl.req != nil {
			continue
		}
		n := commonPrefix(sl.cached, r.prompt)
		if n > bestLen || (n == bestLen && sl.used < best.used) {
			best, bestLen = sl, n
		}
	}
	sl := best
	// At least one prompt token is evaluated, for the logits of the first draw.
	k := min(bestLen, len(r.prompt)-1)
	if !sl.sess.CanRewind(k) {
		k = 0
	}
	if err := sl.sess.Rewind(k); err != nil {
		r.out.finish(result{err: err})
		return
	}
	sl.cached = sl.cached[:k]
	seed := r.p.seed
	if !r.p.seeded {
		seed = rand.Uint64()
	}
	topP := float32(r.p.topP)
	if topP == 0 {
		// OpenAI's top_p 0 keeps the most likely token; the sampler's 0 is off.
		topP = math.SmallestNonzeroFloat32
	}
	*sl = slot{id: sl.id, sess: sl.sess, cached: sl.cached, used: s.step, penalize: sl.penalize,
		req: r, pending: r.prompt[k:], reused: k, dec: s.tok.NewStreamDecoder(), stop: stopper{stops: r.p.stop},
		sampler: infer.NewSampler(infer.SamplerOptions{Temp: float32(r.p.temperature), TopK: r.p.topK, TopP: topP, MinP: float32(r.p.minP), Seed: seed})}
	if r.p.presence != 0 || r.p.frequency != 0 {
		sl.counts = map[int]int{}
	}
	if r.p.grammar != nil && r.gvocab != nil {
		if r.p.trigger == "" {
			sl.gst, sl.gmask = r.p.grammar.NewState(), make([]uint64, r.gvocab.Words())
		} else {
			sl.lazy = []byte{}
		}
	}
	s.met.promptTokens.Add(int64(len(r.prompt)))
	s.met.reusedTokens.Add(int64(k))
}

// reap frees the slots of requests whose client went away, and ends those
// past their deadline.
func (s *scheduler) reap(now time.Time) {
	for _, sl := range s.slots {
		if sl.req == nil {
			continue
		}
		if err := sl.req.ctx.Err(); err != nil {
			s.end(sl, "", err)
		} else if !sl.req.deadline.IsZero() && now.After(sl.req.deadline) {
			s.end(sl, "length", nil)
		}
	}
}

// stepOnce runs one batched pass and handles its logits.
func (s *scheduler) stepOnce() error {
	s.step++
	s.items, s.owner = s.items[:0], s.owner[:0]
	budget := s.batch.Tokens()
	for _, sl := range s.slots {
		if sl.req != nil && sl.gen {
			s.items = append(s.items, infer.BatchItem{Session: sl.sess, Tokens: []int{sl.next}, Logits: true})
			s.owner = append(s.owner, sl)
			budget--
		}
	}
	// Prompt chunks, the longest-waiting request first.
	for budget > 0 {
		var pick *slot
		for _, sl := range s.slots {
			if sl.req != nil && !sl.gen && len(sl.pending) > 0 && !s.owns(sl) && (pick == nil || sl.used < pick.used || (sl.used == pick.used && sl.id < pick.id)) {
				pick = sl
			}
		}
		if pick == nil {
			break
		}
		n := min(budget, len(pick.pending))
		s.items = append(s.items, infer.BatchItem{Session: pick.sess, Tokens: pick.pending[:n], Logits: n == len(pick.pending)})
		s.owner = append(s.owner, pick)
		budget -= n
	}
	s.maxItems = max(s.maxItems, len(s.items))
	err := s.batch.Eval(s.items, func(i int, logits []float32) error {
		s.token(s.owner[i], logits)
		return nil
	})
	if err != nil {
		return err
	}
	for i, it := range s.items {
		sl := s.owner[i]
		sl.cached = append(sl.cached, it.Tokens...)
		if !sl.gen && sl.req != nil {
			sl.pending = sl.pending[len(it.Tokens):]
		}
	}
	// Prompts whose last chunk ran now generate (token set gen already).
	return nil
}

func (s *scheduler) owns(sl *slot) bool {
	for _, o := range s.owner {
		if o == sl {
			return true
		}
	}
	return false
}

// token draws the next token of sl from logits and sends its text.
func (s *scheduler) token(sl *slot, logits []float32) {
	r := sl.req
	p := &r.p
	x := logits
	rp := float32(p.repeatPenalty)
	repeat := rp != 0 && rp != 1 && p.repeatLastN != 0
	if sl.counts != nil || p.logitBias != nil || repeat {
		sl.penalize = append(sl.penalize[:0], logits...)
		x = sl.penalize
		if repeat {
			sl.repeatPenalty(x, rp, p.repeatLastN)
		}
		for t, c := range sl.counts {
			x[t] -= float32(c)*float32(p.frequency) + float32(p.presence)
		}
		for t, b := range p.logitBias {
			x[t] += b
		}
	}
	if sl.gst != nil {
		// Constrained: the tokens the grammar masks out get -Inf.
		if err := sl.gst.Mask(r.gvocab, sl.gmask); err != nil {
			s.end(sl, "", err)
			return
		}
		sl.gwork = append(sl.gwork[:0], x...)
		x = sl.gwork
		grammar.MaskLogits(x, sl.gmask, r.gvocab.Len())
	}
	id := sl.sampler.Sample(x)
	if !sl.gen {
		// The prompt's last chunk: the pending tokens are consumed by stepOnce.
		sl.gen = true
	}
	if r.stopIDs[id] {
		s.end(sl, "stop", nil)
		return
	}
	if sl.gst != nil {
		if err := sl.gst.AcceptToken(r.gvocab, id); err != nil {
			s.end(sl, "", err)
			return
		}
	} else if p.trigger != "" && r.gvocab != nil && sl.lazy != nil {
		s.lazyGrammar(sl, id)
	}
	sl.ntok++
	s.met.generated(time.Now())
	if sl.counts != nil {
		sl.counts[id]++
	}
	if p.logprobs {
		sl.heldLps = append(sl.heldLps, s.logprob(logits, id, p.topLogprobs))
	}
	text, hit := sl.stop.add(sl.dec.Add(id))
	s.send(sl, text)
	switch {
	case hit, sl.gst != nil && sl.gst.Done():
		s.end(sl, "stop", nil)
	case p.maxTokens > 0 && sl.ntok >= p.maxTokens:
		s.end(sl, "length", nil)
	case sl.sess.Pos() >= sl.sess.Ctx():
		// The context is full: the token just drawn cannot be evaluated.
		s.end(sl, "length", nil)
	default:
		sl.next = id
	}
}

// lazyGrammar watches the bytes of an unconstrained answer for the
// trigger (tool_choice auto: the format's call marker) and, once it is
// there, constrains the rest: the grammar reads the text from the trigger
// on. A text the grammar cannot continue stays free (and is content).
func (s *scheduler) lazyGrammar(sl *slot, id int) {
	r := sl.req
	sl.lazy = append(sl.lazy, r.gvocab.Token(id)...)
	i := bytes.Index(sl.lazy, []byte(r.p.trigger))
	if i < 0 {
		// Only the tail that may still begin the trigger is kept.
		if keep := len(r.p.trigger) - 1; len(sl.lazy) > keep {
			sl.lazy = append(sl.lazy[:0], sl.lazy[len(sl.lazy)-keep:]...)
		}
		return
	}
	st := r.p.grammar.NewState()
	if st.Accept(sl.lazy[i:]) != nil {
		sl.lazy = nil // not a call the grammar knows: free text to the end
		return
	}
	sl.gst, sl.gmask, sl.lazy = st, make([]uint64, r.gvocab.Words()), nil
}

// repeatPenalty applies rp to the logits of the distinct tokens among the
// last n the slot evaluated (n < 0: all), those of this step included: the
// token just drawn, or the prompt's last chunk.
func (sl *slot) repeatPenalty(x []float32, rp float32, n int) {
	cur := sl.pending
	if sl.gen {
		cur = []int{sl.next}
	}
	hist := sl.cached
	if total := len(hist) + len(cur); n < 0 || n > total {
		n = total
	}
	if sl.seen == nil {
		sl.seen = map[int]bool{}
	}
	clear(sl.seen)
	for i := range n {
		var t int
		if k := len(cur) - 1 - i; k >= 0 {
			t = cur[k]
		} else {
			t = hist[len(hist)-1-(i-len(cur))]
		}
		if t < 0 || t >= len(x) || sl.seen[t] {
			continue
		}
		sl.seen[t] = true
		if x[t] > 0 {
			x[t] /= rp
		} else {
			x[t] *= rp
		}
	}
}

// send passes text, with the log probabilities held since the last text, to
// the handler.
func (s *scheduler) send(sl *slot, text string) {
	if text == "" {
		return
	}
	sl.req.out.push(piece{text: text, lps: sl.heldLps})
	sl.heldLps = nil
}

// end finishes sl's request and frees the slot. A finish other than a stop
// string sends the text held back; err reports a failure (or a client gone).
func (s *scheduler) end(sl *slot, finish string, err error) {
	r := sl.req
	if err == nil && finish != "" {
		if tail := sl.dec.Flush(); tail != "" {
			text, hit := sl.stop.add(tail)
			s.send(sl, text)
			if hit {
				finish = "stop"
			}
		}
		s.send(sl, sl.stop.flush())
		if len(sl.heldLps) > 0 {
			r.out.push(piece{lps: sl.heldLps})
		}
	}
	sl.req, sl.gen, sl.pending, sl.heldLps, sl.counts = nil, false, nil, nil, nil
	sl.used = s.step
	s.busy()
	if err != nil {
		s.met.failed.Add(1)
	}
	r.out.finish(result{finish: finish, promptTokens: len(r.prompt), completionTokens: sl.ntok, cachedTokens: sl.reused, err: err})
}

// abortAll ends every running and queued request with errShutdown.
func (s *scheduler) abortAll() {
	for _, sl := range s.slots {
		if sl.req != nil {
			s.end(sl, "", errShutdown)
		}
	}
	for {
		select {
		case r := <-s.queue:
			s.met.queued.Add(-1)
			r.out.finish(result{err: errShutdown})
		default:
			s.busy()
			return
		}
	}
}

// logprob returns the log probability of id under the softmax of logits
// (infer.LogSoftmax) and the top alternatives (by logit, lower id first on
// ties).
func (s *scheduler) logprob(logits []float32, id, top int) tokenLogprob {
	if len(s.lp) < len(logits) {
		s.lp = make([]float64, len(logits))
	}
	lps := s.lp[:len(logits)]
	infer.LogSoftmax(lps, logits)
	lp := tokenLogprob{id: id, text: s.tok.Decode([]int{id}), logprob: lps[id]}
	if top <= 0 {
		return lp
	}
	best := make([]int, 0, top+1)
	for t, v := range logits {
		if len(best) == top && v <= logits[best[top-1]] {
			continue
		}
		i := len(best)
		for i > 0 && v > logits[best[i-1]] {
			i--
		}
		best = append(best, 0)
		copy(best[i+1:], best[i:])
		best[i] = t
		if len(best) > top {
			best = best[:top]
		}
	}
	for _, t := range best {
		lp.top = append(lp.top, tokenLogprob{id: t, text: s.tok.Decode([]int{t}), logprob: lps[t]})
	}
	return lp
}

func commonPrefix(a, b []int) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
