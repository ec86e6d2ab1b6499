package chat

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/infer"
)

// lines is a LineReader that gives its lines, then io.EOF; an entry "^C"
// stands for Ctrl-C at the prompt.
type lines struct {
	l       []string
	prompts []string
}

func (r *lines) ReadLine(prompt string) (string, error) {
	r.prompts = append(r.prompts, prompt)
	if len(r.l) == 0 {
		return "", io.EOF
	}
	s := r.l[0]
	r.l = r.l[1:]
	if s == "^C" {
		return "", ErrInterrupt
	}
	return s, nil
}

func TestREPLCommands(t *testing.T) {
	m, tok := tinyChatModel(t, "qwen2")
	c := newConv(t, m, tok, 0, infer.SamplerOptions{Temp: 0.8, TopK: 40, TopP: 0.95}, 6)
	save := filepath.Join(t.TempDir(), "c.json")
	in := &lines{l: []string{
		"/help",
		"/set",
		"/set temp 0",
		"/set top_k -3",
		"/set top_p 2",
		"/set seed 9",
		"/set color red",
		"/settings",
		"/system Be brief.",
		"/system",
		"^C",
		"Hello",
		"/save " + save,
		"/clear",
		"/load " + save,
		"/load " + save + ".missing",
		"/bye",
		"never read",
	}}
	var out, info bytes.Buffer
	r := &REPL{Conv: c, In: in, Out: &out, Info: &info, Verbose: true}
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := info.String()
	for _, want := range []string{
		"/bye", "/clear", "/system TEXT", "/set temp|top_p|top_k|seed VALUE", "/save FILE", "/load FILE", "Ctrl-C", // /help
		"temp 0.8, top_p 0.95, top_k 40, seed 0",
		"Set temp to 0.",
		"/set top_k -3: want a count, 0 or more",
		"/set top_p 2: want a number between 0 and 1",
		"Set seed to 9.",
		"/set color: unknown",
		"unknown command /settings",
		"Set the system message.",
		"System message: Be brief.",
		"Use Ctrl-D or /bye to leave.",
		"prefill: ",
		"Saved 3 messages to ",
		"Cleared the conversation.",
		"Loaded 3 messages from ",
		"no such file",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("info output lacks %q:\n%s", want, got)
		}
	}
	if s := c.Sampling(); s.Temp != 0 || s.TopK != 40 || s.TopP != 0.95 || s.Seed != 9 {
		t.Errorf("sampling %+v after /set: want temp 0, top_k 40, top_p 0.95, seed 9", s)
	}
	ms := c.Messages()
	if len(ms) != 3 || ms[0] != (Message{"system", "Be brief."}) || ms[1] != (Message{"user", "Hello"}) || ms[2].Role != "assistant" {
		t.Errorf("messages after /load: %q", ms)
	}
	// The answer is printed, then a blank line.
	if want := ms[2].Content + "\n\n"; out.String() != want {
		t.Errorf("answers %q, want %q", out.String(), want)
	}
	if len(in.l) != 1 {
		t.Errorf("/bye left %d lines unread, want 1", len(in.l))
	}
	for _, p := range in.prompts {
		if p != Prompt {
			t.Errorf("prompt %q, want %q", p, Prompt)
		}
	}
}

// TestREPLPiped: every line is a message, /commands included; only the
// answers are printed, one line each.
func TestREPLPiped(t *testing.T) {
	m, tok := tinyChatModel(t, "qwen2")
	c := newConv(t, m, tok, 0, infer.SamplerOptions{}, 5)
	in := &lines{l: []string{"first", "", "/bye", "third"}}
	var out, info bytes.Buffer
	r := &REPL{Conv: c, In: in, Out: &out, Info: &info, Piped: true}
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	ms := c.Messages()
	if len(ms) != 6 || ms[2].Content != "/bye" || ms[4].Content != "third" {
		t.Fatalf("messages %q: want three user turns (the empty line skipped) with answers", ms)
	}
	want := ms[1].Content + "\n" + ms[3].Content + "\n" + ms[5].Content + "\n"
	if out.String() != want || info.Len() != 0 {
		t.Errorf("output %q (info %q), want only the answers %q", out.String(), info.String(), want)
	}
	for _, p := range in.prompts {
		if p != "" {
			t.Errorf("piped prompt %q, want none", p)
		}
	}
}

// TestREPLOverflowNotice: when older turns are dropped the REPL says so.
func TestREPLOverflowNotice(t *testing.T) {
	m, tok := tinyChatModel(t, "qwen2")
	c := newConv(t, m, tok, 160, infer.SamplerOptions{}, 8)
	c.System = "sys"
	long := strings.Repeat("lava ", 6)
	in := &lines{l: []string{"1 " + long, "2 " + long, "3 " + long, "4 " + long, "5 " + long}}
	var out, info bytes.Buffer
	if err := (&REPL{Conv: c, In: in, Out: &out, Info: &info}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info.String(), "dropped the 2 oldest messages; the system message stays") {
		t.Errorf("no notice of the dropped turns in %q", info.String())
	}
}

// TestREPLEmptyFirstLine: with a template that needs a user message, an
// empty line before the first message is answered with what is expected
// (and the template's own words); after it, and with a template that renders
// a conversation without one, an empty line still sends nothing, silently.
func TestREPLEmptyFirstLine(t *testing.T) {
	m, tok := tinyChatModel(t, "qwen2")
	strict := `{% if messages|length == 0 or messages[-1].role != 'user' %}{{ raise_exception('the conversation must start with a user message') }}{% endif %}` +
		`{% for m in messages %}<|im_start|>{{ m.role }}` + "\n" + `{{ m.content }}<|im_end|>` + "\n" + `{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant` + "\n" + `{% endif %}`
	tmpl, err := New("strict", strict, tok)
	if err != nil {
		t.Fatal(err)
	}
	for _, piped := range []bool{false, true} {
		c := newConv(t, m, tok, 0, infer.SamplerOptions{}, 3)
		c.opt.Template = tmpl
		c.System = "Be brief."
		var out, info bytes.Buffer
		in := &lines{l: []string{"", "   ", "Hello", ""}}
		if err := (&REPL{Conv: c, In: in, Out: &out, Info: &info, Piped: piped}).Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		const want = "needs a user message first: type your message"
		if n := strings.Count(info.String(), want); n != 2 || !strings.Contains(info.String(), "the conversation must start with a user message") {
			t.Errorf("piped %v: info %q: want the notice twice (the two empty lines before Hello), with the template's words", piped, info.String())
		}
		if got := len(c.Turns); got != 2 {
			t.Errorf("piped %v: %d turns, want Hello and its answer", piped, got)
		}
	}
	c := newConv(t, m, tok, 0, infer.SamplerOptions{}, 3)
	var out, info bytes.Buffer
	if err := (&REPL{Conv: c, In: &lines{l: []string{""}}, Out: &out, Info: &info, Piped: true}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if info.Len() != 0 || out.Len() != 0 {
		t.Errorf("ChatML template, piped empty line: info %q, out %q; want nothing", info.String(), out.String())
	}
}
