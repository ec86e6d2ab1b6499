package main

import (
	"errors"
	"strings"
	"testing"
)

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
		{[]string{"--kv", "q8"}, true, "--kv \"q8\""},
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
