package mlt

import "unicode"

// regexO200k is the pre-tokenizer regex of OpenAI's o200k tokenizers (GPT-4o,
// gpt-oss), exactly as their tokenizer.json spells it.
const regexO200k = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// Character bits of the o200k scanner.
const (
	oUpper   = 1 << iota // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	oLower               // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	oLetter              // \p{L}
	oNumber              // \p{N}
	oSpace               // \s
	oNewline             // \r, \n
)

func o200kBitsOf(r rune) uint8 {
	var b uint8
	switch {
	case r == '\r' || r == '\n':
		return oSpace | oNewline
	case unicode.IsSpace(r):
		return oSpace
	case unicode.IsNumber(r):
		return oNumber
	case unicode.IsMark(r):
		return oUpper | oLower
	case unicode.In(r, unicode.Lu, unicode.Lt):
		b = oUpper | oLetter
	case unicode.Is(unicode.Ll, r):
		b = oLower | oLetter
	case unicode.IsLetter(r): // Lm, Lo
		b = oUpper | oLower | oLetter
	}
	return b
}

var o200kBits = newCharBits(o200kBitsOf)

// o200kUpperLower matches [upper]*[lower]+ at s[j:] with the regex's
// backtracking: the upper run as long as possible, then a lower run after it;
// if none follows, the upper run gives back characters until its last one that
// is also lower, which then forms the lower run alone. It returns the end, or
// -1.
func o200kUpperLower(s string, j int) int {
	last, k := -1, j // last: end of the last lower character within the upper run
	for k < len(s) {
		b, n := o200kBits.at(s, k)
		if b&oUpper == 0 {
			break
		}
		k += n
		if b&oLower != 0 {
			last = k
		}
	}
	if e := o200kBits.run(s, k, oLower); e > k {
		return e
	}
	return last
}

// o200kContraction extends a letter match ending at e by an optional
// case-insensitive contraction.
func o200kContraction(s string, e int) int {
	if e < len(s) && s[e] == '\'' {
		if c := contraction(s, e, true); c > 0 {
			return c
		}
	}
	return e
}

// nextO200k returns the end of the o200k pre-token starting at s[i:].
func nextO200k(s string, i int) int {
	b, n := o200kBits.at(s, i)
	prefix := b&(oLetter|oNumber|oNewline) == 0 // [^\r\n\p{L}\p{N}]
	// [prefix]?[upper]*[lower]+('s...)?, with the prefix tried first.
	if prefix { // (at the end of s nothing matches: o200kUpperLower gives -1, run i+n)
		if e := o200kUpperLower(s, i+n); e > 0 {
			return o200kContraction(s, e)
		}
	}
	if e := o200kUpperLower(s, i); e > 0 {
		return o200kContraction(s, e)
	}
	// [prefix]?[upper]+[lower]*('s...)?
	if prefix {
		if u := o200kBits.run(s, i+n, oUpper); u > i+n {
			return o200kContraction(s, o200kBits.run(s, u, oLower))
		}
	}
	if u := o200kBits.run(s, i, oUpper); u > i {
		return o200kContraction(s, o200kBits.run(s, u, oLower))
	}
	if b&oNumber != 0 { // \p{N}{1,3}
		j := i + n
		for d := 1; d < 3 && j < len(s); d++ {
			b2, n2 := o200kBits.at(s, j)
			if b2&oNumber == 0 {
				break
			}
			j += n2
		}
		return j
	}
	//  ?[^\s\p{L}\p{N}]+[\r\n/]*
	const other = oSpace | oLetter | oNumber
	start := i
	if s[i] == ' ' && i+1 < len(s) {
		if b2, _ := o200kBits.at(s, i+1); b2&other == 0 {
			start = i + 1
		}
	}
	if b2, _ := o200kBits.at(s, start); b2&other == 0 {
		j := start
		for j < len(s) {
			b3, n3 := o200kBits.at(s, j)
			if b3&other != 0 {
				break
			}
			j += n3
		}
		for j < len(s) && (s[j] == '\r' || s[j] == '\n' || s[j] == '/') {
			j++
		}
		return j
	}
	return whitespace(s, i, true)
}
