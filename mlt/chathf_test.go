package mlt

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/krafla/krafla/internal/testenv"
)

// TestReadHFChatReal reads the chat templates of the real tokenizer_config.json
// files: each template must equal the corpus copy that the chat-templates
// README says was taken from it unchanged.
func TestReadHFChatReal(t *testing.T) {
	for _, tc := range []struct {
		dir      []string
		template string // in chat-templates/templates; "" = none
		bos, eos string
	}{
		{[]string{"tokenizers", "llama3"}, "lenml-llama3.jinja", "<|begin_of_text|>", "<|end_of_text|>"},
		{[]string{"tokenizers", "gemma3"}, "lenml-gemma3.jinja", "<bos>", "<end_of_turn>"},
		{[]string{"tokenizers", "qwen3"}, "Qwen-Qwen3-0.6B.jinja", "", "<|im_end|>"},
		{[]string{"tokenizers-next", "gemini"}, "google-gemma-2-2b-it.jinja", "<bos>", "<eos>"},
		// bos_token and eos_token are {"__type": "AddedToken", "content": ...} objects.
		{[]string{"tokenizers-next", "deepseek_v3"}, "lenml-deepseek_v3.jinja", "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"},
		{[]string{"tokenizers", "llama2"}, "", "<s>", "</s>"},
	} {
		t.Run(tc.dir[1], func(t *testing.T) {
			dir := testenv.Shared(t, tc.dir...)
			tok := &Tokenizer{EOS: 5, Tokens: make([]Token, 300000)}
			c, err := ReadHFChat(dir, tok)
			if err != nil {
				t.Fatal(err)
			}
			if tc.template == "" {
				if c != nil {
					t.Errorf("no template and no generation_config.json: got %+v, want no chat section", c)
				}
				return
			}
			want, err := os.ReadFile(testenv.Shared(t, "chat-templates", "templates", tc.template))
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Templates) != 1 || c.Templates[0].Name != "default" || c.Templates[0].Source != string(want) {
				t.Errorf("templates %d, first %q: want one default equal to %s", len(c.Templates), c.Templates[0].Name, tc.template)
			}
			if c.BOSToken != tc.bos || c.EOSToken != tc.eos {
				t.Errorf("bos %q eos %q, want %q %q", c.BOSToken, c.EOSToken, tc.bos, tc.eos)
			}
			if !slices.Equal(c.StopIDs, []int32{5}) {
				t.Errorf("stop ids %v, want the tokenizer's EOS [5]", c.StopIDs)
			}
		})
	}
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReadHFChatFiles(t *testing.T) {
	tok := &Tokenizer{EOS: 2, Tokens: make([]Token, 100)}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  *Chat
	}{
		{"named list, default moved first", map[string]string{
			"tokenizer_config.json": `{"chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}], "eos_token": {"content": "</s>", "lstrip": false}, "bos_token": null}`,
		}, &Chat{Templates: []NamedTemplate{{"default", "D"}, {"tool_use", "T"}}, EOSToken: "</s>", StopIDs: []int32{2}}},
		{"chat_template.jinja wins, with additional templates", map[string]string{
			"tokenizer_config.json":               `{"chat_template": "old", "bos_token": "<s>"}`,
			"chat_template.jinja":                 "new\n",
			"additional_chat_templates/rag.jinja": "R",
		}, &Chat{Templates: []NamedTemplate{{"default", "new\n"}, {"rag", "R"}}, BOSToken: "<s>", StopIDs: []int32{2}}},
		{"chat_template.json of a processor", map[string]string{
			"tokenizer_config.json": `{"eos_token": "<e>"}`,
			"chat_template.json":    `{"chat_template": "P"}`,
		}, &Chat{Templates: []NamedTemplate{{"default", "P"}}, EOSToken: "<e>", StopIDs: []int32{2}}},
		{"generation_config list", map[string]string{
			"tokenizer_config.json":  `{"chat_template": "X"}`,
			"generation_config.json": `{"eos_token_id": [7, 9, 7], "bos_token_id": 1}`,
			"config.json":            `{"eos_token_id": 50}`,
		}, &Chat{Templates: []NamedTemplate{{"default", "X"}}, StopIDs: []int32{7, 9, 2}}},
		{"config.json's eos_token_id without generation_config", map[string]string{
			"config.json": `{"eos_token_id": 50}`,
		}, &Chat{StopIDs: []int32{50, 2}}},
		{"nothing", map[string]string{"tokenizer_config.json": `{"eos_token": "x"}`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, tc.files)
			c, err := ReadHFChat(filepath.Join(dir, "tokenizer.json"), tok)
			if err != nil {
				t.Fatal(err)
			}
			if (c == nil) != (tc.want == nil) || c != nil && (!slices.Equal(c.Templates, tc.want.Templates) ||
				c.BOSToken != tc.want.BOSToken || c.EOSToken != tc.want.EOSToken || !slices.Equal(c.StopIDs, tc.want.StopIDs)) {
				t.Errorf("got %+v, want %+v", c, tc.want)
			}
		})
	}
}

// TestReadHFChatStrayStopID: an eos_token_id outside the vocabulary is
// dropped with a warning naming it and the vocabulary size (transformers
// ignores it); the others stay, in order.
func TestReadHFChatStrayStopID(t *testing.T) {
	tok := &Tokenizer{EOS: 7, Tokens: make([]Token, 100)}
	dir := writeFiles(t, map[string]string{"generation_config.json": `{"eos_token_id": [1, 100, -3, 99]}`})
	var warnings []string
	c, err := ReadHFChatWarn(dir, tok, func(s string) { warnings = append(warnings, s) })
	if err != nil {
		t.Fatal(err)
	}
	if want := []int32{1, 99, 7}; c == nil || !slices.Equal(c.StopIDs, want) {
		t.Fatalf("chat %+v, want stop ids %v", c, want)
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0], "generation_config.json: eos_token_id 100 is not one of the tokenizer's 100 ids") ||
		!strings.Contains(warnings[1], "eos_token_id -3 is not one of the tokenizer's 100 ids") {
		t.Errorf("warnings %q, want one for 100 and one for -3, naming the 100 ids", warnings)
	}
	if _, err := ReadHFChat(dir, tok); err != nil {
		t.Errorf("ReadHFChat: %v, want the stray ids dropped", err)
	}
}

func TestReadHFChatErrors(t *testing.T) {
	tok := &Tokenizer{EOS: -1, Tokens: make([]Token, 100)}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"not JSON", map[string]string{"tokenizer_config.json": `{`}, "tokenizer_config.json: invalid JSON"},
		{"template a number", map[string]string{"tokenizer_config.json": `{"chat_template": 3}`}, "chat_template must be a string or a list"},
		{"list entry without template", map[string]string{"tokenizer_config.json": `{"chat_template": [{"name": "a"}]}`}, `chat_template[0] needs a "name" and a "template"`},
		{"name twice", map[string]string{"tokenizer_config.json": `{"chat_template": [{"name": "a", "template": ""}, {"name": "a", "template": ""}]}`}, `"a" given twice`},
		{"stop id a string", map[string]string{"generation_config.json": `{"eos_token_id": "2"}`}, "eos_token_id must be an integer or a list"},
		{"template not UTF-8", map[string]string{"chat_template.jinja": "\xff"}, "not valid UTF-8"},
		{"template too large", map[string]string{"chat_template.jinja": strings.Repeat("x", MaxTemplateLen+1)}, "above the chat template limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadHFChat(writeFiles(t, tc.files), tok)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestReadHFChatJinjaFiles: every real template of the corpus, saved as
// chat_template.jinja beside a tokenizer_config.json with another template,
// is read byte for byte (transformers prefers the file).
func TestReadHFChatJinjaFiles(t *testing.T) {
	src := testenv.Shared(t, "chat-templates", "templates")
	tok := &Tokenizer{EOS: 1, Tokens: make([]Token, 10)}
	for _, name := range testenv.DirNames(t, src) {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		dir := writeFiles(t, map[string]string{"chat_template.jinja": string(b), "tokenizer_config.json": `{"chat_template": "other"}`})
		c, err := ReadHFChat(dir, tok)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, _ := c.Template(""); got != string(b) {
			t.Errorf("%s: read %d bytes, not the file's %d", name, len(got), len(b))
		}
	}
}
