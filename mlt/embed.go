package mlt

import (
	"encoding/binary"
	"strings"
	"unicode/utf8"
)

// Embed says how the model makes sentence embeddings (flag 4096;
// docs/FORMATS.md, "Embedding section"), as sentence-transformers' files
// beside a checkpoint describe it: which hidden states are pooled, whether
// the result is L2-normalized, and the prompts put before a text.
type Embed struct {
	Pooling   uint8 // PoolMean, PoolCLS, PoolLast or PoolMax
	Normalize bool  // L2-normalize the pooled vector (a Normalize module)
	// ExcludePrompt leaves the prompt's tokens out of pooling (the Pooling
	// module's include_prompt false, as INSTRUCTOR and GritLM pool).
	ExcludePrompt bool
	// Prompts are config_sentence_transformers.json's prompts, in name
	// order: "query" → "Instruct: …\nQuery:" for Qwen3-Embedding.
	Prompts []NamedPrompt
	// DefaultPrompt names the prompt used when none is asked for ("" none).
	DefaultPrompt string
}

// NamedPrompt is one prompt: a name and the text put before the input.
type NamedPrompt struct {
	Name, Text string
}

// Pooling modes (sentence-transformers' pooling_mode_* keys).
const (
	PoolMean = 1 // mean of the final hidden states of every token
	PoolCLS  = 2 // the first token's
	PoolLast = 3 // the last token's (pooling_mode_lasttoken)
	PoolMax  = 4 // each dimension's maximum over the tokens (pooling_mode_max_tokens)
)

// PoolName is the sentence-transformers name of a pooling mode.
func PoolName(p uint8) string {
	switch p {
	case PoolMean:
		return "mean"
	case PoolCLS:
		return "cls"
	case PoolLast:
		return "last"
	case PoolMax:
		return "max"
	}
	return "unknown"
}

// Prompt returns the text of the prompt called name and whether it exists.
func (e *Embed) Prompt(name string) (string, bool) {
	if e == nil {
		return "", false
	}
	for _, p := range e.Prompts {
		if p.Name == name {
			return p.Text, true
		}
	}
	return "", false
}

// Bits of the embedding section's flags byte (the normalize byte of files
// written before ExcludePrompt: 0 or 1).
const (
	embedNormalize     = 1
	embedExcludePrompt = 2
	embedFlagsKnown    = embedNormalize | embedExcludePrompt
)

// Limits of the embedding section; real files have two or three prompts of
// a few hundred bytes.
const (
	embedVersion    = 1
	MaxEmbedPrompts = 256
	MaxPromptName   = 256
	MaxPromptLen    = 1 << 16
)

// SetEmbed attaches e (nil removes the section) and sets FlagEmbed to match.
func (t *Tokenizer) SetEmbed(e *Embed) {
	t.Embed = e
	if e == nil {
		t.Flags &^= FlagEmbed
	} else {
		t.Flags |= FlagEmbed
	}
}

func validateEmbed(e *Embed, off int64) error {
	if e.Pooling < PoolMean || e.Pooling > PoolMax {
		return formatErr(off, "embedding section: pooling %d unknown (1 mean, 2 cls, 3 last, 4 max)", e.Pooling)
	}
	if e.ExcludePrompt && e.Pooling == PoolCLS {
		// sentence-transformers' own code paths disagree on which token
		// that is (the first, or the first after the prompt).
		return formatErr(off, "embedding section: cls pooling cannot exclude the prompt")
	}
	if len(e.Prompts) > MaxEmbedPrompts {
		return formatErr(off, "embedding section: %d prompts, more than the limit %d", len(e.Prompts), MaxEmbedPrompts)
	}
	for i, p := range e.Prompts {
		switch {
		case p.Name == "" || len(p.Name) > MaxPromptName:
			return formatErr(off, "embedding section: prompt %d: name length %d out of range 1..%d", i, len(p.Name), MaxPromptName)
		case len(p.Text) > MaxPromptLen:
			return formatErr(off, "embedding section: prompt %q: %d bytes, above the limit %d", p.Name, len(p.Text), MaxPromptLen)
		case !utf8.ValidString(p.Name) || !utf8.ValidString(p.Text):
			return formatErr(off, "embedding section: prompt %d is not valid UTF-8", i)
		case i > 0 && e.Prompts[i-1].Name >= p.Name:
			return formatErr(off, "embedding section: prompt names must be sorted and unique (%q after %q)", p.Name, e.Prompts[i-1].Name)
		}
	}
	if e.DefaultPrompt != "" {
		if _, ok := e.Prompt(e.DefaultPrompt); !ok {
			return formatErr(off, "embedding section: default prompt %q is not one of the prompts", e.DefaultPrompt)
		}
	}
	return nil
}

func parseEmbedSection(t *Tokenizer, version uint32, p []byte, off int64) error {
	if version != embedVersion {
		return formatErr(off-4, "embedding section version %d is not supported (this reader knows %d)", version, embedVersion)
	}
	if len(p) < 2 {
		return formatErr(off, "embedding section: %d bytes, need at least 2 (pooling, flags)", len(p))
	}
	e := &Embed{Pooling: p[0]}
	if p[1]&^embedFlagsKnown != 0 {
		return formatErr(off+1, "embedding section: flags 0x%x has unknown bits (1 normalize, 2 exclude prompt)", p[1])
	}
	e.Normalize = p[1]&embedNormalize != 0
	e.ExcludePrompt = p[1]&embedExcludePrompt != 0
	// The chat section's reader checks each length against its limit and the
	// bytes left; its messages say "chat section", so rename them.
	r := &chatReader{p: p[2:], off: off + 2}
	n := r.count("prompt count", MaxEmbedPrompts, 8)
	if n > 0 {
		e.Prompts = make([]NamedPrompt, n)
	}
	for i := range e.Prompts {
		e.Prompts[i].Name = r.str("prompt name", MaxPromptName)
		e.Prompts[i].Text = r.str("prompt text", MaxPromptLen)
	}
	e.DefaultPrompt = r.str("default prompt", MaxPromptName)
	if r.err != nil {
		if fe, ok := r.err.(*Error); ok {
			fe.Msg = strings.Replace(fe.Msg, "chat section", "embedding section", 1)
		}
		return r.err
	}
	if r.at != len(r.p) {
		return formatErr(r.off+int64(r.at), "embedding section: %d bytes after the default prompt", len(r.p)-r.at)
	}
	if err := validateEmbed(e, off); err != nil {
		return err
	}
	t.Embed = e
	return nil
}

func appendEmbedSection(t *Tokenizer, b []byte) []byte {
	le := binary.LittleEndian
	e := t.Embed
	str := func(b []byte, s string) []byte { return append(le.AppendUint32(b, uint32(len(s))), s...) }
	b = le.AppendUint32(b, embedVersion)
	flags := byte(boolInt(e.Normalize))
	if e.ExcludePrompt {
		flags |= embedExcludePrompt
	}
	b = append(b, e.Pooling, flags)
	b = le.AppendUint32(b, uint32(len(e.Prompts)))
	for _, p := range e.Prompts {
		b = str(b, p.Name)
		b = str(b, p.Text)
	}
	return str(b, e.DefaultPrompt)
}

func checkEmbedSection(t *Tokenizer) error { return validateEmbed(t.Embed, -1) }
