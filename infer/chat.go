package infer

import (
	"errors"
	"fmt"

	"github.com/krafla/krafla/mlt"
)

// ChatTemplate wraps a user message for a chat model. The family is recognised
// from the tokenizer's added tokens; BOS is left to the encoder (mlt flag 1).
type ChatTemplate struct {
	Name           string
	marker         string // an added token that identifies the family
	prefix, suffix string
}

var chatTemplates = []ChatTemplate{
	{"llama3", "<|start_header_id|>",
		"<|start_header_id|>user<|end_header_id|>\n\n", "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
	{"qwen", "<|im_start|>",
		"<|im_start|>user\n", "<|im_end|>\n<|im_start|>assistant\n"},
	{"gemma", "<start_of_turn>",
		"<start_of_turn>user\n", "<end_of_turn>\n<start_of_turn>model\n"},
}

// ChatTemplateFor returns the template of the tokenizer's family.
func ChatTemplateFor(tok *mlt.Tokenizer) (ChatTemplate, error) {
	for _, c := range chatTemplates {
		if _, ok := tok.Lookup(c.marker); ok {
			return c, nil
		}
	}
	return ChatTemplate{}, errors.New("infer: --chat: the tokenizer has none of the Llama 3, Qwen or Gemma chat tokens (<|start_header_id|>, <|im_start|>, <start_of_turn>)")
}

// Apply returns the prompt text of one user turn, ending where the model's
// answer begins.
func (c ChatTemplate) Apply(user string) string { return c.prefix + user + c.suffix }

// CheckTokenizer reports a tokenizer whose ids do not all fit the model.
func CheckTokenizer(m *Model, tok *mlt.Tokenizer) error {
	if n := len(tok.Tokens); n > m.cfg.Vocab {
		return fmt.Errorf("infer: the tokenizer has %d tokens, more than the model's vocab of %d: it belongs to another model", n, m.cfg.Vocab)
	}
	return nil
}

// AddBOS reports whether the tokenizer wants BOS prepended.
func AddBOS(tok *mlt.Tokenizer) bool { return tok.Flags&mlt.FlagAddBOS != 0 && tok.BOS >= 0 }
