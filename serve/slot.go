package serve

import (
	"context"
	"sync"
	"time"

	"github.com/krafla/krafla/grammar"
	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/mlt"
)

// request is one generation, from the handler to the scheduler.
type request struct {
	ctx      context.Context // the client's: done when it disconnects
	prompt   []int
	p        genParams
	deadline time.Time // the generation ends at this time (finish_reason length)
	stopIDs  map[int]bool
	gvocab   *grammar.Vocab // with p.grammar: the vocabulary its masks cover
	out      *output
}

// tokenLogprob is one generated token's log probability and alternatives.
type tokenLogprob struct {
	id      int
	text    string
	logprob float64
	top     []tokenLogprob
}

// piece is text ready to send, with the log probabilities of the tokens it
// came from (when asked for).
type piece struct {
	text string
	lps  []tokenLogprob
}

// result ends a generation.
type result struct {
	finish           string // "stop" or "length"
	promptTokens     int
	completionTokens int
	cachedTokens     int   // prompt tokens taken from the slot's cache
	err              error // the generation failed (the pieces so far stand)
}

// output carries a request's pieces from the scheduler to its handler. The
// scheduler never waits on it: a slow client slows only its own handler.
type output struct {
	mu     sync.Mutex
	pieces []piece
	res    *result
	ready  chan struct{} // one token: something was added
}

func newOutput() *output { return &output{ready: make(chan struct{}, 1)} }

func (o *output) signal() {
	select {
	case o.ready <- struct{}{}:
	default:
	}
}

func (o *output) push(p piece) {
	if p.text == "" && len(p.lps) == 0 {
		return
	}
	o.mu.Lock()
	o.pieces = append(o.pieces, p)
	o.mu.Unlock()
	o.signal()
}

func (o *output) finish(r result) {
	o.mu.Lock()
	if o.res == nil {
		o.res = &r
	}
	o.mu.Unlock()
	o.signal()
}

// take returns the pieces added since the last call and the result, once set.
func (o *output) take() ([]piece, *result) {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := o.pieces
	o.pieces = nil
	return p, o.res
}

// slot is one sequence of the scheduler: a session whose cache outlives the
// requests it serves, so that the next request can reuse its prefix.
type slot struct {
	id     int
	sess   *infer.Session
	cached []int  // the tokens of positions 0 … Pos−1
	used   uint64 // the step it last served a request, for least-recently-used choice

	req *request // nil: free
	// The state of the request being served.
	pending  []int // prompt tokens not yet evaluated
	next     int   // the token to evaluate next, once generating
	gen      bool  // the prompt is done; the slot generates
	reused   int
	ntok     int
	sampler  *infer.Sampler
	gst      *grammar.State // response_format's grammar; nil: free text
	lazy     []byte         // with a trigger: the bytes generated while it has not appeared
	gmask    []uint64
	gwork    []float32
	counts   map[int]int // completion tokens seen, for the penalties
	dec      *mlt.StreamDecoder
	stop     stopper
	heldLps  []tokenLogprob
	penalize []float32    // scratch: logits with penalties and bias applied
	seen     map[int]bool // scratch: the tokens repeat_penalty touched
}
