package infer

import (
	"errors"
	"fmt"
)

// ErrRewind is returned by Rewind when the caches no longer hold what the
// position asked for needs.
var ErrRewind = errors.New("infer: cannot rewind")

// CanRewind reports whether Rewind(n) would succeed.
func (s *Session) CanRewind(n int) bool {
	if n < 0 || n > s.pos {
		return false
	}
	if n == 0 || n == s.pos {
		return true
	}
	c := &s.m.cfg
	for l, ls := range s.layers {
		if c.isLinear(l) {
			// The recurrent state exists only for the current position.
			return false
		}
		// A ring of slots positions holds pos−slots … pos−1; position n
		// attends to n−slots+1 … n−1 (slots is the window when the ring is
		// shorter than the context), all of which must still be there. A
		// ring of the whole context is never short: pos ≤ ctx = slots.
		if s.pos > ls.slots && n-ls.slots+1 < s.pos-ls.slots {
			return false
		}
	}
	return true
}

// Rewind moves the session back to position n, keeping the cache of
// positions 0 … n−1: evaluating the tokens that follow gives the bits a fresh
// session fed the same tokens would. Rewind(0) is Reset. It fails with
// ErrRewind when n is outside 0 … Pos or a layer lost what n needs (a
// linear-attention layer keeps only the latest state, a sliding-window ring
// only the last window).
func (s *Session) Rewind(n int) error {
	if !s.CanRewind(n) {
		return fmt.Errorf("%w to position %d (at %d)", ErrRewind, n, s.pos)
	}
	if n == 0 {
		s.Reset()
		return nil
	}
	s.pos = n
	return nil
}
