package mlt

import (
	"errors"
	"strings"
	"testing"
)

// Tests from the mutants left alive in mlt's files by session 11's schema runs
// (docs/RELIABILITY.md, "mlt ..., session 11 (mutmlt11)"): each fails with the
// mutant it names planted. Expected values come from SPEC.md and the package
// documentation, written out here, never from the code.

// TestChatCheckOffsetInMemory: a chat section broken in memory is reported by
// Validate with offset -1, the in-memory offset of every whole-tokenizer error
// (SPEC.md; chat.go checkChatSection's -1, which INVERT_NEGATIVES and
// ARITHMETIC_BASE turn into +1).
func TestChatCheckOffsetInMemory(t *testing.T) {
	tk := smallByteLevel()
	n := int32(len(tk.Tokens))
	tk.SetChat(&Chat{StopIDs: []int32{n}})
	err := tk.Validate()
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrFormat) || e.Offset != -1 || !strings.Contains(err.Error(), "outside the vocabulary") || strings.Contains(err.Error(), " at offset") {
		t.Errorf("Validate = %v, want ML_E_FORMAT at offset -1 (no offset printed) saying the stop id is outside the vocabulary", err)
	}
}
