package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExecuteExitStatus runs whole command lines in-process and checks the
// exit status and the message scripts and people see.
func TestExecuteExitStatus(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.mlb")
	tests := []struct {
		name string
		args []string
		want int
		msg  []string // substrings of stderr
	}{
		{"help", []string{"--help"}, exitOK, nil},
		{"version", []string{"--version"}, exitOK, nil},
		{"unknown command", []string{"bogus"}, exitUsage, []string{`unknown command "bogus"`, "Run 'krafla --help' for usage."}},
		{"unknown flag", []string{"inspect", "--bogus", "x"}, exitUsage, []string{"unknown flag: --bogus", "Run 'krafla inspect --help'"}},
		{"no argument", []string{"inspect"}, exitUsage, []string{"inspect takes 1 argument, got 0", "Usage: krafla inspect FILE", "Run 'krafla inspect --help'"}},
		{"two arguments", []string{"tokenize", "a", "b"}, exitUsage, []string{`tokenize takes 1 argument, got 2 ("a", "b")`}},
		{"usage error without hint gets one", []string{"synth", "llama"}, exitUsage, []string{"-o DIR is required", "Run 'krafla synth --help' for usage."}},
		{"missing file", []string{"inspect", missing}, exitFailure, []string{"ML_E_IO", missing}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errw bytes.Buffer
			got := execute(context.Background(), tc.args, strings.NewReader(""), &out, &errw)
			if got != tc.want {
				t.Errorf("exit status: got %d, want %d (stderr %q)", got, tc.want, errw.String())
			}
			for _, m := range tc.msg {
				if !strings.Contains(errw.String(), m) {
					t.Errorf("stderr %q: want it to contain %q", errw.String(), m)
				}
			}
			if n := strings.Count(errw.String(), "for usage."); n > 1 {
				t.Errorf("stderr %q: the usage hint appears %d times", errw.String(), n)
			}
		})
	}
}

// TestExecuteInterrupted: a command stopped by a cancelled context says so
// instead of "context canceled", and fails.
func TestExecuteInterrupted(t *testing.T) {
	ck := filepath.Join(t.TempDir(), "ck")
	if err := runSynth("llama", synthOptions{Output: ck, Shape: "tiny", DType: "bf16", Seed: 1, Shards: 1}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(t.TempDir(), "m.mlb")
	var errw bytes.Buffer
	got := execute(ctx, []string{"convert", ck, "-o", out}, strings.NewReader(""), &bytes.Buffer{}, &errw)
	if got != exitFailure || strings.TrimSpace(errw.String()) != "krafla: interrupted" {
		t.Errorf("got status %d and %q, want %d and %q", got, errw.String(), exitFailure, "krafla: interrupted")
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was written by an interrupted convert", out)
	}
}

func TestCheckOutputPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want string // "" = no error
	}{
		{filepath.Join(dir, "new.mlb"), ""},
		{file, ""}, // an existing file is replaced
		{dir, "is a folder"},
		{filepath.Join(dir, "nowhere", "x.mlb"), "folder " + filepath.Join(dir, "nowhere") + " does not exist"},
		{filepath.Join(file, "x.mlb"), file + " is not a folder"},
	}
	for _, tc := range tests {
		err := checkOutputPath("-o", tc.path)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: got %v, want no error", tc.path, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "-o "+tc.path)):
			t.Errorf("%s: got %v, want an error naming -o and the path, containing %q", tc.path, err, tc.want)
		}
	}
}
