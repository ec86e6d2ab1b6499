package chat

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The formats below are the families whose calls are not Hermes-like JSON
// in one tag: each is written after its template's own rendering of an
// assistant message with tool_calls (TestToolCallRoundTrip renders and parses
// back) and, where the template shows none, after the model's documentation.

// object builds a JSON object from parameters in the order written. A
// parameter named twice is an error: which value was meant is unknowable.
type object struct {
	b    strings.Builder
	seen map[string]bool
}

func (o *object) add(key, value string) error {
	if o.seen == nil {
		o.seen = map[string]bool{}
		o.b.WriteByte('{')
	} else {
		o.b.WriteByte(',')
	}
	if o.seen[key] {
		return fmt.Errorf("parameter %q given twice", key)
	}
	o.seen[key] = true
	kb, _ := json.Marshal(key)
	o.b.Write(kb)
	o.b.WriteByte(':')
	o.b.WriteString(value)
	return nil
}

func (o *object) String() string {
	if o.seen == nil {
		return "{}"
	}
	return o.b.String() + "}"
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// between returns the text after open up to close and the rest after
// close; ok is false when text does not start with open or close is absent.
func between(text, open, close string) (body, rest string, ok bool) {
	if !strings.HasPrefix(text, open) {
		return "", text, false
	}
	t := text[len(open):]
	i := strings.Index(t, close)
	if i < 0 {
		return "", text, false
	}
	return t[:i], t[i+len(close):], true
}

// attr reads name="value" from a tag's attribute text.
func attr(tag, name string) (string, bool) {
	i := strings.Index(tag, name+`="`)
	if i < 0 {
		return "", false
	}
	v := tag[i+len(name)+2:]
	j := strings.IndexByte(v, '"')
	if j < 0 {
		return "", false
	}
	return v[:j], true
}

// jsonCalls decodes a JSON array of calls (or, with one, a single call
// object) at the start of text and returns the rest.
func jsonCalls(text string) ([]ToolCall, string, error) {
	text = strings.TrimLeft(text, " \t\n")
	var list []jsonCall
	var rest string
	var err error
	if strings.HasPrefix(text, "{") {
		var c jsonCall
		rest, err = decodeFirst(text, &c)
		list = []jsonCall{c}
	} else {
		rest, err = decodeFirst(text, &list)
	}
	if err != nil {
		return nil, "", err
	}
	var calls []ToolCall
	for _, c := range list {
		tc, err := c.call()
		if err != nil {
			return nil, "", err
		}
		calls = append(calls, tc)
	}
	return calls, rest, nil
}

// wrappedJSON: open, a JSON array (or one object) of calls, close
// (Granite 3 `<|tool_call|>`, Nemotron `<TOOLCALL>`, Command R7B
// `<|START_ACTION|>`, GigaChat 3.1 `<|function_call|>`); close may be ""
// when the format has none.
func wrappedJSON(open, close string) func(string) ([]ToolCall, error) {
	return func(text string) ([]ToolCall, error) {
		var calls []ToolCall
		for {
			text = strings.TrimLeft(text, " \t\n")
			if text == "" && calls != nil {
				return calls, nil
			}
			if !strings.HasPrefix(text, open) {
				return nil, fmt.Errorf("text after a call: %.20q", text)
			}
			cs, rest, err := jsonCalls(text[len(open):])
			if err != nil {
				return nil, err
			}
			calls = append(calls, cs...)
			rest = strings.TrimLeft(rest, " \t\n")
			if close != "" {
				if !strings.HasPrefix(rest, close) {
					return nil, fmt.Errorf("no %s after the calls", close)
				}
				rest = rest[len(close):]
			}
			text = rest
		}
	}
}

// parseCommandR: Command R+ writes `Action: ```json [{"tool_name": …,
// "parameters": {…}}] ````.
func parseCommandR(text string) ([]ToolCall, error) {
	t := strings.TrimLeft(strings.TrimPrefix(text, "Action:"), " \n")
	t = strings.TrimPrefix(t, "```json")
	calls, rest, err := jsonCalls(t)
	if err != nil {
		return nil, err
	}
	if r := strings.TrimSpace(rest); r != "```" && r != "" {
		return nil, fmt.Errorf("text after the calls: %.20q", r)
	}
	return calls, nil
}

// parseMiniMaxM1: <tool_calls> then one JSON call a line, </tool_calls>.
func parseMiniMaxM1(text string) ([]ToolCall, error) {
	body, rest, ok := between(text, "<tool_calls>", "</tool_calls>")
	if !ok {
		return nil, fmt.Errorf("no </tool_calls>")
	}
	if r := strings.TrimSpace(rest); r != "" {
		return nil, fmt.Errorf("text after the calls: %.20q", r)
	}
	var calls []ToolCall
	for body = strings.TrimSpace(body); body != ""; body = strings.TrimSpace(body) {
		tc, r, err := decodeCall(body)
		if err != nil {
			return nil, err
		}
		calls = append(calls, tc)
		body = r
	}
	return calls, nil
}

// parseApertus: <|tools_prefix|>[{"NAME": {…}}, …]<|tools_suffix|>.
func parseApertus(text string) ([]ToolCall, error) {
	body, rest, ok := between(text, "<|tools_prefix|>", "<|tools_suffix|>")
	if !ok {
		return nil, fmt.Errorf("no <|tools_suffix|>")
	}
	if r := strings.TrimSpace(rest); r != "" {
		return nil, fmt.Errorf("text after the calls: %.20q", r)
	}
	var list []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		return nil, err
	}
	var calls []ToolCall
	for _, m := range list {
		if len(m) != 1 {
			return nil, fmt.Errorf("a call must be one {NAME: arguments} pair, got %d keys", len(m))
		}
		for name, raw := range m {
			a, err := args(raw)
			if err != nil {
				return nil, err
			}
			calls = append(calls, ToolCall{name, a})
		}
	}
	return calls, nil
}

// sectioned reads calls between a section's begin and end markers, each
// call from begin to end, and gives its body to one.
func sectioned(text, secBegin, secEnd, begin, end string, one func(body string) (ToolCall, error)) ([]ToolCall, error) {
	if !strings.HasPrefix(text, secBegin) {
		return nil, fmt.Errorf("no %s", secBegin)
	}
	text = text[len(secBegin):]
	var calls []ToolCall
	for {
		text = strings.TrimLeft(text, " \t\n")
		if strings.HasPrefix(text, secEnd) {
			if r := strings.TrimSpace(text[len(secEnd):]); r != "" {
				return nil, fmt.Errorf("text after the calls: %.20q", r)
			}
			return calls, nil
		}
		if text == "" && calls != nil { // the end marker left out: the calls are whole
			return calls, nil
		}
		body, rest, ok := between(text, begin, end)
		if !ok {
			return nil, fmt.Errorf("expected %s…%s at %.20q", begin, end, text)
		}
		tc, err := one(body)
		if err != nil {
			return nil, err
		}
		calls = append(calls, tc)
		text = rest
	}
}

// parseDeepSeek: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
// ```json {…} ```<｜tool▁call▁end｜>…<｜tool▁calls▁end｜> (R1, V3), or
// <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜> (V3.1).
func parseDeepSeek(text string) ([]ToolCall, error) {
	return sectioned(text, "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", func(body string) (ToolCall, error) {
		head, a, ok := strings.Cut(body, "<｜tool▁sep｜>")
		if !ok {
			return ToolCall{}, fmt.Errorf("no <｜tool▁sep｜> in a call")
		}
		name := strings.TrimSpace(head)
		if name == "function" { // R1/V3: the type, then the name on its line
			name, a, _ = strings.Cut(a, "\n")
			a = strings.TrimSpace(a)
			a = strings.TrimSuffix(strings.TrimPrefix(a, "```json"), "```")
		}
		if name = strings.TrimSpace(name); name == "" {
			return ToolCall{}, fmt.Errorf("a call without a name")
		}
		s, err := args(json.RawMessage(strings.TrimSpace(a)))
		return ToolCall{name, s}, err
	})
}

// parseKimi: <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX
// <|tool_call_argument_begin|>{…}<|tool_call_end|>…<|tool_calls_section_end|>.
func parseKimi(text string) ([]ToolCall, error) {
	return sectioned(text, "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>", "<|tool_call_end|>", func(body string) (ToolCall, error) {
		id, a, ok := strings.Cut(body, "<|tool_call_argument_begin|>")
		if !ok {
			return ToolCall{}, fmt.Errorf("no <|tool_call_argument_begin|> in a call")
		}
		name := strings.TrimPrefix(strings.TrimSpace(id), "functions.")
		if i := strings.LastIndexByte(name, ':'); i >= 0 {
			name = name[:i]
		}
		if name == "" {
			return ToolCall{}, fmt.Errorf("a call without a name")
		}
		s, err := args(json.RawMessage(strings.TrimSpace(a)))
		return ToolCall{name, s}, err
	})
}

// parseSolar: <|tool_calls|><|tool_call:begin|>ID<|tool_call:name|>NAME
// <|tool_call:args|>{…}<|tool_call:end|>…<|calls|> (Upstage Solar Open).
func parseSolar(text string) ([]ToolCall, error) {
	return sectioned(text, "<|tool_calls|>", "<|calls|>", "<|tool_call:begin|>", "<|tool_call:end|>", func(body string) (ToolCall, error) {
		_, nameArgs, ok1 := strings.Cut(body, "<|tool_call:name|>")
		name, a, ok2 := strings.Cut(nameArgs, "<|tool_call:args|>")
		if !ok1 || !ok2 || strings.TrimSpace(name) == "" {
			return ToolCall{}, fmt.Errorf("a call needs <|tool_call:name|>NAME<|tool_call:args|>")
		}
		s, err := args(json.RawMessage(strings.TrimSpace(a)))
		return ToolCall{strings.TrimSpace(name), s}, err
	})
}

// parseHy3: Tencent Hunyuan 3 writes GLM's key/value pairs with its own tags.
func parseHy3(text string) ([]ToolCall, error) {
	return sectioned(text, "<tool_calls:opensource>", "</tool_calls:opensource>", "<tool_call:opensource>", "</tool_call:opensource>", func(body string) (ToolCall, error) {
		name, kv, _ := strings.Cut(body, "<tool_sep:opensource>")
		if name = strings.TrimSpace(name); name == "" {
			return ToolCall{}, fmt.Errorf("a call without a name")
		}
		var o object
		for kv = strings.TrimSpace(kv); kv != ""; kv = strings.TrimSpace(kv) {
			k, r, ok1 := between(kv, "<arg_key:opensource>", "</arg_key:opensource>")
			v, r, ok2 := between(strings.TrimSpace(r), "<arg_value:opensource>", "</arg_value:opensource>")
			if !ok1 || !ok2 {
				return ToolCall{}, fmt.Errorf("malformed <arg_key:opensource>/<arg_value:opensource> in %s", name)
			}
			if err := o.add(k, jsonOrString(v)); err != nil {
				return ToolCall{}, err
			}
			kv = r
		}
		return ToolCall{name, o.String()}, nil
	})
}

// invokeXML reads <NS+call name="NAME"><NS+param name="K" [string="true"]>V</NS+param>…</NS+call>
// calls between open and close: MiniMax M2 (<minimax:tool_call>, invoke,
// parameter), DeepSeek V3.2/V4 DSML (the ｜DSML｜ prefix on every tag;
// string="true" marks a string, anything else is JSON), MiniCPM 5
// (function/param, no wrapper). A value that is not JSON is a string.
func invokeXML(open, close, ns, call, param string) func(string) ([]ToolCall, error) {
	co, cc := "<"+ns+call+" ", "</"+ns+call+">"
	po, pc := "<"+ns+param+" ", "</"+ns+param+">"
	return func(text string) ([]ToolCall, error) {
		body, rest := text, ""
		if open != "" {
			var ok bool
			if body, rest, ok = between(text, open, close); !ok {
				return nil, fmt.Errorf("no %s", close)
			}
		}
		if r := strings.TrimSpace(rest); r != "" {
			return nil, fmt.Errorf("text after the calls: %.20q", r)
		}
		var calls []ToolCall
		for body = strings.TrimSpace(body); body != ""; body = strings.TrimSpace(body) {
			inner, r, ok := between(body, co, cc)
			if !ok {
				return nil, fmt.Errorf("expected %s…%s at %.20q", co, cc, body)
			}
			body = r
			tag, params, ok := strings.Cut(inner, ">")
			name, ok2 := attr(tag, "name")
			if !ok || !ok2 || name == "" {
				return nil, fmt.Errorf("a call without a name")
			}
			var o object
			for params = strings.TrimSpace(params); params != ""; params = strings.TrimSpace(params) {
				pv, r, ok := between(params, po, pc)
				if !ok {
					return nil, fmt.Errorf("expected %s…%s in %s", po, pc, name)
				}
				params = r
				ptag, v, ok := strings.Cut(pv, ">")
				k, ok2 := attr(ptag, "name")
				if !ok || !ok2 {
					return nil, fmt.Errorf("a parameter without a name in %s", name)
				}
				val := jsonOrString(v)
				if s, _ := attr(ptag, "string"); s == "true" {
					val = jsonString(v)
				}
				if err := o.add(k, val); err != nil {
					return nil, err
				}
			}
			calls = append(calls, ToolCall{name, o.String()})
		}
		return calls, nil
	}
}

// parseDSML: DeepSeek V3.2 wraps its calls in <｜DSML｜function_calls>, V4
// in <｜DSML｜tool_calls>.
func parseDSML(text string) ([]ToolCall, error) {
	for _, w := range []string{"function_calls", "tool_calls"} {
		if strings.HasPrefix(text, "<｜DSML｜"+w+">") {
			return invokeXML("<｜DSML｜"+w+">", "</｜DSML｜"+w+">", "｜DSML｜", "invoke", "parameter")(text)
		}
	}
	return nil, fmt.Errorf("expected <｜DSML｜function_calls> or <｜DSML｜tool_calls>")
}

// parseGemma4: <|tool_call>call:NAME{key:VALUE,…}<tool_call|>, repeated;
// strings are quoted by <|"|>, keys bare.
func parseGemma4(text string) ([]ToolCall, error) {
	var calls []ToolCall
	for text = strings.TrimLeft(text, " \t\n"); text != ""; text = strings.TrimLeft(text, " \t\n") {
		body, rest, ok := between(text, "<|tool_call>call:", "<tool_call|>")
		if !ok {
			return nil, fmt.Errorf("expected <|tool_call>call:NAME{…}<tool_call|> at %.20q", text)
		}
		text = rest
		br := strings.IndexByte(body, '{')
		if br <= 0 {
			return nil, fmt.Errorf("a call needs NAME{arguments}")
		}
		p := &literal{s: body[br:], quote: `<|"|>`, bareKeys: true}
		v, err := p.value()
		if err != nil {
			return nil, fmt.Errorf("arguments of %s: %v", body[:br], err)
		}
		if p.s != "" {
			return nil, fmt.Errorf("text after the arguments of %s: %.20q", body[:br], p.s)
		}
		a, err := args(json.RawMessage(v))
		if err != nil {
			return nil, err
		}
		calls = append(calls, ToolCall{body[:br], a})
	}
	return calls, nil
}

// parsePythonic: <|tool_call_start|>[name(key=VALUE, …), …]<|tool_call_end|>
// with Python literals as values (LFM2).
func parsePythonic(text string) ([]ToolCall, error) {
	body, rest, ok := between(text, "<|tool_call_start|>", "<|tool_call_end|>")
	if !ok {
		return nil, fmt.Errorf("no <|tool_call_end|>")
	}
	if r := strings.TrimSpace(rest); r != "" {
		return nil, fmt.Errorf("text after the calls: %.20q", r)
	}
	p := &literal{s: strings.TrimSpace(body), python: true}
	if !p.eat("[") {
		return nil, fmt.Errorf("expected [ before the calls")
	}
	var calls []ToolCall
	for !p.eat("]") {
		if len(calls) > 0 && !p.eat(",") {
			return nil, fmt.Errorf("expected , or ] after a call at %.20q", p.s)
		}
		p.space()
		name := p.ident()
		if name == "" || !p.eat("(") {
			return nil, fmt.Errorf("expected name( at %.20q", p.s)
		}
		var o object
		for !p.eat(")") {
			if len(o.seen) > 0 && !p.eat(",") {
				return nil, fmt.Errorf("expected , or ) in %s at %.20q", name, p.s)
			}
			p.space()
			k := p.ident()
			if k == "" || !p.eat("=") {
				return nil, fmt.Errorf("expected key= in %s at %.20q", name, p.s)
			}
			v, err := p.value()
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %v", name, k, err)
			}
			if err := o.add(k, v); err != nil {
				return nil, err
			}
		}
		calls = append(calls, ToolCall{name, o.String()})
	}
	if p.space(); p.s != "" {
		return nil, fmt.Errorf("text after the calls: %.20q", p.s)
	}
	return calls, nil
}

// literal reads a value written as a template or a model writes one and
// returns it as JSON: Python literals (quotes ' or ", True/False/None,
// dicts and lists) or Gemma 4's (strings between quote, bare keys).
type literal struct {
	s        string
	quote    string // Gemma: the string delimiter
	bareKeys bool
	python   bool
	depth    int
}

func (p *literal) space() { p.s = strings.TrimLeft(p.s, " \n\t") }

func (p *literal) eat(tok string) bool {
	p.space()
	if strings.HasPrefix(p.s, tok) {
		p.s = p.s[len(tok):]
		return true
	}
	return false
}

func (p *literal) ident() string {
	i := 0
	for i < len(p.s) && (p.s[i] == '_' || p.s[i] == '.' || p.s[i] == '-' || ('a' <= p.s[i]|0x20 && p.s[i]|0x20 <= 'z') || ('0' <= p.s[i] && p.s[i] <= '9')) {
		i++
	}
	id := p.s[:i]
	p.s = p.s[i:]
	return id
}

func (p *literal) value() (string, error) {
	p.space()
	if p.depth++; p.depth > 64 {
		return "", fmt.Errorf("nested too deep")
	}
	defer func() { p.depth-- }()
	switch {
	case p.quote != "" && strings.HasPrefix(p.s, p.quote):
		end := strings.Index(p.s[len(p.quote):], p.quote)
		if end < 0 {
			return "", fmt.Errorf("unterminated string")
		}
		v := p.s[len(p.quote) : len(p.quote)+end]
		p.s = p.s[len(p.quote)+end+len(p.quote):]
		return jsonString(v), nil
	case p.python && p.s != "" && (p.s[0] == '\'' || p.s[0] == '"'):
		return p.pyString()
	case strings.HasPrefix(p.s, "{"):
		p.s = p.s[1:]
		var o object
		for !p.eat("}") {
			if len(o.seen) > 0 && !p.eat(",") {
				return "", fmt.Errorf("expected , or } at %.20q", p.s)
			}
			p.space()
			var k string
			if p.bareKeys && !strings.HasPrefix(p.s, p.quote) {
				k = p.ident()
			} else {
				kv, err := p.value()
				if err != nil {
					return "", err
				}
				if json.Unmarshal([]byte(kv), &k) != nil {
					return "", fmt.Errorf("a key must be a string, got %s", kv)
				}
			}
			if k == "" || !p.eat(":") {
				return "", fmt.Errorf("expected key: at %.20q", p.s)
			}
			v, err := p.value()
			if err != nil {
				return "", err
			}
			if err := o.add(k, v); err != nil {
				return "", err
			}
		}
		return o.String(), nil
	case strings.HasPrefix(p.s, "["):
		p.s = p.s[1:]
		var b strings.Builder
		b.WriteByte('[')
		for n := 0; !p.eat("]"); n++ {
			if n > 0 {
				if !p.eat(",") {
					return "", fmt.Errorf("expected , or ] at %.20q", p.s)
				}
				b.WriteByte(',')
			}
			v, err := p.value()
			if err != nil {
				return "", err
			}
			b.WriteString(v)
		}
		return b.String() + "]", nil
	}
	word := p.ident()
	switch word {
	case "true", "True":
		return "true", nil
	case "false", "False":
		return "false", nil
	case "null", "None", "none":
		return "null", nil
	}
	if word != "" && json.Valid([]byte(word)) { // a number
		return word, nil
	}
	if word == "" {
		return "", fmt.Errorf("expected a value at %.20q", p.s)
	}
	return "", fmt.Errorf("%q is not a value", word)
}

// pyString reads a Python string literal (the escapes repr writes).
func (p *literal) pyString() (string, error) {
	q := p.s[0]
	var b strings.Builder
	for i := 1; i < len(p.s); {
		c := p.s[i]
		switch {
		case c == q:
			p.s = p.s[i+1:]
			return jsonString(b.String()), nil
		case c == '\\' && i+1 < len(p.s):
			e := p.s[i+1]
			i += 2
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'x', 'u', 'U':
				n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
				if i+n > len(p.s) {
					return "", fmt.Errorf("short \\%c escape", e)
				}
				r, err := strconv.ParseUint(p.s[i:i+n], 16, 32)
				if err != nil || !utf8.ValidRune(rune(r)) {
					return "", fmt.Errorf("bad \\%c escape", e)
				}
				b.WriteRune(rune(r))
				i += n
			case '\\', '\'', '"':
				b.WriteByte(e)
			default: // Python keeps an unknown escape as written
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
			i++
		}
	}
	return "", fmt.Errorf("unterminated string")
}

// parseHarmony reads gpt-oss's harmony messages: after the prompt's
// `<|start|>assistant`, each message is `[ to=functions.NAME]<|channel|>CHANNEL
// [ to=functions.NAME][ <|constrain|>json]<|message|>BODY` ended by <|end|>,
// <|call|> or <|return|> (or the end of the text), the next one opened by
// <|start|>assistant. The analysis channel is reasoning, final is content,
// a message to functions.NAME is a call; commentary to no one is content.
func parseHarmony(text string) (Parsed, error) {
	var m Parsed
	var content []string
	for t := strings.TrimSpace(text); t != ""; t = strings.TrimSpace(t) {
		t = strings.TrimPrefix(t, "<|start|>assistant")
		head, rest, ok := strings.Cut(t, "<|message|>")
		if !ok {
			return m, fmt.Errorf("no <|message|> in %.30q", t)
		}
		body := rest
		t = ""
		for _, end := range []string{"<|end|>", "<|call|>", "<|return|>", "<|start|>"} {
			if i := strings.Index(body, end); i >= 0 {
				if end != "<|start|>" {
					t = body[i+len(end):]
				} else {
					t = body[i:]
				}
				body = body[:i]
				break
			}
		}
		channel, recipient := "", ""
		for _, f := range strings.Fields(strings.NewReplacer("<|channel|>", " <|channel|>", "<|constrain|>", " <|constrain|>").Replace(head)) {
			switch {
			case strings.HasPrefix(f, "<|channel|>"):
				channel = strings.TrimPrefix(f, "<|channel|>")
			case strings.HasPrefix(f, "to="):
				recipient = strings.TrimPrefix(f, "to=")
			}
		}
		switch {
		case recipient != "":
			name := strings.TrimPrefix(recipient, "functions.")
			if name == "" {
				return m, fmt.Errorf("a call without a name")
			}
			a, err := args(json.RawMessage(strings.TrimSpace(body)))
			if err != nil {
				return m, fmt.Errorf("call to %s: %v", recipient, err)
			}
			m.ToolCalls = append(m.ToolCalls, ToolCall{name, a})
		case channel == "analysis":
			m.Reasoning = strings.TrimSpace(m.Reasoning + "\n" + body)
		case channel == "final" || channel == "commentary" || channel == "":
			content = append(content, strings.TrimSpace(body))
		default:
			return m, fmt.Errorf("unknown channel %q", channel)
		}
	}
	m.Content = strings.Join(content, "\n")
	return m, nil
}

// parseFunctionaryV32: the prompt ends in `>>>`; each message is NAME, a
// newline and its body, the next one after `>>>`. NAME `all` is content,
// any other a call with a JSON object body.
func parseFunctionaryV32(text string) (Parsed, error) {
	var m Parsed
	var content []string
	for i, seg := range strings.Split(text, ">>>") {
		seg = strings.TrimLeft(seg, "\n")
		if seg == "" && i == 0 {
			continue
		}
		name, body, ok := strings.Cut(seg, "\n")
		if !ok || strings.TrimSpace(name) == "" {
			return m, fmt.Errorf("message %d: expected NAME and a newline", i)
		}
		if name = strings.TrimSpace(name); name == "all" {
			content = append(content, strings.TrimSpace(body))
			continue
		}
		a, err := args(json.RawMessage(strings.TrimSpace(body)))
		if err != nil {
			return m, fmt.Errorf("call to %s: %v", name, err)
		}
		m.ToolCalls = append(m.ToolCalls, ToolCall{name, a})
	}
	m.Content = strings.Join(content, "\n")
	return m, nil
}
