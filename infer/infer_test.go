package infer

import (
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlb/mlbtest"
)

func openModel(t *testing.T, h mlb.Header, seed int64) (*Model, *mlb.File) {
	t.Helper()
	path := mlbtest.Write(t, t.TempDir(), h, seed)
	f, err := mlb.Open(path)
	if err != nil {
		t.Fatalf("mlb.Open: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := FromFile(f)
	if err != nil {
		t.Fatalf("FromFile: %v", err)
	}
	return m, f
}

func randTokens(r *rand.Rand, n, vocab int) []int {
	t := make([]int, n)
	for i := range t {
		t[i] = r.Intn(vocab)
	}
	return t
}

// allLogits evaluates tokens in one session and returns every position's logits.
func allLogits(t *testing.T, m *Model, opt SessionOptions, tokens []int, step int) [][]float32 {
	t.Helper()
	s, err := m.NewSession(opt)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out [][]float32
	if step <= 0 {
		step = len(tokens)
	}
	for i := 0; i < len(tokens); i += step {
		base := i
		err := s.Eval(tokens[i:min(i+step, len(tokens))], true, func(j int, l []float32) error {
			if base+j != len(out) {
				t.Fatalf("emit index %d, want %d", base+j, len(out))
			}
			out = append(out, slices.Clone(l))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// maxDiff returns the largest |a−b| over all positions and the RMS of b.
func maxDiff(a [][]float32, b [][]float64) (md, rms float64) {
	n := 0
	for i := range b {
		for j := range b[i] {
			md = math.Max(md, math.Abs(float64(a[i][j])-b[i][j]))
			rms += b[i][j] * b[i][j]
			n++
		}
	}
	return md, math.Sqrt(rms / float64(n))
}

// rmsDiff returns the RMS of a−b over all positions.
func rmsDiff(a [][]float32, b [][]float64) float64 {
	s, n := 0.0, 0
	for i := range b {
		for j := range b[i] {
			d := float64(a[i][j]) - b[i][j]
			s += d * d
			n++
		}
	}
	return math.Sqrt(s / float64(n))
}

func rmsDiff64(a, b [][]float64) float64 {
	s, n := 0.0, 0
	for i := range b {
		for j := range b[i] {
			d := a[i][j] - b[i][j]
			s += d * d
			n++
		}
	}
	return math.Sqrt(s / float64(n))
}

func maxDiff64(a, b [][]float64) float64 {
	md := 0.0
	for i := range b {
		for j := range b[i] {
			md = math.Max(md, math.Abs(a[i][j]-b[i][j]))
		}
	}
	return md
}

// TestForwardMatchesReference compares the logits of every position with the
// float64 reference, for a model of every feature combination of mlbtest.
//
// Tolerances. Two references run: refQ rounds every matrix input to Q8_0 as the
// fast path does, ref does not. The fast path differs from refQ only by float32
// arithmetic (about 1e-6 relative) until a quant lands on the other side of a .5
// boundary; such a flip moves one activation by one step d = amax/127 and, in a
// key or value, every later position. So: each position is "tight" (within
// 1e-4 × rms of the logits) or off by a flip, which is bounded by half of what
// all activation rounding does to the reference (|refQ − ref|); position 0 must
// be tight in every model, and most positions over all models must be tight.
// Against ref the fast path may differ by at most 1.5 × |refQ − ref|.
func TestForwardMatchesReference(t *testing.T) {
	tight, total := 0, 0
	for _, c := range mlbtest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			m, f := openModel(t, c.Header, 1)
			r := rand.New(rand.NewSource(2))
			n := min(int(c.Header.MaxSeq), 40)
			tokens := randTokens(r, n, int(c.Header.Vocab))
			got := allLogits(t, m, SessionOptions{Threads: 2, Batch: 16}, tokens, 0)
			refQ := newRef(f, true).logits(tokens)
			refF := newRef(f, false).logits(tokens)
			quantEffect := maxDiff64(refQ, refF)
			dq, rms := maxDiff(got, refQ)
			df, _ := maxDiff(got, refF)
			nt := 0
			for i := range got {
				d, _ := maxDiff(got[i:i+1], refQ[i:i+1])
				if d <= 1e-4*rms {
					nt++
				} else if i == 0 {
					t.Errorf("position 0: max |fast − refQ| = %.3g, want ≤ %.3g", d, 1e-4*rms)
				}
			}
			tight += nt
			total += len(got)
			t.Logf("rms %.3g; |fast−refQ| %.3g (%d of %d positions tight); |fast−ref| %.3g; activation rounding moves the reference by %.3g",
				rms, dq, nt, len(got), df, quantEffect)
			if tol := 0.5*quantEffect + 1e-4*rms; dq > tol {
				t.Errorf("max |fast − reference with activation rounding| = %.4g, want ≤ %.4g", dq, tol)
			}
			if tol := 1.5*quantEffect + 1e-4*rms; df > tol {
				t.Errorf("max |fast − float64 reference| = %.4g, want ≤ %.4g", df, tol)
			}
		})
	}
	if tight*10 < total*7 {
		t.Errorf("%d of %d positions within 1e-4 × rms of the reference, want at least 70%%", tight, total)
	}
}

// TestBatchingAndThreads checks the determinism promise: token-by-token
// decoding, batches of any size and any thread count give the same bits.
func TestBatchingAndThreads(t *testing.T) {
	for _, c := range mlbtest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			m, _ := openModel(t, c.Header, 3)
			r := rand.New(rand.NewSource(4))
			tokens := randTokens(r, min(int(c.Header.MaxSeq), 37), int(c.Header.Vocab))
			want := allLogits(t, m, SessionOptions{Threads: 1, Batch: 64}, tokens, 0)
			for _, tc := range []struct {
				threads, batch, step, logitRows int
			}{{1, 1, 1, 0}, {3, 64, 0, 0}, {3, 5, 0, 0}, {2, 7, 3, 0}, {3, 1, 1, 0}, {2, 64, 0, 3}} {
				if tc.logitRows > 0 {
					// The classifier in passes of logitRows rows.
					defer func(v int) { maxLogitBytes = v }(maxLogitBytes)
					maxLogitBytes = tc.logitRows * 4 * int(c.Header.Vocab)
				}
				got := allLogits(t, m, SessionOptions{Threads: tc.threads, Batch: tc.batch}, tokens, tc.step)
				for i := range want {
					for j := range want[i] {
						if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
							t.Fatalf("threads %d batch %d step %d: position %d logit %d: got %v, want %v",
								tc.threads, tc.batch, tc.step, i, j, got[i][j], want[i][j])
						}
					}
				}
			}
		})
	}
}
