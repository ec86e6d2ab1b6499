package mlt

import (
	"unicode"
	"unicode/utf8"
)

// Byte-level pre-tokenizers: hand-written scanners equivalent to the regexes
// that Hugging Face tokenizers runs (with Oniguruma) in a Split or ByteLevel
// pre-tokenizer, find_iter style. Each scanner returns the end of the match
// that starts at s[i:] (i < len(s)); since every character is matched by one of
// the alternatives, the matches tile the text. pretok_test.go checks them
// against dlclark/regexp2 running the regexes below.
//
// The regexes:
//
//	Llama 3 (default):  (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//	Qwen 2 (flag 16):   the same with \p{N} instead of \p{N}{1,3}
//	Qwen 3.5 (256):     (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//	GPT-2 (flag 32):    's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//	o200k (no flag; a pipeline Split with its exact text): pretok_o200k.go
//
// Character classes follow Go's unicode package: \p{L} unicode.IsLetter,
// \p{N} unicode.IsNumber, \p{M} unicode.IsMark, \s unicode.IsSpace (the
// Unicode White_Space property, as in Oniguruma). The case-insensitive
// contractions use Unicode simple case folding as Oniguruma does, so "'ſ"
// (U+017F LATIN SMALL LETTER LONG S) matches 's.
//
// Invalid UTF-8 bytes are taken one at a time as U+FFFD, a symbol.

// Character classes of the scanners.
const (
	clOther   = iota // none of the below: punctuation, symbols, controls, …
	clLetter         // \p{L}
	clNumber         // \p{N}
	clSpace          // \s other than \r and \n
	clNewline        // \r, \n
	clMark           // \p{M}
)

var asciiClass = func() (c [utf8.RuneSelf]uint8) {
	for r := range utf8.RuneSelf {
		c[r] = classOf(rune(r))
	}
	return c
}()

func classOf(r rune) uint8 {
	switch {
	case r == '\r' || r == '\n':
		return clNewline
	case unicode.IsLetter(r):
		return clLetter
	case unicode.IsNumber(r):
		return clNumber
	case unicode.IsSpace(r):
		return clSpace
	case unicode.IsMark(r):
		return clMark
	}
	return clOther
}

// class returns the class and byte length of the character at s[i:].
func class(s string, i int) (uint8, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return classOf(r), n
}

// pattern selects a pre-tokenizer regex.
type pattern uint8

const (
	patLlama3 pattern = iota // \p{N}{1,3}
	patQwen2                 // Llama 3 with single digits
	patQwen35                // Qwen 2 with [\p{L}\p{M}]+ letters
	patGPT2
	patO200k // o200k (pretok_o200k.go); no flag selects it, only a pipeline Split
)

// patternFor maps the header flags to the regex: flag 256 selects Qwen 3.5,
// 32 GPT-2, 16 (alone) Qwen 2; otherwise Llama 3.
func patternFor(flags uint32) pattern {
	switch {
	case flags&FlagQwen35Regex != 0:
		return patQwen35
	case flags&FlagGPT2Regex != 0:
		return patGPT2
	case flags&FlagSingleDigits != 0:
		return patQwen2
	}
	return patLlama3
}

// next returns the end of the pre-token starting at s[i:], i < len(s).
func (p pattern) next(s string, i int) int {
	switch p {
	case patGPT2:
		return nextGPT2(s, i)
	case patO200k:
		return nextO200k(s, i)
	}
	return nextLlama3(s, i, p)
}

// contraction returns the end of 's|'t|'re|'ve|'m|'ll|'d at s[i:], where
// s[i] is an apostrophe, or 0. fold makes the match case-insensitive.
func contraction(s string, i int, fold bool) int {
	if i+1 >= len(s) {
		return 0
	}
	c := s[i+1]
	if fold {
		if c == 0xC5 && i+2 < len(s) && s[i+2] == 0xBF { // ſ folds to s
			return i + 3
		}
		c |= 0x20 // ASCII lower case; maps no non-letter onto the letters below
	}
	switch c {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v', 'l':
		if i+2 >= len(s) {
			return 0
		}
		d := s[i+2]
		if fold {
			d |= 0x20
		}
		if (c == 'l' && d == 'l') || (c != 'l' && d == 'e') {
			return i + 3
		}
	}
	return 0
}

// nextLlama3 scans the Llama 3 regex and its Qwen variants.
func nextLlama3(s string, i int, p pattern) int {
	cl, n := class(s, i)
	marks := p == patQwen35 // \p{M} belongs to the letter runs, not to the others
	if cl == clMark && !marks {
		cl = clOther
	}
	switch cl {
	case clLetter, clMark: // [\p{L}\p{M}]+ (the optional prefix cannot change the match)
		return letterRun(s, i+n, marks)
	case clNumber: // \p{N}{1,3} or \p{N}
		j := i + n
		if p == patLlama3 {
			for d := 1; d < 3 && j < len(s); d++ {
				c2, n2 := class(s, j)
				if c2 != clNumber {
					break
				}
				j += n2
			}
		}
		return j
	case clNewline:
		return whitespace(s, i, true)
	}
	// cl is clOther or clSpace.
	if s[i] == '\'' {
		if e := contraction(s, i, true); e > 0 {
			return e
		}
	}
	if i+n < len(s) {
		c2, n2 := class(s, i+n)
		if c2 == clMark && !marks {
			c2 = clOther
		}
		switch {
		case c2 == clLetter || c2 == clMark: // [^\r\n\p{L}\p{N}]?\p{L}+ with the prefix
			return letterRun(s, i+n+n2, marks)
		case cl == clOther: //  ?[^\s\p{L}\p{N}]+[\r\n]* without the space
			return newlines(s, otherRun(s, i+n, marks))
		case s[i] == ' ' && c2 == clOther: // the same with the space
			return newlines(s, otherRun(s, i+n+n2, marks))
		}
	} else if cl == clOther {
		return i + n
	}
	return whitespace(s, i, true)
}

// nextGPT2 scans the GPT-2 regex.
func nextGPT2(s string, i int) int {
	if s[i] == '\'' {
		if e := contraction(s, i, false); e > 0 {
			return e
		}
	}
	cl, n := class(s, i)
	if s[i] == ' ' && i+1 < len(s) { //  ?\p{L}+,  ?\p{N}+,  ?[^\s\p{L}\p{N}]+
		if c2, n2 := class(s, i+1); c2 != clSpace && c2 != clNewline {
			cl, n = c2, 1+n2
		}
	}
	switch cl {
	case clLetter:
		return letterRun(s, i+n, false)
	case clNumber:
		j := i + n
		for j < len(s) {
			c2, n2 := class(s, j)
			if c2 != clNumber {
				break
			}
			j += n2
		}
		return j
	case clOther, clMark:
		return otherRun(s, i+n, false)
	}
	return whitespace(s, i, false)
}

// letterRun returns the end of the run of \p{L} (and \p{M} if marks) at s[j:].
func letterRun(s string, j int, marks bool) int {
	for j < len(s) {
		c := s[j]
		if c < utf8.RuneSelf {
			if asciiClass[c] != clLetter {
				break
			}
			j++
			continue
		}
		cl, n := class(s, j)
		if cl != clLetter && !(marks && cl == clMark) {
			break
		}
		j += n
	}
	return j
}

// otherRun returns the end of the run of [^\s\p{L}\p{N}] (also without \p{M}
// if marks) at s[j:].
func otherRun(s string, j int, marks bool) int {
	for j < len(s) {
		cl, n := class(s, j)
		if cl != clOther && !(cl == clMark && !marks) {
			break
		}
		j += n
	}
	return j
}

// newlines returns the end of the run of [\r\n]* at s[j:].
func newlines(s string, j int) int {
	for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
		j++
	}
	return j
}

// whitespace matches at s[i:], where a \s character starts, the alternatives
// \s*[\r\n]+ (only if nl), \s+(?!\S) and \s+, in that order:
//   - \s*[\r\n]+ takes the whole run of \s and backtracks to just after its last
//     \r or \n;
//   - \s+(?!\S) takes the run if it reaches the end of s, else backtracks one
//     character (the run must keep at least one);
//   - \s+ takes the run.
func whitespace(s string, i int, nl bool) int {
	j, last, nlEnd := i, i, -1
	for j < len(s) {
		cl, n := class(s, j)
		if cl != clSpace && cl != clNewline {
			break
		}
		if cl == clNewline {
			nlEnd = j + n
		}
		last = j
		j += n
	}
	switch {
	case nl && nlEnd >= 0:
		return nlEnd
	case j == len(s):
		return j
	case last > i:
		return last
	}
	return j
}

// splitDigits calls f for each piece of s after a Digits(individual_digits)
// pre-tokenizer: every \p{N} character alone, and the runs between them.
func splitDigits(s string, f func(string)) {
	start := 0
	for j := 0; j < len(s); {
		cl, n := class(s, j)
		if cl != clNumber {
			j += n
			continue
		}
		if start < j {
			f(s[start:j])
		}
		f(s[j : j+n])
		j += n
		start = j
	}
	if start < len(s) {
		f(s[start:])
	}
}
