package serve

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// registry loads the models of a catalog on first use and unloads them:
// keep_alive after their last request (per request as ollama defines it:
// 0 unloads at once, negative keeps the model), the least recently used
// first when another must fit in the memory budget or under MaxLoaded, and
// never one with a request running. Each loaded model is an engine of its
// own (its slots, batch and scheduler); a request for a model that is
// loading waits for it.
type registry struct {
	s   *Server
	cat Catalog

	mu     sync.Mutex
	models map[string]*loaded // by entry name; loading ones included
	closed bool
}

// loaded is one model of the registry, loading or loaded.
type loaded struct {
	entry ModelEntry
	ready chan struct{} // closed once e or err is set
	e     *engine
	err   *apiError // the load failed (the entry left the map)
	load  time.Duration

	refs    int           // requests holding it
	keep    time.Duration // how long it stays after its last request; < 0: for good
	lastUse time.Time
	expires time.Time // when idle and keep > 0: the time it unloads
	timer   *time.Timer
	gen     uint64 // bumped whenever the timer is replaced, so a stale one does nothing

	reserved bool  // makeRoom counted it in: it is loaded, or loading with room made
	bytes    int64 // weights and every slot's cache, reserved once known
	weights  int64
	kv       int64
}

func newRegistry(s *Server, cat Catalog) *registry {
	return &registry{s: s, cat: cat, models: map[string]*loaded{}}
}

func (l *loaded) isReady() bool {
	select {
	case <-l.ready:
		return true
	default:
		return false
	}
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// errModelNotFound is ollama's 404 for an unknown model.
func errModelNotFound(name string) *apiError {
	return errNotFound(fmt.Sprintf("model %s not found, try pulling it first", quote(name)), "model_not_found")
}

// acquire returns the loaded model name refers to, loading it if needed
// and waiting while it loads, held until release; load is how long this
// request waited for the model to load (0 when it was loaded already).
func (r *registry) acquire(ctx context.Context, name string) (l *loaded, load time.Duration, ae *apiError) {
	list, err := r.cat.Models()
	if err != nil {
		return nil, 0, errInternal(fmt.Errorf("listing the models: %v", err))
	}
	entry, ok := findModel(list, name)
	if !ok {
		return nil, 0, errModelNotFound(name)
	}
	t0 := time.Now()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, 0, errUnavailable("the server is shutting down", 5)
	}
	l = r.models[entry.Name]
	if l == nil {
		l = &loaded{entry: entry, ready: make(chan struct{}), keep: r.s.cfg.KeepAlive, lastUse: time.Now()}
		r.models[entry.Name] = l
		go r.loadModel(l)
	}
	l.refs++
	l.gen++ // an expiry timer already set does nothing now
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	l.expires = time.Time{}
	loading := !l.isReady()
	r.mu.Unlock()
	select {
	case <-l.ready:
	case <-ctx.Done():
		r.release(l, nil)
		return nil, 0, &apiError{Status: http.StatusRequestTimeout, Type: "invalid_request_error", Message: "the client went away while the model loaded"}
	}
	if l.err != nil {
		r.release(l, nil)
		return nil, 0, l.err
	}
	if loading {
		load = time.Since(t0)
	}
	return l, load, nil
}

// loadModel opens l's model, makes room for it and starts its engine.
func (r *registry) loadModel(l *loaded) {
	t0 := time.Now()
	m, tok, err := r.cat.Open(l.entry)
	if err != nil {
		r.fail(l, errInternal(fmt.Errorf("loading %s: %v", l.entry.Name, err)))
		return
	}
	cfg := r.s.cfg
	cfg.Template, cfg.TemplateFile = "", ""
	if c := m.Config(); cfg.Ctx == 0 {
		cfg.Ctx = min(c.MaxSeq, 4096)
	} else if cfg.Ctx > c.MaxSeq {
		cfg.Ctx = c.MaxSeq // --ctx is the most each model gets
	}
	kv, err := m.CacheBytes(cfg.Ctx, cfg.KV)
	if err != nil {
		m.Close()
		r.fail(l, errInternal(fmt.Errorf("loading %s: %v", l.entry.Name, err)))
		return
	}
	l.weights, l.kv = m.WeightBytes(), int64(cfg.Parallel)*kv
	r.mu.Lock()
	ae := r.makeRoom(l, l.weights+l.kv, cfg)
	if ae == nil {
		l.bytes, l.reserved = l.weights+l.kv, true
	}
	r.mu.Unlock()
	if ae != nil {
		m.Close()
		r.fail(l, ae)
		return
	}
	e, err := r.s.newEngine(l.entry.Name, m, tok, &cfg)
	if err != nil {
		m.Close()
		r.fail(l, errInternal(fmt.Errorf("loading %s: %v", l.entry.Name, err)))
		return
	}
	e.start(r.s.beforeStep)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		e.close()
		m.Close()
		l.err = errUnavailable("the server is shutting down", 5)
		delete(r.models, l.entry.Name)
		close(l.ready)
		return
	}
	l.e, l.load = e, time.Since(t0)
	close(l.ready)
	r.s.logf("loaded %s in %s: weights %s, %d slots of %d positions: %s cache", l.entry.Name, l.load.Round(time.Millisecond),
		mib(l.weights), cfg.Parallel, cfg.Ctx, mib(l.kv))
	if l.refs == 0 { // every waiter went away
		r.idle(l)
	}
}

// fail ends a load that did not succeed; waiting requests get ae.
func (r *registry) fail(l *loaded, ae *apiError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l.err = ae
	if r.models[l.entry.Name] == l {
		delete(r.models, l.entry.Name)
	}
	close(l.ready)
	r.s.logf("%s: %s", l.entry.Name, ae.Message)
}

// makeRoom unloads idle models, the least recently used first, until l's
// need fits in the memory budget and under MaxLoaded; a 503 says why it
// cannot. r.mu is held.
func (r *registry) makeRoom(l *loaded, need int64, cfg Config) *apiError {
	budget := r.s.cfg.Memory
	if need > budget {
		return errUnavailable(fmt.Sprintf("model %s needs %s (weights %s, KV cache %s: %d slots of %d positions), more than the memory budget of %s (--memory); lower --ctx or --parallel, or raise --memory",
			quote(l.entry.Name), mib(need), mib(l.weights), mib(l.kv), cfg.Parallel, cfg.Ctx, mib(budget)), 0)
	}
	for {
		var used int64
		n := 0
		var victim *loaded
		var busy []string
		for _, o := range r.models {
			if o == l || !o.reserved {
				continue // a model still opening counts once it has made its room
			}
			used += o.bytes
			n++
			if o.refs > 0 || !o.isReady() {
				busy = append(busy, o.entry.Name)
				continue
			}
			if victim == nil || o.lastUse.Before(victim.lastUse) {
				victim = o
			}
		}
		overCount := r.s.cfg.MaxLoaded > 0 && n >= r.s.cfg.MaxLoaded
		if used+need <= budget && !overCount {
			return nil
		}
		if victim == nil {
			sort.Strings(busy)
			why := fmt.Sprintf("%s of the memory budget of %s is free", mib(budget-used), mib(budget))
			if overCount {
				why = fmt.Sprintf("%d models are loaded (--max-loaded %d)", n, r.s.cfg.MaxLoaded)
			}
			return errUnavailable(fmt.Sprintf("model %s needs %s but %s, and the models loaded (%s) are running requests; retry when they finish",
				quote(l.entry.Name), mib(need), why, strings.Join(busy, ", ")), 1)
		}
		r.s.logf("unloading %s (least recently used) to make room for %s", victim.entry.Name, l.entry.Name)
		r.unload(victim)
	}
}

// unload stops a loaded model's engine and closes it. r.mu is held; the
// model has no request running (or the server is closing).
func (r *registry) unload(l *loaded) {
	if r.models[l.entry.Name] == l {
		delete(r.models, l.entry.Name)
	}
	l.gen++
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	if l.e != nil {
		l.e.close()
		l.e.m.Close()
	}
}

// release ends a request's hold on l; keep, when set, is the request's
// keep_alive, which then applies to the model.
func (r *registry) release(l *loaded, keep *time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l.refs--
	if keep != nil {
		l.keep = *keep
	}
	l.lastUse = time.Now()
	if l.refs == 0 && l.isReady() && l.err == nil && r.models[l.entry.Name] == l {
		r.idle(l)
	}
}

// idle starts l's keep_alive once its last request ended. r.mu is held.
func (r *registry) idle(l *loaded) {
	switch {
	case l.keep < 0:
		l.expires = time.Time{}
	case l.keep == 0:
		r.s.logf("unloading %s (keep_alive 0)", l.entry.Name)
		r.unload(l)
	default:
		l.gen++
		g := l.gen
		l.expires = time.Now().Add(l.keep)
		l.timer = time.AfterFunc(l.keep, func() { r.expire(l, g) })
	}
}

func (r *registry) expire(l *loaded, gen uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if l.gen == gen && l.refs == 0 && r.models[l.entry.Name] == l {
		r.s.logf("unloading %s (keep_alive %s passed)", l.entry.Name, l.keep)
		r.unload(l)
	}
}

// unloadName unloads the model of that entry name now if no request runs on it
// (ollama's keep_alive 0 with an empty prompt, or a delete).
func (r *registry) unloadName(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if l := r.models[name]; l != nil && l.refs == 0 && l.isReady() {
		r.unload(l)
	}
}

// psEntry is a loaded model as /api/ps lists it.
type psEntry struct {
	entry   ModelEntry
	bytes   int64
	expires time.Time // zero: kept for good
	ctx     int
}

// loadedModels lists the loaded models, the most recently used first.
func (r *registry) loadedModels() []psEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ls []*loaded
	for _, l := range r.models {
		if l.isReady() && l.err == nil {
			ls = append(ls, l)
		}
	}
	sort.Slice(ls, func(i, j int) bool { return ls[i].lastUse.After(ls[j].lastUse) })
	out := make([]psEntry, 0, len(ls))
	for _, l := range ls {
		p := psEntry{entry: l.entry, bytes: l.bytes, expires: l.expires, ctx: l.e.ctx}
		if l.refs > 0 && l.keep >= 0 {
			p.expires = time.Now().Add(l.keep)
		}
		out = append(out, p)
	}
	return out
}

// close unloads every model, ending the requests still running with
// errShutdown; acquire refuses from now on.
func (r *registry) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for _, l := range r.models {
		if l.isReady() {
			r.unload(l)
		}
	}
}
