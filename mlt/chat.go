package mlt

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

// Placeholder payload codec: the chat work defines the layout (docs/FORMATS.md).
func parseChatSection(t *Tokenizer, version uint32, p []byte, off int64) error {
	return formatErr(off-4, "chat section version %d is not supported", version)
}

func appendChatSection(t *Tokenizer, b []byte) []byte { return b }
