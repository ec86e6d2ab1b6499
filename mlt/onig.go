package mlt

import (
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// The tokenizers library compiles Split and Replace patterns with Oniguruma
// (Ruby syntax). regexp2 is a backtracking engine with the same leftmost-first
// alternation, greedy and lazy quantifiers, lookarounds, atomic groups and
// \p{..} classes, but a few constructs mean something else in it. translateOnig
// rewrites a pattern so that regexp2 matches exactly what Oniguruma matches,
// and refuses, naming it, what it cannot rewrite:
//
//   - Case-insensitive groups (?i:...) and (?i): Oniguruma folds with Unicode
//     case folding, regexp2 lower-cases both sides. Under folding U+017F ſ
//     matches s and U+212A K matches k, while lower-casing maps U+0130 İ to i,
//     which folding does not. Each letter is spelled out as the class of its
//     fold orbit ([sSſ]). Oniguruma also matches multi-character folds (ß
//     against ss, ﬁ against fi); a case-insensitive pattern holding ss, st, ff,
//     fi or fl, a non-ASCII letter, a class or an escape is refused.
//   - \w: Oniguruma's is Letter, Mark, Decimal_Number and
//     Connector_Punctuation; regexp2's leaves out Mc and Me and adds U+200C/D.
//     It becomes [\p{L}\p{M}\p{Nd}\p{Pc}] (\W outside a class the negation;
//     \W inside a class, \b and \B are refused).
//   - ^ and $ match at every line in Ruby syntax: the Multiline option is set
//     when they occur.
//   - (?m) is dot-all in Ruby and multi-line in regexp2; inline options other
//     than i, possessive quantifiers (a*+, a++, a?+), intervals followed by a
//     quantifier, nested classes and && in classes, \x{...} above U+FFFF,
//     \h, \R, \X, \K, \G and the other Ruby-only escapes are refused.
//
// \s and \S are the same set in both (White_Space), as are \d (Nd) and the
// \p{..} categories and scripts, from Go's Unicode tables; Oniguruma's tables
// may be of another Unicode version, which matters only for characters
// assigned in between.
func translateOnig(src string) (string, regexp2.RegexOptions, error) {
	var b strings.Builder
	opts := regexp2.None
	// ci holds the case-insensitivity of each open group; the last is current.
	ci := []bool{false}
	prevQuant := false // the previous token was a quantifier
	prevCILetter := rune(0)
	fail := func(format string, args ...any) error {
		return fmt.Errorf("regex %q: "+format, append([]any{src}, args...)...)
	}
	for i := 0; i < len(src); {
		r, n := utf8.DecodeRuneInString(src[i:])
		if r == utf8.RuneError && n == 1 {
			return "", 0, fail("invalid UTF-8 at byte %d", i)
		}
		curCI := ci[len(ci)-1]
		quant := false
		letter := rune(0)
		switch r {
		case '\\':
			e, err := onigEscape(src, i, false, curCI)
			if err != nil {
				return "", 0, fail("%v", err)
			}
			b.WriteString(e.out)
			n = e.n
		case '[':
			if curCI {
				return "", 0, fail("a character class inside a case-insensitive group is not supported")
			}
			j, err := onigClass(src, i, &b)
			if err != nil {
				return "", 0, fail("%v", err)
			}
			n = j - i
		case '(':
			rest := src[i+1:]
			switch {
			case strings.HasPrefix(rest, "?i:"):
				ci = append(ci, true)
				b.WriteString("(?:")
				n = 4
			case strings.HasPrefix(rest, "?i)"):
				ci[len(ci)-1] = true
				n = 4
			case strings.HasPrefix(rest, "?#"):
				end := strings.IndexByte(rest, ')')
				if end < 0 {
					return "", 0, fail("unterminated comment")
				}
				n = end + 2
			case !strings.HasPrefix(rest, "?"),
				strings.HasPrefix(rest, "?:"), strings.HasPrefix(rest, "?="), strings.HasPrefix(rest, "?!"),
				strings.HasPrefix(rest, "?<="), strings.HasPrefix(rest, "?<!"), strings.HasPrefix(rest, "?>"):
				ci = append(ci, curCI)
				b.WriteByte('(')
			case strings.HasPrefix(rest, "?<") || strings.HasPrefix(rest, "?'"):
				ci = append(ci, curCI) // named group
				b.WriteByte('(')
			default:
				return "", 0, fail("group %q is not supported (inline options other than i mean other things in regexp2)", clipStr(rest, 20))
			}
		case ')':
			if len(ci) == 1 {
				return "", 0, fail("unbalanced ')' at byte %d", i)
			}
			ci = ci[:len(ci)-1]
			b.WriteByte(')')
		case '*', '+', '?':
			switch {
			case !prevQuant:
				quant = true
			case r == '?': // lazy
			case r == '+':
				return "", 0, fail("possessive quantifier at byte %d is not supported", i)
			default:
				return "", 0, fail("nested quantifier at byte %d", i)
			}
			b.WriteRune(r)
		case '{':
			if j := intervalEnd(src, i); j < 0 {
				return "", 0, fail("repeat bound at byte %d is above Oniguruma's limit %d", i, maxRepeat)
			} else if j > 0 {
				if prevQuant {
					return "", 0, fail("nested quantifier at byte %d", i)
				}
				if src[i+1] == ',' {
					b.WriteString("{0") // regexp2 reads {,m} as literal text
					b.WriteString(src[i+1 : j])
				} else {
					b.WriteString(src[i:j])
				}
				n = j - i
				quant = true
			} else {
				b.WriteString(`\{`)
			}
		case '^', '$':
			opts |= regexp2.Multiline
			b.WriteRune(r)
		default:
			if curCI && unicode.IsLetter(r) {
				if r >= utf8.RuneSelf {
					return "", 0, fail("non-ASCII letter %q in a case-insensitive group (multi-character case folds) is not supported", r)
				}
				lo := unicode.ToLower(r)
				if p := unicode.ToLower(prevCILetter); p != 0 && strings.Contains(" ss st ff fi fl ", " "+string(p)+string(lo)+" ") {
					return "", 0, fail("%q in a case-insensitive group also matches a ligature or ß in Oniguruma; not supported", string(p)+string(lo))
				}
				letter = r
				b.WriteString(foldClass(r))
			} else {
				b.WriteRune(r)
			}
		}
		prevQuant = quant
		prevCILetter = letter
		i += n
	}
	if len(ci) != 1 {
		return "", 0, fail("unterminated group")
	}
	return b.String(), opts, nil
}

// foldClass returns the class of r's simple case-fold orbit, or r alone.
func foldClass(r rune) string {
	orbit := []rune{r}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		orbit = append(orbit, f)
	}
	if len(orbit) == 1 {
		return string(r)
	}
	return "[" + string(orbit) + "]"
}

// maxRepeat is Oniguruma's ONIG_MAX_REPEAT_NUM: larger interval bounds are
// an error there.
const maxRepeat = 100000

// intervalEnd returns the end of a {n}, {n,}, {n,m} or {,m} quantifier at
// src[i:] (Oniguruma's Ruby syntax, which the tokenizers library uses, reads
// {,m} as {0,m}: ONIG_SYN_ALLOW_INTERVAL_LOW_ABBREV), or 0 where the brace is
// literal text; -1 when a bound is above maxRepeat.
func intervalEnd(src string, i int) int {
	j := i + 1
	big := false
	digits := func() int {
		k, v := j, 0
		for j < len(src) && src[j] >= '0' && src[j] <= '9' {
			if v = v*10 + int(src[j]-'0'); v > maxRepeat {
				big, v = true, maxRepeat+1
			}
			j++
		}
		return j - k
	}
	switch {
	case digits() > 0:
		if j < len(src) && src[j] == ',' {
			j++
			digits()
		}
	case j < len(src) && src[j] == ',': // {,m}: Ruby syntax's {0,m}
		j++
		if digits() == 0 {
			return 0 // {,} is literal text
		}
	default:
		return 0
	}
	if j < len(src) && src[j] == '}' {
		if big {
			return -1
		}
		return j + 1
	}
	return 0
}

const onigWord = `\p{L}\p{M}\p{Nd}\p{Pc}`

type onigEsc struct {
	out string
	n   int // bytes of src consumed
}

// onigEscape translates the escape at src[i] ('\'); inClass says whether it
// stands in a character class.
func onigEscape(src string, i int, inClass, ci bool) (onigEsc, error) {
	if i+1 >= len(src) {
		return onigEsc{}, fmt.Errorf("trailing backslash")
	}
	e, n := utf8.DecodeRuneInString(src[i+1:])
	two := src[i : i+1+n]
	switch {
	case e == 'p' || e == 'P':
		if ci {
			return onigEsc{}, fmt.Errorf("%s in a case-insensitive group is not supported", two)
		}
		if i+2 < len(src) && src[i+2] == '{' {
			end := strings.IndexByte(src[i:], '}')
			if end < 0 {
				return onigEsc{}, fmt.Errorf("unterminated %s{", two)
			}
			name := src[i+3 : i+end]
			if strings.HasPrefix(name, "^") { // \p{^L} is \P{L}
				neg := map[rune]string{'p': `\P`, 'P': `\p`}[e]
				return onigEsc{neg + "{" + name[1:] + "}", end + 1}, nil
			}
			return onigEsc{src[i : i+end+1], end + 1}, nil
		}
		return onigEsc{}, fmt.Errorf("%s without {name} is not supported", two)
	case e == 'w':
		if inClass {
			return onigEsc{onigWord, 2}, nil
		}
		return onigEsc{"[" + onigWord + "]", 2}, nil
	case e == 'W':
		if inClass {
			return onigEsc{}, fmt.Errorf(`\W inside a character class is not supported`)
		}
		return onigEsc{"[^" + onigWord + "]", 2}, nil
	case strings.ContainsRune("sSdDrntfvae", e):
		if ci && (e == 'd' || e == 'D' || e == 's' || e == 'S') {
			return onigEsc{}, fmt.Errorf("%s in a case-insensitive group is not supported", two)
		}
		return onigEsc{two, 2}, nil
	case strings.ContainsRune("AzZ", e) && !inClass:
		return onigEsc{two, 2}, nil
	case e == 'x':
		if i+2 < len(src) && src[i+2] == '{' {
			end := strings.IndexByte(src[i:], '}')
			var v rune
			if end < 0 || end == 3 || len(src[i+3:i+end]) > 6 {
				return onigEsc{}, fmt.Errorf(`bad \x{...}`)
			}
			if _, err := fmt.Sscanf(src[i+3:i+end], "%x", &v); err != nil || v > 0xFFFF {
				return onigEsc{}, fmt.Errorf(`\x{%s} is not supported (at most 4 hex digits, U+FFFF)`, src[i+3:i+end])
			}
			return onigEsc{fmt.Sprintf(`\u%04X`, v), end + 1}, nil
		}
		if i+3 < len(src) && isHex(src[i+2]) && isHex(src[i+3]) {
			return onigEsc{src[i : i+4], 4}, nil
		}
		return onigEsc{}, fmt.Errorf(`\x needs two hex digits`)
	case e == 'u':
		if i+5 < len(src) && isHex(src[i+2]) && isHex(src[i+3]) && isHex(src[i+4]) && isHex(src[i+5]) {
			return onigEsc{src[i : i+6], 6}, nil
		}
		return onigEsc{}, fmt.Errorf(`\u needs four hex digits`)
	case e >= '1' && e <= '9' && !inClass:
		return onigEsc{two, 2}, nil // back-reference
	case e < utf8.RuneSelf && !unicode.IsLetter(e) && !unicode.IsDigit(e):
		return onigEsc{two, 2}, nil // an escaped punctuation character, space or control
	case e >= utf8.RuneSelf:
		return onigEsc{string(e), 1 + n}, nil
	}
	return onigEsc{}, fmt.Errorf("escape %s has no exact regexp2 equivalent", two)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// onigClass copies the class starting at src[i] ('[') to b, translated; it
// returns the index after its ']'.
func onigClass(src string, i int, b *strings.Builder) (int, error) {
	j := i + 1
	b.WriteByte('[')
	if j < len(src) && src[j] == '^' {
		b.WriteByte('^')
		j++
	}
	first := true
	for j < len(src) {
		c := src[j]
		switch {
		case c == ']' && !first:
			b.WriteByte(']')
			return j + 1, nil
		case c == ']':
			b.WriteString(`\]`)
			j++
		case c == '[':
			return 0, fmt.Errorf("nested character class or POSIX bracket at byte %d is not supported", j)
		case c == '&' && j+1 < len(src) && src[j+1] == '&':
			return 0, fmt.Errorf("class intersection && at byte %d is not supported", j)
		case c == '\\':
			e, err := onigEscape(src, j, true, false)
			if err != nil {
				return 0, err
			}
			b.WriteString(e.out)
			j += e.n
		default:
			_, n := utf8.DecodeRuneInString(src[j:])
			b.WriteString(src[j : j+n])
			j += n
		}
		first = false
	}
	return 0, fmt.Errorf("unterminated character class")
}

// onigCache keeps the compiled patterns (a file's regexes are compiled by
// Validate and again by prepare); it starts over when full, so that parsing
// many files cannot grow it without bound.
var onigCache struct {
	sync.Mutex
	m map[string]*regexp2.Regexp
}

const maxOnigCache = 256

// matchTimeout bounds one regexp2 search.
const matchTimeout = time.Second

// compileOniguruma compiles an Oniguruma pattern for regexp2 (translateOnig).
func compileOniguruma(src string) (*regexp2.Regexp, error) {
	onigCache.Lock()
	re, ok := onigCache.m[src]
	onigCache.Unlock()
	if ok {
		return re, nil
	}
	tr, opts, err := translateOnig(src)
	if err != nil {
		return nil, err
	}
	re, err = regexp2.Compile(tr, opts)
	if err != nil {
		return nil, fmt.Errorf("regex %q: %v", src, err)
	}
	// A pattern that backtracks catastrophically on some text would hang the
	// encoder (Oniguruma gives up too, with an error, after its retry limit);
	// regexSplitter leaves the rest of such a piece unsplit.
	re.MatchTimeout = matchTimeout
	onigCache.Lock()
	if onigCache.m == nil || len(onigCache.m) >= maxOnigCache {
		onigCache.m = map[string]*regexp2.Regexp{}
	}
	onigCache.m[src] = re
	onigCache.Unlock()
	return re, nil
}

// clipStr shortens s to at most n bytes for messages.
func clipStr(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
