package infer

import (
	"fmt"

	"github.com/krafla/krafla/internal/pair"
	"github.com/krafla/krafla/mlt"
)

// CheckTokenizer reports a tokenizer that was not written with the model (the
// two pair records differ; internal/pair) or whose ids do not all fit it.
func CheckTokenizer(m *Model, tok *mlt.Tokenizer) error {
	if err := pair.Check("the model", m.pair, "the tokenizer", tok.Pair); err != nil {
		return fmt.Errorf("infer: %w", err)
	}
	if n := len(tok.Tokens); n > m.cfg.Vocab {
		return fmt.Errorf("infer: the tokenizer has %d tokens, more than the model's vocab of %d: it belongs to another model", n, m.cfg.Vocab)
	}
	return nil
}

// AddBOS reports whether the tokenizer wants BOS prepended.
func AddBOS(tok *mlt.Tokenizer) bool { return tok.Flags&mlt.FlagAddBOS != 0 && tok.BOS >= 0 }
