package infer

import (
	"fmt"

	"github.com/krafla/krafla/mlt"
)

// CheckTokenizer reports a tokenizer whose ids do not all fit the model.
func CheckTokenizer(m *Model, tok *mlt.Tokenizer) error {
	if n := len(tok.Tokens); n > m.cfg.Vocab {
		return fmt.Errorf("infer: the tokenizer has %d tokens, more than the model's vocab of %d: it belongs to another model", n, m.cfg.Vocab)
	}
	return nil
}

// AddBOS reports whether the tokenizer wants BOS prepended.
func AddBOS(tok *mlt.Tokenizer) bool { return tok.Flags&mlt.FlagAddBOS != 0 && tok.BOS >= 0 }
