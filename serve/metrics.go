package serve

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// endpoints are the label values of krafla_requests_total, created at 0.
var endpoints = []string{"chat_completions", "completions", "models", "tokenize", "detokenize", "api_chat", "api_generate", "api_other",
	"embeddings", "api_embed", "api_embeddings", "other"}

// statusClasses are the code label values of krafla_requests_total.
var statusClasses = []string{"2xx", "4xx", "5xx"}

// rateWindow is the span over which krafla_generation_tokens_per_second averages.
const rateWindow = 10

// metrics are counted by handlers and the scheduler and written in the
// Prometheus text format 0.0.4 by hand (client_golang would bring protobuf).
type metrics struct {
	requests     [][3]atomic.Int64 // per endpoint, per status class
	promptTokens atomic.Int64
	genTokens    atomic.Int64
	reusedTokens atomic.Int64
	failed       atomic.Int64
	queued       atomic.Int64
	busy         atomic.Int64
	slots        int

	mu      sync.Mutex
	buckets [rateWindow]struct{ sec, n int64 } // generated tokens per second
}

func newMetrics(slots int) *metrics {
	return &metrics{requests: make([][3]atomic.Int64, len(endpoints)), slots: slots}
}

// request counts a response of the endpoint (an index in endpoints).
func (m *metrics) request(endpoint, status int) {
	c := 0
	switch {
	case status >= 500:
		c = 2
	case status >= 400:
		c = 1
	}
	m.requests[endpoint][c].Add(1)
}

// generated counts one generated token at time now.
func (m *metrics) generated(now time.Time) {
	m.genTokens.Add(1)
	sec := now.Unix()
	m.mu.Lock()
	b := &m.buckets[sec%rateWindow]
	if b.sec != sec {
		b.sec, b.n = sec, 0
	}
	b.n++
	m.mu.Unlock()
}

// rate is the generated tokens per second over the last complete rateWindow seconds.
func (m *metrics) rate(now time.Time) float64 {
	sec := now.Unix()
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for _, b := range m.buckets {
		if b.sec < sec && b.sec >= sec-rateWindow {
			n += b.n
		}
	}
	return float64(n) / rateWindow
}

func (m *metrics) write(w io.Writer, now time.Time) {
	family := func(name, typ, help string) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	family("krafla_requests_total", "counter", "HTTP requests answered, by endpoint and status class.")
	for i, e := range endpoints {
		for c, cl := range statusClasses {
			fmt.Fprintf(w, "krafla_requests_total{endpoint=%q,code=%q} %d\n", e, cl, m.requests[i][c].Load())
		}
	}
	for _, c := range []struct {
		name, help string
		v          *atomic.Int64
	}{
		{"krafla_prompt_tokens_total", "Prompt tokens of admitted requests.", &m.promptTokens},
		{"krafla_prompt_tokens_reused_total", "Prompt tokens taken from a slot's cache instead of evaluated.", &m.reusedTokens},
		{"krafla_generated_tokens_total", "Tokens generated.", &m.genTokens},
		{"krafla_generation_failures_total", "Generations ended by an error or a client that went away.", &m.failed},
	} {
		family(c.name, "counter", c.help)
		fmt.Fprintf(w, "%s %d\n", c.name, c.v.Load())
	}
	for _, g := range []struct {
		name, help string
		v          float64
	}{
		{"krafla_queue_length", "Requests waiting for a slot.", float64(m.queued.Load())},
		{"krafla_slots_busy", "Slots serving a request.", float64(m.busy.Load())},
		{"krafla_slots", "Slots (--parallel).", float64(m.slots)},
		{"krafla_generation_tokens_per_second", fmt.Sprintf("Tokens generated per second over the last %d seconds.", rateWindow), m.rate(now)},
	} {
		family(g.name, "gauge", g.help)
		fmt.Fprintf(w, "%s %g\n", g.name, g.v)
	}
}
