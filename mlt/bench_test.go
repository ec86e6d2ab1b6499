package mlt

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
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

// BenchmarkEncode measures Encode on the long documents of each conformance
// tokenizer (../shared/tokenizers and tokenizers-next), in MB/s, to set beside
// Hugging Face's figures measured by testdata/pipeline/bench_hf.js. "cold"
// empties the pre-token cache before every pass over the text, "warm" keeps
// it; "general" (pipeline tokenizers and those with a scanner) runs every
// regex through regexp2 instead of the hand-written scanners. cpu-MB/s divides
// by the thread's CPU time instead of the wall clock (the shared test machine
// is busy).
func BenchmarkEncode(b *testing.B) {
	for _, dir := range conformanceDirs(b) {
		b.Run(filepath.Base(dir), func(b *testing.B) { benchEncode(b, dir) })
	}
}

func benchEncode(b *testing.B, dir string) {
	tk, err := FromHF(dir)
	if err != nil {
		b.Fatal(err)
	}
	tk.prepare()
	doc := longDocument(b, filepath.Join(dir, "cases.jsonl"))
	type variant struct {
		sub  string
		tk   *Tokenizer
		cold bool
	}
	variants := []variant{{"cold", tk, true}, {"warm", tk, false}}
	if tk.Kind == KindByteLevel {
		variants = append(variants, variant{"general-warm", withGeneralPath(b, asPipeline(b, tk)), false})
	}
	for _, v := range variants {
		b.Run(v.sub, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.SetBytes(int64(len(doc)))
			out := make([]int, 0, len(doc))
			c0, ok := threadCPUTime()
			n := 0
			for b.Loop() {
				if v.cold {
					v.tk.merger.cache = nil
				}
				out = v.tk.AppendEncode(out[:0], doc, false)
				n++
			}
			if c1, ok1 := threadCPUTime(); ok && ok1 && c1 > c0 {
				b.ReportMetric(float64(n*len(doc))/(c1-c0).Seconds()/1e6, "cpu-MB/s")
			}
		})
	}
}
