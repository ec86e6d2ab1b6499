package infer

import (
	"errors"
	"testing"

	"github.com/krafla/krafla/internal/pair"
	"github.com/krafla/krafla/mlb/mlbtest"
	"github.com/krafla/krafla/mlt"
)

// TestCheckTokenizerPair: CheckTokenizer (what serve.Start calls) refuses a
// tokenizer whose pair record is not the model's, and accepts the model's own
// and, where neither has a record, any tokenizer that fits.
func TestCheckTokenizerPair(t *testing.T) {
	tok := func(eos int32) *mlt.Tokenizer {
		tk := &mlt.Tokenizer{Kind: mlt.KindByteLevel, BOS: -1, EOS: eos}
		for c := range 256 {
			tk.Tokens = append(tk.Tokens, mlt.Token{Bytes: []byte{byte(c)}})
		}
		return tk
	}
	h := mlbtest.Base()
	h.Vocab = 256
	plain, _ := openModel(t, h, 1)
	own := tok(1)
	pair.Bind(&h, own)
	bound, _ := openModel(t, h, 1)
	other := tok(2)
	h2 := h
	pair.Bind(&h2, other)
	for _, c := range []struct {
		name string
		m    *Model
		tok  *mlt.Tokenizer
		ok   bool
	}{
		{"own tokenizer", bound, own, true},
		{"neither has a record", plain, tok(1), true},
		{"another pair's tokenizer", bound, other, false},
		{"tokenizer without a record", bound, tok(1), false},
		{"model without a record", plain, own, false},
	} {
		err := CheckTokenizer(c.m, c.tok)
		if c.ok != (err == nil) || !c.ok && !errors.Is(err, pair.ErrMismatch) {
			t.Errorf("%s: got %v, want ok %v (else ErrMismatch)", c.name, err, c.ok)
		}
	}
}
