//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// killChildEnv holds the command line (split at \x1f) that the re-executed
// test binary runs as krafla instead of the tests.
const killChildEnv = "KRAFLA_KILL_TEST_ARGS"

// TestKillConvert runs real convert processes (this test binary, re-executed
// as krafla) and SIGKILLs them at several points of writing the model. After
// each kill the old model and tokenizer are intact (or, past the rename, the
// new model is complete), at most one temporary file remains and its name
// says what it is; the next convert removes it, says so, and leaves only the
// two outputs.
func TestKillConvert(t *testing.T) {
	if args, ok := os.LookupEnv(killChildEnv); ok {
		os.Exit(execute(context.Background(), strings.Split(args, "\x1f"), os.Stdin, os.Stdout, os.Stderr))
	}
	root := t.TempDir()
	ck := filepath.Join(root, "ck")
	// 15M parameters: a conversion takes a good fraction of a second on one
	// thread, long enough to stop it in each phase.
	if err := runSynth("llama3", synthOptions{Output: ck, Shape: "stories15m", DType: "bf16", Seed: 3, Shards: 1}, io.Discard); err != nil {
		t.Fatal(err)
	}
	// The new model is Q8_0; the old one beside it, Q4_0, has other bytes
	// and another size, so the two are told apart.
	convertArgs := func(out, typ string) []string {
		return []string{"convert", ck, "-o", out, "--type", typ, "--threads", "1"}
	}
	ref := filepath.Join(t.TempDir(), "m.mlb")
	if _, stderr, err := runChild(t, convertArgs(ref, "q8_0")).wait(); err != nil {
		t.Fatalf("reference convert: %v\n%s", err, stderr)
	}
	newMLB, newMLT := readFile(t, ref), readFile(t, strings.TrimSuffix(ref, ".mlb")+".mlt")

	dir := t.TempDir()
	out := filepath.Join(dir, "m.mlb")
	outMLT := filepath.Join(dir, "m.mlt")
	if _, stderr, err := runChild(t, convertArgs(out, "q4_0")).wait(); err != nil {
		t.Fatalf("old convert: %v\n%s", err, stderr)
	}
	oldMLB, oldMLT := readFile(t, out), readFile(t, outMLT)
	if bytes.Equal(oldMLB, newMLB) {
		t.Fatal("the old and new models are equal; the test cannot tell them apart")
	}

	// Each point is a condition on the output folder, polled while the
	// child runs; the child is killed as soon as it holds.
	points := []struct {
		name     string
		required bool // a point the child cannot pass unnoticed
		at       func(tmp []os.FileInfo, out os.FileInfo) bool
	}{
		{"at start", false, func([]os.FileInfo, os.FileInfo) bool { return true }},
		{"temporary model created", true, func(tmp []os.FileInfo, _ os.FileInfo) bool { return len(tmp) > 0 }},
		{"temporary model half written", true, func(tmp []os.FileInfo, _ os.FileInfo) bool {
			return len(tmp) > 0 && tmp[0].Size() >= int64(len(newMLB))/2
		}},
		{"temporary model complete (verifying)", false, func(tmp []os.FileInfo, _ os.FileInfo) bool {
			return len(tmp) > 0 && tmp[0].Size() == int64(len(newMLB))
		}},
		{"model renamed into place", false, func(_ []os.FileInfo, out os.FileInfo) bool {
			return out != nil && out.Size() == int64(len(newMLB))
		}},
	}
	for _, p := range points {
		t.Run(p.name, func(t *testing.T) {
			writeFile(t, out, oldMLB)
			writeFile(t, outMLT, oldMLT)
			c := runChild(t, convertArgs(out, "q8_0"))
			tmpName := regexp.MustCompile(`^\.m\.ml[bt]\.krafla-tmp-` + strconv.Itoa(c.cmd.Process.Pid) + `-[0-9]+$`)
			hit := false
			for !c.exited() {
				tmp, others := listDir(t, dir, tmpName)
				var st os.FileInfo
				if s, err := os.Stat(out); err == nil {
					st = s
				}
				if len(others) > 0 {
					t.Errorf("unexpected files %v while converting", others)
				}
				if p.at(tmp, st) {
					hit = c.cmd.Process.Signal(syscall.SIGKILL) == nil
					break
				}
				time.Sleep(100 * time.Microsecond)
			}
			_, stderr, err := c.wait()
			if !hit {
				if p.required {
					t.Fatalf("convert finished (%v) before the point was reached\n%s", err, stderr)
				}
				t.Skipf("convert finished before the point was reached; nothing was killed")
			}

			// The model is the old one, or past the rename the complete new
			// one; the tokenizer is the old or the new one, never a part.
			switch got := readFile(t, out); {
			case bytes.Equal(got, oldMLB):
			case bytes.Equal(got, newMLB):
				t.Log("killed after the model was renamed into place")
			default:
				t.Fatalf("%s is neither the old model nor the complete new one (%d bytes)", out, len(got))
			}
			if got := readFile(t, outMLT); !bytes.Equal(got, oldMLT) && !bytes.Equal(got, newMLT) {
				t.Fatalf("%s is neither the old tokenizer nor the new one", outMLT)
			}
			tmp, others := listDir(t, dir, tmpName)
			if len(others) > 0 {
				t.Errorf("files other than the outputs and a temporary file: %v", others)
			}
			if len(tmp) > 1 {
				t.Errorf("%d temporary files left, want at most one", len(tmp))
			}
			t.Logf("left behind: %d temporary file(s)", len(tmp))

			// The next convert removes the leftover and says so.
			next := runChild(t, convertArgs(out, "q8_0"))
			_, stderr, err = next.wait()
			if err != nil {
				t.Fatalf("next convert: %v\n%s", err, stderr)
			}
			for _, f := range tmp {
				want := fmt.Sprintf("krafla: removed %s (", filepath.Join(dir, f.Name()))
				if !strings.Contains(stderr, want) || !strings.Contains(stderr, "interrupted process "+strconv.Itoa(c.cmd.Process.Pid)) {
					t.Errorf("next convert's stderr %q does not say %q... interrupted process %d", stderr, want, c.cmd.Process.Pid)
				}
			}
			if len(tmp) == 0 && strings.Contains(stderr, "removed") {
				t.Errorf("next convert reports a removal with nothing left behind: %q", stderr)
			}
			if tmp, others := listDir(t, dir, tmpName); len(tmp)+len(others) > 0 {
				t.Errorf("after the next convert: temporary %v, others %v; want only m.mlb and m.mlt", tmp, others)
			}
			if !bytes.Equal(readFile(t, out), newMLB) || !bytes.Equal(readFile(t, outMLT), newMLT) {
				t.Error("the next convert did not write the new model and tokenizer")
			}
		})
	}
}

// child is a krafla process: this test binary re-executed with killChildEnv.
type child struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan error
	err            error
}

func runChild(t *testing.T, args []string) *child {
	t.Helper()
	c := &child{done: make(chan error, 1)}
	c.cmd = exec.Command(os.Args[0], "-test.run=^TestKillConvert$")
	c.cmd.Env = append(os.Environ(), killChildEnv+"="+strings.Join(args, "\x1f"))
	c.cmd.Stdout, c.cmd.Stderr = &c.stdout, &c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.done <- c.cmd.Wait() }()
	t.Cleanup(func() {
		c.cmd.Process.Kill()
		c.wait()
	})
	return c
}

// exited reports whether the process has ended (and been reaped).
func (c *child) exited() bool {
	select {
	case err := <-c.done:
		c.err = err
		c.done = nil
		return true
	default:
		return c.done == nil
	}
}

func (c *child) wait() (stdout, stderr string, err error) {
	if c.done != nil {
		c.err = <-c.done
		c.done = nil
	}
	return c.stdout.String(), c.stderr.String(), c.err
}

// listDir returns the files of dir matching tmp (sorted by name), and the
// names of those that are neither that nor m.mlb and m.mlt.
func listDir(t *testing.T, dir string, tmp *regexp.Regexp) (temps []os.FileInfo, others []string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		switch {
		case e.Name() == "m.mlb" || e.Name() == "m.mlt":
		case tmp.MatchString(e.Name()):
			if info, err := e.Info(); err == nil { // else renamed meanwhile
				temps = append(temps, info)
			}
		default:
			others = append(others, e.Name())
		}
	}
	return temps, others
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
