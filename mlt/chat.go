package mlt

// Chat holds what chat needs beside the vocabulary (flag 1024; docs/FORMATS.md):
// the chat templates, the special-token strings they use and the stop ids.
// Placeholder: the chat issue defines it.
type Chat struct{}

func parseChatSection(t *Tokenizer, version uint32, p []byte, off int64) error {
	return formatErr(off-4, "chat section version %d is not supported", version)
}

func appendChatSection(t *Tokenizer, b []byte) []byte { return b }
