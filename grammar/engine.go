package grammar

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"unsafe"
)

// Grammar is a compiled grammar. It is safe for concurrent use: its caches
// are behind a mutex.
type Grammar struct {
	prog  []sym     // all alternatives, each ending in kEnd
	alts  [][]int32 // per rule, the start of each alternative
	names []string
	root  int32

	mu    sync.Mutex
	tab   *tables
	start *dstate
	masks int // bytes of cached masks
}

// tables interns parse-stack frames and DFA states. They are replaced (not
// cleared) when they grow past maxDFA states, so states still held keep
// their old tables until they move on.
type tables struct {
	nodes []node
	nmap  map[[2]int32]int32
	dmap  map[string]*dstate
	n     int
}

type node struct{ pos, parent, depth int32 }

// dstate is a set of parse stacks whose tops are byte symbols, interned.
type dstate struct {
	tab    *tables
	terms  []int32 // node ids, sorted
	accept bool    // some stack completed the root rule
	next   *[256]*dstate
	dead   [4]uint64 // bytes known to lead nowhere
	mask   []uint64  // cached mask (per the vocab in maskV)
	maskV  *Vocab
	err    error // stack or state overflow on some path
}

// ErrGrammar marks errors in a grammar or schema (the caller's input).
var ErrGrammar = errors.New("grammar")

func newTables() *tables {
	return &tables{nmap: map[[2]int32]int32{}, dmap: map[string]*dstate{}}
}

// build flattens, checks and returns the grammar rooted at rule root.
func (b *builder) build(root int32) (*Grammar, error) {
	if b.err != nil {
		return nil, b.err
	}
	n := len(b.rules)
	// productive rules; alternatives using an unproductive rule are dropped
	prod := make([]bool, n)
	for changed := true; changed; {
		changed = false
		for r, alts := range b.rules {
			if prod[r] {
				continue
			}
			for _, a := range alts {
				if altOK(a, prod) {
					prod[r], changed = true, true
					break
				}
			}
		}
	}
	if !prod[root] {
		return nil, fmt.Errorf("grammar: rule %s matches no string", b.names[root])
	}
	rules := make([][][]sym, n)
	for r, alts := range b.rules {
		for _, a := range alts {
			if altOK(a, prod) {
				rules[r] = append(rules[r], a)
			}
		}
	}
	// nullable rules, then left recursion (through nullable prefixes)
	null := make([]bool, n)
	for changed := true; changed; {
		changed = false
		for r, alts := range rules {
			if null[r] {
				continue
			}
			for _, a := range alts {
				ok := true
				for _, s := range a {
					if s.kind != kRef || !null[s.rule] {
						ok = false
						break
					}
				}
				if ok {
					null[r], changed = true, true
					break
				}
			}
		}
	}
	color := make([]uint8, n)
	var visit func(r int32) error
	visit = func(r int32) error {
		color[r] = 1
		for _, a := range rules[r] {
			for _, s := range a {
				if s.kind != kRef {
					break
				}
				switch color[s.rule] {
				case 1:
					return fmt.Errorf("grammar: rule %s is left-recursive", b.names[s.rule])
				case 0:
					if err := visit(s.rule); err != nil {
						return err
					}
				}
				if !null[s.rule] {
					break
				}
			}
		}
		color[r] = 2
		return nil
	}
	// iterative deepening is not needed: rule graphs are bounded by maxRules,
	// but recursion depth could be large; visit from every rule with an
	// explicit depth guard through Go's growable stacks.
	for r := range rules {
		if color[r] == 0 {
			if err := visit(int32(r)); err != nil {
				return nil, err
			}
		}
	}
	g := &Grammar{alts: make([][]int32, n), names: b.names, root: root}
	for r, alts := range rules {
		for _, a := range alts {
			g.alts[r] = append(g.alts[r], int32(len(g.prog)))
			g.prog = append(g.prog, a...)
			g.prog = append(g.prog, sym{kind: kEnd})
		}
	}
	g.tab = newTables()
	st, err := g.startState()
	if err != nil {
		return nil, err
	}
	g.start = st
	return g, nil
}

func altOK(a []sym, prod []bool) bool {
	for _, s := range a {
		if s.kind == kRef && !prod[s.rule] {
			return false
		}
	}
	return true
}

func (t *tables) intern(pos, parent int32) int32 {
	k := [2]int32{pos, parent}
	if id, ok := t.nmap[k]; ok {
		return id
	}
	d := int32(1)
	if parent >= 0 {
		d = t.nodes[parent].depth + 1
	}
	t.nodes = append(t.nodes, node{pos, parent, d})
	id := int32(len(t.nodes) - 1)
	t.nmap[k] = id
	return id
}

var errOverflow = errors.New("grammar: parse too deep or too ambiguous (over the stack limits)")

// closure expands stacks until every top is a byte symbol.
func (g *Grammar) closure(t *tables, work []int32) (*dstate, error) {
	seen := map[int32]bool{}
	var terms []int32
	accept := false
	var err error
	for len(work) > 0 {
		n := work[len(work)-1]
		work = work[:len(work)-1]
		if seen[n] {
			continue
		}
		seen[n] = true
		if len(seen) > 8*maxStacks {
			return nil, errOverflow
		}
		nd := t.nodes[n]
		s := g.prog[nd.pos]
		switch s.kind {
		case kByte:
			terms = append(terms, n)
		case kEnd:
			if nd.parent < 0 {
				accept = true
			} else {
				work = append(work, nd.parent)
			}
		case kRef:
			cont := nd.parent
			if g.prog[nd.pos+1].kind != kEnd {
				cont = t.intern(nd.pos+1, nd.parent)
			}
			if cont >= 0 && t.nodes[cont].depth >= maxStack {
				err = errOverflow
				continue
			}
			for _, a := range g.alts[s.rule] {
				work = append(work, t.intern(a, cont))
			}
		}
	}
	if len(terms) > maxStacks {
		return nil, errOverflow
	}
	sort.Slice(terms, func(i, j int) bool { return terms[i] < terms[j] })
	if len(terms) == 0 && !accept {
		if err != nil {
			return nil, err
		}
		return nil, nil
	}
	var kb strings.Builder
	if accept {
		kb.WriteByte('A')
	}
	kb.Write(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(terms))), 4*len(terms)))
	key := kb.String()
	if d, ok := t.dmap[key]; ok {
		return d, nil
	}
	d := &dstate{tab: t, terms: terms, accept: accept, err: err}
	t.dmap[key] = d
	t.n++
	return d, nil
}

func (g *Grammar) startState() (*dstate, error) {
	var work []int32
	for _, a := range g.alts[g.root] {
		work = append(work, g.tab.intern(a, -1))
	}
	d, err := g.closure(g.tab, work)
	if err != nil {
		return nil, err
	}
	if d == nil {
		return nil, fmt.Errorf("grammar: rule %s matches no string", g.names[g.root])
	}
	return d, nil
}

// fresh makes sure d lives in the current tables, re-interning its stacks
// if the tables were replaced.
func (g *Grammar) fresh(d *dstate) *dstate {
	if d.tab == g.tab {
		return d
	}
	old := d.tab
	memo := map[int32]int32{}
	var move func(n int32) int32
	move = func(n int32) int32 {
		if n < 0 {
			return -1
		}
		if m, ok := memo[n]; ok {
			return m
		}
		nd := old.nodes[n]
		m := g.tab.intern(nd.pos, move(nd.parent))
		memo[n] = m
		return m
	}
	work := make([]int32, 0, len(d.terms))
	for _, n := range d.terms {
		work = append(work, move(n))
	}
	nd, err := g.closure(g.tab, work)
	if err != nil || nd == nil {
		return d // cannot happen: the same stacks closed before
	}
	if d.accept && !nd.accept {
		nd2 := *nd
		nd2.accept = true
		nd = &nd2
	}
	return nd
}

// step returns the state after byte c, nil if c is not allowed.
func (g *Grammar) step(d *dstate, c byte) (*dstate, error) {
	if d.dead[c>>6]&(1<<(c&63)) != 0 {
		return nil, nil
	}
	if d.next != nil {
		if n := d.next[c]; n != nil {
			return n, nil
		}
	}
	if d.tab != g.tab {
		return g.step(g.fresh(d), c)
	}
	t := d.tab
	var work []int32
	for _, n := range d.terms {
		nd := t.nodes[n]
		s := g.prog[nd.pos]
		if c >= s.lo && c <= s.hi {
			work = append(work, t.intern(nd.pos+1, nd.parent))
		}
	}
	var nx *dstate
	var err error
	if len(work) > 0 {
		nx, err = g.closure(t, work)
		if err != nil {
			return nil, err
		}
	}
	if nx == nil {
		d.dead[c>>6] |= 1 << (c & 63)
		return nil, nil
	}
	if d.next == nil {
		d.next = new([256]*dstate)
	}
	d.next[c] = nx
	if t.n > maxDFA || len(t.nodes) > 16*maxDFA {
		g.tab = newTables() // states keep theirs; new ones go to the new tables
		g.masks = 0
	}
	return nx, nil
}

// State is the position of one output in a grammar. A State is not safe for
// concurrent use; Clone it to explore.
type State struct {
	g   *Grammar
	d   *dstate
	off int
}

// NewState returns a state at the start of the output.
func (g *Grammar) NewState() *State { return &State{g: g, d: g.start} }

// Clone returns an independent copy of s.
func (s *State) Clone() *State { c := *s; return &c }

// Accepting reports whether the output so far is complete (a stop may come).
func (s *State) Accepting() bool { return s.d.accept }

// Done reports whether the output is complete and nothing may follow.
func (s *State) Done() bool { return s.d.accept && len(s.d.terms) == 0 }

// Accept advances s over the bytes b (a token's bytes); on a byte the
// grammar does not allow it returns an error and leaves s unchanged. The
// byte 0xFF (never in UTF-8 text) is refused: it brackets special tokens
// inside a Vocab (AcceptToken).
func (s *State) Accept(b []byte) error {
	if i := bytes.IndexByte(b, markerByte); i >= 0 {
		return fmt.Errorf("grammar: byte 0xff at output offset %d is not allowed (not UTF-8 text)", s.off+i)
	}
	return s.accept(b)
}

func (s *State) accept(b []byte) error {
	g := s.g
	g.mu.Lock()
	defer g.mu.Unlock()
	d := s.d
	for i, c := range b {
		n, err := g.step(d, c)
		if err != nil {
			return err
		}
		if n == nil {
			return fmt.Errorf("grammar: byte %q at output offset %d is not allowed", c, s.off+i)
		}
		d = n
	}
	s.d = d
	s.off += len(b)
	return nil
}

// Matches reports whether all of b is a complete output of g.
func (g *Grammar) Matches(b []byte) bool {
	s := g.NewState()
	return s.Accept(b) == nil && s.Accepting()
}
