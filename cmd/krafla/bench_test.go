package main

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestBenchCPUProfile: --cpuprofile leaves a gzip-compressed pprof profile at
// the path and no temporary file beside it.
func TestBenchCPUProfile(t *testing.T) {
	model := runTestModel(t)
	dir := t.TempDir()
	prof := filepath.Join(dir, "cpu.prof")
	if _, _, err := runCLI("bench", model, "-p", "8", "-n", "2", "-r", "1", "--threads", "1", "--cpuprofile", prof); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(prof)
	if err != nil || !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		t.Fatalf("profile %s: %v, %d bytes, want a gzip stream", prof, err, len(b))
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%s holds %d entries, want only cpu.prof", dir, len(ents))
	}
}

// TestBenchDepth runs the tests after --depth positions (rewinding to them
// between repetitions) and checks the limits of --depth.
func TestBenchDepth(t *testing.T) {
	model := runTestModel(t)
	stdout, _, err := runCLI("bench", model, "-p", "16", "-n", "4", "-r", "2", "--depth", "40", "--threads", "1,2")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pp16 @ d40", "tg4 @ d40"} {
		if c := strings.Count(stdout, want); c != 2 {
			t.Errorf("bench table %q: %q appears %d times, want 2", stdout, want, c)
		}
	}
	stdout, _, err = runCLI("bench", model, "-p", "8", "-n", "2", "-r", "1", "--depth", "8", "--kv", "f16")
	if err != nil || !strings.Contains(stdout, "pp8 @ d8") {
		t.Errorf("bench --kv f16: %v, output %q", err, stdout)
	}
	for _, tc := range []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"--depth", "-1"}, true, "--depth -1"},
		{[]string{"--kv", "q8"}, true, `unknown KV cache type "q8"`},
		{[]string{"--depth", "250", "-p", "16"}, false, "--depth 250 + -p 16"},
	} {
		_, _, err := runCLI(append([]string{"bench", model}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error with %q", tc.args, err, tc.want)
			continue
		}
		var ue usageError
		if got := errors.As(err, &ue); got != tc.usage {
			t.Errorf("%v: usage error %v, want %v", tc.args, got, tc.usage)
		}
	}
}

// TestKVFlag proves that --kv reaches the session of every command that has
// it: run, bench, chat and serve print the cache type the session allocated
// (Session.KV reads it back from the cache slices) and its size, which f16
// halves; ppl against the same model, whose base keeps the f32 cache, scores a
// slightly different perplexity.
func TestKVFlag(t *testing.T) {
	model := runTestModel(t)
	chatModel := chatTestModel(t, chatMLJinja)
	cacheRe := regexp.MustCompile(`(f32|f16)(?:,| cache:) ([0-9.]+) [KM]iB`)
	for _, tc := range []struct {
		name string
		run  func(kv string) (stderr string, err error)
	}{
		{"run", func(kv string) (string, error) {
			_, e, err := runCLI("run", model, "-p", "a", "-n", "2", "--kv", kv, "--ctx", "256")
			return e, err
		}},
		{"bench", func(kv string) (string, error) {
			_, e, err := runCLI("bench", model, "-p", "4", "-n", "1", "-r", "1", "--threads", "1", "--depth", "252", "--kv", kv)
			return e, err
		}},
		{"chat", func(kv string) (string, error) {
			_, e, err := runCLIIn("Hi\n/bye\n", "chat", chatModel, "-v", "-n", "1", "--threads", "1", "--ctx", "256", "--kv", kv)
			return e, err
		}},
		{"serve", func(kv string) (string, error) {
			return serveLog(t, model, "--kv", kv, "--ctx", "256", "--parallel", "8")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mibs []float64
			for _, kv := range []string{"f32", "f16"} {
				e, err := tc.run(kv)
				if err != nil {
					t.Fatalf("--kv %s: %v\n%s", kv, err, e)
				}
				m := cacheRe.FindStringSubmatch(e)
				if m == nil {
					t.Fatalf("--kv %s: no cache line in %q", kv, e)
				}
				if m[1] != kv {
					t.Errorf("--kv %s: the session's cache is %s (%q)", kv, m[1], m[0])
				}
				v, _ := strconv.ParseFloat(m[2], 64)
				mibs = append(mibs, v)
			}
			if !(mibs[0] > 0 && math.Abs(mibs[1]-mibs[0]/2) <= 0.05+0.01*mibs[0]) {
				t.Errorf("cache %g with f32, %g with f16: want half", mibs[0], mibs[1])
			}
		})
	}
	text := writeRunText(t, 300)
	stdout, _, err := runCLI("ppl", model, "-f", text, "--chunk", "64", "--kv", "f16", "--kld", model)
	if err != nil {
		t.Fatal(err)
	}
	var nll, base string
	for _, line := range strings.Split(stdout, "\n") {
		if v, ok := strings.CutPrefix(line, "perplexity: "); ok {
			nll = v
		}
		if v, ok := strings.CutPrefix(line, "base perplexity: "); ok {
			base = v
		}
	}
	if nll == "" || base == "" || nll == base {
		t.Errorf("ppl --kv f16 --kld (same model, f32 base): %q, want two different perplexities", stdout)
	}
}
