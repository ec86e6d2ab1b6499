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

// benchCatalog serves one .mlb under several names, each opened (and
// repacked into huge pages) on its own, as two models of a store would be.
type benchCatalog struct {
	path  string
	names []string
}

func (c benchCatalog) Models() ([]ModelEntry, error) {
	var out []ModelEntry
	for _, n := range c.names {
		out = append(out, ModelEntry{Name: n, Path: c.path})
	}
	return out, nil
}

func (c benchCatalog) Open(m ModelEntry) (*infer.Model, *mlt.Tokenizer, error) {
	mod, tok, err := openFiles(m.Path)
	if err == nil {
		mod.CopyToHugePages()
	}
	return mod, tok, err
}

// BenchmarkModels measures aggregate generation speed (tok/s of all
// streams, over wall time) on $KRAFLA_BENCH_MODEL, $KRAFLA_BENCH_TOKENS
// tokens a stream (default 32):
//
//	single/streams=8       one model, 8 streams, single-model mode (Start, as before this change)
//	catalog/streams=8      the same through the catalog's registry and dispatcher
//	alone=a/streams=4      model a alone, 4 streams (catalog)
//	alone=b/streams=4      model b alone, 4 streams
//	both/streams=4+4       a and b served at once, 4 streams each
//
// Each model's batch has runtime.NumCPU() threads, as krafla serve gives it.
func BenchmarkModels(b *testing.B) {
	path := os.Getenv("KRAFLA_BENCH_MODEL")
	if path == "" {
		b.Skip("set KRAFLA_BENCH_MODEL to an .mlb with its .mlt beside it")
	}
	n := 32
	if v := os.Getenv("KRAFLA_BENCH_TOKENS"); v != "" {
		fmt.Sscan(v, &n)
	}
	_, tok, err := openFiles(path)
	if err != nil {
		b.Fatal(err)
	}
	bias := noStops(tok)
	threads := runtime.NumCPU()
	round := func(b *testing.B, url string, models []string, streams int) (int64, time.Duration) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		var tokens int64
		t0 := time.Now()
		for _, model := range models {
			for c := range streams {
				body, _ := json.Marshal(map[string]any{"model": model, "prompt": fmt.Sprintf("Stream %d: the lava flows under the ice and the fire", c),
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
						b.Errorf("stream: %v %s", err, raw)
						return
					}
					mu.Lock()
					tokens += int64(generated(r))
					mu.Unlock()
				}()
			}
		}
		wg.Wait()
		return tokens, time.Since(t0)
	}
	run := func(b *testing.B, url string, models []string, streams int) {
		round(b, url, models, streams) // load the models, warm the caches
		var tokens int64
		var elapsed time.Duration
		cpu0 := cputime.Process()
		b.ResetTimer()
		for range b.N {
			t, d := round(b, url, models, streams)
			tokens += t
			elapsed += d
		}
		b.ReportMetric(float64(tokens)/elapsed.Seconds(), "tok/s")
		// Per CPU second of this process, which the other load of a shared
		// machine distorts far less.
		if cpu := cputime.Process() - cpu0; cpu > 0 {
			b.ReportMetric(float64(tokens)/cpu.Seconds(), "tok/cpu-s")
		}
	}
	b.Run("single/streams=8", func(b *testing.B) {
		m, tok, err := openFiles(path)
		if err != nil {
			b.Fatal(err)
		}
		defer m.Close()
		m.CopyToHugePages()
		s := NewServer(Config{Name: "a", Parallel: 8, Ctx: 512, Threads: threads})
		if err := s.Start(m, tok); err != nil {
			b.Fatal(err)
		}
		hs := httptest.NewServer(s.Handler())
		defer func() { hs.Close(); s.Close() }()
		run(b, hs.URL, []string{"a"}, 8)
	})
	many := func(b *testing.B, parallel int, models []string, streams int) {
		s := NewServer(Config{Catalog: benchCatalog{path, []string{"a", "b"}}, Parallel: parallel, Ctx: 512, Threads: threads})
		hs := httptest.NewServer(s.Handler())
		defer func() { hs.Close(); s.Close() }()
		run(b, hs.URL, models, streams)
	}
	b.Run("catalog/streams=8", func(b *testing.B) { many(b, 8, []string{"a"}, 8) })
	b.Run("alone=a/streams=4", func(b *testing.B) { many(b, 4, []string{"a"}, 4) })
	b.Run("alone=b/streams=4", func(b *testing.B) { many(b, 4, []string{"b"}, 4) })
	b.Run("both/streams=4+4", func(b *testing.B) { many(b, 4, []string{"a", "b"}, 4) })
}

var _ = strings.TrimSpace
