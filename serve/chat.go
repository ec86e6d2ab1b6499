package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/krafla/krafla/chat"
	"github.com/krafla/krafla/grammar"
	"github.com/krafla/krafla/jinja"
)

// decodeChat checks a chat request (POST /v1/chat/completions) and renders
// its messages with the model's chat template and tokenizes them.
func (s *Server) decodeChat(body []byte, e *engine) ([]int, genParams, *apiError) {
	f, ae := decodeObject(body)
	var p genParams
	if ae == nil {
		p, ae = parseGen(f, e.vocab, true)
	}
	if ae == nil {
		ae = s.checkModel(p.model, e)
	}
	var prompt []int
	if ae == nil {
		prompt, ae = s.chatPrompt(f, e, &p)
	}
	if ae == nil {
		ae = checkPrompt("messages", prompt, e)
	}
	if ae == nil && f.has("response_format") {
		p.grammar, ae = responseFormat(f)
	}
	return prompt, p, ae
}

// responseFormat compiles response_format: text (nil), json_object, or
// json_schema (its schema; a keyword that cannot be enforced is a 400 that
// names it).
func responseFormat(f fields) (*grammar.Grammar, *apiError) {
	if !f.has("response_format") {
		return nil, nil
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict *bool           `json:"strict"`
		} `json:"json_schema"`
	}
	if json.Unmarshal(f["response_format"], &rf) != nil {
		return nil, badParam("response_format", "must be an object with a type")
	}
	switch rf.Type {
	case "", "text":
		return nil, nil
	case "json_object":
		g, err := grammar.CompileJSONObject()
		if err != nil {
			return nil, badParam("response_format", "%v", err)
		}
		return g, nil
	case "json_schema":
		if rf.JSONSchema == nil {
			return nil, badParam("response_format.json_schema", "required with type json_schema")
		}
		s := rf.JSONSchema.Schema
		if len(s) == 0 || string(s) == "null" {
			s = []byte("true") // no schema: any JSON value
		}
		g, err := grammar.CompileJSONSchema(s)
		if err != nil {
			return nil, badParam("response_format.json_schema.schema", "%v", err)
		}
		return g, nil
	}
	return nil, badParam("response_format.type", "must be text, json_object or json_schema, not %q", rf.Type)
}

// chatPrompt checks the messages and renders them.
func (s *Server) chatPrompt(f fields, e *engine, p *genParams) ([]int, *apiError) {
	if e.chat == nil {
		return nil, &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: strPtr("messages"),
			Message: fmt.Sprintf("this model has no usable chat template (%v); use /v1/completions", e.chatErr)}
	}
	if !f.has("messages") {
		return nil, badParam("messages", "required")
	}
	var msgs []map[string]json.RawMessage
	if err := json.Unmarshal(f["messages"], &msgs); err != nil {
		return nil, badParam("messages", "must be an array of message objects")
	}
	if len(msgs) == 0 {
		return nil, badParam("messages", "must hold at least one message")
	}
	contents := make([]*string, len(msgs)) // flattened content parts, nil: as given
	for i, m := range msgs {
		param := fmt.Sprintf("messages[%d]", i)
		var role string
		if ok, ae := fields(m).str("role", &role); ae != nil || !ok || role == "" {
			return nil, badParam(param+".role", "required: a string such as \"user\"")
		}
		if !fields(m).has("content") {
			continue // null or absent: an assistant message with tool calls
		}
		raw := m["content"]
		var str string
		if json.Unmarshal(raw, &str) == nil {
			continue
		}
		var parts []struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		}
		if err := json.Unmarshal(raw, &parts); err != nil {
			return nil, badParam(param+".content", "must be a string or an array of content parts")
		}
		var b strings.Builder
		for j, pt := range parts {
			if pt.Type != "text" || pt.Text == nil {
				return nil, badParam(fmt.Sprintf("%s.content[%d]", param, j), "only text parts are supported (type %q)", pt.Type)
			}
			b.WriteString(*pt.Text)
		}
		t := b.String()
		contents[i] = &t
	}
	v, err := jinja.DecodeJSON(f["messages"])
	if err != nil {
		return nil, badParam("messages", "%v", err)
	}
	messages, _ := v.([]any)
	for i, c := range contents {
		if d, ok := messages[i].(*jinja.Dict); ok && c != nil {
			d.Set("content", *c)
		}
	}
	argumentsAsObjects(messages)
	opt := chat.RenderOptions{AddGenerationPrompt: true}
	if f.has("tools") {
		t, err := jinja.DecodeJSON(f["tools"])
		list, ok := t.([]any)
		if err != nil || !ok {
			return nil, badParam("tools", "must be an array")
		}
		opt.Tools = list
	}
	if f.has("chat_template_kwargs") {
		t, err := jinja.DecodeJSON(f["chat_template_kwargs"])
		d, ok := t.(*jinja.Dict)
		if err != nil || !ok {
			return nil, badParam("chat_template_kwargs", "must be an object")
		}
		opt.Extra = map[string]any{}
		for _, k := range d.Keys() {
			if ks, ok := k.(string); ok {
				opt.Extra[ks], _ = d.Get(k)
			}
		}
	}
	choice, named := "auto", ""
	if f.has("tool_choice") {
		var c string
		var fn struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		switch {
		case json.Unmarshal(f["tool_choice"], &c) == nil && (c == "auto" || c == "none" || c == "required"):
			choice = c
		case json.Unmarshal(f["tool_choice"], &fn) == nil && fn.Type == "function" && fn.Function.Name != "":
			choice, named = "required", fn.Function.Name
		default:
			return nil, badParam("tool_choice", "must be auto, none, required or {\"type\": \"function\", \"function\": {\"name\": …}}")
		}
	}
	if f.has("parallel_tool_calls") {
		var b bool
		if json.Unmarshal(f["parallel_tool_calls"], &b) != nil {
			return nil, badParam("parallel_tool_calls", "must be a boolean")
		}
		p.noParallel = !b
	}
	text, err := e.chat.Render(messages, opt)
	if err != nil {
		return nil, badParam("messages", "the chat template refused them: %v", err)
	}
	if len(opt.Tools) > 0 && choice != "none" {
		p.toolFormat = chat.ToolFormat(e.chat.Source)
	}
	if choice == "required" {
		g, ae := callGrammar(f["tools"], p.toolFormat, named, !p.noParallel)
		if ae != nil {
			return nil, ae
		}
		if f.has("response_format") {
			return nil, badParam("tool_choice", "cannot be combined with response_format")
		}
		p.grammar = g
	}
	if choice == "auto" && p.toolFormat != "" && !f.has("response_format") {
		// auto: free text until the format's trigger, then a valid call. A
		// schema the grammar cannot enforce leaves the call free, as
		// without tools' constraint (nothing was asked for).
		if _, ok := callShapes[p.toolFormat]; ok && chat.ToolTrigger(p.toolFormat) != "" {
			if g, ae := callGrammar(f["tools"], p.toolFormat, "", !p.noParallel); ae == nil {
				p.grammar, p.trigger = g, chat.ToolTrigger(p.toolFormat)
			}
		}
	}
	p.thinkOpen = chat.ThinkOpen(text)
	p.think = p.thinkOpen || strings.Contains(e.chat.Source, "<think>")
	return chat.Encode(e.tok, text), nil
}

// callShape is how a tool-call format writes its calls: around all of them
// (open, sep between, close), and each call from its tool's name and
// parameters' schema. Formats whose arguments are not JSON (XML
// parameters, Python calls) are not constrained.
type callShape struct {
	open, sep, close string
	parallel         bool
	call             func(name string, params json.RawMessage) grammar.Call
}

// jsonCall is a call as one JSON object {"name": NAME, key: arguments}.
func jsonCall(key, prefix, suffix string) func(string, json.RawMessage) grammar.Call {
	return func(name string, params json.RawMessage) grammar.Call {
		n, _ := json.Marshal(name)
		return grammar.Call{Prefix: prefix, Suffix: suffix, Schema: []byte(fmt.Sprintf(
			`{"type":"object","properties":{"name":{"const":%s},%q:%s},"required":["name",%q],"additionalProperties":false}`, n, key, params, key))}
	}
}

// namedCall is a call whose name is written around its JSON arguments.
func namedCall(prefix, suffix string) func(string, json.RawMessage) grammar.Call {
	return func(name string, params json.RawMessage) grammar.Call {
		return grammar.Call{Prefix: strings.ReplaceAll(prefix, "NAME", name), Schema: params, Suffix: suffix}
	}
}

var callShapes = map[string]callShape{
	"hermes":      {sep: "\n", parallel: true, call: jsonCall("arguments", "<tool_call>\n", "\n</tool_call>")},
	"llama3-json": {call: jsonCall("parameters", "", "")},
	"mistral":     {open: "[TOOL_CALLS][", sep: ",", close: "]", parallel: true, call: jsonCall("arguments", "", "")},
	"granite":     {open: "<|tool_call|>[", sep: ",", close: "]", parallel: true, call: jsonCall("arguments", "", "")},
	"nemotron":    {open: "<TOOLCALL>[", sep: ",", close: "]</TOOLCALL>", parallel: true, call: jsonCall("arguments", "", "")},
	"apriel":      {open: "<tool_calls>[", sep: ",", close: "]</tool_calls>", parallel: true, call: jsonCall("arguments", "", "")},
	"minimax-m1":  {open: "<tool_calls>\n", sep: "\n", close: "\n</tool_calls>", parallel: true, call: jsonCall("arguments", "", "")},
	"gigachat":    {call: jsonCall("arguments", "<|function_call|>", "")},
	"command-r7b": {open: "<|START_ACTION|>[", sep: ",", close: "]<|END_ACTION|>", parallel: true, call: func(name string, params json.RawMessage) grammar.Call {
		n, _ := json.Marshal(name)
		return grammar.Call{Schema: []byte(fmt.Sprintf(`{"type":"object","properties":{"tool_call_id":{"type":"string","pattern":"^[0-9]{1,2}$"},"tool_name":{"const":%s},"parameters":%s},"required":["tool_call_id","tool_name","parameters"],"additionalProperties":false}`, n, params))}
	}},
	"kimi-k2": {open: "<|tool_calls_section_begin|>", close: "<|tool_calls_section_end|>", parallel: true,
		call: namedCall("<|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>", "<|tool_call_end|>")},
	"deepseek-r1": {open: "<｜tool▁calls▁begin｜>", sep: "\n", close: "<｜tool▁calls▁end｜>", parallel: true,
		call: namedCall("<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n", "\n```<｜tool▁call▁end｜>")},
	"functionary-v3.1": {parallel: true, call: namedCall("<function=NAME>", "</function>")},
	"harmony":          {call: namedCall("<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>", "")},
}

// callGrammar constrains the answer to calls of the tools (only named, when
// given) in the template's format, from the first token: tool_choice
// required or a named function.
func callGrammar(raw json.RawMessage, format, named string, parallel bool) (*grammar.Grammar, *apiError) {
	var tools []struct {
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &tools) != nil || len(tools) == 0 {
		return nil, badParam("tool_choice", "required or a named function needs tools")
	}
	shape, ok := callShapes[format]
	if !ok {
		if format == "" {
			format = "none detected"
		}
		known := make([]string, 0, len(callShapes))
		for f := range callShapes {
			known = append(known, f)
		}
		sort.Strings(known)
		return nil, badParam("tool_choice", "constraining calls is supported for the %s formats, not this template's (%s)", strings.Join(known, ", "), format)
	}
	var calls []grammar.Call
	for i, t := range tools {
		if named != "" && t.Function.Name != named {
			continue
		}
		params := t.Function.Parameters
		if len(params) == 0 || string(params) == "null" {
			params = json.RawMessage(`{"type":"object"}`)
		}
		if _, err := grammar.CompileJSONSchema(params); err != nil {
			return nil, badParam(fmt.Sprintf("tools[%d].function.parameters", i), "%v", err)
		}
		calls = append(calls, shape.call(t.Function.Name, params))
	}
	if len(calls) == 0 {
		return nil, badParam("tool_choice", "no tool is named %q", named)
	}
	max := 1
	if parallel && shape.parallel {
		max = 8
	}
	g, err := grammar.CompileCalls(shape.open, calls, shape.sep, max, shape.close)
	if err != nil {
		return nil, badParam("tools", "%v", err)
	}
	return g, nil
}

// argumentsAsObjects replaces tool_calls[].function.arguments given as JSON
// text (as OpenAI clients send them) by the object, as templates expect.
func argumentsAsObjects(messages []any) {
	for _, m := range messages {
		d, ok := m.(*jinja.Dict)
		if !ok {
			continue
		}
		calls, _ := d.Get("tool_calls")
		list, _ := calls.([]any)
		for _, c := range list {
			cd, _ := c.(*jinja.Dict)
			if cd == nil {
				continue
			}
			fv, _ := cd.Get("function")
			fd, _ := fv.(*jinja.Dict)
			if fd == nil {
				continue
			}
			av, _ := fd.Get("arguments")
			if s, ok := av.(string); ok {
				if obj, err := jinja.DecodeJSON([]byte(s)); err == nil {
					if _, isDict := obj.(*jinja.Dict); isDict {
						fd.Set("arguments", obj)
					}
				}
			}
		}
	}
}

// chatAnswer formats chat.completion and chat.completion.chunk objects.
type chatAnswer struct {
	base
	st *structured // nil: the text is all content
}

func newChatAnswer(b base, p genParams) *chatAnswer {
	a := &chatAnswer{base: b}
	if p.toolFormat != "" || p.think {
		a.st = &structured{format: p.toolFormat, thinkOpen: p.thinkOpen, parallel: !p.noParallel}
	}
	return a
}

type chatTokenLogprob struct {
	Token       string             `json:"token"`
	Logprob     float64            `json:"logprob"`
	Bytes       []int              `json:"bytes"`
	TopLogprobs []chatTokenLogprob `json:"top_logprobs,omitempty"`
}

func chatLogprob(lp tokenLogprob, top bool) chatTokenLogprob {
	c := chatTokenLogprob{Token: lp.text, Logprob: lp.logprob, Bytes: []int{}}
	for _, b := range []byte(lp.text) {
		c.Bytes = append(c.Bytes, int(b))
	}
	if top {
		c.TopLogprobs = []chatTokenLogprob{}
		for _, t := range lp.top {
			c.TopLogprobs = append(c.TopLogprobs, chatLogprob(t, false))
		}
	}
	return c
}

func chatLogprobs(lps []tokenLogprob) any {
	if lps == nil {
		return nil
	}
	content := make([]chatTokenLogprob, len(lps))
	for i, lp := range lps {
		content[i] = chatLogprob(lp, true)
	}
	return map[string]any{"content": content}
}

func (a *chatAnswer) head() any {
	c := map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": ""}, "logprobs": nil, "finish_reason": nil}
	return a.object("chat.completion.chunk", []any{c}, nil)
}

func (a *chatAnswer) chunk(text string, lps []tokenLogprob, finish string) any {
	if a.st != nil {
		return a.structuredChunk(text, lps, finish)
	}
	delta := map[string]any{}
	if text != "" {
		delta["content"] = text
	}
	c := map[string]any{"index": 0, "delta": delta, "logprobs": chatLogprobs(lps), "finish_reason": nil}
	if finish != "" {
		c["finish_reason"] = finish
	}
	return a.object("chat.completion.chunk", []any{c}, nil)
}

func (a *chatAnswer) usageChunk(res *result) any {
	return a.object("chat.completion.chunk", []any{}, usageOf(res))
}

// structuredChunk streams reasoning and content as they become final and,
// at the end, the tool calls: per call a delta with its index, id, type and
// name, then one with its arguments.
func (a *chatAnswer) structuredChunk(text string, lps []tokenLogprob, finish string) any {
	ev := func(delta map[string]any, lp []tokenLogprob, fin any) any {
		c := map[string]any{"index": 0, "delta": delta, "logprobs": chatLogprobs(lp), "finish_reason": fin}
		return a.object("chat.completion.chunk", []any{c}, nil)
	}
	if finish == "" {
		r, c := a.st.delta(text)
		delta := map[string]any{}
		if r != "" {
			delta["reasoning_content"] = r
		}
		if c != "" {
			delta["content"] = c
		}
		if len(delta) == 0 && lps == nil {
			return nil
		}
		return ev(delta, lps, nil)
	}
	m, r, c := a.st.final()
	var out []any
	if r != "" || c != "" {
		delta := map[string]any{}
		if r != "" {
			delta["reasoning_content"] = r
		}
		if c != "" {
			delta["content"] = c
		}
		out = append(out, ev(delta, nil, nil))
	}
	for i, tc := range toolCallsJSON(m.ToolCalls, true) {
		call := tc.(map[string]any)
		fn := call["function"].(map[string]any)
		out = append(out, ev(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": call["id"], "type": "function",
			"function": map[string]any{"name": fn["name"], "arguments": ""}}}}, nil, nil))
		out = append(out, ev(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": fn["arguments"]}}}}, nil, nil))
	}
	if len(m.ToolCalls) > 0 && finish == "stop" {
		finish = "tool_calls"
	}
	return append(out, ev(map[string]any{}, nil, finish))
}

func (a *chatAnswer) whole(text string, lps []tokenLogprob, res *result) any {
	msg := map[string]any{"role": "assistant", "content": text}
	finish := res.finish
	if a.st != nil {
		a.st.acc.WriteString(text)
		m, _, _ := a.st.final()
		msg["content"] = m.Content
		if m.Reasoning != "" {
			msg["reasoning_content"] = m.Reasoning
		}
		if len(m.ToolCalls) > 0 {
			msg["tool_calls"] = toolCallsJSON(m.ToolCalls, false)
			if m.Content == "" {
				msg["content"] = nil
			}
			if finish == "stop" {
				finish = "tool_calls"
			}
		}
	}
	c := map[string]any{"index": 0, "message": msg, "logprobs": chatLogprobs(lps), "finish_reason": finish}
	return a.object("chat.completion", []any{c}, usageOf(res))
}
