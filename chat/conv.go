package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/internal/atomicfile"
	"github.com/krafla/krafla/mlt"
)

// Message is one turn of a conversation.
type Message struct {
	Role    string `json:"role"` // "system", "user" or "assistant"
	Content string `json:"content"`
}

// Messages gives ms as the JSON-shaped values Render takes.
func Messages(ms []Message) ([]any, error) {
	out := make([]any, len(ms))
	for i, m := range ms {
		v, err := jsonValue(m)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// Options configure a Conversation.
type Options struct {
	Template  *Template
	Tokenizer *mlt.Tokenizer
	Session   *infer.Session // the conversation owns its cache from here on
	Sampling  infer.SamplerOptions
	MaxTokens int           // per answer; < 0: until a stop token or a full context
	Render    RenderOptions // Extra and Now; AddGenerationPrompt is set by Reply
	// Constraint, when set, makes each answer's constraint (a grammar from
	// krafla chat --json-schema or --grammar): every answer starts afresh.
	Constraint func() infer.Constraint
}

// Conversation is a system message and alternating user and assistant
// turns, with the tokens its session's cache holds. Each Reply renders the
// whole conversation, keeps the cached prefix that the new tokens share and
// evaluates only the rest.
type Conversation struct {
	opt    Options
	System string    // "" = no system message
	Turns  []Message // user, assistant, user, …
	cached []int     // the tokens in the session's cache, len = Session.Pos()
	n      int       // answers given, which varies the sampler's seed
}

// NewConversation starts an empty conversation on opt.Session (reset).
func NewConversation(opt Options) *Conversation {
	opt.Session.Reset()
	return &Conversation{opt: opt}
}

// Sampling returns the sampler options; SetSampling changes them for the
// answers that follow.
func (c *Conversation) Sampling() infer.SamplerOptions     { return c.opt.Sampling }
func (c *Conversation) SetSampling(s infer.SamplerOptions) { c.opt.Sampling = s }

// Cached returns the tokens the session's cache holds.
func (c *Conversation) Cached() []int { return c.cached }

// Messages returns the system message (if any) and the turns.
func (c *Conversation) Messages() []Message {
	var ms []Message
	if c.System != "" {
		ms = append(ms, Message{"system", c.System})
	}
	return append(ms, c.Turns...)
}

// SetMessages replaces the conversation (a leading system message becomes
// System). The cache is kept: the next Reply reuses what still matches.
func (c *Conversation) SetMessages(ms []Message) error {
	c.System = ""
	if len(ms) > 0 && ms[0].Role == "system" {
		c.System, ms = ms[0].Content, ms[1:]
	}
	for i, m := range ms {
		if m.Role != "user" && m.Role != "assistant" {
			return fmt.Errorf("chat: message %d: role %q (want system first, then user and assistant)", i, m.Role)
		}
	}
	c.Turns = append([]Message(nil), ms...)
	return nil
}

// Reply is what one answer did.
type Reply struct {
	Text         string
	Tokens       []int
	Reason       infer.StopReason
	PromptTokens int // the rendered conversation's tokens
	Reused       int // of those, taken from the cache
	Dropped      int // oldest turns dropped so that the conversation fits
	PromptTime   time.Duration
	GenerateTime time.Duration
	Steps        int // forward passes in GenerateTime
}

// ErrTooLong is matched when even the system message and the last user
// message leave no room for an answer.
var ErrTooLong = errors.New("chat: the message does not fit in the context")

// Reply adds the user's message, renders the conversation with the
// generation prompt, and streams the answer through emit (text as decoded,
// never half a UTF-8 character). The answer, also a cancelled one, becomes
// an assistant turn; a message cancelled before its first token, or that
// could not be evaluated, leaves the conversation as it was. When the conversation would not leave room for an
// answer, the oldest turns are dropped (the system message stays) and
// Reply.Dropped says how many.
func (c *Conversation) Reply(ctx context.Context, user string, emit func(string) error) (*Reply, error) {
	before := c.Turns
	c.Turns = append(c.Turns[:len(c.Turns):len(c.Turns)], Message{"user", user})
	r := &Reply{}
	ids, err := c.fit(r)
	if err != nil {
		c.Turns = before // the conversation stays as it was
		return nil, err
	}
	s := c.opt.Session
	// Keep the longest cached prefix the new tokens share; at least the last
	// token is evaluated, since its logits give the first answer token.
	p := commonPrefix(c.cached, ids)
	p = min(p, len(ids)-1)
	if err := s.Rewind(p); err != nil {
		p = 0
		s.Reset()
	}
	c.cached = c.cached[:p]
	r.PromptTokens, r.Reused = len(ids), p

	so := c.opt.Sampling
	so.Seed += uint64(c.n)
	c.n++
	sampler := infer.NewSampler(so)
	for _, t := range ids[:p] {
		sampler.Accept(t)
	}
	tok := c.opt.Tokenizer
	sd := tok.NewStreamDecoder()
	gen := infer.GenerateOptions{MaxTokens: c.opt.MaxTokens, Stop: c.opt.Template.StopIDs(), Sampler: sampler}
	if c.opt.Constraint != nil {
		gen.Constraint = c.opt.Constraint()
	}
	res, err := infer.Generate(ctx, s, ids[p:], gen, func(id int) error {
		if emit == nil {
			return nil
		}
		return emit(sd.Add(id))
	})
	if res != nil {
		// The cache holds the prompt and the answer up to Pos (the last token
		// drawn is not evaluated when generation stops at it).
		all := append(ids[:len(ids):len(ids)], res.Tokens...)
		c.cached = all[:s.Pos()]
		r.Tokens, r.Reason = res.Tokens, res.Reason
		r.PromptTime, r.GenerateTime, r.Steps = res.PromptTime, res.GenerateTime, res.GeneratedSteps
		r.Text = tok.Decode(res.Tokens)
		if r.Text == "" && res.Reason == infer.StopCancel {
			// Interrupted before the first token: as if never asked.
			c.Turns = c.Turns[:len(c.Turns)-1]
		} else {
			c.Turns = append(c.Turns, Message{"assistant", r.Text})
		}
	}
	if res == nil {
		c.Turns = before
	}
	if err != nil {
		return r, err
	}
	if emit != nil {
		if err := emit(sd.Flush()); err != nil {
			return r, err
		}
	}
	return r, nil
}

// fit renders the conversation and drops its oldest turns (a user turn and
// the assistant's answer) until the prompt leaves room for an answer.
func (c *Conversation) fit(r *Reply) ([]int, error) {
	ctxLen := c.opt.Session.Ctx()
	room := ctxLen / 4 // an answer of unknown length gets a quarter of the context
	if n := c.opt.MaxTokens; n >= 0 {
		room = min(n, ctxLen/2)
	}
	room = max(room, 1)
	for {
		ids, err := c.render(true)
		if err != nil {
			return nil, err
		}
		if len(ids)+room <= ctxLen {
			return ids, nil
		}
		if len(c.Turns) <= 1 {
			return nil, fmt.Errorf("%w: %d tokens with the system message, and an answer needs room too (the context holds %d; raise --ctx)", ErrTooLong, len(ids), ctxLen)
		}
		n := 1
		for n < len(c.Turns)-1 && c.Turns[n].Role != "user" {
			n++
		}
		c.Turns = c.Turns[n:]
		r.Dropped += n
	}
}

// NeedsUser returns the template's refusal when the conversation so far,
// without a user message, cannot be rendered (templates that require the
// first message after the system one to be the user's raise an error); nil
// when it has a user message or the template renders it.
func (c *Conversation) NeedsUser() error {
	for _, m := range c.Turns {
		if m.Role == "user" {
			return nil
		}
	}
	_, err := c.render(true)
	return err
}

// render gives the token ids of the conversation.
func (c *Conversation) render(genPrompt bool) ([]int, error) {
	ms, err := Messages(c.Messages())
	if err != nil {
		return nil, err
	}
	ro := c.opt.Render
	ro.AddGenerationPrompt = genPrompt
	text, err := c.opt.Template.Render(ms, ro)
	if err != nil {
		return nil, err
	}
	ids := Encode(c.opt.Tokenizer, text)
	if len(ids) == 0 {
		return nil, fmt.Errorf("chat: template %s renders the conversation to no tokens", c.opt.Template.Name)
	}
	return ids, nil
}

func commonPrefix(a, b []int) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// file is the JSON of /save and /load: {"messages": [...]}, the shape of
// krafla template --input, so a saved conversation can be rendered with it.
type file struct {
	Messages []Message `json:"messages"`
}

// Save writes the conversation to path (a temporary file renamed into place).
func (c *Conversation) Save(path string) error {
	b, err := json.MarshalIndent(file{Messages: c.Messages()}, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(b, '\n'))
}

// maxConversationFile bounds what Load reads.
const maxConversationFile = 64 << 20

// Load replaces the conversation with the one saved in path.
func (c *Conversation) Load(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("chat: %w", err)
	}
	if st.Size() > maxConversationFile {
		return fmt.Errorf("chat: %s: %d bytes, more than a conversation file may hold (%d)", path, st.Size(), maxConversationFile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("chat: %w", err)
	}
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("chat: %s: not a conversation ({\"messages\": [{\"role\", \"content\"}, ...]}): %w", path, err)
	}
	if err := c.SetMessages(f.Messages); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
