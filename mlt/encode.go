package mlt

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// addedMatcher finds added tokens in raw text: at a position, the longest
// added token starting there (Hugging Face matches added tokens leftmost-longest
// with Aho-Corasick; scanning left to right and taking the longest match at the
// first position that has one gives the same result).
type addedMatcher struct {
	first [256]bool        // bytes that start some added token
	edges map[uint64]int32 // node<<8 | byte → child node
	id    []int32          // node → token id ending there, -1 if none
	count int
}

func newAddedMatcher(toks []Token) addedMatcher {
	m := addedMatcher{edges: map[uint64]int32{}, id: []int32{-1}}
	for id, tok := range toks {
		if tok.Attr == AttrAdded && len(tok.Bytes) > 0 {
			m.add(tok.Bytes, id)
		}
	}
	return m
}

// add puts the token id with the (non-empty) text b into the matcher.
func (m *addedMatcher) add(b []byte, id int) {
	m.count++
	m.first[b[0]] = true
	node := int32(0)
	for _, c := range b {
		k := uint64(node)<<8 | uint64(c)
		next, ok := m.edges[k]
		if !ok {
			next = int32(len(m.id))
			m.id = append(m.id, -1)
			m.edges[k] = next
		}
		node = next
	}
	m.id[node] = int32(id)
}

// match returns the id and length of the longest added token that starts
// text, or (-1, 0).
func (m *addedMatcher) match(text string) (id, n int) {
	id = -1
	node := int32(0)
	for i := 0; i < len(text); i++ {
		next, ok := m.edges[uint64(node)<<8|uint64(text[i])]
		if !ok {
			break
		}
		node = next
		if m.id[node] >= 0 {
			id, n = int(m.id[node]), i+1
		}
	}
	return id, n
}

// Encode returns the ids of text. Added tokens are found first, in the raw
// text, longest match first; each stretch between them is encoded by the
// tokenizer's kind. With addBOS (add-special-tokens), the post-processor's
// single template puts its special tokens around the text (flag 2048), or
// BOS is prepended when the tokenizer says so (flag 1), as Hugging Face's
// encode with add_special_tokens does.
//
// Text that is not valid UTF-8 is still encoded: kind 2 encodes its bytes,
// kind 1 gives each invalid byte its byte-fallback token.
func (t *Tokenizer) Encode(text string, addBOS bool) []int {
	return t.AppendEncode(make([]int, 0, len(text)/3+4), text, addBOS)
}

// AppendEncode is Encode appending to out, for callers that reuse a buffer.
func (t *Tokenizer) AppendEncode(out []int, text string, addBOS bool) []int {
	t.prepare()
	if addBOS && t.Post != nil {
		return t.appendSingle(out, text)
	}
	if addBOS && t.Flags&FlagAddBOS != 0 && t.BOS >= 0 {
		out = append(out, int(t.BOS))
	}
	return t.appendText(out, text)
}

// EncodePrompt encodes a prompt for a model to continue: the special tokens
// the tokenizer puts before a text (BOS with flag 1, or the post-processor's
// items before $A), then the text, but none of those after it. A template
// such as `[BOS] $A [EOS]` ends a sequence with EOS, and a model asked to
// continue a sequence that has ended writes nothing useful.
func (t *Tokenizer) EncodePrompt(text string) []int {
	if t.Post == nil {
		return t.Encode(text, true)
	}
	t.prepare()
	out := make([]int, 0, len(text)/3+4)
	for _, it := range t.Post.Single {
		if it.Seq == PostSeqA {
			break
		}
		for _, id := range it.IDs {
			out = append(out, int(id))
		}
	}
	return t.appendText(out, text)
}

// appendText appends the ids of text, without special tokens around it.
func (t *Tokenizer) appendText(out []int, text string) []int {
	if t.pipe != nil {
		return t.encodePipeline(text, out)
	}
	start := 0
	if t.added.count > 0 {
		first := &t.added.first
		for i := 0; i < len(text); i++ {
			if !first[text[i]] {
				continue
			}
			id, n := t.added.match(text[i:])
			if n == 0 {
				continue
			}
			out = t.encodeSegment(text[start:i], start == 0, out)
			out = append(out, id)
			start = i + n
			i = start - 1
		}
	}
	return t.encodeSegment(text[start:], start == 0, out)
}

// encodeSegment appends the ids of seg, a stretch between added tokens;
// atStart tells whether it begins the text.
func (t *Tokenizer) encodeSegment(seg string, atStart bool, out []int) []int {
	if seg == "" {
		return out
	}
	if t.Kind == KindByteLevel {
		return t.encodeByteLevel(seg, out)
	}
	return t.encodeSentencePiece(seg, atStart, out)
}

const metaspace = "▁"

// encodeSentencePiece is kind 1: spaces become ▁, ▁ is prepended by the
// flag's rule, each character becomes its piece (or its bytes' byte-fallback
// tokens when the vocabulary lacks it), and the merges run over the whole
// segment (there is no pre-tokenizer).
func (t *Tokenizer) encodeSentencePiece(seg string, atStart bool, out []int) []int {
	prefix := true
	switch {
	case t.Flags&FlagNoPrefix != 0:
		prefix = false
	case t.Flags&FlagPrefixOnce != 0:
		// Metaspace "first": only the segment at offset 0, and not when it
		// already starts with ▁ once spaces are replaced.
		prefix = atStart && seg[0] != ' ' && !strings.HasPrefix(seg, metaspace)
	}
	if t.Flags&FlagIgnoreMerges != 0 {
		w := strings.ReplaceAll(seg, " ", metaspace)
		if prefix {
			w = metaspace + w
		}
		if id, ok := t.pieceID[w]; ok {
			return append(out, id)
		}
		if id, n := t.added.match(w); n == len(w) {
			return append(out, id)
		}
	}
	return t.spWords(seg, prefix, true, out)
}

// spPreToken appends the ids of one pre-token of a kind 1 tokenizer with a
// pipeline: the pre-token reaches the model as it is (spaces are not ▁).
func (t *Tokenizer) spPreToken(w string, out []int) []int {
	if t.Flags&FlagIgnoreMerges != 0 {
		if id, ok := t.pieceID[w]; ok {
			return append(out, id)
		}
		if id, n := t.added.match(w); n == len(w) {
			return append(out, id)
		}
	}
	if !t.spSplit {
		return t.spWord(w, false, false, out)
	}
	return t.spWords(w, false, false, out)
}

// spWords appends the ids of seg, merged word by word. The merges cannot join
// a character to a following ▁ unless some token holds that pair
// (t.crossASCII, t.crossOther), so the segment splits into words before such
// a ▁ and each word merges alone, which gives the same ids as merging the
// whole segment at once, in less time, and lets words be cached. With spaces,
// a ' ' stands for ▁ (the SPEC.md kind 1, whose model replaces spaces).
func (t *Tokenizer) spWords(seg string, prefix, spaces bool, out []int) []int {
	ws, first := 0, true
	prevSpace, prevCross := prefix, false
	for i := 0; i < len(seg); {
		c := seg[i]
		size, space, cross := 1, spaces && c == ' ', false
		if c < utf8.RuneSelf {
			cross = t.crossASCII[c]
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(seg[i:])
			space = r == '▁'
			cross = t.crossOther[r]
		}
		if space && i > ws && !prevSpace && !prevCross {
			out = t.spWord(seg[ws:i], first && prefix, spaces, out)
			first, ws = false, i
		}
		prevSpace, prevCross = space, cross && !space
		i += size
	}
	return t.spWord(seg[ws:], first && prefix, spaces, out)
}

// spWord appends the ids of one word of a kind 1 segment, with a ▁ before it
// when prefix is set; with spaces, ' ' is ▁. A character without a piece gets
// its byte-fallback tokens, or when one of them is missing the pipeline's unk
// token, placed and fused as the tokenizers library's BPE does (the pending
// unk goes out before the next character that has a piece, so byte-fallback
// tokens can come before it), or nothing without unk.
func (t *Tokenizer) spWord(w string, prefix, spaces bool, out []int) []int {
	cache := !prefix && len(w) <= maxCachedPreToken
	if cache {
		if out, ok := t.merger.cached(w, out); ok {
			return out
		}
	}
	start := len(out)
	if prefix {
		out = append(out, t.spaceID...)
	}
	pendingUnk := false
	for i := 0; i < len(w); {
		c := w[i]
		if c < utf8.RuneSelf {
			if c == ' ' && spaces {
				out = append(out, t.spaceID...)
			} else if id := t.asciiID[c]; id >= 0 {
				if pendingUnk {
					out, pendingUnk = append(out, int(t.Pipeline.Unk)), false
				}
				out = append(out, int(id))
			} else {
				out, pendingUnk = t.spPiece(w[i:i+1], out, pendingUnk)
			}
			i++
			continue
		}
		_, size := utf8.DecodeRuneInString(w[i:])
		out, pendingUnk = t.spPiece(w[i:i+size], out, pendingUnk)
		i += size
	}
	if pendingUnk {
		out = append(out, int(t.Pipeline.Unk))
	}
	out = out[:start+len(t.merger.merge(out[start:]))]
	if cache {
		t.merger.store(w, out[start:])
	}
	return out
}

// spPiece appends the id of the one-character piece p, or its byte-fallback
// ids; pendingUnk says whether an unk waits to be appended (see spWord), and
// the new value is returned.
func (t *Tokenizer) spPiece(p string, out []int, pendingUnk bool) ([]int, bool) {
	id, ok := t.pieceID[p]
	if !ok {
		// An added token that is also a vocabulary piece (Gemma's "▁▁", "\n").
		if aid, n := t.added.match(p); n == len(p) {
			id, ok = aid, true
		}
	}
	if ok {
		if pendingUnk {
			out = append(out, int(t.Pipeline.Unk))
		}
		return append(out, id), false
	}
	all := true
	for i := 0; i < len(p); i++ {
		all = all && t.byteID[p[i]] >= 0
	}
	if all {
		for i := 0; i < len(p); i++ {
			out = append(out, t.byteID[p[i]])
		}
		return out, pendingUnk
	}
	// Only a pipeline tokenizer can lack byte tokens (Validate).
	pl := t.Pipeline
	if pl.Unk < 0 {
		return out, false
	}
	if pendingUnk && !pl.FuseUnk {
		out = append(out, int(pl.Unk))
	}
	return out, true
}

// Lookup returns the id of a token given as its stored text: an added token's
// content, a normal piece (raw bytes for kind 2, ▁ for spaces in kind 1), or
// for kind 1 a byte token written <0xXX>.
func (t *Tokenizer) Lookup(piece string) (int, bool) {
	t.prepare()
	if id, n := t.added.match(piece); n == len(piece) && n > 0 {
		return id, true
	}
	if id, ok := t.pieceID[piece]; ok {
		return id, true
	}
	if t.Kind == KindSentencePiece && len(piece) == 6 && strings.HasPrefix(piece, "<0x") && piece[5] == '>' {
		if v, err := strconv.ParseUint(piece[3:5], 16, 8); err == nil && strings.ToUpper(piece[3:5]) == piece[3:5] {
			return t.byteID[v], true
		}
	}
	return 0, false
}
