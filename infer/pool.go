package infer

import (
	"runtime"
	"sync/atomic"
)

// pool is a persistent set of worker goroutines. run splits a range of
// independent items (output rows, heads) into one contiguous part per thread;
// the calling goroutine does the first part. No goroutine is started per call,
// and no item is ever split between threads, so results do not depend on the
// thread count.
//
// A generated token runs a few hundred small products, each a few
// microseconds, so waking a sleeping goroutine for each (a futex round trip of
// tens of microseconds on a busy VM) would cost more than the second thread
// gains. Workers therefore spin on their task counter for a while after each
// task (spinNs) before they block on their channel, and the caller spins for
// the parts to finish.
type pool struct {
	threads int
	workers []*worker
	done    atomic.Int32 // parts finished in the current run
	closed  atomic.Bool
}

type worker struct {
	seq      atomic.Uint64 // incremented for each task handed to this worker
	sleeping atomic.Bool   // blocked (or about to block) on wake
	wake     chan struct{} // one token: a task is ready
	// The task, written by run before seq is incremented.
	fn           func(part, lo, hi int)
	part, lo, hi int
	_            [64]byte // keep workers' counters on separate cache lines
}

// spinIters is how many times an idle worker polls its task counter before it
// blocks (a poll with runtime.Gosched takes roughly 50–100 ns: some 100–200 µs).
const spinIters = 2000

func newPool(threads int) *pool {
	if threads < 1 {
		threads = 1
	}
	p := &pool{threads: threads, workers: make([]*worker, threads-1)}
	for i := range p.workers {
		w := &worker{wake: make(chan struct{}, 1)}
		p.workers[i] = w
		go p.loop(w)
	}
	return p
}

func (p *pool) loop(w *worker) {
	var last uint64
	for {
		seq := w.seq.Load()
		for i := 0; seq == last && i < spinIters; i++ {
			spinPause()
			seq = w.seq.Load()
		}
		if seq == last {
			// Announce the sleep, then look again: run either sees sleeping
			// and sends a token, or the new task is seen here.
			w.sleeping.Store(true)
			if seq = w.seq.Load(); seq == last {
				<-w.wake
			} else if !w.sleeping.CompareAndSwap(true, false) {
				<-w.wake // run saw sleeping and sent a token: take it
			}
			if p.closed.Load() {
				return
			}
			// A token can be late: run's seq.Add, then (if its caller is
			// descheduled) this worker runs the task and sleeps again
			// before run's CAS finds sleeping set. Such a wake has the seq
			// already run: wait again (TestPoolLateWake15).
			seq = w.seq.Load()
			if seq == last {
				continue
			}
		}
		if p.closed.Load() {
			return
		}
		last = seq
		w.fn(w.part, w.lo, w.hi)
		p.done.Add(1)
	}
}

// spinPause yields briefly while polling, so that another goroutine of this
// process waiting for the thread runs.
func spinPause() { runtime.Gosched() }

// run calls fn(part, lo, hi) over a partition of [0, n) into parts numbered
// from 0 (part indexes per-thread scratch) and returns when all parts are
// done. There are at most threads parts and at most ceil(n/minChunk), so that
// tiny ranges do not pay for waking every worker; the parts are of equal size
// within one item.
func (p *pool) run(n, minChunk int, fn func(part, lo, hi int)) {
	parts := p.threads
	if minChunk < 1 {
		minChunk = 1
	}
	if m := (n + minChunk - 1) / minChunk; m < parts {
		parts = m
	}
	if parts <= 1 {
		if n > 0 {
			fn(0, 0, n)
		}
		return
	}
	p.done.Store(0)
	for i := 1; i < parts; i++ {
		w := p.workers[i-1]
		w.fn, w.part, w.lo, w.hi = fn, i, n*i/parts, n*(i+1)/parts
		w.seq.Add(1)
		if w.sleeping.CompareAndSwap(true, false) {
			w.wake <- struct{}{}
		}
	}
	fn(0, 0, n/parts)
	for p.done.Load() != int32(parts-1) {
		spinPause()
	}
	for i := 1; i < parts; i++ {
		p.workers[i-1].fn = nil
	}
}

// close stops the workers.
func (p *pool) close() {
	if p.closed.Swap(true) {
		return
	}
	for _, w := range p.workers {
		w.seq.Add(1)
		if w.sleeping.CompareAndSwap(true, false) {
			w.wake <- struct{}{}
		}
	}
	p.workers = nil
}
