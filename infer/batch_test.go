package infer

import (
	"errors"
	"math"
	"math/rand"
	"testing"

	"github.com/krafla/krafla/mlb/mlbtest"
)

// sameBits fails unless got and want hold the same float32 bits.
func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for j := range want {
		if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
			t.Fatalf("%s: logit %d: got %v, want %v", what, j, got[j], want[j])
		}
	}
}

// TestBatchMatchesSessions evaluates three sequences together, in chunks of
// random sizes (prompt chunks beside single decoded tokens), and checks each
// chunk's last logits against the same sequence evaluated alone.
func TestBatchMatchesSessions(t *testing.T) {
	for _, c := range mlbtest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			m, _ := openModel(t, c.Header, 5)
			r := rand.New(rand.NewSource(6))
			const nseq = 3
			var tokens [nseq][]int
			var logits [nseq][][]float32
			for k := range nseq {
				tokens[k] = randTokens(r, min(int(c.Header.MaxSeq), 20+7*k), int(c.Header.Vocab))
				logits[k] = allLogits(t, m, SessionOptions{Threads: 1}, tokens[k], 0)
			}
			b, err := m.NewBatch(BatchOptions{Threads: 3, Tokens: 12})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			var ss [nseq]*Session
			for k := range ss {
				if ss[k], err = m.NewSession(SessionOptions{Batch: 1}); err != nil {
					t.Fatal(err)
				}
				defer ss[k].Close()
			}
			for step := 0; ; step++ {
				var items []BatchItem
				budget := b.Tokens()
				for k, s := range ss {
					left := len(tokens[k]) - s.Pos()
					if left == 0 || budget == 0 {
						continue
					}
					n := min(left, budget, 1+r.Intn(5))
					budget -= n
					// Some chunks ask for no logits, as a prompt's middle chunk.
					items = append(items, BatchItem{Session: s, Tokens: tokens[k][s.Pos() : s.Pos()+n], Logits: r.Intn(4) > 0})
				}
				if len(items) == 0 {
					break
				}
				seen := map[int]bool{}
				err := b.Eval(items, func(i int, l []float32) error {
					if !items[i].Logits || seen[i] {
						t.Fatalf("step %d: emit for item %d (logits %v, seen %v)", step, i, items[i].Logits, seen[i])
					}
					seen[i] = true
					s := items[i].Session
					for k := range ss {
						if ss[k] == s {
							sameBits(t, "sequence", l, logits[k][s.Pos()-1])
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				for i, it := range items {
					if it.Logits && !seen[i] {
						t.Fatalf("step %d: no logits for item %d", step, i)
					}
				}
			}
		})
	}
}

func TestBatchRefuses(t *testing.T) {
	m, _ := openModel(t, mlbtest.Base(), 1)
	m2, _ := openModel(t, mlbtest.Base(), 2)
	b, err := m.NewBatch(BatchOptions{Ctx: 16, Tokens: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s, _ := m.NewSession(SessionOptions{Ctx: 8})
	defer s.Close()
	big, _ := m.NewSession(SessionOptions{Ctx: 32})
	defer big.Close()
	other, _ := m2.NewSession(SessionOptions{Ctx: 8})
	defer other.Close()
	for _, tc := range []struct {
		name  string
		items []BatchItem
	}{
		{"nil session", []BatchItem{{Tokens: []int{1}}}},
		{"other model", []BatchItem{{Session: other, Tokens: []int{1}}}},
		{"context larger than the batch's", []BatchItem{{Session: big, Tokens: []int{1}}}},
		{"same session twice", []BatchItem{{Session: s, Tokens: []int{1}}, {Session: s, Tokens: []int{2}}}},
		{"token outside the vocabulary", []BatchItem{{Session: s, Tokens: []int{67}}}},
		{"too many tokens", []BatchItem{{Session: s, Tokens: []int{1, 2, 3, 4, 5}}}},
		{"context full", []BatchItem{{Session: s, Tokens: make([]int, 9)}}},
	} {
		if err := b.Eval(tc.items, nil); err == nil {
			t.Errorf("%s: got no error", tc.name)
		}
		if s.Pos() != 0 {
			t.Fatalf("%s: the session moved to %d", tc.name, s.Pos())
		}
	}
}

// TestRewind checks that a session rewound to a prefix continues with the bits
// of a fresh session, and that rewinding is refused where the cache lost what
// the position needs.
func TestRewind(t *testing.T) {
	rewound := 0
	for _, c := range mlbtest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			m, _ := openModel(t, c.Header, 7)
			r := rand.New(rand.NewSource(8))
			n := min(int(c.Header.MaxSeq), 30)
			a := randTokens(r, n, int(c.Header.Vocab))
			bt := append(a[:n/2:n/2], randTokens(r, n-n/2, int(c.Header.Vocab))...)
			want := allLogits(t, m, SessionOptions{Threads: 1}, bt, 0)
			s, err := m.NewSession(SessionOptions{Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Eval(a, false, nil); err != nil {
				t.Fatal(err)
			}
			if s.Rewind(n+1) == nil || s.Rewind(-1) == nil {
				t.Fatal("Rewind outside 0..Pos: got no error")
			}
			if err := s.Rewind(n / 2); err != nil {
				if !errors.Is(err, ErrRewind) || s.CanRewind(n/2) {
					t.Fatalf("Rewind: %v (CanRewind %v)", err, s.CanRewind(n/2))
				}
				if s.Pos() != n {
					t.Fatalf("a refused Rewind moved the session to %d", s.Pos())
				}
				t.Logf("rewind refused: %v", err)
				return
			}
			rewound++
			err = s.Eval(bt[n/2:], true, func(i int, l []float32) error {
				sameBits(t, "after rewind", l, want[n/2+i])
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	if rewound == 0 {
		t.Error("no model could rewind")
	}
}
