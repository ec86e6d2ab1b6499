package mlt

import (
	"unicode"
	"unicode/utf8"
)

// The three Split regexes of DeepSeek V3's pre-tokenizer, exactly as its
// tokenizer.json spells them (the second and third hold literal characters:
// CJK ranges, and a carriage return and a line feed in their classes). None of
// them matches every character, so their splitters below return the matches
// and leave the text between them to the Split's behavior.
const (
	regexDigits3      = "\\p{N}{1,3}"
	regexCJK          = "[一-龥\u3040-ゟ゠-ヿ]+"
	regexDeepSeekMain = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"
)

// fastSplitters are hand-written splitters for regexes that do not tile the
// text, by exact pattern text.
var fastSplitters = map[string]splitter{
	regexDigits3:      digits3Splitter{},
	regexCJK:          cjkSplitter{},
	regexDeepSeekMain: deepSeekSplitter{},
}

// digits3Splitter finds \p{N}{1,3}: runs of numbers, cut every three.
type digits3Splitter struct{}

func (digits3Splitter) matches(s string, out []span, _ *pipeScratch) []span {
	for i := 0; i < len(s); {
		cl, n := class(s, i)
		if cl != clNumber {
			i += n
			continue
		}
		j := i + n
		for d := 1; d < 3 && j < len(s); d++ {
			c2, n2 := class(s, j)
			if c2 != clNumber {
				break
			}
			j += n2
		}
		out = append(out, span{i, j})
		i = j
	}
	return out
}

func isCJK(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FA5 || r >= 0x3040 && r <= 0x309F || r >= 0x30A0 && r <= 0x30FF
}

// cjkSplitter finds runs of the CJK ideographs U+4E00..U+9FA5 and the kana
// U+3040..U+30FF.
type cjkSplitter struct{}

func (cjkSplitter) matches(s string, out []span, _ *pipeScratch) []span {
	start := -1
	for i := 0; i < len(s); {
		c := s[i]
		in, n := false, 1
		if c >= utf8.RuneSelf {
			var r rune
			r, n = utf8.DecodeRuneInString(s[i:])
			in = isCJK(r)
		}
		switch {
		case in && start < 0:
			start = i
		case !in && start >= 0:
			out = append(out, span{start, i})
			start = -1
		}
		i += n
	}
	if start >= 0 {
		out = append(out, span{start, len(s)})
	}
	return out
}

// Character bits of the DeepSeek scanner.
const (
	dsLetter      = 1 << iota // \p{L}
	dsMark                    // \p{M}
	dsPunct                   // \p{P} or \p{S}
	dsSpace                   // \s
	dsNewline                 // \r, \n
	dsASCIIPunct              // the class of the first alternative
	dsASCIILetter             // [A-Za-z]
)

func deepSeekBitsOf(r rune) uint8 {
	var b uint8
	switch {
	case r == '\r' || r == '\n':
		b = dsSpace | dsNewline
	case unicode.IsSpace(r):
		b = dsSpace
	case unicode.IsLetter(r):
		b = dsLetter
	case unicode.IsMark(r):
		b = dsMark
	case unicode.IsPunct(r) || unicode.IsSymbol(r):
		b = dsPunct
	}
	if r > ' ' && r < 0x7F {
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			b |= dsASCIILetter
		case r < '0' || r > '9':
			b |= dsASCIIPunct
		}
	}
	return b
}

var deepSeekBits = newCharBits(deepSeekBitsOf)

// deepSeekSplitter finds the matches of DeepSeek V3's main regex.
type deepSeekSplitter struct{}

func (deepSeekSplitter) matches(s string, out []span, _ *pipeScratch) []span {
	for i := 0; i < len(s); {
		if e := deepSeekMatch(s, i); e > i {
			out = append(out, span{i, e})
			i = e
			continue
		}
		_, n := deepSeekBits.at(s, i)
		i += n
	}
	return out
}

// deepSeekMatch returns the end of the match starting at s[i:], or i when no
// alternative matches there.
func deepSeekMatch(s string, i int) int {
	b, n := deepSeekBits.at(s, i)
	// [ASCII punctuation][A-Za-z]+
	if b&dsASCIIPunct != 0 { // (run stops at the end of s)
		if e := deepSeekBits.run(s, i+1, dsASCIILetter); e > i+1 {
			return e
		}
	}
	// [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+, the prefix tried first
	if b&(dsNewline|dsLetter|dsPunct) == 0 {
		if e := deepSeekBits.run(s, i+n, dsLetter|dsMark); e > i+n {
			return e
		}
	}
	if b&(dsLetter|dsMark) != 0 {
		return deepSeekBits.run(s, i, dsLetter|dsMark)
	}
	//  ?[\p{P}\p{S}]+[\r\n]*
	start := i
	if s[i] == ' ' && i+1 < len(s) {
		if b2, _ := deepSeekBits.at(s, i+1); b2&dsPunct != 0 {
			start = i + 1
		}
	}
	if b2, _ := deepSeekBits.at(s, start); b2&dsPunct != 0 {
		return newlines(s, deepSeekBits.run(s, start, dsPunct))
	}
	if b&dsSpace != 0 {
		return whitespace(s, i, true)
	}
	return i
}
