// Package chat holds a conversation with a model: its chat template (the
// Jinja source the model ships, rendered as transformers' apply_chat_template
// does), the prompt's tokens, the KV cache kept between turns so that each
// turn evaluates only its new tokens, and the interactive loop of krafla chat
// with its /commands.
package chat

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/krafla/krafla/mlt"
)

// ErrNoTemplate is matched by the error of a model that ships no chat template.
var ErrNoTemplate = errors.New("chat: no chat template")

// Template is a compiled chat template with the special-token strings it
// sees and the ids that end an answer. It is safe for concurrent use.
type Template struct {
	Name     string // "default", "tool_use", …, or the file given with --template
	Source   string
	BOSToken string // "" when none: bos_token is then undefined in the template
	EOSToken string
	stops    []int
	r        renderer
}

// FromTokenizer compiles the tokenizer's chat template called name ("": the
// default). A tokenizer without one gives an error matching ErrNoTemplate
// that says how to give one.
func FromTokenizer(tok *mlt.Tokenizer, name string) (*Template, error) {
	src, ok := tok.Chat.Template(name)
	if !ok {
		if name != "" && tok.Chat != nil && len(tok.Chat.Templates) > 0 {
			return nil, fmt.Errorf("chat: the tokenizer has no chat template %q (it has %s)", name, templateNames(tok.Chat))
		}
		return nil, fmt.Errorf("%w: the tokenizer carries none (convert the model again from a folder whose tokenizer_config.json has chat_template, or give one with --template FILE)", ErrNoTemplate)
	}
	if name == "" {
		name = tok.Chat.Templates[0].Name
		if _, ok := tok.Chat.Template("default"); ok {
			name = "default"
		}
	}
	return newTemplate(name, src, tok.Chat.BOSToken, tok.Chat.EOSToken, tok)
}

func templateNames(c *mlt.Chat) string {
	names := make([]string, len(c.Templates))
	for i, t := range c.Templates {
		names[i] = fmt.Sprintf("%q", t.Name)
	}
	return strings.Join(names, ", ")
}

// Load compiles the template of path, for --template: a .jinja file (the
// source itself), or a tokenizer_config.json or chat_template.json (its
// default chat_template, and its bos_token and eos_token when it has them).
// The special-token strings it lacks come from tok's chat section, the stop
// ids from tok.
func Load(path string, tok *mlt.Tokenizer) (*Template, error) {
	var bos, eos string
	if tok.Chat != nil {
		bos, eos = tok.Chat.BOSToken, tok.Chat.EOSToken
	}
	if strings.EqualFold(filepath.Ext(path), ".json") {
		c, err := mlt.ReadHFChatConfig(path)
		if err != nil {
			return nil, err
		}
		src, ok := c.Template("")
		if !ok {
			return nil, fmt.Errorf("%w: %s has no chat_template", ErrNoTemplate, path)
		}
		if c.BOSToken != "" || c.EOSToken != "" {
			bos, eos = c.BOSToken, c.EOSToken
		}
		return newTemplate(path, src, bos, eos, tok)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("chat: %w", err)
	}
	if st.Size() > mlt.MaxTemplateLen {
		return nil, fmt.Errorf("chat: %s: %d bytes, above the chat template limit of %d", path, st.Size(), mlt.MaxTemplateLen)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("chat: %w", err)
	}
	return newTemplate(path, string(b), bos, eos, tok)
}

// New compiles source with the special-token strings and stop ids of tok.
func New(name, source string, tok *mlt.Tokenizer) (*Template, error) {
	var bos, eos string
	if tok.Chat != nil {
		bos, eos = tok.Chat.BOSToken, tok.Chat.EOSToken
	}
	return newTemplate(name, source, bos, eos, tok)
}

func newTemplate(name, src, bos, eos string, tok *mlt.Tokenizer) (*Template, error) {
	r, err := compile(src)
	if err != nil {
		return nil, fmt.Errorf("chat: template %s: %w", name, err)
	}
	// The ids that end an answer: the tokenizer's EOS and end-of-turn
	// tokens, the chat section's (generation_config.json's eos_token_id), and
	// the eos_token string's id.
	stops := tok.StopTokens()
	if tok.Chat != nil {
		for _, id := range tok.Chat.StopIDs {
			stops = append(stops, int(id))
		}
	}
	if eos != "" {
		if id, ok := tok.Lookup(eos); ok {
			stops = append(stops, id)
		}
	}
	slices.Sort(stops)
	return &Template{Name: name, Source: src, BOSToken: bos, EOSToken: eos, stops: slices.Compact(stops), r: r}, nil
}

// StopIDs are the token ids that end an answer, in increasing order.
func (t *Template) StopIDs() []int { return slices.Clone(t.stops) }

// RenderOptions are the variables beside messages, as apply_chat_template
// passes them.
type RenderOptions struct {
	AddGenerationPrompt bool
	Tools               []any // nil: None (transformers passes None without tools)
	Documents           []any // nil: None
	// Extra adds template variables (enable_thinking, reasoning_effort, …);
	// they may override the ones above.
	Extra map[string]any
	Now   time.Time // what strftime_now sees; zero: time.Now()
}

// Render renders the conversation. messages are JSON-shaped values (objects
// with role, content, tool_calls, …), as Messages or jinja.DecodeJSON give
// them, so that a server passes OpenAI messages through unchanged.
func (t *Template) Render(messages []any, opt RenderOptions) (string, error) {
	vars := map[string]any{
		"messages":              messages,
		"add_generation_prompt": opt.AddGenerationPrompt,
		"tools":                 nil,
		"documents":             nil,
	}
	if opt.Tools != nil {
		vars["tools"] = opt.Tools
	}
	if opt.Documents != nil {
		vars["documents"] = opt.Documents
	}
	if t.BOSToken != "" {
		vars["bos_token"] = t.BOSToken
	}
	if t.EOSToken != "" {
		vars["eos_token"] = t.EOSToken
	}
	for k, v := range opt.Extra {
		vars[k] = v
	}
	now := opt.Now
	if now.IsZero() {
		now = time.Now()
	}
	s, err := t.r.render(vars, now)
	if err != nil {
		return "", fmt.Errorf("chat: template %s: %w", t.Name, err)
	}
	return s, nil
}

// Encode gives the prompt's token ids. The template writes the special
// tokens (bos_token included) into the text, so they are matched as added
// tokens and nothing is prepended: transformers' apply_chat_template encodes
// with add_special_tokens=False.
func Encode(tok *mlt.Tokenizer, text string) []int { return tok.Encode(text, false) }
