//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
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

	"github.com/krafla/krafla/internal/pair"
)

// killChildEnv holds the command line (split at \x1f) that the re-executed
// test binary runs as krafla instead of the tests; killAtEnv, when set, names
// the point of pair.Commit at which the child SIGKILLs itself.
const (
	killChildEnv = "KRAFLA_KILL_TEST_ARGS"
	killAtEnv    = "KRAFLA_KILL_TEST_AT"
)

// TestKillConvert runs real convert processes (this test binary, re-executed
// as krafla) and SIGKILLs them at every point of writing the model and its
// tokenizer: polled from outside while the model is written, and at the named
// points of the pair commit (both files complete, between the two renames,
// after both), where the child kills itself. After each kill a reader gets
// the old pair or the new pair, never one of each: on disk it is the old pair,
// the new pair, or the new model beside the old tokenizer with the new one
// complete in its temporary file, which the next reader (krafla run) renames
// into place and says so. At most one temporary file per output remains and
// its name says what it is; the next convert removes it, says so, and leaves
// only the two outputs.
func TestKillConvert(t *testing.T) {
	if args, ok := os.LookupEnv(killChildEnv); ok {
		if at := os.Getenv(killAtEnv); at != "" {
			pair.Hook = func(p string) {
				if p == at {
					syscall.Kill(os.Getpid(), syscall.SIGKILL)
					select {} // the signal is on its way
				}
			}
		}
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
	// and another size, so the two are told apart; so are their tokenizers,
	// which name their own models.
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
	if bytes.Equal(oldMLB, newMLB) || bytes.Equal(oldMLT, newMLT) {
		t.Fatal("the old and new models (or tokenizers) are equal; the test cannot tell them apart")
	}

	// Each point is a condition on the output folder, polled while the
	// child runs (the child is killed as soon as it holds), or a point of
	// pair.Commit where the child kills itself.
	points := []struct {
		name     string
		required bool   // a point the child cannot pass unnoticed
		hook     string // pair.Hook's point, instead of a condition
		at       func(tmp []os.FileInfo, out os.FileInfo) bool
	}{
		{"at start", false, "", func([]os.FileInfo, os.FileInfo) bool { return true }},
		{"temporary model created", true, "", func(tmp []os.FileInfo, _ os.FileInfo) bool { return len(tmp) > 0 }},
		{"temporary model half written", true, "", func(tmp []os.FileInfo, _ os.FileInfo) bool {
			return len(tmp) > 0 && tmp[0].Size() >= int64(len(newMLB))/2
		}},
		{"temporary model complete (verifying)", false, "", func(tmp []os.FileInfo, _ os.FileInfo) bool {
			return len(tmp) > 0 && tmp[0].Size() == int64(len(newMLB))
		}},
		{"model renamed into place", false, "", func(_ []os.FileInfo, out os.FileInfo) bool {
			return out != nil && out.Size() == int64(len(newMLB))
		}},
		{"both temporary files complete", true, "prepared", nil},
		{"between the model's and the tokenizer's renames", true, "model renamed", nil},
		{"after both renames", true, "tokenizer renamed", nil},
	}
	for _, p := range points {
		t.Run(p.name, func(t *testing.T) {
			writeFile(t, out, oldMLB)
			writeFile(t, outMLT, oldMLT)
			var env []string
			if p.hook != "" {
				env = append(env, killAtEnv+"="+p.hook)
			}
			c := runChild(t, convertArgs(out, "q8_0"), env...)
			tmpName := regexp.MustCompile(`^\.m\.ml[bt]\.krafla-tmp-` + strconv.Itoa(c.cmd.Process.Pid) + `-[0-9]+$`)
			hit := false
			for !c.exited() && p.at != nil {
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
			if p.hook != "" {
				var ee *exec.ExitError
				ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
				hit = errors.As(err, &ee) && ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
				if !hit {
					t.Fatalf("convert did not die at %q: %v\n%s", p.hook, err, stderr)
				}
			}
			if !hit {
				if p.required {
					t.Fatalf("convert finished (%v) before the point was reached\n%s", err, stderr)
				}
				t.Skipf("convert finished before the point was reached; nothing was killed")
			}

			// On disk: the old pair, the new pair, or (between the
			// renames) the new model, the old tokenizer and the new one
			// complete in its temporary file.
			tmp, others := listDir(t, dir, tmpName)
			if len(others) > 0 {
				t.Errorf("files other than the outputs and temporary files: %v", others)
			}
			var tmpMLB, tmpMLT []os.FileInfo
			for _, f := range tmp {
				if strings.HasPrefix(f.Name(), ".m.mlb.") {
					tmpMLB = append(tmpMLB, f)
				} else {
					tmpMLT = append(tmpMLT, f)
				}
			}
			if len(tmpMLB) > 1 || len(tmpMLT) > 1 {
				t.Errorf("%d temporary models and %d temporary tokenizers left, want at most one of each", len(tmpMLB), len(tmpMLT))
			}
			t.Logf("left behind: %d temporary file(s)", len(tmp))
			gotMLB, gotMLT := readFile(t, out), readFile(t, outMLT)
			half := false
			switch {
			case bytes.Equal(gotMLB, oldMLB) && bytes.Equal(gotMLT, oldMLT):
				t.Log("the old pair")
			case bytes.Equal(gotMLB, newMLB) && bytes.Equal(gotMLT, newMLT):
				t.Log("the new pair")
			case bytes.Equal(gotMLB, newMLB) && bytes.Equal(gotMLT, oldMLT):
				if len(tmpMLT) != 1 || !bytes.Equal(readFile(t, filepath.Join(dir, tmpMLT[0].Name())), newMLT) {
					t.Fatalf("the new model beside the old tokenizer, and the new tokenizer is not complete in a temporary file")
				}
				t.Log("the new model, the old tokenizer, the new one in its temporary file")
				half = true
			default:
				t.Fatalf("%s and %s are neither the old pair nor the new one (model: old %v, new %v; tokenizer: old %v, new %v)", out, outMLT,
					bytes.Equal(gotMLB, oldMLB), bytes.Equal(gotMLB, newMLB), bytes.Equal(gotMLT, oldMLT), bytes.Equal(gotMLT, newMLT))
			}
			if half != (p.hook == "model renamed") && p.hook != "" {
				t.Errorf("killed at %q: half-renamed pair %v", p.hook, half)
			}

			// A reader gets a whole pair: the one on disk, or the new one,
			// completed, where the kill fell between the renames.
			run := runChild(t, []string{"run", out, "-p", "The", "-n", "1", "--temp", "0", "--threads", "1", "--no-huge-pages"})
			_, rerr, err := run.wait()
			if err != nil {
				t.Fatalf("krafla run after the kill: %v\n%s", err, rerr)
			}
			if completed := strings.Contains(rerr, "krafla: completed the interrupted write of process "+strconv.Itoa(c.cmd.Process.Pid)); completed != half {
				t.Errorf("krafla run's stderr %q: says it completed the pair %v, want %v", rerr, completed, half)
			}
			if half {
				if !bytes.Equal(readFile(t, out), newMLB) || !bytes.Equal(readFile(t, outMLT), newMLT) {
					t.Fatal("krafla run did not complete the new pair")
				}
				tmp, _ = listDir(t, dir, tmpName)
			}

			// The next convert removes the leftovers and says so.
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

func runChild(t *testing.T, args []string, env ...string) *child {
	t.Helper()
	c := &child{done: make(chan error, 1)}
	c.cmd = exec.Command(os.Args[0], "-test.run=^TestKillConvert$")
	c.cmd.Env = append(append(os.Environ(), killChildEnv+"="+strings.Join(args, "\x1f")), env...)
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
