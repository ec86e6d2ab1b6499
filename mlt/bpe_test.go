package mlt

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// naiveMerge is the textbook definition: while some adjacent pair has a rule,
// apply the rule of lowest rank at its leftmost occurrence. Quadratic, obviously right.
func naiveMerge(rules [][3]uint32, ids []int) []int {
	return naiveMergeRanks(naiveRanks(rules), rules, ids)
}

func naiveRanks(rules [][3]uint32) map[[2]int]int {
	rank := map[[2]int]int{}
	for i, r := range rules {
		rank[[2]int{int(r[0]), int(r[1])}] = i // later duplicates win
	}
	return rank
}

func naiveMergeRanks(rank map[[2]int]int, rules [][3]uint32, ids []int) []int {
	ids = slices.Clone(ids)
	for {
		best, at := -1, -1
		for i := 0; i+1 < len(ids); i++ {
			if r, ok := rank[[2]int{ids[i], ids[i+1]}]; ok && (best < 0 || r < best) {
				best, at = r, i
			}
		}
		if at < 0 {
			return ids
		}
		ids[at] = int(rules[best][2])
		ids = slices.Delete(ids, at+1, at+2)
	}
}

func TestMergeTable(t *testing.T) {
	// Symbols: a=0 b=1 c=2; merged ids from 10 up.
	rules := [][3]uint32{
		{0, 0, 10},  // a a -> aa      rank 0
		{10, 0, 11}, // aa a -> aaa    rank 1
		{1, 2, 12},  // b c -> bc      rank 2
		{0, 1, 13},  // a b -> ab      rank 3
		{13, 2, 14}, // ab c -> abc    rank 4
		{0, 12, 15}, // a bc -> abc'   rank 5
	}
	m := newMergerRules(rules)
	tests := []struct {
		in, want []int
	}{
		{nil, nil},
		{[]int{0}, []int{0}},
		{[]int{0, 0, 0}, []int{11}},           // aa first (leftmost), then aa+a
		{[]int{0, 0, 0, 0}, []int{10, 10}},    // two aa (rank 0) before aa a (rank 1)
		{[]int{0, 0, 0, 0, 0}, []int{10, 11}}, // aa aa a -> aa aaa
		{[]int{0, 1, 2}, []int{15}},           // b c (rank 2) beats a b (rank 3)
		{[]int{0, 1, 0, 1}, []int{13, 13}},
		{[]int{2, 1, 0}, []int{2, 1, 0}},
	}
	for _, tc := range tests {
		got := m.merge(slices.Clone(tc.in))
		if !slices.Equal(got, tc.want) {
			t.Errorf("merge(%v): got %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestMergeDuplicateRuleLaterWins(t *testing.T) {
	rules := [][3]uint32{{0, 1, 5}, {1, 2, 6}, {0, 1, 7}}
	m := newMergerRules(rules)
	// a b c: the rule a b now has rank 2, so b c (rank 1) applies first.
	if got, want := m.merge([]int{0, 1, 2}), []int{0, 6}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got, want := m.merge([]int{0, 1}), []int{7}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// randomRules makes a merge list over a small alphabet where merged ids are new
// symbols that can merge again, so that chains and competing pairs are common.
func randomRules(r *rand.Rand, alphabet, n int) [][3]uint32 {
	rules := make([][3]uint32, 0, n)
	next := alphabet
	for len(rules) < n {
		a, b := r.IntN(next), r.IntN(next)
		rules = append(rules, [3]uint32{uint32(a), uint32(b), uint32(next)})
		next++
	}
	return rules
}

func TestMergeMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 300 {
		alphabet := 2 + r.IntN(4)
		rules := randomRules(r, alphabet, 1+r.IntN(40))
		m := newMergerRules(rules)
		for range 20 {
			n := r.IntN(120) // crosses stackSymbols
			ids := make([]int, n)
			for i := range ids {
				ids[i] = r.IntN(alphabet)
			}
			want := naiveMerge(rules, ids)
			got := m.merge(slices.Clone(ids))
			if !slices.Equal(got, want) {
				t.Fatalf("iter %d: merge(%v) with rules %v: got %v, want %v", iter, ids, rules, got, want)
			}
		}
	}
}

func FuzzMerge(f *testing.F) {
	f.Add(uint64(1), []byte{0, 0, 0, 1, 2})
	f.Fuzz(func(t *testing.T, seed uint64, word []byte) {
		r := rand.New(rand.NewPCG(seed, seed>>7))
		rules := randomRules(r, 4, 1+r.IntN(60))
		ids := make([]int, len(word))
		for i, b := range word {
			ids[i] = int(b % 4)
		}
		want := naiveMerge(rules, ids)
		if got := newMergerRules(rules).merge(slices.Clone(ids)); !slices.Equal(got, want) {
			t.Fatalf("merge(%v): got %v, want %v", ids, got, want)
		}
	})
}

func BenchmarkMergeLongWord(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	rules := randomRules(r, 4, 2000)
	m := newMergerRules(rules)
	word := make([]int, 5000)
	buf := make([]int, len(word))
	for i := range word {
		word[i] = r.IntN(4)
	}
	for b.Loop() {
		copy(buf, word)
		m.merge(buf)
	}
}
