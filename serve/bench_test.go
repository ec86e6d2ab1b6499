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
	"github.com/krafla/krafla/internal/cputime"
	"github.com/krafla/krafla/mlt"
)

// BenchmarkStreams measures the aggregate generation speed of 1, 2, 4 and 8
// concurrent streaming clients, each on its own slot (--parallel N), on the
// model named by $KRAFLA_BENCH_MODEL (scripts/serve-bench.sh makes the 135M
// shape); skipped without it. Each iteration is one round of N requests of
// $KRAFLA_BENCH_TOKENS tokens (default 64), prompt evaluation included. It
// reports tok/s over wall time and tok/cpu-s over the process's CPU time.
//
// With $KRAFLA_BENCH_URL the same clients load that server instead (e.g.
// llama-server started with --parallel N; $KRAFLA_BENCH_STREAMS=N picks the
// rounds, $KRAFLA_BENCH_NAME the model id), and only tok/s is reported.
func BenchmarkStreams(b *testing.B) {
	path := os.Getenv("KRAFLA_BENCH_MODEL")
	if path == "" {
		b.Skip("set KRAFLA_BENCH_MODEL to an .mlb with its .mlt beside it")
	}
	n := 64
	if v := os.Getenv("KRAFLA_BENCH_TOKENS"); v != "" {
		fmt.Sscan(v, &n)
	}
	streamCounts := []int{1, 2, 4, 8}
	if v := os.Getenv("KRAFLA_BENCH_STREAMS"); v != "" {
		streamCounts = nil
		for _, f := range strings.Split(v, ",") {
			var k int
			fmt.Sscan(f, &k)
			streamCounts = append(streamCounts, k)
		}
	}
	external := os.Getenv("KRAFLA_BENCH_URL")
	name := "bench"
	if v := os.Getenv("KRAFLA_BENCH_NAME"); v != "" {
		name = v
	}
	m, err := infer.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	tok, err := mlt.Open(strings.TrimSuffix(path, ".mlb") + ".mlt")
	if err != nil {
		b.Fatal(err)
	}
	if external == "" {
		if _, err := m.CopyToHugePages(); err != nil {
			b.Logf("huge pages: %v", err)
		}
	}
	bias := noStops(tok)
	for _, streams := range streamCounts {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			url := external
			if url == "" {
				s := NewServer(Config{Name: name, Parallel: streams, Ctx: 512, Threads: runtime.NumCPU()})
				if err := s.Start(m, tok); err != nil {
					b.Fatal(err)
				}
				hs := httptest.NewServer(s.Handler())
				defer func() {
					hs.Close()
					s.Close()
				}()
				url = hs.URL
			}
			var tokens int64
			var elapsed time.Duration
			cpu0 := cputime.Process()
			b.ResetTimer()
			for range b.N {
				var wg sync.WaitGroup
				var mu sync.Mutex
				t0 := time.Now()
				for c := range streams {
					body, _ := json.Marshal(map[string]any{"model": name, "prompt": fmt.Sprintf("Stream %d: the lava flows under the ice and the fire", c),
						"max_tokens": n, "temperature": 0, "stream": true, "stream_options": map[string]any{"include_usage": true}, "logit_bias": bias})
					wg.Add(1)
					go func() {
						defer wg.Done()
						resp, err := http.Post(url+"/v1/completions", "application/json", bytes.NewReader(body))
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
						mu.Lock()
						defer mu.Unlock()
						tokens += int64(generated(r))
					}()
				}
				wg.Wait()
				elapsed += time.Since(t0)
			}
			b.ReportMetric(float64(tokens)/elapsed.Seconds(), "tok/s")
			// Per CPU second of this process (server and clients), which the
			// other load of a shared machine distorts far less.
			if cpu := cputime.Process() - cpu0; cpu > 0 && external == "" {
				b.ReportMetric(float64(tokens)/cpu.Seconds(), "tok/cpu-s")
			}
		})
	}
}

// generated is a stream's completion_tokens, or its count of chunks
// before the last when it carries no usage.
func generated(r streamResult) int {
	for _, c := range r.chunks {
		if c.Usage != nil && c.Usage.CompletionTokens > 0 {
			return c.Usage.CompletionTokens
		}
	}
	n := 0
	for _, c := range r.chunks {
		if len(c.Choices) > 0 && c.Choices[0].FinishReason == nil {
			n++
		}
	}
	return n
}
