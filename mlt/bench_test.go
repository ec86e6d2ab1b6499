package mlt

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/krafla/krafla/internal/testenv"
)

// longDocument concatenates the long mixed documents of a cases.jsonl (the
// texts of 10 KB or more: the 20, 40 and 60 KB documents of the shipped files).
func longDocument(b testing.TB, path string) string {
	var sb strings.Builder
	for _, c := range readCaseLines(b, path) {
		if len(c.Text) >= 10000 {
			sb.WriteString(c.Text)
		}
	}
	if sb.Len() == 0 {
		b.Skipf("%s has no long documents", path)
	}
	return sb.String()
}

// BenchmarkEncode measures Encode on the long documents of each shipped
// tokenizer, in MB/s, to set beside the Hugging Face figures in
// ../shared/tokenizers/README.md. "cold" empties the pre-token cache before
// every pass over the text, "warm" keeps it. cpu-MB/s divides by the thread's
// CPU time instead of the wall clock (the shared test machine is busy).
func BenchmarkEncode(b *testing.B) {
	for _, name := range []string{"llama2", "llama3", "qwen3", "gemma3", "gpt2"} {
		dir := testenv.Shared(b, "tokenizers", name)
		tk, err := FromHF(dir)
		if err != nil {
			b.Fatal(err)
		}
		tk.prepare()
		doc := longDocument(b, filepath.Join(dir, "cases.jsonl"))
		for _, cold := range []bool{true, false} {
			sub := name + "/warm"
			if cold {
				sub = name + "/cold"
			}
			b.Run(sub, func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.SetBytes(int64(len(doc)))
				out := make([]int, 0, len(doc))
				c0, ok := threadCPUTime()
				n := 0
				for b.Loop() {
					if cold {
						tk.merger.cache = nil
					}
					out = tk.AppendEncode(out[:0], doc, false)
					n++
				}
				if c1, ok1 := threadCPUTime(); ok && ok1 && c1 > c0 {
					b.ReportMetric(float64(n*len(doc))/(c1-c0).Seconds()/1e6, "cpu-MB/s")
				}
			})
		}
	}
}
