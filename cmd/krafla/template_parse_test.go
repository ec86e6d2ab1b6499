package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTemplateToolsParse(t *testing.T) {
	dir := t.TempDir()
	tpl := filepath.Join(dir, "t.jinja")
	src := "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}{% if tools %}<tool_call>{% endif %}<|im_start|>assistant\n<think>\n"
	os.WriteFile(tpl, []byte(src), 0o644)
	var out bytes.Buffer
	if err := runTemplate(t.Context(), tpl, templateOptions{Tools: true}, nil, &out); err != nil || out.String() != "tool-call format: hermes\n" {
		t.Fatalf("--tools: %q, %v", out.String(), err)
	}
	raw := filepath.Join(dir, "out.txt")
	os.WriteFile(raw, []byte("plan it</think>\nSure.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": \"y\"}}\n</tool_call>"), 0o644)
	vars := filepath.Join(dir, "vars.json")
	os.WriteFile(vars, []byte(`{"messages":[{"role":"user","content":"hi"}]}`), 0o644)
	out.Reset()
	if err := runTemplate(t.Context(), tpl, templateOptions{Parse: raw, Input: vars}, nil, &out); err != nil {
		t.Fatal(err)
	}
	var m struct {
		Content   string `json:"content"`
		Reasoning string `json:"reasoning_content"`
		ToolCalls []struct {
			Function struct{ Name, Arguments string }
		} `json:"tool_calls"`
	}
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m.Content != "Sure." || m.Reasoning != "plan it" || len(m.ToolCalls) != 1 || m.ToolCalls[0].Function.Name != "f" || m.ToolCalls[0].Function.Arguments != `{"x":"y"}` {
		t.Errorf("--parse: %s", out.String())
	}
	os.WriteFile(raw, []byte("<tool_call>{\"name\": \"f\"}"), 0o644)
	err := runTemplate(t.Context(), tpl, templateOptions{Parse: raw}, nil, &out)
	if err == nil || !strings.Contains(err.Error(), "offset 0") {
		t.Errorf("unparsable output: error %v, want one naming the offset", err)
	}
}
