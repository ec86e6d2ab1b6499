package mlt

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"golang.org/x/text/unicode/norm"
)

// pipeState is what a Pipeline compiles to (prepare).
type pipeState struct {
	raw, norm addedMatcher   // added tokens matched in the raw and in the normalized text
	opts      []AddedOptions // by token id; 0 for tokens that are not added
	norms     []pipeStep
	pres      []pipeStep
	scratch   sync.Pool // *pipeScratch
}

type pipeStep struct {
	Step
	split splitter // what finds the matches: of the pattern (Split, Replace), the characters (Digits, Punctuation, WhitespaceSplit, Metaspace), the regex (Whitespace, ByteLevel with use_regex)
}

// splitter finds the matches of a pattern in s, appending them as byte spans.
type splitter interface {
	matches(s string, out []span, sc *pipeScratch) []span
}

type span struct{ start, end int }

// piece is a stretch of text on its way through the pre-tokenizers; atStart
// says that it begins at offset 0 of the original text.
type piece struct {
	s       string
	atStart bool
}

type pipeScratch struct {
	spans, tiles []span
	match        []bool
	pieces, next []piece
	runes        []rune
	offs         []int
}

// scannerSplitter runs a hand-written scanner (pretok.go): every character
// belongs to one match, so the matches tile the text.
type scannerSplitter struct{ p pattern }

func (x scannerSplitter) matches(s string, out []span, _ *pipeScratch) []span {
	for i := 0; i < len(s); {
		j := x.p.next(s, i)
		out = append(out, span{i, j})
		i = j
	}
	return out
}

// regexSplitter is the general path: an Oniguruma pattern run by regexp2.
type regexSplitter struct{ re *regexp2.Regexp }

func (x regexSplitter) matches(s string, out []span, sc *pipeScratch) []span {
	// regexp2 works on runes; offs maps a rune index to its byte offset.
	// Invalid UTF-8 becomes one U+FFFD per byte on both sides.
	runes, offs := sc.runes[:0], sc.offs[:0]
	for i, r := range s {
		runes = append(runes, r)
		offs = append(offs, i)
	}
	offs = append(offs, len(s))
	sc.runes, sc.offs = runes, offs
	// The only error is the match timeout (compileOniguruma): the matches
	// found so far stand and the rest of s is text between matches.
	// An empty match right at the end of the previous match is skipped, as
	// the onig crate's find_iter does (regexp2, like .NET, reports it): `o*`
	// over "or" matches "o" and then, at 1, nothing more for Oniguruma.
	lastEnd := -1
	m, err := x.re.FindRunesMatch(runes)
	for ; m != nil && err == nil; m, err = x.re.FindNextMatch(m) {
		sp := span{offs[m.Index], offs[m.Index+m.Length]}
		if sp.start == sp.end && sp.end == lastEnd {
			continue
		}
		out = append(out, sp)
		lastEnd = sp.end
	}
	return out
}

// literalSplitter finds a literal, left to right without overlaps.
type literalSplitter struct{ lit string }

func (x literalSplitter) matches(s string, out []span, _ *pipeScratch) []span {
	if x.lit == "" {
		return out
	}
	for i := 0; ; {
		k := strings.Index(s[i:], x.lit)
		if k < 0 {
			return out
		}
		out = append(out, span{i + k, i + k + len(x.lit)})
		i += k + len(x.lit)
	}
}

// charSplitter makes every character for which f holds a match of its own.
type charSplitter func(rune) bool

func (f charSplitter) matches(s string, out []span, _ *pipeScratch) []span {
	for i, r := range s {
		if f(r) {
			out = append(out, span{i, i + utf8.RuneLen(r)})
			if r == utf8.RuneError && (i+3 > len(s) || s[i:i+3] != "\uFFFD") {
				out[len(out)-1].end = i + 1
			}
		}
	}
	return out
}

// fastPatterns are the regexes with a hand-written scanner, by exact text.
var fastPatterns = map[string]pattern{
	regexLlama3: patLlama3, regexQwen2: patQwen2, regexQwen35: patQwen35, regexGPT2: patGPT2, regexO200k: patO200k,
}

// generalOnly makes newSplitter skip the scanners (the equivalence tests and benchmarks).
var generalOnly bool

func newSplitter(pat string, regex bool) (splitter, error) {
	if !regex {
		return literalSplitter{pat}, nil
	}
	if p, ok := fastPatterns[pat]; ok && !generalOnly {
		return scannerSplitter{p}, nil
	}
	if sp, ok := fastSplitters[pat]; ok && !generalOnly {
		return sp, nil
	}
	re, err := compileOniguruma(pat)
	if err != nil {
		return nil, err
	}
	return regexSplitter{re}, nil
}

func isPunctuation(r rune) bool {
	if r < utf8.RuneSelf {
		return r > ' ' && r < 0x7F && !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}
	return unicode.IsPunct(r)
}

func isNumeric(r rune) bool { return unicode.IsNumber(r) }

// whitespaceRegex is the Whitespace pre-tokenizer's pattern.
const whitespaceRegex = `\w+|[^\w\s]+`

// compilePipeline builds the pipeState of t (t.Pipeline is valid).
func (t *Tokenizer) compilePipeline() *pipeState {
	pl := t.Pipeline
	ps := newNormalizers(pl)
	ps.opts = make([]AddedOptions, len(t.Tokens))
	for _, s := range pl.PreTokenizers {
		st := pipeStep{Step: s}
		switch s.Op {
		case OpSplit:
			st.split, _ = newSplitter(s.Pattern, s.Regex)
		case OpByteLevel:
			if s.UseRegex {
				st.split, _ = newSplitter(regexGPT2, true)
			}
		case OpDigits:
			st.split = charSplitter(isNumeric)
		case OpPunctuation:
			st.split = charSplitter(isPunctuation)
		case OpWhitespace:
			st.split, _ = newSplitter(whitespaceRegex, true)
		case OpWhitespaceSplit:
			st.split = charSplitter(unicode.IsSpace)
		case OpMetaspace:
			r, _ := utf8.DecodeRuneInString(s.Pattern)
			st.split = charSplitter(func(c rune) bool { return c == r })
		}
		ps.pres = append(ps.pres, st)
	}
	ps.raw = addedMatcher{edges: map[uint64]int32{}, id: []int32{-1}}
	ps.norm = addedMatcher{edges: map[uint64]int32{}, id: []int32{-1}}
	k := 0
	for id, tok := range t.Tokens {
		if tok.Attr != AttrAdded {
			continue
		}
		o := pl.Added[k]
		k++
		ps.opts[id] = o
		if o&AddedNormalized != 0 {
			if c := ps.normalize(string(tok.Bytes)); c != "" {
				ps.norm.add([]byte(c), id)
			}
			continue
		}
		ps.raw.add(tok.Bytes, id)
	}
	return ps
}

// newNormalizers returns a pipeState holding only the normalizers of pl.
func newNormalizers(pl *Pipeline) *pipeState {
	ps := &pipeState{}
	ps.scratch.New = func() any { return new(pipeScratch) }
	for _, s := range pl.Normalizers {
		st := pipeStep{Step: s}
		if s.Op == OpReplace {
			st.split, _ = newSplitter(s.Pattern, s.Regex) // Validate has compiled it
		}
		ps.norms = append(ps.norms, st)
	}
	return ps
}

// decodeAs returns the normalized content of the normalized added tokens
// where it differs from the content: the tokenizers library decodes such a
// token to its normalized form (testdata/pipeline: "ﬁne" under NFKC decodes as
// "fine"). It is built once, without the rest of prepare, so that decoding
// alone stays cheap.
func (t *Tokenizer) decodeAs() map[int][]byte {
	t.decodeOnce.Do(func() {
		pl := t.Pipeline
		var ps *pipeState
		k := 0
		for id, tok := range t.Tokens {
			if tok.Attr != AttrAdded {
				continue
			}
			k++
			if pl.Added[k-1]&AddedNormalized == 0 {
				continue
			}
			if ps == nil {
				ps = newNormalizers(pl)
			}
			if c := ps.normalize(string(tok.Bytes)); c != string(tok.Bytes) {
				if t.decodeMap == nil {
					t.decodeMap = map[int][]byte{}
				}
				t.decodeMap[id] = []byte(c)
			}
		}
	})
	return t.decodeMap
}

// normalize applies the normalizers to s.
func (ps *pipeState) normalize(s string) string {
	for i := range ps.norms {
		st := &ps.norms[i]
		switch st.Op {
		case OpNFC:
			s = norm.NFC.String(s)
		case OpNFD:
			s = norm.NFD.String(s)
		case OpNFKC:
			s = norm.NFKC.String(s)
		case OpNFKD:
			s = norm.NFKD.String(s)
		case OpLowercase:
			s = rustLower(s)
		case OpReplace:
			sc := ps.scratch.Get().(*pipeScratch)
			ms := st.split.matches(s, sc.spans[:0], sc)
			if len(ms) > 0 {
				var b strings.Builder
				prev := 0
				for _, m := range ms {
					b.WriteString(s[prev:m.start])
					b.WriteString(st.Content)
					prev = m.end
				}
				b.WriteString(s[prev:])
				s = b.String()
			}
			sc.spans = ms
			ps.scratch.Put(sc)
		case OpPrepend:
			if s != "" {
				s = st.Pattern + s
			}
		case OpStrip:
			if st.Left {
				s = strings.TrimLeftFunc(s, unicode.IsSpace)
			}
			if st.Right {
				s = strings.TrimRightFunc(s, unicode.IsSpace)
			}
		case OpStripAccents:
			s = strings.Map(func(r rune) rune {
				if unicode.IsMark(r) {
					return -1
				}
				return r
			}, s)
		}
	}
	return s
}

// rustLower lower-cases s character by character as Rust's char::to_lowercase
// does: U+0130 becomes "i\u0307", the rest follows the simple mapping.
func rustLower(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == 'İ' {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// isRustWord is the \w of Rust's regex crate, which the tokenizers library
// uses for single_word: Alphabetic, Mark, Decimal_Number, Connector_Punctuation
// and Join_Control.
func isRustWord(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.Is(unicode.Nd, r) || unicode.Is(unicode.Pc, r) ||
		unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_Alphabetic, r) || r == 0x200C || r == 0x200D
}

// findAdded splits s at the added tokens of m with their options, as the
// tokenizers library's AddedVocabulary::find_matches does: each match, taken
// leftmost-longest without overlaps, is dropped if single_word and a word
// character touches it, widened over the whitespace before it (lstrip, not
// before the end of the previous match) and after it (rstrip). seg is called
// for the text between matches (start is its offset), tok for each token.
func (ps *pipeState) findAdded(m *addedMatcher, s string, seg func(s string, start int), tok func(id int)) {
	startOffset := 0
	if m.count > 0 {
		for i := 0; i < len(s); i++ {
			if !m.first[s[i]] {
				continue
			}
			id, n := m.match(s[i:])
			if n == 0 {
				continue
			}
			start, stop := i, i+n
			i = stop - 1 // the next match starts after this one's own end
			o := ps.opts[id]
			if o&AddedSingleWord != 0 {
				if start > 0 {
					if r, _ := utf8.DecodeLastRuneInString(s[:start]); isRustWord(r) {
						continue
					}
				}
				if stop < len(s) {
					if r, _ := utf8.DecodeRuneInString(s[stop:]); isRustWord(r) {
						continue
					}
				}
			}
			if o&AddedLStrip != 0 {
				start = max(len(strings.TrimRightFunc(s[:start], unicode.IsSpace)), startOffset)
			}
			if o&AddedRStrip != 0 {
				stop = len(s) - len(strings.TrimLeftFunc(s[stop:], unicode.IsSpace))
			}
			if startOffset < start {
				seg(s[startOffset:start], startOffset)
			}
			tok(id)
			startOffset = stop
		}
	}
	if startOffset < len(s) {
		seg(s[startOffset:], startOffset)
	}
}

// encodePipeline is Encode's work for a tokenizer with a Pipeline.
func (t *Tokenizer) encodePipeline(text string, out []int) []int {
	ps := t.pipe
	addTok := func(id int) { out = append(out, id) }
	ps.findAdded(&ps.raw, text, func(seg string, start int) {
		n := ps.normalize(seg)
		ps.findAdded(&ps.norm, n, func(p string, pstart int) {
			out = t.encodePieces(p, start == 0 && pstart == 0, out)
		}, addTok)
	}, addTok)
	return out
}

// encodePieces runs the pre-tokenizers over s and the model over each pre-token.
func (t *Tokenizer) encodePieces(s string, atStart bool, out []int) []int {
	if s == "" { // a text the normalizers emptied: no pre-token (as encodePipeline)
		return out
	}
	ps := t.pipe
	sc := ps.scratch.Get().(*pipeScratch)
	defer ps.scratch.Put(sc)
	cur := append(sc.pieces[:0], piece{s, atStart})
	next := sc.next[:0]
	for i := range ps.pres {
		next = ps.pres[i].apply(cur, next[:0], sc)
		cur, next = next, cur
	}
	for _, p := range cur {
		if t.Kind == KindByteLevel {
			out = t.encodePreToken(p.s, out)
		} else {
			out = t.spPreToken(p.s, out)
		}
	}
	sc.pieces, sc.next = cur, next
	return out
}

// apply runs one pre-tokenizer over the pieces in, appending the results to out.
func (st *pipeStep) apply(in, out []piece, sc *pipeScratch) []piece {
	for _, p := range in {
		s := p.s
		switch st.Op {
		case OpByteLevel:
			if st.AddPrefixSpace && !strings.HasPrefix(s, " ") {
				s = " " + s
				p.s = s
			}
			if !st.UseRegex {
				out = append(out, p)
				continue
			}
			out = st.splitBy(p, Isolated, false, out, sc)
		case OpMetaspace:
			s = strings.ReplaceAll(s, " ", st.Pattern)
			switch st.Prepend {
			case PrependAlways:
				if !strings.HasPrefix(s, st.Pattern) {
					s = st.Pattern + s
				}
			case PrependFirst:
				if p.atStart && !strings.HasPrefix(s, st.Pattern) {
					s = st.Pattern + s
				}
			}
			p.s = s
			if !st.SplitWords {
				out = append(out, p)
				continue
			}
			out = st.splitBy(p, MergedWithNext, false, out, sc)
		case OpSplit:
			out = st.splitBy(p, st.Behavior, st.Invert, out, sc)
		case OpDigits:
			b := Contiguous
			if st.Individual {
				b = Isolated
			}
			out = st.splitBy(p, b, false, out, sc)
		case OpPunctuation:
			out = st.splitBy(p, st.Behavior, false, out, sc)
		case OpWhitespace:
			out = st.splitBy(p, Removed, true, out, sc)
		case OpWhitespaceSplit:
			out = st.splitBy(p, Removed, false, out, sc)
		}
	}
	return out
}

// splitBy splits p at the matches of st.split as NormalizedString::split
// does with the behavior b and invert, dropping empty pieces.
func (st *pipeStep) splitBy(p piece, b Behavior, invert bool, out []piece, sc *pipeScratch) []piece {
	s := p.s
	if s == "" {
		return out
	}
	ms := st.split.matches(s, sc.spans[:0], sc)
	sc.spans = ms
	// The matches and the text between them tile s (find_matches).
	tiles, isMatch := sc.tiles[:0], sc.match[:0]
	prev := 0
	for _, m := range ms {
		if prev != m.start {
			tiles, isMatch = append(tiles, span{prev, m.start}), append(isMatch, invert)
		}
		tiles, isMatch = append(tiles, m), append(isMatch, !invert)
		prev = m.end
	}
	if prev != len(s) {
		tiles, isMatch = append(tiles, span{prev, len(s)}), append(isMatch, invert)
	}
	sc.tiles, sc.match = tiles, isMatch
	emit := func(sp span) {
		if sp.end > sp.start {
			out = append(out, piece{s[sp.start:sp.end], p.atStart && sp.start == 0})
		}
	}
	switch b {
	case Isolated:
		for _, sp := range tiles {
			emit(sp)
		}
	case Removed:
		for k, sp := range tiles {
			if !isMatch[k] {
				emit(sp)
			}
		}
	case MergedWithPrevious:
		// A match joins the piece before it unless that was a match too.
		prevMatch := false
		var acc []span
		for k, sp := range tiles {
			if isMatch[k] && !prevMatch && len(acc) > 0 {
				acc[len(acc)-1].end = sp.end
			} else {
				acc = append(acc, sp)
			}
			prevMatch = isMatch[k]
		}
		for _, sp := range acc {
			emit(sp)
		}
	case MergedWithNext:
		// The same from the right: a match joins the piece after it.
		prevMatch := false
		var acc []span
		for k := len(tiles) - 1; k >= 0; k-- {
			sp := tiles[k]
			if isMatch[k] && !prevMatch && len(acc) > 0 {
				acc[len(acc)-1].start = sp.start
			} else {
				acc = append(acc, sp)
			}
			prevMatch = isMatch[k]
		}
		for k := len(acc) - 1; k >= 0; k-- {
			emit(acc[k])
		}
	case Contiguous:
		prevMatch := false
		var acc []span
		for k, sp := range tiles {
			if isMatch[k] == prevMatch && len(acc) > 0 {
				acc[len(acc)-1].end = sp.end
			} else {
				acc = append(acc, sp)
			}
			prevMatch = isMatch[k]
		}
		for _, sp := range acc {
			emit(sp)
		}
	}
	return out
}
