package serve

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestStructuredStream: a raw answer fed to the chat answer in random
// pieces streams reasoning_content, content and tool_calls that add up to
// what the whole (non-streamed) answer holds, with the calls only at the
// end and finish_reason tool_calls.
func TestStructuredStream(t *testing.T) {
	cases := []struct {
		p                         genParams
		raw                       string
		reasoning, content, calls string
	}{
		{genParams{toolFormat: "hermes", think: true}, "<think>\nLet me look it up.\n</think>\n\nChecking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
			"Let me look it up.", "Checking.", `[{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}]`},
		{genParams{think: true, thinkOpen: true}, "hmm </th", "hmm </th", "", `null`},
		{genParams{think: true, thinkOpen: true}, "a < b</think>The answer is <b>4</b>.", "a < b", "The answer is <b>4</b>.", `null`},
		{genParams{toolFormat: "mistral"}, "Sure[TOOL_CALLS][{\"name\":\"f\",\"arguments\":{}},{\"name\":\"g\",\"arguments\":{\"x\":[1]}}]", "", "Sure",
			`[{"name":"f","arguments":"{}"},{"name":"g","arguments":"{\"x\":[1]}"}]`},
		{genParams{toolFormat: "mistral", noParallel: true}, "[TOOL_CALLS][{\"name\":\"f\",\"arguments\":{}},{\"name\":\"g\",\"arguments\":{}}]", "", "", `[{"name":"f","arguments":"{}"}]`},
		{genParams{toolFormat: "llama3-json"}, `{"name": "f", "parameters": {"a": 1}}`, "", "", `[{"name":"f","arguments":"{\"a\":1}"}]`},
		{genParams{toolFormat: "hermes"}, "no call <tool_ca", "", "no call <tool_ca", `null`},
		{genParams{toolFormat: "harmony"}, "<|channel|>analysis<|message|>Look it up.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}",
			"Look it up.", "", `[{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}]`},
		{genParams{toolFormat: "harmony"}, "<|channel|>analysis<|message|>hm<|end|><|start|>assistant<|channel|>final<|message|>It is 4.", "hm", "It is 4.", `null`},
		{genParams{toolFormat: "kimi-k2"}, "Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>",
			"", "Checking.", `[{"name":"f","arguments":"{}"}]`},
		{genParams{think: true}, "[THINK]plan[/THINK]Done.", "plan", "Done.", `null`},
		{genParams{toolFormat: "seed-xml", think: true}, "<seed:think>plan</seed:think>Done.", "plan", "Done.", `null`},
		// The stream trims what package chat's parser trims (" \t\n").
		{genParams{toolFormat: "hermes", think: true}, "\t<think>ab</think>Hello there <tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>",
			"ab", "Hello there", `[{"name":"f","arguments":"{}"}]`},
		{genParams{toolFormat: "llama3-json"}, "\t{\"name\": \"f\", \"parameters\": {\"a\": 1}}", "", "", `[{"name":"f","arguments":"{\"a\":1}"}]`},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range cases {
		// whole
		a := newChatAnswer(base{}, c.p)
		w := a.whole(c.raw, nil, &result{finish: "stop"}).(map[string]any)
		choice := w["choices"].([]any)[0].(map[string]any)
		msg := choice["message"].(map[string]any)
		var wantCalls []map[string]string
		json.Unmarshal([]byte(c.calls), &wantCalls)
		gotR, _ := msg["reasoning_content"].(string)
		gotC, _ := msg["content"].(string)
		if gotR != c.reasoning || gotC != c.content {
			t.Errorf("%q whole: reasoning %q content %q, want %q %q", c.raw, gotR, gotC, c.reasoning, c.content)
		}
		tcs, _ := msg["tool_calls"].([]any)
		if len(tcs) != len(wantCalls) {
			t.Errorf("%q whole: %d calls, want %d", c.raw, len(tcs), len(wantCalls))
		}
		for i, tc := range tcs {
			fn := tc.(map[string]any)["function"].(map[string]any)
			if i < len(wantCalls) && (fn["name"] != wantCalls[i]["name"] || fn["arguments"] != wantCalls[i]["arguments"]) {
				t.Errorf("%q whole: call %d %v, want %v", c.raw, i, fn, wantCalls[i])
			}
		}
		wantFinish := "stop"
		if len(wantCalls) > 0 {
			wantFinish = "tool_calls"
		}
		if choice["finish_reason"] != wantFinish {
			t.Errorf("%q whole: finish %v, want %s", c.raw, choice["finish_reason"], wantFinish)
		}
		// streamed in random pieces, three times
		for range 3 {
			a := newChatAnswer(base{}, c.p)
			var evs []any
			for rest := c.raw; rest != ""; {
				n := min(len(rest), 1+r.IntN(6))
				if v := a.chunk(rest[:n], nil, ""); v != nil {
					evs = append(evs, v)
				}
				rest = rest[n:]
			}
			evs = append(evs, a.chunk("", nil, "stop").([]any)...)
			var sr, sc string
			var names, argsText []string
			var fin any
			sawCall := false
			for _, ev := range evs {
				ch := ev.(map[string]any)["choices"].([]any)[0].(map[string]any)
				d := ch["delta"].(map[string]any)
				if s, ok := d["reasoning_content"].(string); ok {
					sr += s
				}
				if s, ok := d["content"].(string); ok {
					if sawCall {
						t.Errorf("%q: content after a call", c.raw)
					}
					sc += s
				}
				if l, ok := d["tool_calls"].([]any); ok {
					sawCall = true
					tc := l[0].(map[string]any)
					fn := tc["function"].(map[string]any)
					if id, ok := tc["id"]; ok {
						if id == "" || tc["type"] != "function" || tc["index"] != len(names) {
							t.Errorf("%q: call head %v", c.raw, tc)
						}
						names = append(names, fn["name"].(string))
						argsText = append(argsText, "")
					} else {
						argsText[len(argsText)-1] += fn["arguments"].(string)
					}
				}
				if f := ch["finish_reason"]; f != nil {
					fin = f
				}
			}
			if sr != c.reasoning || sc != c.content || fin != wantFinish || len(names) != len(wantCalls) {
				t.Errorf("%q streamed: reasoning %q content %q finish %v calls %v, want %q %q %s %s", c.raw, sr, sc, fin, names, c.reasoning, c.content, wantFinish, c.calls)
				continue
			}
			for i := range names {
				if names[i] != wantCalls[i]["name"] || argsText[i] != wantCalls[i]["arguments"] {
					t.Errorf("%q streamed: call %d %s %s, want %v", c.raw, i, names[i], argsText[i], wantCalls[i])
				}
			}
		}
	}
}

// TestStructuredFinalKeepsSent: the end of a stream only adds to what was
// sent. Where the parse of the whole answer disagrees with the content
// sent, that content stands and the rest of the message (content, calls) is
// the parse of the text not yet sent, so a call is never made of text the
// stream already showed. (The stream's own reading agrees with the parse;
// the disagreeing states are set by hand.)
func TestStructuredFinalKeepsSent(t *testing.T) {
	call := "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>"
	cases := []struct {
		raw, sent string // the answer; the content the stream sent
		endC      int    // where in raw the sent content ends
		content   string // the message's content
		restC     string
		calls     int
	}{
		{"Hello there " + call, "Hello", 5, "Hello there", " there", 1},
		{"Hello there " + call, "Hello there", 11, "Hello there", "", 1},
		// "Hello there" sent as "Hi": it stands; the call, past it, is made.
		{"Hello there " + call, "Hi", 11, "Hi", "", 1},
		// "Hello" sent as "Hi": " there" and the call follow.
		{"Hello there " + call, "Hi", 5, "Hi there", " there", 1},
		// The call's text was sent as content: no call is made of it.
		{"Hello " + call, "Hello <tool_call>{\"name\": \"f\"", 29, "Hello <tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>",
			", \"arguments\": {}}</tool_call>", 0},
		// A malformed call after a disagreeing content stays content.
		{"Hello there <tool_call>{bad", "Hi", 5, "Hi there <tool_call>{bad", " there <tool_call>{bad", 0},
	}
	for i, c := range cases {
		st := &structured{format: "hermes", parallel: true}
		st.acc.WriteString(c.raw)
		st.sentC, st.endC = c.sent, c.endC
		m, restR, restC := st.final()
		if m.Content != c.content || restC != c.restC || restR != "" || len(m.ToolCalls) != c.calls {
			t.Errorf("case %d: content %q rest %q reasoning rest %q, %d calls; want %q %q \"\", %d", i, m.Content, restC, restR, len(m.ToolCalls), c.content, c.restC, c.calls)
		}
		if m.Content != st.sentC+restC {
			t.Errorf("case %d: content %q is not the sent %q + the rest %q", i, m.Content, st.sentC, restC)
		}
	}
	// Reasoning sent that the parse reads otherwise stays as sent.
	st := &structured{format: "hermes", thinkOpen: true, parallel: true}
	st.acc.WriteString("plan</think>Done.")
	st.sentR = "plan B"
	if m, restR, restC := st.final(); m.Reasoning != "plan B" || restR != "" || m.Content != "Done." || restC != "Done." {
		t.Errorf("reasoning sent otherwise: got reasoning %q (rest %q), content %q (rest %q); want \"plan B\" \"\", \"Done.\" \"Done.\"", m.Reasoning, restR, m.Content, restC)
	}
}
