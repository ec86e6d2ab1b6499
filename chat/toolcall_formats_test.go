package chat

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// Outputs ported from llama.cpp's tests/test-chat.cpp (the release bundled
// by node-llama-cpp 3.21.1), where its special_function / get_time calls
// are written as models write them, and the parses that file expects.
func TestParseOutputFormats(t *testing.T) {
	sf := []ToolCall{{"special_function", `{"arg1":1}`}}
	cases := []struct {
		format, text string
		thinkOpen    bool
		want         Parsed
	}{
		// DeepSeek V3.1: NAME<｜tool▁sep｜>ARGS.
		{"deepseek-r1", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{\"city\": \"XYZCITY\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>", false,
			Parsed{ToolCalls: []ToolCall{{"get_time", `{"city":"XYZCITY"}`}}}},
		{"deepseek-r1", "REASONING</think>CONTENT<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{\"city\": \"Tokyo\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>", true,
			Parsed{Reasoning: "REASONING", Content: "CONTENT", ToolCalls: []ToolCall{{"get_time", `{"city":"Tokyo"}`}}}},
		// DeepSeek R1: the type, the name on its line, a fenced JSON body.
		{"deepseek-r1", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>special_function\n```json\n{\"arg1\": 1}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>", false,
			Parsed{ToolCalls: sf}},
		{"kimi-k2", "<|tool_calls_section_begin|><|tool_call_begin|>functions.special_function:0<|tool_call_argument_begin|>{\"arg1\": 1}<|tool_call_end|><|tool_calls_section_end|>", false,
			Parsed{ToolCalls: sf}},
		{"pythonic", "<think>I'm\nthinking</think><|tool_call_start|>[special_function(arg1=1)]<|tool_call_end|>", false,
			Parsed{Reasoning: "I'm\nthinking", ToolCalls: sf}},
		{"pythonic", "<think>I need to call a function</think>Let me check the time.<|tool_call_start|>[get_time(city=\"Paris\")]<|tool_call_end|>", false,
			Parsed{Reasoning: "I need to call a function", Content: "Let me check the time.", ToolCalls: []ToolCall{{"get_time", `{"city":"Paris"}`}}}},
		{"apertus", `<|tools_prefix|>[{"special_function": {"arg1": 1}}]<|tools_suffix|>`, false, Parsed{ToolCalls: sf}},
		{"minimax-m2", "\n</think>\n\n<minimax:tool_call>\n<invoke name=\"special_function\">\n<parameter name=\"arg1\">1</parameter>\n</invoke>\n</minimax:tool_call>", true,
			Parsed{ToolCalls: sf}},
		{"minimax-m2", "Let's call a tool:\n</think>\n\n<minimax:tool_call>\n<invoke name=\"empty_args\">\n</invoke>\n</minimax:tool_call>", true,
			Parsed{Reasoning: "Let's call a tool:", ToolCalls: []ToolCall{{"empty_args", `{}`}}}},
		{"nemotron", "I'm\nthinking\n</think>\n<TOOLCALL>[{\"name\": \"special_function\", \"arguments\": {\"arg1\": 1}}]</TOOLCALL>", true,
			Parsed{Reasoning: "I'm\nthinking", ToolCalls: sf}},
		{"command-r7b", "<|START_THINKING|>I'm\nthinking<|END_THINKING|><|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"special_function\", \"parameters\": {\"arg1\": 1}}\n]<|END_ACTION|>", false,
			Parsed{Reasoning: "I'm\nthinking", ToolCalls: sf}},
		{"command-r", "Action:\n```json\n[{\"tool_name\": \"special_function\", \"parameters\": {\"arg1\": 1}}]\n```", false, Parsed{ToolCalls: sf}},
		{"functionary-v3.2", "all\nHello, world!\nWhat's up?", false, Parsed{Content: "Hello, world!\nWhat's up?"}},
		{"functionary-v3.2", "special_function\n{\"arg1\": 1}", false, Parsed{ToolCalls: sf}},
		{"functionary-v3.2", "all\nLet me check.>>>special_function\n{\"arg1\": 1}", false, Parsed{Content: "Let me check.", ToolCalls: sf}},
		{"harmony", "<|channel|>final<|message|>Hello, world!\nWhat's up?", false, Parsed{Content: "Hello, world!\nWhat's up?"}},
		{"harmony", "<|channel|>commentary<|message|>Hello, world!\nWhat's up?", false, Parsed{Content: "Hello, world!\nWhat's up?"}},
		{"harmony", "<|channel|>analysis<|message|>I'm\nthinking<|end|><|start|>assistant<|channel|>final<|message|>Hello, world!\nWhat's up?", false,
			Parsed{Reasoning: "I'm\nthinking", Content: "Hello, world!\nWhat's up?"}},
		{"harmony", " to=functions.special_function<|channel|>analysis<|message|>{\"arg1\": 1}", false, Parsed{ToolCalls: sf}},
		{"harmony", "<|channel|>analysis to=functions.special_function<|message|>{\"arg1\": 1}", false, Parsed{ToolCalls: sf}},
		{"harmony", " to=functions.special_function<|channel|>analysis <|constrain|>json<|message|>{\"arg1\": 1}", false, Parsed{ToolCalls: sf}},
		{"harmony", "<|channel|>analysis<|message|>I'm\nthinking<|end|><|start|>assistant to=functions.special_function<|channel|>analysis<|message|>{\"arg1\": 1}", false,
			Parsed{Reasoning: "I'm\nthinking", ToolCalls: sf}},
		{"harmony", "<|channel|>analysis<|message|>Thinking about edit...<|end|><|start|>assistant<|channel|>commentary to=functions.edit <|constrain|>json<|message|>{\"oldString\": \"if (part < railCount - 1) {\", \"newString\": \"if (part < 4) {\", \"replaceAll\": false}", false,
			Parsed{Reasoning: "Thinking about edit...", ToolCalls: []ToolCall{{"edit", `{"oldString":"if (part < railCount - 1) {","newString":"if (part < 4) {","replaceAll":false}`}}}},
		{"gemma4", "<|channel>thought\nI'm\nthinking<channel|>Hello, world!\nWhat's up?", false, Parsed{Reasoning: "I'm\nthinking", Content: "Hello, world!\nWhat's up?"}},
		// Written after the templates' own rendering (no llama.cpp case).
		{"gemma4", `<|tool_call>call:f{a:<|"|>x, "y"<|"|>,b:[1,2.5,true],c:{d:none}}<tool_call|>`, false,
			Parsed{ToolCalls: []ToolCall{{"f", `{"a":"x, \"y\"","b":[1,2.5,true],"c":{"d":null}}`}}}},
		{"pythonic", `<|tool_call_start|>[f(a='it\'s', b=[1, None, True], c={'k': "v\n"}), g()]<|tool_call_end|>`, false,
			Parsed{ToolCalls: []ToolCall{{"f", `{"a":"it's","b":[1,null,true],"c":{"k":"v\n"}}`}, {"g", `{}`}}}},
		{"granite", `<|tool_call|>[{"name": "special_function", "arguments": {"arg1": 1}}]`, false, Parsed{ToolCalls: sf}},
		{"deepseek-dsml", "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter name=\"s\" string=\"true\">42</｜DSML｜parameter>\n<｜DSML｜parameter name=\"n\" string=\"false\">42</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>", false,
			Parsed{ToolCalls: []ToolCall{{"f", `{"s":"42","n":42}`}}}},
		{"", "[THINK]plan[/THINK]Answer", false, Parsed{Reasoning: "plan", Content: "Answer"}},
		{"", "<seed:think>plan</seed:think>Answer", false, Parsed{Reasoning: "plan", Content: "Answer"}},
	}
	for _, c := range cases {
		got, err := ParseOutput(c.format, c.text, c.thinkOpen)
		if err != nil {
			t.Errorf("%s %q: %v", c.format, c.text, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %q:\n got %+v\nwant %+v", c.format, c.text, got, c.want)
		}
	}
}

// Malformed calls are errors naming the format, never content taken for a
// call or a panic.
func TestParseOutputFormatErrors(t *testing.T) {
	for _, c := range []struct{ format, text, want string }{
		{"kimi-k2", "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0{\"a\":1}<|tool_call_end|>", "tool_call_argument_begin"},
		{"deepseek-r1", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f{\"a\":1}<｜tool▁call▁end｜>", "tool▁sep"},
		{"minimax-m2", "<minimax:tool_call><invoke name=\"f\"><parameter name=\"a\">1</parameter><parameter name=\"a\">2</parameter></invoke></minimax:tool_call>", "given twice"},
		{"pythonic", "<|tool_call_start|>[f(a=1 b=2)]<|tool_call_end|>", "expected , or )"},
		{"gemma4", "<|tool_call>call:f{a:<|\"|>x}<tool_call|>", "unterminated string"},
		{"harmony", "<|channel|>analysis to=functions.f<|message|>[1]", "not a JSON object"},
		{"apertus", `<|tools_prefix|>[{"f": {}, "g": {}}]<|tools_suffix|>`, "one {NAME: arguments}"},
		{"command-r7b", `<|START_ACTION|>[{"tool_call_id": "0", "parameters": {}}]<|END_ACTION|>`, "without a name"},
		{"functionary-v3.2", "f\nnot json", "call to f"},
	} {
		_, err := ParseOutput(c.format, c.text, false)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.format) {
			t.Errorf("%s %q: error %v, want one naming %q and the format", c.format, c.text, err, c.want)
		}
	}
}

// FuzzParseOutput: on any text, every format either fails with an error or
// returns calls whose names are set and whose arguments are JSON objects.
func FuzzParseOutput(f *testing.F) {
	for _, s := range []string{
		"<|tool_call_start|>[f(a='x', b={'c': [1, None]})]<|tool_call_end|>",
		`<|tool_call>call:f{a:<|"|>x<|"|>,b:{c:[1]}}<tool_call|>`,
		"<|channel|>analysis<|message|>t<|end|><|start|>assistant to=functions.f<|channel|>commentary<|message|>{}",
		"<minimax:tool_call><invoke name=\"f\"><parameter name=\"a\">1</parameter></invoke></minimax:tool_call>",
		"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜>",
	} {
		f.Add(s)
	}
	formats := ToolFormats()
	f.Fuzz(func(t *testing.T, text string) {
		for _, format := range formats {
			m, err := ParseOutput(format, text, false)
			if err != nil {
				continue
			}
			for _, c := range m.ToolCalls {
				var obj map[string]any
				if c.Name == "" || json.Unmarshal([]byte(c.Arguments), &obj) != nil || obj == nil {
					t.Fatalf("%s %q: call %+v: want a name and a JSON object", format, text, c)
				}
			}
		}
	})
}
