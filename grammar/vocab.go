package grammar

import (
	"bytes"
	"fmt"
	"math"
	"sort"
)

// Vocab is a tokenizer's vocabulary as byte strings, arranged as a byte trie
// for masking. Special tokens are never allowed inside an output; the stop
// tokens are allowed exactly where the output is complete. A Vocab is
// read-only after NewVocab and may be shared.
type Vocab struct {
	n     int
	toks  [][]byte
	spec  []bool
	stops []int
	// trie in preorder: byte, depth (1 = child of the root), index after the
	// subtree, and the tokens ending at the node (tok[first:first+count]).
	tb    []byte
	depth []uint16
	end   []int32
	first []int32
	count []uint16
	tok   []int32
	maxD  int
}

// NewVocab builds a vocabulary from each token's bytes (after byte-fallback
// and metaspace decoding); special[i] marks control tokens; stops lists the
// tokens that end an output. Empty tokens are never allowed. A special token
// is never allowed inside an output, except one given its text (tokens[i]
// non-empty): that one is allowed exactly where a call's literal text
// (CompileCalls' open, prefixes, suffixes, sep and close) reads its text
// (gpt-oss's <|channel|>), and never elsewhere (inside a JSON string).
func NewVocab(tokens [][]byte, special []bool, stops []int) (*Vocab, error) {
	if special != nil && len(special) != len(tokens) {
		return nil, fmt.Errorf("grammar: %d special flags for %d tokens", len(special), len(tokens))
	}
	for _, s := range stops {
		if s < 0 || s >= len(tokens) {
			return nil, fmt.Errorf("grammar: stop token %d outside the vocabulary of %d", s, len(tokens))
		}
	}
	v := &Vocab{n: len(tokens), toks: tokens, spec: special, stops: append([]int(nil), stops...)}
	isStop := map[int]bool{}
	for _, s := range stops {
		isStop[s] = true
	}
	// the trie holds a special token's text between marker bytes, which
	// only CompileCalls' literal parts accept
	key := func(i int32) []byte {
		if special != nil && special[i] {
			return markerText(tokens[i])
		}
		return tokens[i]
	}
	var ids []int32
	for i, t := range tokens {
		if len(t) == 0 || isStop[i] {
			continue
		}
		if special == nil || !special[i] {
			if bytes.IndexByte(t, markerByte) >= 0 {
				continue // 0xFF is never in UTF-8 text: never allowed
			}
		} else {
			if len(t)+2 > 0xFFFF {
				return nil, fmt.Errorf("grammar: token %d is %d bytes long", i, len(t))
			}
			ids = append(ids, int32(i))
			continue
		}
		if len(t) > 0xFFFF {
			return nil, fmt.Errorf("grammar: token %d is %d bytes long", i, len(t))
		}
		ids = append(ids, int32(i))
	}
	sort.SliceStable(ids, func(a, b int) bool { return bytes.Compare(key(ids[a]), key(ids[b])) < 0 })
	var path []int32 // node index per depth-1
	var prev []byte
	closeTo := func(k int) {
		for len(path) > k {
			v.end[path[len(path)-1]] = int32(len(v.tb))
			path = path[:len(path)-1]
		}
	}
	for _, id := range ids {
		t := key(id)
		k := 0
		for k < len(t) && k < len(prev) && k < len(path) && t[k] == prev[k] {
			k++
		}
		closeTo(k)
		for j := k; j < len(t); j++ {
			v.tb = append(v.tb, t[j])
			v.depth = append(v.depth, uint16(j+1))
			v.end = append(v.end, 0)
			v.first = append(v.first, int32(len(v.tok)))
			v.count = append(v.count, 0)
			path = append(path, int32(len(v.tb)-1))
		}
		last := path[len(path)-1]
		if v.count[last] == 0 {
			v.first[last] = int32(len(v.tok))
		}
		v.tok = append(v.tok, id)
		v.count[last]++
		if len(t) > v.maxD {
			v.maxD = len(t)
		}
		prev = t
	}
	closeTo(0)
	return v, nil
}

// Len is the number of tokens.
func (v *Vocab) Len() int { return v.n }

// Words is the length of a mask over v, in uint64 words.
func (v *Vocab) Words() int { return (v.n + 63) / 64 }

// Token returns token id's bytes.
func (v *Vocab) Token(id int) []byte { return v.toks[id] }

// IsStop reports whether id is a stop token.
func (v *Vocab) IsStop(id int) bool {
	for _, s := range v.stops {
		if s == id {
			return true
		}
	}
	return false
}

// Mask sets in dst (v.Words() words, cleared first) the tokens that may come
// next: those whose bytes continue the output, and the stop tokens when the
// output is complete. It returns an error when nothing may come next.
func (s *State) Mask(v *Vocab, dst []uint64) error {
	if len(dst) < v.Words() {
		return fmt.Errorf("grammar: mask of %d words for a vocabulary of %d tokens", len(dst), v.n)
	}
	dst = dst[:v.Words()]
	g := s.g
	g.mu.Lock()
	defer g.mu.Unlock()
	d := g.fresh(s.d)
	s.d = d
	if d.mask != nil && d.maskV == v {
		copy(dst, d.mask)
		return nil
	}
	clear(dst)
	any := false
	if len(d.terms) > 0 {
		st := make([]*dstate, v.maxD+1)
		st[0] = d
		for i := 0; i < len(v.tb); {
			dep := v.depth[i]
			p := st[dep-1]
			var nx *dstate
			c := v.tb[i]
			if p.dead[c>>6]&(1<<(c&63)) == 0 {
				if p.next != nil && p.next[c] != nil {
					nx = p.next[c]
				} else {
					var err error
					if nx, err = g.step(p, c); err != nil {
						return err
					}
				}
			}
			if nx == nil {
				i = int(v.end[i])
				continue
			}
			st[dep] = nx
			if n := v.count[i]; n > 0 {
				for _, id := range v.tok[v.first[i] : v.first[i]+int32(n)] {
					dst[id>>6] |= 1 << (id & 63)
				}
				any = true
			}
			i++
		}
	}
	if d.accept {
		for _, id := range v.stops {
			dst[id>>6] |= 1 << (id & 63)
			any = true
		}
	}
	if !any {
		if d.err != nil {
			return d.err
		}
		return fmt.Errorf("grammar: no token of the vocabulary can continue the output at offset %d", s.off)
	}
	if sz := 8 * len(dst); g.masks+sz <= maxMaskMemo && d.tab == g.tab {
		d.mask, d.maskV = append([]uint64(nil), dst...), v
		g.masks += sz
	}
	return nil
}

// AcceptToken advances s over token id of v: a stop token is accepted only
// where the output is complete (s is then Done), a special token never.
func (s *State) AcceptToken(v *Vocab, id int) error {
	if id < 0 || id >= v.n {
		return fmt.Errorf("grammar: token %d outside the vocabulary", id)
	}
	if v.IsStop(id) {
		if !s.Accepting() {
			return fmt.Errorf("grammar: stop token %d before the output is complete", id)
		}
		return nil
	}
	t := v.toks[id]
	if v.spec != nil && v.spec[id] {
		if len(t) == 0 {
			return fmt.Errorf("grammar: special token %d inside the output", id)
		}
		if err := s.accept(markerText(t)); err != nil {
			return fmt.Errorf("grammar: special token %d (%q) where the output does not read it as a marker", id, t)
		}
		return nil
	}
	if len(t) == 0 {
		return fmt.Errorf("grammar: token %d has no bytes", id)
	}
	return s.Accept(t)
}

// markerByte brackets a special token's text in the trie: 0xFF is never in
// UTF-8 text, so only a grammar's marker literals (marker) accept it.
const markerByte = 0xFF

func markerText(t []byte) []byte {
	out := make([]byte, 0, len(t)+2)
	out = append(out, markerByte)
	out = append(out, t...)
	return append(out, markerByte)
}

// MaskLogits sets to -Inf the logits of the tokens that mask (from
// State.Mask over a vocabulary of n tokens) does not allow, and of every
// token from n on. It goes a mask word (64 tokens) at a time: a word of
// none allowed is a plain fill, one of all allowed is skipped.
func MaskLogits(logits []float32, mask []uint64, n int) {
	ninf := float32(math.Inf(-1))
	for lo := 0; lo < len(logits); lo += 64 {
		hi := min(lo+64, len(logits))
		var m uint64
		if w := lo >> 6; lo < n && w < len(mask) {
			m = mask[w]
			if k := n - lo; k < 64 {
				m &= 1<<k - 1
			}
		}
		switch {
		case m == 0:
			for i := lo; i < hi; i++ {
				logits[i] = ninf
			}
		case m != ^uint64(0):
			for i := lo; i < hi; i++ {
				if m>>(i-lo)&1 == 0 {
					logits[i] = ninf
				}
			}
		}
	}
}
