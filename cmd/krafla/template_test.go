package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/internal/testenv"
	"github.com/krafla/krafla/mlt"
)

// runKrafla runs one command line through execute and returns stdout,
// stderr and the exit status.
func runKrafla(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errw bytes.Buffer
	code := execute(context.Background(), args, strings.NewReader(stdin), &out, &errw)
	return out.String(), errw.String(), code
}

// corpusLine is one line of ../shared/chat-templates/cases.jsonl (its README
// says how jinja2 rendered it).
type corpusLine struct {
	Template string          `json:"template"`
	Date     string          `json:"date"`
	Vars     json.RawMessage `json:"vars"`
	Output   *string         `json:"output"`
	Error    *string         `json:"error"`
}

// TestTemplateCorpus renders every case of ../shared/chat-templates through
// the command, as its README describes: stdout must equal jinja2's output
// byte for byte, and a case where jinja2 raised must exit 1.
func TestTemplateCorpus(t *testing.T) {
	dir := testenv.Shared(t, "chat-templates")
	f, err := os.Open(filepath.Join(dir, "cases.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tmp := t.TempDir()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	n := 0
	for sc.Scan() {
		n++
		var c corpusLine
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		vars := filepath.Join(tmp, "vars.json")
		if err := os.WriteFile(vars, c.Vars, 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := runKrafla(t, "", "template", filepath.Join(dir, "templates", c.Template), "--input", vars, "--date", c.Date)
		switch {
		case c.Error != nil && code != exitFailure:
			t.Errorf("line %d (%s): exit %d, want 1 (jinja2: %s)", n, c.Template, code, *c.Error)
		case c.Error != nil && !strings.Contains(errOut, c.Template+":"):
			t.Errorf("line %d (%s): error %q does not name the template", n, c.Template, errOut)
		case c.Output != nil && (code != exitOK || out != *c.Output):
			t.Errorf("line %d (%s): exit %d %s\ngot  %q\nwant %q", n, c.Template, code, errOut, out, *c.Output)
		}
	}
	if n != 1250 {
		t.Errorf("%d cases, want the README's 1,250", n)
	}
}

func TestTemplateSources(t *testing.T) {
	tmp := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	vars := write("vars.json", `{"messages": [{"role": "user", "content": "Hi", "n": 1.0}], "add_generation_prompt": true}`)
	jinjaFile := write("t.jinja", "{{ bos_token }}{% for m in messages %}{{ m.role }}:{{ m.content }} {{ m.n }}{% endfor %}\n")
	listConfig := write("tokenizer_config.json", `{"bos_token": "<s>", "eos_token": {"content": "</s>"},
		"chat_template": [{"name": "default", "template": "D{{ bos_token }}{{ messages[0].content }}{{ eos_token }}"},
		                  {"name": "tool_use", "template": "T{{ messages | length }}"}]}`)
	strConfig := write("chat_template.json", `{"chat_template": "{{ strftime_now('%d %b %Y') }}"}`)
	noTemplate := write("plain.json", `{"bos_token": "<s>"}`)
	for _, tc := range []struct {
		name string
		args []string
		want string
		code int
		err  string
	}{
		{"jinja file, trailing newline dropped, 1.0 stays a float", []string{"template", jinjaFile, "--input", vars}, "user:Hi 1.0", 0, ""},
		{"config default with its tokens", []string{"template", listConfig, "--input", vars}, "D<s>Hi</s>", 0, ""},
		{"config named", []string{"template", listConfig, "--input", vars, "--name", "tool_use"}, "T1", 0, ""},
		{"config unknown name", []string{"template", listConfig, "--input", vars, "--name", "nope"}, "", 1, `has no template named "nope" (it has "default", "tool_use")`},
		{"chat_template.json string, --date", []string{"template", strConfig, "--input", vars, "--date", "2024-07-26"}, "26 Jul 2024", 0, ""},
		{"stdin vars", []string{"template", jinjaFile, "--input", "-"}, "user:x 2", 0, ""},
		{"no template in config", []string{"template", noTemplate, "--input", vars}, "", 1, `has no "chat_template"`},
		{"--name on a template file", []string{"template", jinjaFile, "--input", vars, "--name", "x"}, "", 2, "--name picks"},
		{"missing --input", []string{"template", jinjaFile}, "", 2, "--input VARS.json is required"},
		{"bad --date", []string{"template", jinjaFile, "--input", vars, "--date", "26/07/2024"}, "", 2, "want YYYY-MM-DD"},
		{"vars not an object", []string{"template", jinjaFile, "--input", write("arr.json", "[1]")}, "", 1, "want one JSON object of variables, got an array"},
		{"vars invalid JSON", []string{"template", jinjaFile, "--input", write("bad.json", "{\"a\": }")}, "", 1, "bad.json"},
		{"missing source", []string{"template", filepath.Join(tmp, "none.jinja"), "--input", vars}, "", 1, "no such file"},
		{"syntax error with line and column", []string{"template", write("syn.jinja", "a\n  {% if %}"), "--input", vars}, "", 1, "syn.jinja:2:9: TemplateSyntaxError"},
		{"raise_exception", []string{"template", write("raise.jinja", "x\n{{ raise_exception('Roles must alternate') }}"), "--input", vars}, "", 1, "raise.jinja:2:4: TemplateError: Roles must alternate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runKrafla(t, `{"messages": [{"role": "user", "content": "x", "n": 2}]}`, tc.args...)
			if code != tc.code || out != tc.want || !strings.Contains(errOut, tc.err) {
				t.Fatalf("got exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr containing %q", code, out, errOut, tc.code, tc.want, tc.err)
			}
		})
	}
}

// TestTemplateMLT renders the chat section of an .mlt that tokenize wrote
// from the shipped Qwen3 tokenizer, whose template is the corpus's
// Qwen-Qwen3-0.6B.jinja: the first corpus case of that template must come out.
func TestTemplateMLT(t *testing.T) {
	src := testenv.Shared(t, "tokenizers", "qwen3")
	dir := testenv.Shared(t, "chat-templates")
	tok := filepath.Join(t.TempDir(), "qwen3.mlt")
	if _, errOut, code := runKrafla(t, "", "tokenize", src, "-o", tok); code != 0 {
		t.Fatalf("tokenize: %s", errOut)
	}
	m, err := mlt.Open(tok)
	if err != nil || m.Chat == nil {
		t.Fatalf("open %s: %v (chat %v)", tok, err, m != nil && m.Chat != nil)
	}
	b, err := os.ReadFile(filepath.Join(dir, "cases.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		var c corpusLine
		if json.Unmarshal([]byte(line), &c) != nil || c.Template != "Qwen-Qwen3-0.6B.jinja" || c.Output == nil {
			continue
		}
		vars := filepath.Join(t.TempDir(), "vars.json")
		if err := os.WriteFile(vars, c.Vars, 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := runKrafla(t, "", "template", tok, "--input", vars, "--date", c.Date)
		if code != 0 || out != *c.Output {
			t.Fatalf("exit %d %s\ngot  %q\nwant %q", code, errOut, out, *c.Output)
		}
		return
	}
	t.Fatal("no Qwen-Qwen3-0.6B.jinja case with an output in the corpus")
}
