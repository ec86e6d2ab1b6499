package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// ToolCall is one function call parsed out of a model's output; Arguments
// is a JSON object's text.
type ToolCall struct {
	Name      string
	Arguments string
}

// Parsed is an assistant answer split into its parts.
type Parsed struct {
	Content   string
	Reasoning string
	ToolCalls []ToolCall
}

// toolFormat is one family's tool-call syntax: detect finds it in a
// template's source, trigger starts a call in the output, parse reads the
// text from the trigger on.
type toolFormat struct {
	name    string
	detect  func(src string) bool
	trigger string
	parse   func(text string) ([]ToolCall, error)
	// whole, when set, reads the whole answer instead (formats whose
	// answer is a sequence of framed messages: gpt-oss, Functionary v3.2).
	whole func(text string) (Parsed, error)
}

// toolFormats in detection order (the more specific first).
var toolFormats = []toolFormat{
	{"seed-xml", func(s string) bool { return strings.Contains(s, "<seed:tool_call>") }, "<seed:tool_call>", func(t string) ([]ToolCall, error) {
		return parseXMLCalls(t, "<seed:tool_call>", "</seed:tool_call>")
	}, nil},
	{"qwen3-coder-xml", func(s string) bool { return strings.Contains(s, "<tool_call>") && strings.Contains(s, "<function=") }, "<tool_call>", parseQwenXML, nil},
	{"glm-xml", func(s string) bool { return strings.Contains(s, "<tool_call>") && strings.Contains(s, "<arg_key>") }, "<tool_call>", parseGLM, nil},
	{"apriel", func(s string) bool {
		return strings.Contains(s, "<tool_calls>[") || strings.Contains(s, "<tool_calls>\n[") || strings.Contains(s, "'<tool_calls>'")
	}, "<tool_calls>", parseApriel, nil},
	{"hermes", func(s string) bool {
		return strings.Contains(s, "<tool_call>") && !strings.Contains(s, "<invoke name=") && !strings.Contains(s, "<tool_calls>")
	}, "<tool_call>", parseHermes, nil},
	{"minimax-m1", func(s string) bool { return strings.Contains(s, `<tool_calls>\n{"`) }, "<tool_calls>", parseMiniMaxM1, nil},
	{"deepseek-r1", func(s string) bool { return strings.Contains(s, "<｜tool▁calls▁begin｜>") }, "<｜tool▁calls▁begin｜>", parseDeepSeek, nil},
	{"deepseek-dsml", func(s string) bool { return strings.Contains(s, "｜DSML｜") }, "<｜DSML｜", parseDSML, nil},
	{"kimi-k2", func(s string) bool { return strings.Contains(s, "<|tool_calls_section_begin|>") }, "<|tool_calls_section_begin|>", parseKimi, nil},
	{"minimax-m2", func(s string) bool { return strings.Contains(s, "<minimax:tool_call>") }, "<minimax:tool_call>",
		invokeXML("<minimax:tool_call>", "</minimax:tool_call>", "", "invoke", "parameter"), nil},
	{"command-r7b", func(s string) bool { return strings.Contains(s, "<|START_ACTION|>") }, "<|START_ACTION|>", wrappedJSON("<|START_ACTION|>", "<|END_ACTION|>"), nil},
	{"command-r", func(s string) bool { return strings.Contains(s, "Action:") && strings.Contains(s, "tool_name") }, "Action:", parseCommandR, nil},
	{"nemotron", func(s string) bool { return strings.Contains(s, "<TOOLCALL>") }, "<TOOLCALL>", wrappedJSON("<TOOLCALL>", "</TOOLCALL>"), nil},
	{"granite", func(s string) bool { return strings.Contains(s, "<|tool_call|>") }, "<|tool_call|>", wrappedJSON("<|tool_call|>", ""), nil},
	{"gigachat", func(s string) bool { return strings.Contains(s, "<|function_call|>") }, "<|function_call|>", wrappedJSON("<|function_call|>", ""), nil},
	{"apertus", func(s string) bool { return strings.Contains(s, "<|tools_prefix|>") }, "<|tools_prefix|>", parseApertus, nil},
	{"solar-open", func(s string) bool { return strings.Contains(s, "<|tool_call:begin|>") }, "<|tool_calls|>", parseSolar, nil},
	{"hunyuan", func(s string) bool { return strings.Contains(s, "<tool_calls:opensource>") }, "<tool_calls:opensource>", parseHy3, nil},
	{"minicpm", func(s string) bool {
		return strings.Contains(s, `<function name="`) && strings.Contains(s, `<param name="`)
	}, `<function name="`,
		invokeXML("", "", "", "function", "param"), nil},
	{"gemma4", func(s string) bool { return strings.Contains(s, "<|tool_call>call:") }, "<|tool_call>", parseGemma4, nil},
	{"pythonic", func(s string) bool { return strings.Contains(s, "<|tool_call_start|>") }, "<|tool_call_start|>", parsePythonic, nil},
	{"mistral", func(s string) bool { return strings.Contains(s, "[TOOL_CALLS]") }, "[TOOL_CALLS]", parseMistral, nil},
	{"functionary-v3.1", func(s string) bool { return strings.Contains(s, "<function=") && !strings.Contains(s, "<tool_call>") }, "<function=", parseFunctionary, nil},
	{"harmony", func(s string) bool { return strings.Contains(s, "<|channel|>") }, "", nil, parseHarmony},
	{"functionary-v3.2", func(s string) bool { return strings.Contains(s, ">>>all") }, "", nil, parseFunctionaryV32},
	{"llama3-json", func(s string) bool {
		return strings.Contains(s, "<|python_tag|>") || (strings.Contains(s, "<|start_header_id|>") && strings.Contains(s, "parameters"))
	}, "", parseLlama3, nil},
}

// ToolFormat names the tool-call format detected in a template's source
// ("" when none is known: output is then plain content).
func ToolFormat(src string) string {
	for _, f := range toolFormats {
		if f.detect(src) {
			return f.name
		}
	}
	return ""
}

// ToolFormats lists the formats ToolFormat can detect, in detection order.
func ToolFormats() []string {
	var out []string
	for _, f := range toolFormats {
		out = append(out, f.name)
	}
	return out
}

// ParseOutput splits a raw model output into reasoning (a leading
// <think>…</think>, or everything up to </think> when the prompt opened
// the block: thinkOpen), content and, under format, tool calls. It returns
// an error naming where a call does not parse.
func ParseOutput(format, text string, thinkOpen bool) (Parsed, error) {
	var m Parsed
	m.Reasoning, text = splitThink(text, thinkOpen)
	var f *toolFormat
	for i := range toolFormats {
		if toolFormats[i].name == format {
			f = &toolFormats[i]
		}
	}
	if f == nil {
		m.Content = text
		return m, nil
	}
	if f.whole != nil {
		w, err := f.whole(text)
		if err != nil {
			return m, fmt.Errorf("%s answer: %w", f.name, err)
		}
		w.Reasoning = strings.TrimSpace(m.Reasoning + w.Reasoning)
		return w, nil
	}
	at := 0
	if f.trigger != "" {
		at = strings.Index(text, f.trigger)
	} else {
		at = llama3Start(text)
	}
	if at < 0 {
		m.Content = text
		return m, nil
	}
	calls, err := f.parse(text[at:])
	if err != nil {
		if f.trigger == "" { // llama3: plain JSON-looking content is content
			m.Content = text
			return m, nil
		}
		return m, fmt.Errorf("%s tool call at offset %d: %w", f.name, at, err)
	}
	m.Content, m.ToolCalls = strings.TrimRight(text[:at], " \t\n"), calls
	return m, nil
}

// WholeAnswer reports whether format frames the whole answer (gpt-oss
// harmony, Functionary v3.2): its content is known only once it ends.
func WholeAnswer(format string) bool {
	for _, f := range toolFormats {
		if f.name == format {
			return f.whole != nil
		}
	}
	return false
}

// ToolTrigger is the text that starts a call in format ("" when a call is
// recognized only as a whole output, as Llama 3's JSON).
func ToolTrigger(format string) string {
	for _, f := range toolFormats {
		if f.name == format {
			return f.trigger
		}
	}
	return ""
}

// ThinkMarkers are the pairs that open and close a reasoning block, by
// family: <think> (Qwen 3, DeepSeek R1 and most), Seed's <seed:think>,
// Mistral's [THINK], Command R7B's <|START_THINKING|>, Gemma 4's thought
// channel.
var ThinkMarkers = [][2]string{
	{"<think>", "</think>"},
	{"<seed:think>", "</seed:think>"},
	{"[THINK]", "[/THINK]"},
	{"<|START_THINKING|>", "<|END_THINKING|>"},
	{"<|channel>thought", "<channel|>"},
}

// ThinkClose returns where the first closing marker is in t and its length
// (-1, 0 when none).
func ThinkClose(t string) (at, n int) {
	at = -1
	for _, m := range ThinkMarkers {
		if i := strings.Index(t, m[1]); i >= 0 && (at < 0 || i < at) {
			at, n = i, len(m[1])
		}
	}
	return at, n
}

// ThinkOpener returns the opening marker t starts with ("" when none).
func ThinkOpener(t string) string {
	for _, m := range ThinkMarkers {
		if strings.HasPrefix(t, m[0]) {
			return m[0]
		}
	}
	return ""
}

func splitThink(text string, open bool) (reasoning, rest string) {
	t := strings.TrimLeft(text, " \t\n")
	if !open {
		o := ThinkOpener(t)
		if o == "" {
			return "", text
		}
		t = t[len(o):]
	}
	end, n := ThinkClose(t)
	if end < 0 {
		return strings.TrimSpace(t), "" // still thinking (cut by a limit)
	}
	return strings.TrimSpace(t[:end]), strings.TrimLeft(t[end+n:], " \n")
}

// args checks that a call's arguments are a JSON object and returns their
// compact text.
func args(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "{}", nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", fmt.Errorf("arguments are not a JSON object: %v", err)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "", err
	}
	return b.String(), nil
}

type jsonCall struct {
	Name       string          `json:"name"`
	ToolName   string          `json:"tool_name"` // Command R
	Arguments  json.RawMessage `json:"arguments"`
	Parameters json.RawMessage `json:"parameters"`
}

func (c jsonCall) call() (ToolCall, error) {
	if c.Name == "" {
		c.Name = c.ToolName
	}
	if c.Name == "" {
		return ToolCall{}, fmt.Errorf("a call without a name")
	}
	raw := c.Arguments
	if len(raw) == 0 {
		raw = c.Parameters
	}
	// Some models write arguments as a JSON string holding the object.
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	a, err := args(raw)
	return ToolCall{c.Name, a}, err
}

// decodeFirst decodes one JSON value at the start of text and returns the
// rest.
func decodeFirst(text string, v any) (string, error) {
	d := json.NewDecoder(strings.NewReader(text))
	if err := d.Decode(v); err != nil {
		return "", err
	}
	return text[d.InputOffset():], nil
}

// decodeCall decodes one JSON call object at the start of text and
// returns the rest.
func decodeCall(text string) (ToolCall, string, error) {
	var c jsonCall
	rest, err := decodeFirst(text, &c)
	if err != nil {
		return ToolCall{}, "", err
	}
	tc, err := c.call()
	return tc, rest, err
}

// parseHermes: <tool_call>{"name": ..., "arguments": {...}}</tool_call>, repeated.
func parseHermes(text string) ([]ToolCall, error) {
	var calls []ToolCall
	for {
		text = strings.TrimLeft(text, " \t\n")
		if text == "" {
			return calls, nil
		}
		if !strings.HasPrefix(text, "<tool_call>") {
			return nil, fmt.Errorf("text after a call: %.20q", text)
		}
		tc, rest, err := decodeCall(text[len("<tool_call>"):])
		if err != nil {
			return nil, err
		}
		calls = append(calls, tc)
		rest = strings.TrimLeft(rest, " \t\n")
		if !strings.HasPrefix(rest, "</tool_call>") {
			return nil, fmt.Errorf("no </tool_call> after the call")
		}
		text = rest[len("</tool_call>"):]
	}
}

// parseQwenXML: <tool_call><function=NAME><parameter=P>VALUE</parameter>…</function></tool_call>.
func parseQwenXML(text string) ([]ToolCall, error) {
	return parseXMLCalls(text, "<tool_call>", "</tool_call>")
}

// parseXMLCalls: Qwen3-Coder's XML calls between the tags open and close
// (ByteDance Seed-OSS writes the same inside <seed:tool_call>).
func parseXMLCalls(text, open, close string) ([]ToolCall, error) {
	var calls []ToolCall
	for {
		text = strings.TrimLeft(text, " \t\n")
		if text == "" {
			return calls, nil
		}
		if !strings.HasPrefix(text, open) {
			return nil, fmt.Errorf("text after a call: %.20q", text)
		}
		end := strings.Index(text, close)
		if end < 0 {
			return nil, fmt.Errorf("no %s", close)
		}
		body := strings.TrimSpace(text[len(open):end])
		text = text[end+len(close):]
		if !strings.HasPrefix(body, "<function=") {
			return nil, fmt.Errorf("no <function=NAME>")
		}
		gt := strings.IndexByte(body, '>')
		if gt < 0 {
			return nil, fmt.Errorf("unterminated <function=")
		}
		name := body[len("<function="):gt]
		body = strings.TrimSuffix(strings.TrimSpace(body[gt+1:]), "</function>")
		obj := map[string]json.RawMessage{}
		var order []string
		for {
			body = strings.TrimSpace(body)
			if body == "" {
				break
			}
			if !strings.HasPrefix(body, "<parameter=") {
				return nil, fmt.Errorf("expected <parameter=NAME> in %s", name)
			}
			gt := strings.IndexByte(body, '>')
			pe := strings.Index(body, "</parameter>")
			if gt < 0 || pe < gt {
				return nil, fmt.Errorf("unterminated parameter in %s", name)
			}
			p := body[len("<parameter="):gt]
			v := strings.Trim(body[gt+1:pe], "\n")
			if json.Valid([]byte(v)) {
				obj[p] = json.RawMessage(v)
			} else {
				b, _ := json.Marshal(v)
				obj[p] = b
			}
			order = append(order, p)
			body = body[pe+len("</parameter>"):]
		}
		var b strings.Builder
		b.WriteByte('{')
		for i, k := range order {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			var cb bytes.Buffer
			json.Compact(&cb, obj[k])
			b.Write(cb.Bytes())
		}
		b.WriteByte('}')
		calls = append(calls, ToolCall{name, b.String()})
	}
}

// parseMistral: [TOOL_CALLS][{"name":…,"arguments":{…}}, …] or
// [TOOL_CALLS]name[ARGS]{…} (repeated; name[CALL_ID]id[ARGS]{…} too).
func parseMistral(text string) ([]ToolCall, error) {
	var calls []ToolCall
	for {
		text = strings.TrimLeft(text, " \t\n")
		if text == "" || text == "</s>" {
			return calls, nil
		}
		if !strings.HasPrefix(text, "[TOOL_CALLS]") {
			return nil, fmt.Errorf("text after a call: %.20q", text)
		}
		text = strings.TrimLeft(text[len("[TOOL_CALLS]"):], " ")
		if strings.HasPrefix(text, "[") {
			var list []jsonCall
			rest, err := decodeFirst(text, &list)
			if err != nil {
				return nil, err
			}
			for _, c := range list {
				tc, err := c.call()
				if err != nil {
					return nil, err
				}
				calls = append(calls, tc)
			}
			text = rest
			continue
		}
		i := strings.Index(text, "[ARGS]")
		if i <= 0 {
			return nil, fmt.Errorf("expected a JSON array or name[ARGS]")
		}
		var raw json.RawMessage
		rest, err := decodeFirst(text[i+len("[ARGS]"):], &raw)
		if err != nil {
			return nil, err
		}
		a, err := args(raw)
		if err != nil {
			return nil, err
		}
		name := text[:i]
		if c := strings.Index(name, "[CALL_ID]"); c >= 0 { // Mistral Small 3.2: name[CALL_ID]id[ARGS]
			name = name[:c]
		}
		calls = append(calls, ToolCall{strings.TrimSpace(name), a})
		text = rest
	}
}

// llama3Start: Llama 3.1-3.3 call a tool with the whole output
// {"name": …, "parameters": {…}}, optionally after <|python_tag|>.
func llama3Start(text string) int {
	t := strings.TrimLeft(text, " \t\n")
	if strings.HasPrefix(t, "<|python_tag|>") || strings.HasPrefix(t, "{") {
		return len(text) - len(t)
	}
	return -1
}

func parseLlama3(text string) ([]ToolCall, error) {
	text = strings.TrimPrefix(strings.TrimLeft(text, " \t\n"), "<|python_tag|>")
	var calls []ToolCall
	for {
		text = strings.TrimLeft(text, " \n;")
		if text == "" || text == "<|eom_id|>" || text == "<|eot_id|>" {
			if len(calls) == 0 {
				return nil, fmt.Errorf("no call")
			}
			return calls, nil
		}
		tc, rest, err := decodeCall(text)
		if err != nil {
			return nil, err
		}
		calls = append(calls, tc)
		text = rest
	}
}

// ThinkOpen reports whether a rendered prompt leaves a <think> block open
// (the template forces thinking): the output then starts inside it.
func ThinkOpen(prompt string) bool {
	p := strings.TrimRight(prompt, " \n")
	for _, m := range ThinkMarkers {
		if strings.HasSuffix(p, m[0]) {
			return true
		}
	}
	return false
}

// parseGLM: <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>…</tool_call>
// (GLM 4.x, poolside Laguna); a value that is not JSON is a string.
func parseGLM(text string) ([]ToolCall, error) {
	var calls []ToolCall
	for {
		text = strings.TrimLeft(text, " \t\n")
		if text == "" {
			return calls, nil
		}
		if !strings.HasPrefix(text, "<tool_call>") {
			return nil, fmt.Errorf("text after a call: %.20q", text)
		}
		end := strings.Index(text, "</tool_call>")
		if end < 0 {
			return nil, fmt.Errorf("no </tool_call>")
		}
		body := text[len("<tool_call>"):end]
		text = text[end+len("</tool_call>"):]
		k := strings.Index(body, "<arg_key>")
		if k < 0 {
			k = len(body)
		}
		name := strings.TrimSpace(body[:k])
		if name == "" {
			return nil, fmt.Errorf("a call without a name")
		}
		body = body[k:]
		var b strings.Builder
		b.WriteByte('{')
		for n := 0; ; n++ {
			body = strings.TrimSpace(body)
			if body == "" {
				break
			}
			ke := strings.Index(body, "</arg_key>")
			vs := strings.Index(body, "<arg_value>")
			ve := strings.Index(body, "</arg_value>")
			if !strings.HasPrefix(body, "<arg_key>") || ke < 0 || vs < ke || ve < vs {
				return nil, fmt.Errorf("malformed <arg_key>/<arg_value> in %s", name)
			}
			key, val := body[len("<arg_key>"):ke], body[vs+len("<arg_value>"):ve]
			body = body[ve+len("</arg_value>"):]
			if n > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(key)
			b.Write(kb)
			b.WriteByte(':')
			b.WriteString(jsonOrString(val))
		}
		b.WriteByte('}')
		calls = append(calls, ToolCall{name, b.String()})
	}
}

func jsonOrString(v string) string {
	var cb bytes.Buffer
	if json.Compact(&cb, []byte(v)) == nil {
		return cb.String()
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// parseApriel: <tool_calls>[{"name":…,"arguments":{…}}, …]</tool_calls>.
func parseApriel(text string) ([]ToolCall, error) {
	var list []jsonCall
	rest, err := decodeFirst(strings.TrimPrefix(text, "<tool_calls>"), &list)
	if err != nil {
		return nil, err
	}
	if r := strings.TrimSpace(rest); r != "</tool_calls>" && r != "" {
		return nil, fmt.Errorf("text after the calls: %.20q", r)
	}
	var calls []ToolCall
	for _, c := range list {
		tc, err := c.call()
		if err != nil {
			return nil, err
		}
		calls = append(calls, tc)
	}
	return calls, nil
}

// parseFunctionary: <function=NAME>{…}</function>, repeated (Functionary v3.1).
func parseFunctionary(text string) ([]ToolCall, error) {
	var calls []ToolCall
	for {
		text = strings.TrimLeft(text, " \t\n")
		if text == "" {
			return calls, nil
		}
		if !strings.HasPrefix(text, "<function=") {
			return nil, fmt.Errorf("text after a call: %.20q", text)
		}
		gt := strings.IndexByte(text, '>')
		if gt < 0 {
			return nil, fmt.Errorf("unterminated <function=")
		}
		name := text[len("<function="):gt]
		var raw json.RawMessage
		rest, err := decodeFirst(text[gt+1:], &raw)
		if err != nil {
			return nil, err
		}
		a, err := args(raw)
		if err != nil {
			return nil, err
		}
		calls = append(calls, ToolCall{name, a})
		text = strings.TrimPrefix(strings.TrimLeft(rest, " \t\n"), "</function>")
	}
}
