package grammar

import (
	"fmt"
	"sort"
	"unicode/utf8"
)

// Limits on what a grammar may grow to; input beyond them is refused.
const (
	maxSymbols  = 1 << 21 // symbols in all rules together
	maxRules    = 1 << 18
	maxStack    = 512   // frames on one parse stack
	maxStacks   = 4096  // stacks in one parse state
	maxRepeat   = 10000 // counted repetition bound (minLength, maxItems, {m,n})
	maxDFA      = 1 << 14
	maxMaskMemo = 1 << 26 // bytes of cached masks
)

// symbol kinds
const (
	kByte = iota // byte range lo..hi
	kRef         // reference to rule
	kEnd         // end of an alternative (flattened program only)
)

type sym struct {
	kind   uint8
	lo, hi byte
	rule   int32
}

// builder holds rules as alternatives of symbol sequences.
type builder struct {
	rules   [][][]sym
	names   []string
	classes map[string]int32
	size    int
	err     error
}

func newBuilder() *builder { return &builder{classes: map[string]int32{}} }

func (b *builder) fail(format string, args ...any) {
	if b.err == nil {
		b.err = fmt.Errorf(format, args...)
	}
}

// newRule reserves a rule; set its alternatives with setRule.
func (b *builder) newRule(name string) int32 {
	if len(b.rules) >= maxRules {
		b.fail("grammar: more than %d rules", maxRules)
		return 0
	}
	b.rules = append(b.rules, nil)
	b.names = append(b.names, name)
	return int32(len(b.rules) - 1)
}

func (b *builder) setRule(r int32, alts ...[]sym) {
	if b.err != nil {
		return
	}
	for _, a := range alts {
		b.size += len(a) + 1
	}
	if b.size > maxSymbols {
		b.fail("grammar: more than %d symbols", maxSymbols)
		return
	}
	b.rules[r] = alts
}

// alt returns a symbol that matches any of the sequences.
func (b *builder) alt(name string, alts ...[]sym) sym {
	if len(alts) == 1 && len(alts[0]) == 1 {
		return alts[0][0]
	}
	r := b.newRule(name)
	b.setRule(r, alts...)
	return ref(r)
}

func ref(r int32) sym { return sym{kind: kRef, rule: r} }

func byteSym(lo, hi byte) sym { return sym{kind: kByte, lo: lo, hi: hi} }

func lit(s string) []sym {
	out := make([]sym, len(s))
	for i := 0; i < len(s); i++ {
		out[i] = byteSym(s[i], s[i])
	}
	return out
}

func cat(parts ...[]sym) []sym {
	var out []sym
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func one(s sym) []sym { return []sym{s} }

// opt: x or nothing.
func (b *builder) opt(x []sym) sym { return b.alt("opt", x, nil) }

// star: x repeated zero or more times (right recursive; tail calls keep the
// stack flat).
func (b *builder) star(x []sym) sym {
	r := b.newRule("star")
	b.setRule(r, cat(x, one(ref(r))), nil)
	return ref(r)
}

// rep: x repeated min..max times; max < 0: unbounded.
func (b *builder) rep(x []sym, min, max int) []sym {
	if min > maxRepeat || max > maxRepeat {
		b.fail("grammar: repetition bound over %d", maxRepeat)
		return nil
	}
	if len(x)*(min+1) > maxSymbols {
		b.fail("grammar: more than %d symbols", maxSymbols)
		return nil
	}
	var out []sym
	for i := 0; i < min; i++ {
		out = append(out, x...)
	}
	if max < 0 {
		return append(out, b.star(x))
	}
	if max > min {
		// T_k ::= x T_{k-1} | ε, T_1 ::= x | ε
		var prev []sym
		for k := 1; k <= max-min; k++ {
			r := b.newRule("rep")
			b.setRule(r, cat(x, prev), nil)
			prev = one(ref(r))
		}
		out = append(out, prev...)
	}
	return out
}

// cpRange is an inclusive range of code points.
type cpRange struct{ lo, hi rune }

// normalize sorts and merges ranges and removes surrogates.
func normalize(rs []cpRange) []cpRange {
	var in []cpRange
	for _, r := range rs {
		if r.lo < 0 {
			r.lo = 0
		}
		if r.hi > utf8.MaxRune {
			r.hi = utf8.MaxRune
		}
		if r.lo > r.hi {
			continue
		}
		// cut the surrogate block out
		if r.lo < 0xD800 && r.hi > 0xDFFF {
			in = append(in, cpRange{r.lo, 0xD7FF}, cpRange{0xE000, r.hi})
			continue
		}
		if r.lo >= 0xD800 && r.lo <= 0xDFFF {
			r.lo = 0xE000
		}
		if r.hi >= 0xD800 && r.hi <= 0xDFFF {
			r.hi = 0xD7FF
		}
		if r.lo <= r.hi {
			in = append(in, r)
		}
	}
	sort.Slice(in, func(i, j int) bool { return in[i].lo < in[j].lo })
	var out []cpRange
	for _, r := range in {
		if n := len(out); n > 0 && r.lo <= out[n-1].hi+1 {
			if r.hi > out[n-1].hi {
				out[n-1].hi = r.hi
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

// negate returns the code points not in rs (rs normalized).
func negate(rs []cpRange) []cpRange {
	var out []cpRange
	next := rune(0)
	for _, r := range rs {
		if r.lo > next {
			out = append(out, cpRange{next, r.lo - 1})
		}
		next = r.hi + 1
	}
	if next <= utf8.MaxRune {
		out = append(out, cpRange{next, utf8.MaxRune})
	}
	return normalize(out)
}

// class returns a symbol matching one code point of rs, as UTF-8 bytes. An
// empty class is refused.
func (b *builder) class(rs []cpRange) sym {
	rs = normalize(rs)
	if len(rs) == 0 {
		b.fail("grammar: empty character class")
		return byteSym(0, 0)
	}
	key := fmt.Sprint(rs)
	if r, ok := b.classes[key]; ok {
		return ref(r)
	}
	var alts [][]sym
	for _, r := range rs {
		alts = appendUTF8(alts, r.lo, r.hi)
	}
	if len(alts) == 1 && len(alts[0]) == 1 {
		return alts[0][0]
	}
	r := b.newRule("class")
	b.setRule(r, alts...)
	b.classes[key] = r
	return ref(r)
}

var utf8Max = [...]rune{0x7F, 0x7FF, 0xFFFF, utf8.MaxRune}

// appendUTF8 appends byte-range sequences matching exactly the UTF-8
// encodings of lo..hi (no surrogates inside; normalize removed them).
func appendUTF8(alts [][]sym, lo, hi rune) [][]sym {
	// split at encoding-length boundaries
	for i, m := range utf8Max {
		if lo <= m && hi > m {
			alts = appendUTF8(alts, lo, m)
			return appendUTF8(alts, m+1, hi)
		}
		_ = i
	}
	if hi < 0x80 {
		return append(alts, []sym{byteSym(byte(lo), byte(hi))})
	}
	// split so that all but one leading byte position vary fully
	n := utf8.RuneLen(lo)
	for i := 1; i < n; i++ {
		m := rune(1)<<(6*uint(i)) - 1
		if lo&^m != hi&^m {
			if lo&m != 0 {
				alts = appendUTF8(alts, lo, lo|m)
				return appendUTF8(alts, (lo|m)+1, hi)
			}
			if hi&m != m {
				alts = appendUTF8(alts, lo, (hi&^m)-1)
				return appendUTF8(alts, hi&^m, hi)
			}
		}
	}
	var a, z [4]byte
	utf8.EncodeRune(a[:], lo)
	utf8.EncodeRune(z[:], hi)
	seq := make([]sym, n)
	for i := 0; i < n; i++ {
		seq[i] = byteSym(a[i], z[i])
	}
	return append(alts, seq)
}
