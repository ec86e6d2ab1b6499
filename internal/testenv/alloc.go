package testenv

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// AllocSlack is the fixed allocation a parser may make whatever its input:
// error messages, a decoder's buffers, small maps.
const AllocSlack = 256 << 10

// AllocFactor bounds the rest, bytes allocated per byte of input, for a
// parser that decodes its input into Go values (strings, slices, map
// entries) about the size of the bytes they come from.
const AllocFactor = 16

// AllocBytes returns the heap bytes one call of f allocates, the mean over
// runs calls after a warm-up call. It reads runtime.MemStats.TotalAlloc,
// which counts every allocation, collected since or not, so a parser that
// allocates a huge slice and drops it at once is still seen. Like
// testing.AllocsPerRun it runs with GOMAXPROCS 1; other goroutines of the
// test must be idle.
func AllocBytes(runs int, f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(runs)
}

// CheckAllocBound fails t when parse, given an input of n bytes, allocates
// more than factor·n + AllocSlack bytes: what a header claims (a count of
// 2^31 or 2^63, a length beyond the file) must be checked against the input
// before anything that size is allocated. Most callers pass AllocFactor.
func CheckAllocBound(t testing.TB, name string, n, factor int, parse func()) {
	t.Helper()
	limit := uint64(factor*n + AllocSlack)
	got := AllocBytes(3, parse)
	if got > limit {
		t.Errorf("%s: %d bytes of input allocated %d bytes, want at most %d (%d·input + %d)", name, n, got, limit, factor, AllocSlack)
	}
}

// FuzzSeeds returns the inputs of the Go fuzz corpus files in dir (a
// testdata/fuzz/FuzzX folder) that hold one []byte value, by file name.
func FuzzSeeds(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	seeds := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) != 2 || lines[0] != "go test fuzz v1" {
			continue
		}
		lit, ok := strings.CutPrefix(lines[1], "[]byte(")
		if !ok || !strings.HasSuffix(lit, ")") {
			continue
		}
		v, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		seeds[e.Name()] = []byte(v)
	}
	return seeds
}
