package mlt

import (
	"math/bits"
	"sync"
)

// merger applies a tokenizer's merge rules. It is built once per Tokenizer
// (newMergerRules, from prepare) and is safe for concurrent use.
//
// The rule table is an open-addressing hash table keyed by the pair
// (left<<32 | right) whose value is (rank<<32 | merged). When the same pair
// appears more than once in the merge list the later rule wins, as in the
// tokenizers library, whose merge map is collected from the list in order.
type merger struct {
	keys  []uint64 // emptyKey where unused
	vals  []uint64 // rank<<32 | merged id
	shift uint     // 64 - log2(len(keys))
	mask  uint64

	// cache maps a merged unit (a kind 2 pre-token, a kind 1 word) to its
	// ids; see cached and store. Guarded by mu.
	mu    sync.Mutex
	cache map[string][]int32
}

const emptyKey = ^uint64(0)

// newMergerRules builds the merge table from a tokenizer's Merges; the rank of
// a rule is its index.
func newMergerRules(rules [][3]uint32) *merger {
	n := len(rules)
	size := 16
	for size < n+n/2+1 { // load factor at most 2/3
		size <<= 1
	}
	m := &merger{
		keys:  make([]uint64, size),
		vals:  make([]uint64, size),
		shift: uint(64 - bits.TrailingZeros(uint(size))),
		mask:  uint64(size - 1),
	}
	for i := range m.keys {
		m.keys[i] = emptyKey
	}
	for rank, r := range rules {
		k := uint64(r[0])<<32 | uint64(r[1])
		v := uint64(rank)<<32 | uint64(r[2])
		for h := m.slot(k); ; h = (h + 1) & m.mask {
			if m.keys[h] == emptyKey || m.keys[h] == k {
				m.keys[h] = k
				m.vals[h] = v
				break
			}
		}
	}
	return m
}

func (m *merger) slot(k uint64) uint64 {
	return (k * 0x9E3779B97F4A7C15) >> m.shift
}

// lookup returns the rank and merged id of the rule for (left, right).
func (m *merger) lookup(left, right int) (rank, merged uint32, ok bool) {
	k := uint64(uint32(left))<<32 | uint64(uint32(right))
	for h := m.slot(k); ; h = (h + 1) & m.mask {
		switch m.keys[h] {
		case k:
			v := m.vals[h]
			return uint32(v >> 32), uint32(v), true
		case emptyKey:
			return 0, 0, false
		}
	}
}

// stackSymbols is the word length up to which merge needs no heap allocation.
const stackSymbols = 48

// merge applies the merge rules to the symbol ids: repeatedly the applicable rule
// of lowest rank, the leftmost among equal ranks, until none applies. This is
// the order of the tokenizers library (Word::merge_all). The result is written
// over ids, and the prefix holding it is returned.
//
// The symbols form a linked list and candidate pairs sit in a binary min-heap
// keyed by (rank, position), so a word of n symbols costs O(n log n). Entries
// made stale by an earlier merge are recognised when popped: their left symbol
// is gone, or the pair now there has a different rank. (The tokenizers library
// compares the merged id instead; a rank names exactly one pair, so comparing
// ranks asks the same question.)
func (m *merger) merge(ids []int) []int {
	n := len(ids)
	if n < 2 {
		return ids
	}
	if n >= 1<<31-1 { // positions are int32; such a word could not be allocated anyway
		panic("mlt: word too long to merge")
	}
	var nextBuf, prevBuf [stackSymbols]int32
	var heapBuf [3 * stackSymbols]uint64
	var next, prev []int32
	var h []uint64
	if n <= stackSymbols {
		next, prev, h = nextBuf[:n], prevBuf[:n], heapBuf[:0]
	} else {
		next, prev, h = make([]int32, n), make([]int32, n), make([]uint64, 0, n)
	}
	for i := range n {
		next[i] = int32(i + 1)
		prev[i] = int32(i - 1)
	}
	next[n-1] = -1
	for i := 0; i+1 < n; i++ {
		if rank, _, ok := m.lookup(ids[i], ids[i+1]); ok {
			h = append(h, uint64(rank)<<32|uint64(i))
		}
	}
	// Heapify (bottom-up).
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	for len(h) > 0 {
		top := h[0]
		last := len(h) - 1
		h[0] = h[last]
		h = h[:last]
		if last > 0 {
			siftDown(h, 0)
		}
		pos := int32(uint32(top))
		rank := uint32(top >> 32)
		r := next[pos]
		if r < 0 { // removed (-2) or last symbol (-1)
			continue
		}
		rk, merged, ok := m.lookup(ids[pos], ids[r])
		if !ok || rk != rank {
			continue // stale: the pair at pos changed since this entry was pushed
		}
		ids[pos] = int(merged)
		rn := next[r]
		next[pos] = rn
		next[r] = -2
		if rn >= 0 {
			prev[rn] = pos
		}
		if p := prev[pos]; p >= 0 {
			if rk, _, ok := m.lookup(ids[p], ids[pos]); ok {
				h = heapPush(h, uint64(rk)<<32|uint64(p))
			}
		}
		if rn >= 0 {
			if rk, _, ok := m.lookup(ids[pos], ids[rn]); ok {
				h = heapPush(h, uint64(rk)<<32|uint64(pos))
			}
		}
	}
	k := 0
	for i := int32(0); i >= 0; i = next[i] {
		ids[k] = ids[i]
		k++
	}
	return ids[:k]
}

func heapPush(h []uint64, v uint64) []uint64 {
	h = append(h, v)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h[p] <= v {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = v
	return h
}

func siftDown(h []uint64, i int) {
	n := len(h)
	v := h[i]
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h[c+1] < h[c] {
			c++
		}
		if v <= h[c] {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = v
}
