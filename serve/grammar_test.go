package serve

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResponseFormat: with json_schema and json_object the tiny
// random-weight model's answers, sampled at temperature 1, are JSON valid
// against the schema (checked here by hand) whenever they end with a stop,
// streamed and not.
func TestResponseFormat(t *testing.T) {
	_, url := startServer(t, Config{})
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"n": map[string]any{"type": "integer", "minimum": 1, "maximum": 9},
		"k": map[string]any{"enum": []any{"a", "b"}}},
		"required": []any{"n", "k"}, "additionalProperties": false}
	formats := map[string]any{
		"json_schema": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "t", "strict": true, "schema": schema}},
		"json_object": map[string]any{"type": "json_object"},
	}
	for name, rf := range formats {
		stops := 0
		for seed := range 4 {
			req := map[string]any{"model": "tiny", "messages": []map[string]any{{"role": "user", "content": "json please"}},
				"max_completion_tokens": 120, "temperature": 1, "seed": seed, "response_format": rf, "stream": seed%2 == 1}
			resp, b := post(t, url+"/v1/chat/completions", req)
			if resp.StatusCode != 200 {
				t.Fatalf("%s: status %d: %s", name, resp.StatusCode, b)
			}
			var content, finish string
			if seed%2 == 1 {
				r, err := readStream(t, strings.NewReader(string(b)))
				if err != nil {
					t.Fatal(err)
				}
				content = r.text
				for _, c := range r.chunks {
					if len(c.Choices) > 0 && c.Choices[0].FinishReason != nil {
						finish = *c.Choices[0].FinishReason
					}
				}
			} else {
				c := decodeCompletion(t, b)
				content, finish = c.Choices[0].Message.Content, *c.Choices[0].FinishReason
			}
			if finish != "stop" {
				continue
			}
			stops++
			t.Logf("%s seed %d: %s", name, seed, content)
			var v map[string]any
			if err := json.Unmarshal([]byte(content), &v); err != nil {
				t.Fatalf("%s seed %d: content %q is not a JSON object: %v", name, seed, content, err)
			}
			if name == "json_schema" {
				n, ok := v["n"].(float64)
				k, _ := v["k"].(string)
				if len(v) != 2 || !ok || n != float64(int(n)) || n < 1 || n > 9 || (k != "a" && k != "b") {
					t.Errorf("seed %d: content %s does not match the schema", seed, content)
				}
			}
		}
		if stops == 0 {
			t.Errorf("%s: no answer ended with a stop", name)
		}
	}
}

// TestToolChoiceRequired: with tool_choice required (and a named function)
// the tiny random-weight model's answer is a hermes call of a given tool
// whose arguments match its parameters (checked by hand), finish_reason
// tool_calls; a format without call grammar and bad parameters are 400s.
func TestToolChoiceRequired(t *testing.T) {
	// A template whose text names each format's syntax, so that format is
	// detected (chat.ToolFormat).
	for _, syntax := range []string{"<tool_call>{json}</tool_call>", "<|tool_calls_section_begin|>", "<|channel|>commentary",
		"<｜tool▁calls▁begin｜>", "<|START_ACTION|>", "[TOOL_CALLS]", "<function=NAME>", "<TOOLCALL>"} {
		t.Run(syntax, func(t *testing.T) { toolChoiceRequired(t, syntax) })
	}
}

func toolChoiceRequired(t *testing.T, syntax string) {
	tpl := filepath.Join(t.TempDir(), "tools.jinja")
	os.WriteFile(tpl, []byte("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}{% if tools %}Tools: call them as "+syntax+"\n{% endif %}<|im_start|>assistant\n"), 0o644)
	srv, url := startServer(t, Config{TemplateFile: tpl})
	tools := []any{
		map[string]any{"type": "function", "function": map[string]any{"name": "pick", "parameters": map[string]any{"type": "object",
			"properties": map[string]any{"n": map[string]any{"type": "integer", "minimum": 0, "maximum": 9}}, "required": []any{"n"}, "additionalProperties": false}}},
		map[string]any{"type": "function", "function": map[string]any{"name": "noop", "parameters": map[string]any{"type": "object", "properties": map[string]any{}, "additionalProperties": false}}},
	}
	calls := 0
	for seed := range 4 {
		choice := any("required")
		if seed%2 == 1 {
			choice = map[string]any{"type": "function", "function": map[string]any{"name": "pick"}}
		}
		req := map[string]any{"model": "tiny", "messages": []map[string]any{{"role": "user", "content": "go"}}, "tools": tools, "tool_choice": choice,
			"parallel_tool_calls": false, "max_completion_tokens": 300, "temperature": 1, "seed": seed}
		resp, b := post(t, url+"/v1/chat/completions", req)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		var r struct {
			Choices []struct {
				FinishReason string `json:"finish_reason"`
				Message      struct {
					ToolCalls []struct {
						ID, Type string
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				} `json:"message"`
			} `json:"choices"`
		}
		json.Unmarshal(b, &r)
		c := r.Choices[0]
		if c.FinishReason == "length" {
			continue
		}
		if c.FinishReason != "tool_calls" || len(c.Message.ToolCalls) != 1 {
			t.Fatalf("seed %d: %s: want one call and finish_reason tool_calls", seed, b)
		}
		calls++
		tc := c.Message.ToolCalls[0]
		var args map[string]any
		if err := json.Unmarshal([]byte(tc.Function.Arguments), &args); err != nil || tc.Type != "function" || !strings.HasPrefix(tc.ID, "call_") {
			t.Fatalf("seed %d: call %+v", seed, tc)
		}
		switch tc.Function.Name {
		case "pick":
			n, ok := args["n"].(float64)
			if len(args) != 1 || !ok || n != float64(int(n)) || n < 0 || n > 9 {
				t.Errorf("seed %d: pick arguments %s", seed, tc.Function.Arguments)
			}
		case "noop":
			if len(args) != 0 || seed%2 == 1 {
				t.Errorf("seed %d: noop arguments %s (named pick: %v)", seed, tc.Function.Arguments, seed%2 == 1)
			}
		default:
			t.Errorf("seed %d: call of %q", seed, tc.Function.Name)
		}
	}
	if calls == 0 {
		t.Error("no answer ended in a call")
	}
	// auto: the same grammar, applied from the format's trigger on; none
	// with tool_choice none.
	// (harmony frames every message: no trigger to wait for, auto stays free)
	for choice, want := range map[string]bool{"auto": !strings.HasPrefix(syntax, "<|channel|>"), "none": false} {
		body, _ := json.Marshal(map[string]any{"model": "tiny", "messages": []map[string]any{{"role": "user", "content": "go"}}, "tools": tools, "tool_choice": choice})
		_, p, ae := srv.decodeChat(body, srv.eng.Load())
		if ae != nil {
			t.Fatal(ae)
		}
		if got := p.grammar != nil && p.trigger != "" && strings.HasPrefix(syntax, p.trigger); got != want {
			t.Errorf("tool_choice %s: lazy grammar %v (trigger %q), want %v", choice, got, p.trigger, want)
		}
	}
	if !strings.HasPrefix(syntax, "<tool_call>") {
		return
	}
	bad := map[string]any{"model": "tiny", "messages": []map[string]any{{"role": "user", "content": "go"}}, "tool_choice": "required",
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "x", "parameters": map[string]any{"type": "object", "not": map[string]any{}}}}}}
	resp, b := post(t, url+"/v1/chat/completions", bad)
	if resp.StatusCode != 400 || !strings.Contains(string(b), "not") || !strings.Contains(string(b), "tools[0].function.parameters") {
		t.Errorf("unsupported keyword in parameters: %d %s", resp.StatusCode, b)
	}
}
