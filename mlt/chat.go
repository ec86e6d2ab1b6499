package mlt

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"
)

// Chat holds what chat needs beside the vocabulary (flag 1024; docs/FORMATS.md,
// "Chat section"): the model's chat templates, the special-token strings they
// use and the ids that end a generated turn.
type Chat struct {
	// Templates are the Jinja sources, the default one first (Name "default"),
	// then named ones such as "tool_use", as tokenizer_config.json lists them.
	Templates []NamedTemplate
	BOSToken  string  // the bos_token string templates see ("" when none)
	EOSToken  string  // the eos_token string templates see ("" when none)
	StopIDs   []int32 // generation_config.json's eos_token_id (one or a list), and EOS
}

// NamedTemplate is one chat template.
type NamedTemplate struct {
	Name   string
	Source string
}

// Template returns the source of the template called name ("" means the
// default: the one named "default", else the first) and whether it exists.
func (c *Chat) Template(name string) (string, bool) {
	if c == nil || len(c.Templates) == 0 {
		return "", false
	}
	if name == "" {
		name = "default"
		for _, t := range c.Templates {
			if t.Name == name {
				return t.Source, true
			}
		}
		return c.Templates[0].Source, true
	}
	for _, t := range c.Templates {
		if t.Name == name {
			return t.Source, true
		}
	}
	return "", false
}

// Limits of the chat section. Real templates are a few KiB (the largest of
// the reference corpus is under 32 KiB), real files list one to three stop ids.
const (
	chatVersion       = 1
	MaxChatTemplates  = 64
	MaxTemplateName   = 256
	MaxTemplateLen    = 1 << 20
	MaxChatStopIDs    = 1024
	maxChatTokenBytes = MaxTokenLen // bos_token and eos_token strings
)

// SetChat attaches c (nil removes the section) and sets FlagChat to match.
func (t *Tokenizer) SetChat(c *Chat) {
	t.Chat = c
	if c == nil {
		t.Flags &^= FlagChat
	} else {
		t.Flags |= FlagChat
	}
}

// validateChat checks c against the rules of docs/FORMATS.md for a tokenizer
// of nVocab tokens; off is where the payload starts (-1: not from a file).
func validateChat(c *Chat, nVocab int, off int64) error {
	if len(c.Templates) > MaxChatTemplates {
		return formatErr(off, "chat section: %d templates, more than the limit %d", len(c.Templates), MaxChatTemplates)
	}
	seen := make(map[string]bool, len(c.Templates))
	for i, nt := range c.Templates {
		if msg := checkTemplate(i, nt, seen); msg != "" {
			return formatErr(off, "chat section: %s", msg)
		}
	}
	for _, s := range []struct{ name, v string }{{"bos_token", c.BOSToken}, {"eos_token", c.EOSToken}} {
		if len(s.v) > maxChatTokenBytes {
			return formatErr(off, "chat section: %s: %d bytes, above the limit %d", s.name, len(s.v), maxChatTokenBytes)
		}
		if !utf8.ValidString(s.v) {
			return formatErr(off, "chat section: %s is not valid UTF-8", s.name)
		}
	}
	if len(c.StopIDs) > MaxChatStopIDs {
		return formatErr(off, "chat section: %d stop ids, more than the limit %d", len(c.StopIDs), MaxChatStopIDs)
	}
	ids := make(map[int32]bool, len(c.StopIDs))
	for i, id := range c.StopIDs {
		if id < 0 || int(id) >= nVocab {
			return formatErr(off, "chat section: stop id %d (index %d) outside the vocabulary of %d tokens", id, i, nVocab)
		}
		if ids[id] {
			return formatErr(off, "chat section: stop id %d listed twice", id)
		}
		ids[id] = true
	}
	return nil
}

// checkTemplate says which rule template i breaks ("" when none) and adds
// its name to seen.
func checkTemplate(i int, nt NamedTemplate, seen map[string]bool) string {
	switch {
	case nt.Name == "" || len(nt.Name) > MaxTemplateName:
		return fmt.Sprintf("template %d: name length %d out of range 1..%d", i, len(nt.Name), MaxTemplateName)
	case !utf8.ValidString(nt.Name):
		return fmt.Sprintf("template %d: name is not valid UTF-8", i)
	case seen[nt.Name]:
		return fmt.Sprintf("template %d: name %q given twice", i, nt.Name)
	case len(nt.Source) > MaxTemplateLen:
		return fmt.Sprintf("template %q: %d bytes, above the limit %d", nt.Name, len(nt.Source), MaxTemplateLen)
	case !utf8.ValidString(nt.Source):
		return fmt.Sprintf("template %q is not valid UTF-8", nt.Name)
	}
	seen[nt.Name] = true
	return ""
}

// chatReader decodes the payload, checking every length against the bytes
// left before it slices or allocates.
type chatReader struct {
	p   []byte
	at  int
	off int64 // file offset of p[0]
	err error
}

func (r *chatReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = formatErr(r.off+int64(r.at), format, args...)
	}
}

func (r *chatReader) u32(what string) uint32 {
	if r.err != nil {
		return 0
	}
	if len(r.p)-r.at < 4 {
		r.fail("chat section: %s: the payload ends (%d bytes left, need 4)", what, len(r.p)-r.at)
		return 0
	}
	v := binary.LittleEndian.Uint32(r.p[r.at:])
	r.at += 4
	return v
}

// str reads a u32 length (at most limit) and that many bytes.
func (r *chatReader) str(what string, limit int) string {
	n := r.u32(what + " length")
	if r.err != nil {
		return ""
	}
	if uint64(n) > uint64(limit) {
		r.at -= 4
		r.fail("chat section: %s: length %d above the limit %d", what, n, limit)
		return ""
	}
	if int(n) > len(r.p)-r.at {
		r.at -= 4
		r.fail("chat section: %s: %d bytes run past the section (%d left)", what, n, len(r.p)-r.at-4)
		return ""
	}
	s := string(r.p[r.at : r.at+int(n)])
	r.at += int(n)
	return s
}

// count reads a u32 count of items of at least size bytes each, checked
// against the limit and the bytes left.
func (r *chatReader) count(what string, limit, size int) int {
	n := r.u32(what)
	if r.err != nil {
		return 0
	}
	if uint64(n) > uint64(limit) {
		r.at -= 4
		r.fail("chat section: %s %d above the limit %d", what, n, limit)
		return 0
	}
	if uint64(n)*uint64(size) > uint64(len(r.p)-r.at) {
		r.at -= 4
		r.fail("chat section: %s %d needs at least %d bytes, %d left", what, n, uint64(n)*uint64(size), len(r.p)-r.at-4)
		return 0
	}
	return int(n)
}

func parseChatSection(t *Tokenizer, version uint32, p []byte, off int64) error {
	if version != chatVersion {
		return formatErr(off-4, "chat section version %d is not supported (this reader knows %d)", version, chatVersion)
	}
	r := &chatReader{p: p, off: off}
	c := &Chat{}
	n := r.count("template count", MaxChatTemplates, 8)
	if n > 0 {
		c.Templates = make([]NamedTemplate, n)
	}
	for i := range c.Templates {
		c.Templates[i].Name = r.str("template name", MaxTemplateName)
		c.Templates[i].Source = r.str("template source", MaxTemplateLen)
	}
	c.BOSToken = r.str("bos_token", maxChatTokenBytes)
	c.EOSToken = r.str("eos_token", maxChatTokenBytes)
	if n := r.count("stop id count", MaxChatStopIDs, 4); n > 0 {
		c.StopIDs = make([]int32, n)
		for i := range c.StopIDs {
			c.StopIDs[i] = int32(r.u32("stop id"))
		}
	}
	if r.err != nil {
		return r.err
	}
	if r.at != len(p) {
		return formatErr(off+int64(r.at), "chat section: %d bytes after the stop ids", len(p)-r.at)
	}
	if err := validateChat(c, len(t.Tokens), off); err != nil {
		return err
	}
	t.Chat = c
	return nil
}

func appendChatSection(t *Tokenizer, b []byte) []byte {
	le := binary.LittleEndian
	c := t.Chat
	str := func(b []byte, s string) []byte { return append(le.AppendUint32(b, uint32(len(s))), s...) }
	b = le.AppendUint32(b, chatVersion)
	b = le.AppendUint32(b, uint32(len(c.Templates)))
	for _, nt := range c.Templates {
		b = str(b, nt.Name)
		b = str(b, nt.Source)
	}
	b = str(b, c.BOSToken)
	b = str(b, c.EOSToken)
	b = le.AppendUint32(b, uint32(len(c.StopIDs)))
	for _, id := range c.StopIDs {
		b = le.AppendUint32(b, uint32(id))
	}
	return b
}

func checkChatSection(t *Tokenizer) error { return validateChat(t.Chat, len(t.Tokens), -1) }
