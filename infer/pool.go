package infer

import "sync"

// pool is a persistent set of worker goroutines. run splits a range of
// independent items (output rows, heads) into one contiguous part per thread;
// the calling goroutine does the first part. No goroutine is started per call,
// and no item is ever split between threads, so results do not depend on the
// thread count.
type pool struct {
	threads int
	work    []chan poolTask
	wg      sync.WaitGroup
}

type poolTask struct {
	fn           func(part, lo, hi int)
	part, lo, hi int
}

func newPool(threads int) *pool {
	if threads < 1 {
		threads = 1
	}
	p := &pool{threads: threads, work: make([]chan poolTask, threads-1)}
	for i := range p.work {
		ch := make(chan poolTask, 1)
		p.work[i] = ch
		go func() {
			for t := range ch {
				t.fn(t.part, t.lo, t.hi)
				p.wg.Done()
			}
		}()
	}
	return p
}

// run calls fn(part, lo, hi) over a partition of [0, n) into parts numbered
// from 0 (at most threads of them; part indexes per-thread scratch) and returns when all parts are
// done. Parts hold at least minChunk items (except the last), so that tiny
// ranges do not pay for waking every worker.
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
	p.wg.Add(parts - 1)
	for i := 1; i < parts; i++ {
		p.work[i-1] <- poolTask{fn, i, n * i / parts, n * (i + 1) / parts}
	}
	fn(0, 0, n/parts)
	p.wg.Wait()
}

// close stops the workers.
func (p *pool) close() {
	for _, ch := range p.work {
		close(ch)
	}
	p.work = nil
}
