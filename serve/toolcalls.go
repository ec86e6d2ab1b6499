package serve

import (
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/krafla/krafla/chat"
)

// structured splits a chat answer into reasoning_content, content and
// tool_calls (package chat parses; this streams what is final). Streaming
// re-reads the accumulated text and emits only growth; text that may still
// become a marker (</think>, the tool-call trigger) is held back, and calls
// are sent only once the answer ended and they parsed, so a call never
// disappears. What was sent is kept: the end of the answer only ever adds
// to it (final).
type structured struct {
	format    string // tool-call format; "": none
	thinkOpen bool   // the prompt opened <think>
	parallel  bool
	acc       strings.Builder
	sentR     string // reasoning sent
	sentC     string // content sent
	endC      int    // where in acc the content sent ends
}

// split returns the reasoning and content final so far (all of them when
// done).
func (st *structured) split(done bool) (reasoning, content string, thinking bool) {
	text := st.acc.String()
	t := strings.TrimLeft(text, " \t\n")
	open := st.thinkOpen
	if !open {
		if o := chat.ThinkOpener(t); o != "" {
			open, t = true, t[len(o):]
		} else if !done && mayOpen(t) {
			return "", "", true // may still become an opening marker
		}
	}
	if open {
		end, n := chat.ThinkClose(t)
		if end < 0 {
			if done {
				return strings.TrimSpace(t), "", false
			}
			for _, m := range chat.ThinkMarkers {
				t = holdBack(t, m[1])
			}
			return strings.TrimSpace(t), "", true
		}
		reasoning, t = strings.TrimSpace(t[:end]), strings.TrimLeft(t[end+n:], " \n")
	} else {
		t = text
	}
	return reasoning, t, false
}

// mayOpen reports whether t may still grow into a reasoning block's
// opening marker.
func mayOpen(t string) bool {
	for _, m := range chat.ThinkMarkers {
		if strings.HasPrefix(m[0], t) {
			return true
		}
	}
	return false
}

// holdBack drops a suffix of s that is a prefix of marker.
func holdBack(s, marker string) string {
	for k := min(len(marker)-1, len(s)); k > 0; k-- {
		if strings.HasSuffix(s, marker[:k]) {
			return s[:len(s)-k]
		}
	}
	return s
}

// visible is the content that is final while streaming: before the
// tool-call trigger, never a possible start of one.
func (st *structured) visible(content string) string {
	if st.format == "" {
		return content
	}
	if chat.WholeAnswer(st.format) {
		return ""
	}
	trig := chat.ToolTrigger(st.format)
	if trig == "" { // Llama 3 JSON: a call is the whole answer
		t := strings.TrimLeft(content, " \t\n")
		if t == "" || t[0] == '{' || strings.HasPrefix(t, "<|python_tag|>") || strings.HasPrefix("<|python_tag|>", t) {
			return ""
		}
		return content
	}
	if i := strings.Index(content, trig); i >= 0 {
		return strings.TrimRight(content[:i], " \t\n")
	}
	return strings.TrimRight(holdBack(content, trig), " \t\n")
}

// delta adds text and returns the reasoning and content that became final.
// Both only grow: split's content is a suffix of the text and visible's a
// prefix of that, so the content sent is the text's bytes up to endC.
func (st *structured) delta(text string) (reasoning, content string) {
	st.acc.WriteString(text)
	r, c, thinking := st.split(false)
	if len(r) > len(st.sentR) && strings.HasPrefix(r, st.sentR) {
		reasoning, st.sentR = r[len(st.sentR):], r
	}
	if !thinking {
		if v := st.visible(c); len(v) > len(st.sentC) && strings.HasPrefix(v, st.sentC) {
			content, st.sentC = v[len(st.sentC):], v
			st.endC = st.acc.Len() - len(c) + len(v)
		}
	}
	return reasoning, content
}

// final parses the whole answer: the message parts, and for a stream what
// is still unsent of the reasoning and content. The message always starts
// with what the stream sent: where the parse of the whole answer disagrees
// with it (the stream read as content what the parse reads otherwise, e.g.
// a tab before <think>), the sent text stands and the rest of the message
// is the parse of the text not yet sent (its content, then its calls), so
// nothing sent is contradicted and no call is made of text already shown.
func (st *structured) final() (m chat.Parsed, restR, restC string) {
	text := st.acc.String()
	m = st.parse(text, st.thinkOpen)
	okR, okC := strings.HasPrefix(m.Reasoning, st.sentR), strings.HasPrefix(m.Content, st.sentC)
	if okR && okC {
		return m, m.Reasoning[len(st.sentR):], m.Content[len(st.sentC):]
	}
	if st.sentC == "" { // only the reasoning disagrees: it stays as sent
		m.Reasoning = st.sentR
		return m, "", m.Content
	}
	tail := st.parse(text[st.endC:], false)
	m = chat.Parsed{Reasoning: st.sentR + tail.Reasoning, Content: st.sentC + tail.Content, ToolCalls: tail.ToolCalls}
	return m, tail.Reasoning, tail.Content
}

// parse splits text into the message parts; a malformed call stays
// content.
func (st *structured) parse(text string, thinkOpen bool) chat.Parsed {
	m, err := chat.ParseOutput(st.format, text, thinkOpen)
	if err != nil {
		m, _ = chat.ParseOutput("", text, thinkOpen)
	}
	if !st.parallel && len(m.ToolCalls) > 1 {
		m.ToolCalls = m.ToolCalls[:1]
	}
	return m
}

func callID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}

func toolCallsJSON(calls []chat.ToolCall, stream bool) []any {
	var out []any
	for i, c := range calls {
		tc := map[string]any{"id": callID(), "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments}}
		if stream {
			tc["index"] = i
		}
		out = append(out, tc)
	}
	return out
}
