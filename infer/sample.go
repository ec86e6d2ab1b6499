package infer

import (
	"cmp"
	"container/heap"
	"math"
	"math/rand/v2"
	"slices"
)

// SamplerOptions choose how the next token is drawn from the logits.
type SamplerOptions struct {
	Temp          float32 // 0 or less: greedy (argmax, lowest id on ties)
	TopK          int     // keep the K most likely tokens; 0: all
	TopP          float32 // keep the smallest set whose probability reaches TopP; 0 or ≥ 1: off
	MinP          float32 // drop tokens below MinP × the top probability; 0: off
	RepeatPenalty float32 // divide positive / multiply negative logits of recent tokens; 0 or 1: off
	RepeatLastN   int     // how many recent tokens the penalty covers; 0: 64
	Seed          uint64  // the same seed, logits and options draw the same tokens
}

// Sampler draws tokens. The steps, in order: repetition penalty; greedy when
// Temp ≤ 0; logits divided by Temp; top-k; softmax; min-p; top-p over what is
// left (with the probability mass of the top-k set as the total); a draw from
// the kept tokens in order of decreasing probability (ties: lower id first).
// +Inf logits share all the probability; a min-p that keeps no token (above
// 1) keeps the most likely one.
type Sampler struct {
	opt    SamplerOptions
	rng    *rand.Rand
	recent []int
	work   []float32
	cand   []cand
}

type cand struct {
	id int
	p  float32
}

// NewSampler returns a sampler seeded with opt.Seed.
func NewSampler(opt SamplerOptions) *Sampler {
	if opt.RepeatLastN <= 0 {
		opt.RepeatLastN = 64
	}
	return &Sampler{opt: opt, rng: rand.New(rand.NewPCG(opt.Seed, opt.Seed^0x9e3779b97f4a7c15))}
}

// Accept records a token of the context (prompt or generated) for the
// repetition penalty.
func (s *Sampler) Accept(tok int) {
	s.recent = append(s.recent, tok)
	if n := len(s.recent); n > 4*s.opt.RepeatLastN {
		s.recent = append(s.recent[:0], s.recent[n-s.opt.RepeatLastN:]...)
	}
}

// Sample returns the next token; logits are not modified. A logit of -Inf
// (a token masked out by a grammar) is never drawn unless all are.
func (s *Sampler) Sample(logits []float32) int {
	x := logits
	if p := s.opt.RepeatPenalty; p != 0 && p != 1 {
		s.work = append(s.work[:0], logits...)
		x = s.work
		r := s.recent[max(0, len(s.recent)-s.opt.RepeatLastN):]
		seen := map[int]bool{}
		for _, t := range r {
			if t < 0 || t >= len(x) || seen[t] {
				continue
			}
			seen[t] = true
			if x[t] > 0 {
				x[t] /= p
			} else {
				x[t] *= p
			}
		}
	}
	if s.opt.Temp <= 0 {
		return argmax(x)
	}
	// Top-k by logit (a min-heap of the k best), or every token.
	c := s.cand[:0]
	if k := s.opt.TopK; k > 0 && k < len(x) {
		h := candHeap(c)
		for id, v := range x {
			if math.IsInf(float64(v), -1) {
				continue // masked out (constrained decoding)
			}
			if len(h) < k {
				heap.Push(&h, cand{id, v})
			} else if worse(h[0], cand{id, v}) {
				h[0] = cand{id, v}
				heap.Fix(&h, 0)
			}
		}
		c = h
	} else {
		for id, v := range x {
			if !math.IsInf(float64(v), -1) {
				c = append(c, cand{id, v})
			}
		}
	}
	if len(c) == 0 {
		return argmax(x)
	}
	// Softmax of logit/T over the candidates, in float64.
	inv := 1 / float64(s.opt.Temp)
	m := math.Inf(-1)
	for _, e := range c {
		m = math.Max(m, float64(e.p))
	}
	var total float64
	inf := math.IsInf(m, 1) // +Inf logits share all the probability
	for i := range c {
		p := math.Exp((float64(c[i].p) - m) * inv)
		if inf {
			p = 0
			if math.IsInf(float64(c[i].p), 1) {
				p = 1
			}
		}
		c[i].p = float32(p)
		total += p
	}
	// Min-p: keep p ≥ MinP·pmax (independent of renormalization). pmax is 1:
	// the maximum's exp(0), or a +Inf logit's 1 (NaN logits make every p NaN,
	// which no limit keeps).
	if s.opt.MinP > 0 {
		lim := float64(s.opt.MinP)
		k, top := 0, c[0]
		for _, e := range c {
			if e.p > top.p || e.p == top.p && e.id < top.id {
				top = e
			}
			if float64(e.p) >= lim {
				c[k] = e
				k++
			}
		}
		if k == 0 { // MinP > 1: the most likely token stays (lowest id on ties)
			c[0], k = top, 1
		}
		c = c[:k]
	}
	slices.SortFunc(c, func(a, b cand) int {
		if a.p != b.p {
			return cmp.Compare(b.p, a.p)
		}
		return cmp.Compare(a.id, b.id)
	})
	if tp := float64(s.opt.TopP); tp > 0 && tp < 1 {
		cum := 0.0
		for i, e := range c {
			cum += float64(e.p)
			if cum >= tp*total {
				c = c[:i+1]
				break
			}
		}
	}
	s.cand = c[:0]
	var kept float64
	for _, e := range c {
		kept += float64(e.p)
	}
	r := s.rng.Float64() * kept
	for _, e := range c {
		r -= float64(e.p)
		if r < 0 {
			return e.id
		}
	}
	return c[len(c)-1].id
}

// argmax returns the index of the largest value, the lowest on ties.
func argmax[T float32 | float64](x []T) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// worse reports whether a ranks below b (lower logit, or equal and higher id).
func worse(a, b cand) bool {
	if a.p != b.p {
		return a.p < b.p
	}
	return a.id > b.id
}

type candHeap []cand

func (h candHeap) Len() int           { return len(h) }
func (h candHeap) Less(i, j int) bool { return worse(h[i], h[j]) }
func (h candHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)        { *h = append(*h, x.(cand)) }
func (h *candHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
