//go:build linux || darwin

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestChatHelperProcess is krafla itself when the pty test starts this test
// binary with KRAFLA_CHAT_HELPER=1: main runs with the arguments after "--".
func TestChatHelperProcess(t *testing.T) {
	if os.Getenv("KRAFLA_CHAT_HELPER") != "1" {
		t.Skip("run by TestChatTerminal")
	}
	for i, a := range os.Args {
		if a == "--" {
			os.Args = append([]string{"krafla"}, os.Args[i+1:]...)
			break
		}
	}
	main()
}

// ptyOutput collects what the child writes to the terminal.
type ptyOutput struct {
	mu  sync.Mutex
	b   strings.Builder
	eof chan struct{}
}

func (o *ptyOutput) String() string { o.mu.Lock(); defer o.mu.Unlock(); return o.b.String() }

// waitFor waits until the output after position from contains s and
// returns the position after it.
func (o *ptyOutput) waitFor(t *testing.T, from int, s string) int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		out := o.String()
		if i := strings.Index(out[from:], s); i >= 0 {
			return from + i + len(s)
		}
		select {
		case <-o.eof:
			t.Fatalf("the terminal closed before %q appeared; output:\n%s", s, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q did not appear within 60 s; output:\n%s", s, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestChatTerminal drives krafla chat through a pseudo-terminal: line
// editing (a cursor move inside the line), Ctrl-C during an answer (the
// answer stops, the session goes on), history (the up arrow), /save, a
// second turn that reuses the cache, Ctrl-C at the prompt, and Ctrl-D to
// leave with status 0.
func TestChatTerminal(t *testing.T) {
	model := chatTestModel(t, chatMLJinja)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChatHelperProcess$", "--",
		"chat", model, "--threads", "1", "--temp", "0", "--ctx", "4096", "--no-huge-pages", "-v")
	cmd.Env = append(os.Environ(), "KRAFLA_CHAT_HELPER=1", "TERM=xterm")
	cmd.Dir = dir
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	out := &ptyOutput{eof: make(chan struct{})}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			out.mu.Lock()
			out.b.Write(buf[:n])
			out.mu.Unlock()
			if err != nil {
				close(out.eof)
				return
			}
		}
	}()
	send := func(s string) {
		if _, err := ptmx.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	at := out.waitFor(t, 0, ">>> ")
	// "Helo", cursor left, "l": the message is "Hello". A greedy answer of
	// this random model runs on (thousands of tokens): Ctrl-C stops it.
	send("Helo\x1b[Dl\r")
	at = out.waitFor(t, at, "\n")
	time.Sleep(50 * time.Millisecond)
	send("\x03")
	at = out.waitFor(t, at, "(answer interrupted)")
	at = out.waitFor(t, at, ">>> ")
	send("/save a.json\r")
	at = out.waitFor(t, at, "Saved 2 messages")
	at = out.waitFor(t, at, ">>> ")
	// The up arrow recalls "/save a.json"; edit it into "/save b.json".
	send("\x1b[A\x1b[D\x1b[D\x1b[D\x1b[D\x1b[D\x7fb\r")
	at = out.waitFor(t, at, "Saved 2 messages to b.json")
	at = out.waitFor(t, at, ">>> ")
	// A second turn after the interrupted one: it starts from the cache.
	send("Hi\r")
	at = out.waitFor(t, at, "\n")
	time.Sleep(50 * time.Millisecond)
	send("\x03")
	at = out.waitFor(t, at, "prefill: ")
	end := out.waitFor(t, at, "(answer interrupted)")
	if stats := out.String()[at:end]; !strings.Contains(stats, " from the cache)") || strings.HasPrefix(stats[strings.Index(stats, "(")+1:], "0 of") {
		t.Errorf("turn 2 took nothing from the cache: %q", stats)
	}
	at = out.waitFor(t, end, ">>> ")
	send("\x03")
	at = out.waitFor(t, at, "Use Ctrl-D or /bye to leave.")
	out.waitFor(t, at, ">>> ")
	send("\x04")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chat ended with %v; output:\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("Ctrl-D did not end the session; output:\n%s", out.String())
	}
	var f struct {
		Messages []struct{ Role, Content string }
	}
	b, err := os.ReadFile(filepath.Join(dir, "b.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Messages) != 2 || f.Messages[0].Role != "user" || f.Messages[0].Content != "Hello" || f.Messages[1].Content == "" {
		t.Errorf("saved conversation %+v: want the edited user message \"Hello\" and the interrupted answer", f.Messages)
	}
}
