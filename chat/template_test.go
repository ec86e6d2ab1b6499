package chat

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/krafla/krafla/internal/testenv"
	"github.com/krafla/krafla/jinja"
	"github.com/krafla/krafla/mlt"
)

// realTokenizer converts a real tokenizer of ../shared/tokenizers with the
// chat section that tokenize would give it.
func realTokenizer(t *testing.T, name string) *mlt.Tokenizer {
	t.Helper()
	dir := testenv.Shared(t, "tokenizers", name)
	tok, err := mlt.FromHF(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := mlt.ReadHFChat(dir, tok)
	if err != nil {
		t.Fatal(err)
	}
	tok.SetChat(c)
	return tok
}

// TestRealTemplates renders, through the tokenizer's own chat section, every
// corpus conversation of its template (chat-templates/cases.jsonl, made with
// jinja2 and transformers' settings), with only messages, tools, documents,
// add_generation_prompt and the template's extra variables given: the
// special-token strings come from the tokenizer, so this checks that Render
// passes what apply_chat_template passes (bos_token undefined for Qwen). Then
// it encodes a turn: the markers are single added tokens, BOS appears once
// (the template writes it, Encode adds none), the end-of-turn token stops.
func TestRealTemplates(t *testing.T) {
	cases := testenv.Shared(t, "chat-templates", "cases.jsonl")
	for _, tc := range []struct {
		dir, template, start, end string
		bos                       bool
	}{
		{"llama3", "lenml-llama3.jinja", "<|start_header_id|>", "<|eot_id|>", true},
		{"qwen3", "Qwen-Qwen3-0.6B.jinja", "<|im_start|>", "<|im_end|>", false},
		{"gemma3", "lenml-gemma3.jinja", "<start_of_turn>", "<end_of_turn>", true},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			tok := realTokenizer(t, tc.dir)
			tmpl, err := FromTokenizer(tok, "")
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			forCases(t, cases, tc.template, func(vars *jinja.Dict, date, want string, fails bool) {
				opt := RenderOptions{Extra: map[string]any{}, Now: parseDate(t, date)}
				var msgs []any
				for _, k := range vars.Keys() {
					v, _ := vars.Get(k)
					switch k {
					case "messages":
						msgs = v.([]any)
					case "add_generation_prompt":
						opt.AddGenerationPrompt = v.(bool)
					case "tools", "documents":
						if v != nil {
							if k == "tools" {
								opt.Tools = v.([]any)
							} else {
								opt.Documents = v.([]any)
							}
						}
					case "bos_token", "eos_token":
						// from the tokenizer
					default:
						opt.Extra[k.(string)] = v
					}
				}
				got, err := tmpl.Render(msgs, opt)
				switch {
				case fails && err == nil:
					t.Errorf("case %d: rendered %q, jinja2 raises", n, got)
				case !fails && err != nil:
					t.Errorf("case %d: %v", n, err)
				case !fails && got != want:
					t.Errorf("case %d:\n got %q\nwant %q", n, got, want)
				}
				n++
			})
			if n == 0 {
				t.Fatalf("no case of %s", tc.template)
			}
			ms, err := Messages([]Message{{"user", "Hello"}})
			if err != nil {
				t.Fatal(err)
			}
			text, err := tmpl.Render(ms, RenderOptions{AddGenerationPrompt: true})
			if err != nil {
				t.Fatal(err)
			}
			ids := Encode(tok, text)
			start, _ := tok.Lookup(tc.start)
			end, _ := tok.Lookup(tc.end)
			if k := count(ids, start); k != 2 {
				t.Errorf("%s appears %d times in %v, want 2 (user and assistant turns)", tc.start, k, ids)
			}
			if k := count(ids, end); k != 1 {
				t.Errorf("%s appears %d times in %v, want 1", tc.end, k, ids)
			}
			if k := count(ids, int(tok.BOS)); tok.BOS >= 0 && k != 1 || !tc.bos && ids[0] == int(tok.BOS) {
				t.Errorf("BOS %d appears %d times in %v", tok.BOS, k, ids)
			}
			if !slices.Contains(tmpl.StopIDs(), end) {
				t.Errorf("stop ids %v lack %s (%d)", tmpl.StopIDs(), tc.end, end)
			}
		})
	}
}

func count(ids []int, id int) int {
	n := 0
	for _, v := range ids {
		if v == id {
			n++
		}
	}
	return n
}

func parseDate(t *testing.T, s string) time.Time {
	d, err := time.Parse("2006-01-02", s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// forCases calls fn with each case of template in cases.jsonl.
func forCases(t *testing.T, path, template string, fn func(vars *jinja.Dict, date, output string, fails bool)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var head struct {
			Template string          `json:"template"`
			Date     string          `json:"date"`
			Vars     json.RawMessage `json:"vars"`
			Output   *string         `json:"output"`
		}
		if err := json.Unmarshal(sc.Bytes(), &head); err != nil {
			t.Fatal(err)
		}
		if head.Template != template {
			continue
		}
		v, err := jinja.DecodeJSON(head.Vars)
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		if head.Output != nil {
			out = *head.Output
		}
		fn(v.(*jinja.Dict), head.Date, out, head.Output == nil)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

func smallTokenizer(chat *mlt.Chat) *mlt.Tokenizer {
	t := &mlt.Tokenizer{Kind: mlt.KindByteLevel, BOS: -1, EOS: 256}
	for c := range 256 {
		t.Tokens = append(t.Tokens, mlt.Token{Bytes: []byte{byte(c)}})
	}
	t.Tokens = append(t.Tokens, mlt.Token{Attr: mlt.AttrAdded, Bytes: []byte("<e>")}, mlt.Token{Attr: mlt.AttrAdded, Bytes: []byte("<t>")})
	t.SetChat(chat)
	return t
}

func TestFromTokenizerAndLoad(t *testing.T) {
	bare := smallTokenizer(nil)
	if _, err := FromTokenizer(bare, ""); !errors.Is(err, ErrNoTemplate) || !strings.Contains(err.Error(), "--template FILE") {
		t.Errorf("no chat section: %v, want ErrNoTemplate naming --template FILE", err)
	}
	if _, err := FromTokenizer(smallTokenizer(&mlt.Chat{StopIDs: []int32{257}}), ""); !errors.Is(err, ErrNoTemplate) {
		t.Errorf("a chat section without templates: %v, want ErrNoTemplate", err)
	}
	tok := smallTokenizer(&mlt.Chat{
		Templates: []mlt.NamedTemplate{{Name: "default", Source: "{{ bos_token is defined }}|{{ eos_token }}|{{ messages[0].content }}"}, {Name: "tool_use", Source: "{{ tools | tojson }}"}},
		EOSToken:  "<t>", StopIDs: []int32{200},
	})
	d, err := FromTokenizer(tok, "")
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := Messages([]Message{{"user", "hi"}})
	if got, err := d.Render(ms, RenderOptions{}); err != nil || got != "False|<t>|hi" {
		t.Errorf("default: %q, %v", got, err)
	}
	// EOS, the chat section's stop id and eos_token's id, sorted.
	if got := d.StopIDs(); !slices.Equal(got, []int{200, 256, 257}) {
		t.Errorf("stop ids %v, want [200 256 257]", got)
	}
	tu, err := FromTokenizer(tok, "tool_use")
	if err != nil || tu.Name != "tool_use" {
		t.Fatalf("tool_use: %v", err)
	}
	tools, _ := jinja.DecodeJSON([]byte(`[{"name": "f", "é": 1.0}]`))
	if got, err := tu.Render(nil, RenderOptions{Tools: tools.([]any)}); err != nil || got != `[{"name": "f", "é": 1.0}]` {
		t.Errorf("tool_use: %q, %v", got, err)
	}
	if got, err := tu.Render(nil, RenderOptions{}); err != nil || got != "null" {
		t.Errorf("tool_use without tools: %q, %v; want null (tools is None)", got, err)
	}
	if _, err := FromTokenizer(tok, "rag"); err == nil || !strings.Contains(err.Error(), `"default", "tool_use"`) {
		t.Errorf("unknown name: %v, want the names it has", err)
	}

	dir := t.TempDir()
	jf := filepath.Join(dir, "t.jinja")
	os.WriteFile(jf, []byte("[{{ eos_token }}{{ x }}]\n"), 0o644)
	l, err := Load(jf, tok)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := l.Render(nil, RenderOptions{Extra: map[string]any{"x": int64(3)}}); err != nil || got != "[<t>3]" {
		t.Errorf("Load .jinja: %q, %v (jinja2 drops one trailing newline)", got, err)
	}
	cf := filepath.Join(dir, "tokenizer_config.json")
	os.WriteFile(cf, []byte(`{"chat_template": "{{ bos_token }}-{{ eos_token }}", "bos_token": "<s>", "eos_token": {"content": "<e>"}}`), 0o644)
	if l, err = Load(cf, tok); err != nil {
		t.Fatal(err)
	}
	if got, err := l.Render(nil, RenderOptions{}); err != nil || got != "<s>-<e>" {
		t.Errorf("Load tokenizer_config.json: %q, %v", got, err)
	}
	os.WriteFile(cf, []byte(`{"eos_token": "<e>"}`), 0o644)
	if _, err := Load(cf, tok); !errors.Is(err, ErrNoTemplate) {
		t.Errorf("a config without chat_template: %v", err)
	}
	os.WriteFile(jf, []byte("{% if %}"), 0o644)
	if _, err := Load(jf, tok); err == nil || !strings.Contains(err.Error(), "t.jinja") {
		t.Errorf("a template that does not parse: %v, want an error naming the file", err)
	}
	os.WriteFile(jf, []byte("{{ raise_exception('no system role') }}"), 0o644)
	if l, err = Load(jf, tok); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Render(nil, RenderOptions{}); err == nil || !strings.Contains(err.Error(), "no system role") {
		t.Errorf("raise_exception: %v", err)
	}
}
