package serve

import (
	"encoding/json"
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
		for seed := range 6 {
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
