package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/internal/testenv"
	"github.com/krafla/krafla/mlt"
)

// BenchmarkStreams measures the aggregate generation speed of 1, 2, 4 and 8
// concurrent streaming clients, each on its own slot (--parallel N), on the
// model named by $KRAFLA_BENCH_MODEL (scripts/serve-bench.sh makes the 135M
// shape); skipped without it. Each iteration is one round of N requests of
// $KRAFLA_BENCH_TOKENS tokens (default 64), prompt evaluation included. It
// reports tok/s over wall time and tok/cpu-s over the process's CPU time.
func BenchmarkStreams(b *testing.B) {
	path := os.Getenv("KRAFLA_BENCH_MODEL")
	if path == "" {
		b.Skip("set KRAFLA_BENCH_MODEL to an .mlb with its .mlt beside it")
	}
	n := 64
	if v := os.Getenv("KRAFLA_BENCH_TOKENS"); v != "" {
		fmt.Sscan(v, &n)
	}
	m, err := infer.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	if _, err := m.CopyToHugePages(); err != nil {
		b.Logf("huge pages: %v", err)
	}
	tok, err := mlt.Open(strings.TrimSuffix(path, ".mlb") + ".mlt")
	if err != nil {
		b.Fatal(err)
	}
	bias := noStops(tok)
	for _, streams := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			s := NewServer(Config{Name: "bench", Parallel: streams, Ctx: 512, Threads: runtime.NumCPU()})
			if err := s.Start(m, tok); err != nil {
				b.Fatal(err)
			}
			hs := httptest.NewServer(s.Handler())
			defer func() {
				hs.Close()
				s.Close()
			}()
			var tokens int64
			var elapsed time.Duration
			cpu0 := testenv.CPUTime()
			b.ResetTimer()
			for range b.N {
				var wg sync.WaitGroup
				var mu sync.Mutex
				t0 := time.Now()
				for c := range streams {
					body, _ := json.Marshal(map[string]any{"model": "bench", "prompt": fmt.Sprintf("Stream %d: the lava flows under the ice and the fire", c),
						"max_tokens": n, "temperature": 0, "stream": true, "stream_options": map[string]any{"include_usage": true}, "logit_bias": bias})
					wg.Add(1)
					go func() {
						defer wg.Done()
						resp, err := http.Post(hs.URL+"/v1/completions", "application/json", bytes.NewReader(body))
						if err != nil {
							b.Error(err)
							return
						}
						raw, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						r, err := readStream(b, bytes.NewReader(raw))
						if err != nil || !r.done {
							b.Errorf("stream: %v", err)
							return
						}
						if u := r.chunks[len(r.chunks)-1].Usage; u != nil {
							mu.Lock()
							tokens += int64(u.CompletionTokens)
							mu.Unlock()
						}
					}()
				}
				wg.Wait()
				elapsed += time.Since(t0)
			}
			b.ReportMetric(float64(tokens)/elapsed.Seconds(), "tok/s")
			// Per CPU second of this process (clients included), which the
			// other load of a shared machine distorts far less.
			if cpu := testenv.CPUTime() - cpu0; cpu > 0 {
				b.ReportMetric(float64(tokens)/cpu.Seconds(), "tok/cpu-s")
			}
		})
	}
}
