package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/internal/testenv"
	"github.com/krafla/krafla/mlt"
)

// chatMLJinja is a ChatML template in Jinja, for when ../shared (and its
// real Qwen template) is absent.
const chatMLJinja = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"

// chatTestModel converts a tiny Qwen 2 checkpoint (hfgen's byte-level
// tokenizer has <|im_start|> and <|im_end|>) of 4096 positions whose
// tokenizer_config.json carries the chat template src; it returns the .mlb path.
func chatTestModel(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	if err := hfgen.Write(ck, "qwen2", hfgen.Options{Seed: 3, Config: map[string]any{"max_position_embeddings": 4096}}); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"chat_template": src, "eos_token": "<|im_end|>", "bos_token": nil})
	if err := os.WriteFile(filepath.Join(ck, "tokenizer_config.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "chat.mlb")
	if err := runConvert(context.Background(), ck, convertOptions{Output: out, Type: "q8_0", Threads: 1}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	return out
}

// runCLIIn runs the command line with stdin read from in.
func runCLIIn(in string, args ...string) (stdout, stderr string, err error) {
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetIn(strings.NewReader(in))
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err = root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// TestChatPiped: without a terminal each line is one user message and only
// the answers come out, one per turn; the same seed gives the same answers.
func TestChatPiped(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"chatml", chatMLJinja},
		{"qwen2.5", ""}, // the real template, from ../shared
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.src
			if src == "" {
				b, err := os.ReadFile(testenv.Shared(t, "chat-templates", "templates", "Qwen-Qwen2.5-7B-Instruct.jinja"))
				if err != nil {
					t.Fatal(err)
				}
				src = string(b)
			}
			testChatPiped(t, chatTestModel(t, src))
		})
	}
}

func testChatPiped(t *testing.T, model string) {
	args := []string{"chat", model, "--threads", "1", "-n", "6", "--seed", "4", "--system", "Be brief."}
	out, errOut, err := runCLIIn("Hello\n\nWhat is lava?\n/bye\n", args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	if n := strings.Count(out, "\n"); n < 3 {
		t.Errorf("output %q: want at least three answer lines (Hello, What is lava?, /bye)", out)
	}
	if strings.Contains(out, ">>>") || strings.Contains(errOut, "Send a message") {
		t.Errorf("piped mode printed a prompt or the greeting: %q / %q", out, errOut)
	}
	again, _, err := runCLIIn("Hello\n\nWhat is lava?\n/bye\n", args...)
	if err != nil || again != out {
		t.Errorf("second run: %v, %q; want the same answers %q", err, again, out)
	}
}

func TestChatErrors(t *testing.T) {
	model := chatTestModel(t, chatMLJinja)
	// A tokenizer without a chat template.
	tok, err := mlt.Open(strings.TrimSuffix(model, ".mlb") + ".mlt")
	if err != nil {
		t.Fatal(err)
	}
	tok.SetChat(nil)
	bare := filepath.Join(t.TempDir(), "bare.mlt")
	if err := tok.Write(bare); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"chat", model, "-t", bare}, "--template FILE"},
		{[]string{"chat", model, "--template-name", "tool_use"}, `no chat template "tool_use"`},
		{[]string{"chat", model, "--template", filepath.Join(t.TempDir(), "none.jinja")}, "no such file"},
		{[]string{"chat", model, "--temp", "-1"}, "--temp -1"},
		{[]string{"chat", model, "-n", "-2"}, "-n -2"},
	} {
		_, _, err := runCLIIn("hi\n", tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
	// --template takes a .jinja file, also for a tokenizer that has none.
	tf := filepath.Join(t.TempDir(), "t.jinja")
	if err := os.WriteFile(tf, []byte(chatMLJinja), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, err := runCLIIn("hi\n", "chat", model, "-t", bare, "--template", tf, "-n", "3", "--threads", "1"); err != nil || out == "" {
		t.Errorf("--template %s: %v, %q\n%s", tf, err, out, errOut)
	}
}

// TestTokenizeChat: tokenize stores the template beside a tokenizer.json and
// inspect shows it.
func TestTokenizeChat(t *testing.T) {
	dir := t.TempDir()
	if err := hfgen.Write(dir, "qwen2", hfgen.Options{}); err != nil {
		t.Fatal(err)
	}
	cfg := `{"chat_template": [{"name": "default", "template": "D"}, {"name": "tool_use", "template": "TU"}], "eos_token": {"content": "<|im_end|>"}}`
	gen := `{"eos_token_id": [` + itoa(hfgen.EOS) + `, ` + itoa(hfgen.EOS+2) + `]}`
	for name, body := range map[string]string{"tokenizer_config.json": cfg, "generation_config.json": gen} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "t.mlt")
	stdout, _, err := runCLI("tokenize", filepath.Join(dir, "tokenizer.json"), "-o", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "chat: 2 template(s): default (1 bytes), tool_use (2 bytes)") {
		t.Errorf("tokenize printed %q", stdout)
	}
	stdout, _, err = runCLI("inspect", out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"chat         2 template(s): default (1 bytes), tool_use (2 bytes)",
		`chat tokens  bos_token "", eos_token "<|im_end|>"`,
		"chat stops   " + itoa(hfgen.EOS) + ` "<|endoftext|>", ` + itoa(hfgen.EOS+2) + ` "<|im_end|>"`,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("inspect lacks %q:\n%s", want, stdout)
		}
	}
	stdout, _, err = runCLI("inspect", "--json", "--tensors", out)
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Chat struct {
			Templates []struct {
				Name, Source string
				Bytes        int
			}
			StopIDs []int `json:"stop_ids"`
		}
	}
	if err := json.Unmarshal([]byte(stdout), &j); err != nil {
		t.Fatal(err)
	}
	if len(j.Chat.Templates) != 2 || j.Chat.Templates[1].Source != "TU" || len(j.Chat.StopIDs) != 2 {
		t.Errorf("inspect --json chat: %+v", j.Chat)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestRunChat: run --chat renders the prompt with the tokenizer's template
// (the verbose prompt ids are the ChatML turn) and --template overrides it.
func TestRunChat(t *testing.T) {
	model := chatTestModel(t, chatMLJinja)
	tok, err := mlt.Open(strings.TrimSuffix(model, ".mlb") + ".mlt")
	if err != nil {
		t.Fatal(err)
	}
	want := tok.Encode("<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n", false)
	_, errOut, err := runCLI("run", model, "--chat", "-p", "Hello", "-n", "2", "--temp", "0", "-v", "--threads", "1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "prompt tokens: "+fmt.Sprint(want)+"\n") {
		t.Errorf("run --chat: stderr %q lacks the prompt tokens %v", errOut, want)
	}
	tf := filepath.Join(t.TempDir(), "t.jinja")
	if err := os.WriteFile(tf, []byte("Q: {{ messages[0].content }}\nA:"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, err = runCLI("run", model, "--template", tf, "-p", "Hello", "-n", "2", "--temp", "0", "-v", "--threads", "1")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprint(tok.Encode("Q: Hello\nA:", false)); !strings.Contains(errOut, "prompt tokens: "+want+"\n") {
		t.Errorf("run --template: stderr %q lacks the prompt tokens %v", errOut, want)
	}
}
