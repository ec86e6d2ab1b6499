package infer

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// waitSleeping polls until w has announced a sleep (the deadline bounds a
// hang; it is not a timing).
func waitSleeping(t *testing.T, w *worker, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !w.sleeping.Load() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: the idle worker has not gone to sleep after 30 s", what)
		}
		runtime.Gosched()
	}
}

// TestPoolLateWake15: run's wake can arrive after the task it was sent for
// is done. run does seq.Add, then the CAS of sleeping and the send; if the
// caller is descheduled between the two, the worker sees the new seq while
// spinning, runs the task, spins out and sleeps again, and only then does
// the CAS find sleeping set and send the token: the worker wakes with the
// seq it has already run. (With a panic planted there, two of seven runs of
// GOMAXPROCS=2 go test -count=20 -run 'Pool|14$|Sampler|Session|Rewind|KVF16'
// met it, in TestBatchMatchesSessions.) The worker must go back to
// waiting, not run its task again: here the pool has run one task, the
// worker sleeps, and the late CAS and send come exactly as run's code does
// them, with a task in w.fn that must not be called. Running it (or calling
// a cleared, nil fn, as a run that has returned leaves it) would count a
// part twice and end some later run early.
func TestPoolLateWake15(t *testing.T) {
	p := newPool(2)
	defer p.close()
	w := p.workers[0]
	var parts atomic.Int32
	p.run(2, 1, func(part, lo, hi int) { parts.Add(1) })
	if got := parts.Load(); got != 2 {
		t.Fatalf("first run: %d parts, want 2", got)
	}
	var stale atomic.Int32
	for round := range 3 {
		waitSleeping(t, w, "before the late wake")
		w.fn = func(part, lo, hi int) { stale.Add(1) }
		// run's two lines after its seq.Add, late (seq not incremented).
		if !w.sleeping.CompareAndSwap(true, false) {
			t.Fatalf("round %d: sleeping was cleared under the test", round)
		}
		w.wake <- struct{}{}
		// The worker takes the token, finds its old seq and spins out again.
		waitSleeping(t, w, "after the late wake")
		if n := stale.Load(); n != 0 {
			t.Fatalf("round %d: a wake without a new task ran the worker's task %d times, want 0", round, n)
		}
		if d := p.done.Load(); d != 1 {
			t.Fatalf("round %d: done = %d after a wake without a task, want the first run's 1", round, d)
		}
		if len(w.wake) != 0 {
			t.Fatalf("round %d: the late token was not taken", round)
		}
		w.fn = nil
	}
	// And the pool still works: the next run's part 1 runs once.
	parts.Store(0)
	p.run(2, 1, func(part, lo, hi int) { parts.Add(1) })
	if got := parts.Load(); got != 2 {
		t.Fatalf("run after the late wakes: %d parts, want 2", got)
	}
}
