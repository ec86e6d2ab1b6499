package infer

import (
	"runtime"
	"slices"
	"testing"
	"time"
	"weak"

	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlb/mlbtest"
)

// TestPoolParts13: run's partition as its comment states it: one worker per
// thread but the first (the caller does part 0), min(threads, ⌈n/minChunk⌉)
// parts (minChunk below 1 counting as 1), part i one contiguous range after
// part i−1's, the sizes within one item of each other. The expected count is
// worked out here from that rule; TestPool checks only the upper bound.
func TestPoolParts13(t *testing.T) {
	for _, threads := range []int{1, 2, 3, 8} {
		p := newPool(threads)
		if len(p.workers) != threads-1 {
			t.Errorf("newPool(%d): %d workers, want %d", threads, len(p.workers), threads-1)
		}
		for _, n := range []int{0, 1, 2, 5, 7, 16, 17, 100} {
			for _, minChunk := range []int{0, 1, 3, 4} {
				mc := max(minChunk, 1)
				want := min(threads, (n+mc-1)/mc)
				lo := make([]int, threads)
				hi := make([]int, threads)
				called := make([]bool, threads)
				p.run(n, minChunk, func(part, l, h int) { called[part], lo[part], hi[part] = true, l, h })
				got, end := 0, 0
				for part := range threads {
					if !called[part] {
						continue
					}
					if part != got || lo[part] != end {
						t.Fatalf("threads %d n %d minChunk %d: part %d is [%d, %d), want part %d from %d", threads, n, minChunk, part, lo[part], hi[part], got, end)
					}
					if size := hi[part] - lo[part]; size < n/want || size > (n+want-1)/want {
						t.Errorf("threads %d n %d minChunk %d: part %d has %d items, want %d/%d rounded", threads, n, minChunk, part, size, n, want)
					}
					got, end = got+1, hi[part]
				}
				if got != want || end != n {
					t.Errorf("threads %d n %d minChunk %d: %d parts up to %d, want %d parts covering %d", threads, n, minChunk, got, end, want, n)
				}
			}
		}
		p.close()
	}
}

// TestPoolSleeps13: an idle worker blocks on its channel once it has spun
// (sleeping set, and it stays set until run hands it a task), and a run after
// that wakes it and gets its part done.
func TestPoolSleeps13(t *testing.T) {
	p := newPool(2)
	defer p.close()
	w := p.workers[0]
	for round := range 3 {
		got := make([]int, 4)
		p.run(4, 1, func(part, lo, hi int) {
			for i := lo; i < hi; i++ {
				got[i] += part + 1
			}
		})
		if want := []int{1, 1, 2, 2}; !slices.Equal(got, want) {
			t.Fatalf("round %d: items got parts %v, want %v", round, got, want)
		}
		deadline := time.Now().Add(30 * time.Second) // a bound on a hang, not a timing
		for !w.sleeping.Load() {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the idle worker has not gone to sleep after 30 s", round)
			}
			time.Sleep(time.Millisecond)
		}
		for range 20 {
			time.Sleep(500 * time.Microsecond)
			if !w.sleeping.Load() {
				t.Fatalf("round %d: the sleeping worker woke up without a task", round)
			}
		}
	}
}

// poolRunHolding runs a task whose closure holds a buffer and returns a weak
// pointer to the buffer (kept out of line so that nothing else holds it).
//
//go:noinline
func poolRunHolding(p *pool) weak.Pointer[[1 << 16]byte] {
	buf := new([1 << 16]byte)
	wp := weak.Make(buf)
	p.run(4, 1, func(part, lo, hi int) { buf[part]++ })
	return wp
}

// TestPoolReleasesTask13: once run returns, the pool keeps no reference to the
// task (its workers' fn cleared), so what the closure captured can be
// collected while the pool lives on.
func TestPoolReleasesTask13(t *testing.T) {
	p := newPool(4)
	defer p.close()
	wp := poolRunHolding(p)
	runtime.GC()
	runtime.GC()
	if wp.Value() != nil {
		t.Errorf("the buffer captured by a finished run's task is still reachable")
	}
	runtime.KeepAlive(p)
}

// TestSessionScratch13: the activation scratch has the sizes Session's field
// comments give, for a batch of B = 3 rows: qa (B, max input width), da
// (B, width/32), with Q8_K matrices qk (B, width), dk (B, width/256), bk
// (B, width/16), and each RoPE table (B, rot_dim/2). The model is Mixed's
// (dim 256, 8 heads of 32, K quants) with hidden_dim 512, so the widest
// input is 512 and rot_dim is the head dim 32. Without this, buffers 32 or
// 1024 times too large (`/` → `*`) changed no result.
func TestSessionScratch13(t *testing.T) {
	h := mlbtest.Mixed(mlb.Q4_K, mlb.Q6_K)
	h.HiddenDim = 512
	m, _ := openModel(t, h, 3)
	s, err := m.NewSession(SessionOptions{Batch: 3, Ctx: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct {
		name      string
		got, want int
	}{
		{"qa", len(s.qa), 3 * 512},
		{"da", len(s.da), 3 * 512 / 32},
		{"qk", len(s.qk), 3 * 512},
		{"dk", len(s.dk), 3 * 512 / 256},
		{"bk", len(s.bk), 3 * 512 / 16},
		{"cos[0]", len(s.cos[0]), 3 * 16},
		{"cos[1]", len(s.cos[1]), 3 * 16},
		{"sin[0]", len(s.sin[0]), 3 * 16},
		{"sin[1]", len(s.sin[1]), 3 * 16},
	} {
		if tc.got != tc.want {
			t.Errorf("len(s.%s) = %d, want %d", tc.name, tc.got, tc.want)
		}
	}
}

// TestPoolSpins13: a worker that has just finished a task spins before it
// blocks (pool's comment: a token's next product comes within microseconds,
// sooner than a sleeping worker wakes). On one P this is deterministic: the
// caller only runs again, and sees its parts done, once the worker yields, and
// the worker's first yield is in its spin loop, before it announces a sleep.
func TestPoolSpins13(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	p := newPool(2)
	defer p.close()
	w := p.workers[0]
	for round := range 3 {
		p.run(2, 1, func(part, lo, hi int) {})
		if w.sleeping.Load() {
			t.Fatalf("round %d: the worker went to sleep right after its task, without spinning", round)
		}
	}
}
