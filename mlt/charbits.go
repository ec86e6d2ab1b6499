package mlt

import "unicode/utf8"

// charBits classifies characters into bit sets for a hand-written scanner:
// a table for ASCII, a function for the rest.
type charBits struct {
	ascii [utf8.RuneSelf]uint8
	of    func(rune) uint8
}

func newCharBits(of func(rune) uint8) *charBits {
	c := &charBits{of: of}
	for r := range utf8.RuneSelf {
		c.ascii[r] = of(rune(r))
	}
	return c
}

// at returns the bits and byte length of the character at s[i:]; an invalid
// byte is U+FFFD.
func (c *charBits) at(s string, i int) (uint8, int) {
	if b := s[i]; b < utf8.RuneSelf {
		return c.ascii[b], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return c.of(r), n
}

// run returns the end of the run of characters with some bit of want at s[j:].
func (c *charBits) run(s string, j int, want uint8) int {
	for j < len(s) {
		b, n := c.at(s, j)
		if b&want == 0 {
			break
		}
		j += n
	}
	return j
}
