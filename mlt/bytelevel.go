package mlt

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// encodeByteLevel appends to out the ids of seg, a stretch of text between
// added tokens, for a kind 2 (byte-level BPE) tokenizer: NFC when flag 8, the
// digit pre-split when flag 64, the pre-tokenizer regex chosen by the flags
// (pretok.go), then per pre-token either its vocabulary id (flag 2,
// ignore_merges) or its bytes merged by rank.
func (t *Tokenizer) encodeByteLevel(seg string, out []int) []int {
	t.prepare()
	if t.Flags&FlagNFC != 0 {
		seg = norm.NFC.String(seg) // returns seg itself when already NFC
	}
	p := patternFor(t.Flags)
	if t.Flags&FlagSplitDigits != 0 {
		splitDigits(seg, func(piece string) { out = t.encodePreTokens(piece, p, out) })
		return out
	}
	return t.encodePreTokens(seg, p, out)
}

// encodePreTokens splits s with pattern p and appends the ids of each pre-token.
func (t *Tokenizer) encodePreTokens(s string, p pattern, out []int) []int {
	for i := 0; i < len(s); {
		j := p.next(s, i)
		out = t.encodePreToken(s[i:j], out)
		i = j
	}
	return out
}

// maxCachedPreToken is the longest pre-token whose ids the merger caches.
const maxCachedPreToken = 64

// encodePreToken appends the ids of one pre-token w.
func (t *Tokenizer) encodePreToken(w string, out []int) []int {
	if len(w) == 1 {
		return append(out, t.byteID[w[0]])
	}
	if t.Flags&FlagIgnoreMerges != 0 {
		if id, ok := t.pieceID[w]; ok {
			return append(out, id)
		}
	}
	m := t.merger
	if len(w) <= maxCachedPreToken {
		if out, ok := m.cached(w, out); ok {
			return out
		}
	}
	start := len(out)
	for i := 0; i < len(w); i++ {
		out = append(out, t.byteID[w[i]])
	}
	out = out[:start+len(m.merge(out[start:]))]
	if len(w) <= maxCachedPreToken {
		m.store(w, out[start:])
	}
	return out
}

// maxCacheEntries bounds the merger's pre-token cache; it starts over when full.
const maxCacheEntries = 1 << 16

// cached appends the cached ids of pre-token w to out, if present.
func (m *merger) cached(w string, out []int) ([]int, bool) {
	m.mu.Lock()
	ids, ok := m.cache[w]
	m.mu.Unlock()
	if !ok {
		return out, false
	}
	for _, id := range ids {
		out = append(out, int(id))
	}
	return out, true
}

// store caches the ids of pre-token w.
func (m *merger) store(w string, ids []int) {
	c := make([]int32, len(ids))
	for i, id := range ids {
		c[i] = int32(id)
	}
	m.mu.Lock()
	if m.cache == nil || len(m.cache) >= maxCacheEntries {
		m.cache = make(map[string][]int32)
	}
	m.cache[strings.Clone(w)] = c // w points into the caller's text
	m.mu.Unlock()
}
