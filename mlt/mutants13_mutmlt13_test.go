package mlt

import (
	"slices"
	"testing"
)

// Tests of session 13's mutation pass (mutmlt13) over bpe.go, encode.go,
// pretok.go and hf.go: each targets mutants that lived under the older tests.
// Expected values are worked out by hand from the documented rule, or come
// from a second, simple implementation in the test.

// TestMutants13MergeStack: merge documents that a word of up to stackSymbols
// symbols needs no heap allocation (its linked list and heap live in arrays
// on the stack: at most n-1 initial pairs and two pushes per merge, so 3n
// entries). A word of exactly stackSymbols symbols, every pair merging, must
// allocate nothing; the result is checked against naiveMerge.
func TestMutants13MergeStack(t *testing.T) {
	// a=0, b=1; a b -> 2 (rank 0), 2 2 -> 3 (rank 1), 3 3 -> 4 (rank 2).
	rules := [][3]uint32{{0, 1, 2}, {2, 2, 3}, {3, 3, 4}}
	m := newMergerRules(rules)
	word := make([]int, stackSymbols)
	for i := range word {
		word[i] = i % 2
	}
	// 48 symbols: 24 "ab" → 24 × 2 → 12 × 3 → 6 × 4.
	want := []int{4, 4, 4, 4, 4, 4}
	if got := naiveMerge(rules, word); !slices.Equal(got, want) {
		t.Fatalf("naiveMerge: got %v, want %v", got, want)
	}
	buf := make([]int, len(word))
	copy(buf, word)
	if got := m.merge(buf); !slices.Equal(got, want) {
		t.Fatalf("merge: got %v, want %v", got, want)
	}
	if a := testing.AllocsPerRun(20, func() {
		copy(buf, word)
		m.merge(buf)
	}); a != 0 {
		t.Errorf("merge of %d symbols: %v allocations, want 0", stackSymbols, a)
	}
}
