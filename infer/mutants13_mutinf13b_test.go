package infer

import (
	"testing"

	"github.com/krafla/krafla/mlt"
)

// Tests written for the mutants of infer's hidden.go, imat.go, imatrix.go,
// tokenizer.go, open.go and model.go that a session-13 mutation pass
// (docs/RELIABILITY.md) found alive; each says which mutants it kills.
// Expected values come from the documented rules, never from the code under
// test.

// TestAddBOS13: AddBOS is true exactly when the tokenizer's add-BOS flag is
// set and it has a BOS id: mlt's BOS is -1 when none, so id 0 is a valid BOS
// (a vocabulary may put it first). Kills tokenizer.go:23 `tok.BOS >= 0` →
// `> 0`.
func TestAddBOS13(t *testing.T) {
	for _, c := range []struct {
		flags uint32
		bos   int32
		want  bool
	}{
		{mlt.FlagAddBOS, 0, true},
		{mlt.FlagAddBOS, 1, true},
		{mlt.FlagAddBOS, -1, false},
		{0, 0, false},
		{0, 1, false},
	} {
		tok := &mlt.Tokenizer{Flags: c.flags, BOS: c.bos}
		if got := AddBOS(tok); got != c.want {
			t.Errorf("AddBOS(flags %#x, BOS %d) = %v, want %v", c.flags, c.bos, got, c.want)
		}
	}
}
