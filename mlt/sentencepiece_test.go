package mlt

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// refSentencePiece is a plain, slow kind 1 encoder written from the Hugging
// Face pipeline, sharing no code with Encode: added tokens leftmost-longest by
// trying every token at every position; per segment the normalized string
// (prefix rule, spaces → ▁) as one word of characters, byte fallback, and the
// merges applied by scanning for the lowest rank, leftmost, until none applies.
type refSentencePiece struct {
	t     *Tokenizer
	added []int
	piece map[string]int
	rules map[[2]int][2]int // pair → rank, merged; later rules win, as in tokenizers
}

func newRefSentencePiece(t *Tokenizer) *refSentencePiece {
	r := &refSentencePiece{t: t, piece: map[string]int{}, rules: map[[2]int][2]int{}}
	for id, tok := range t.Tokens {
		switch tok.Attr {
		case AttrAdded:
			r.added = append(r.added, id)
			if _, ok := r.piece[string(tok.Bytes)]; !ok {
				r.piece[string(tok.Bytes)] = id
			}
		case AttrNormal:
			r.piece[string(tok.Bytes)] = id
		}
	}
	for rank, m := range t.Merges {
		r.rules[[2]int{int(m[0]), int(m[1])}] = [2]int{rank, int(m[2])}
	}
	return r
}

func (r *refSentencePiece) encode(text string) []int {
	var out []int
	start := 0
	for i := 0; i <= len(text); i++ {
		best, bestLen := -1, 0
		for _, id := range r.added {
			b := r.t.Tokens[id].Bytes
			if len(b) > bestLen && strings.HasPrefix(text[i:], string(b)) {
				best, bestLen = id, len(b)
			}
		}
		if best < 0 && i < len(text) {
			continue
		}
		out = append(out, r.segment(text[start:i], start == 0)...)
		if best >= 0 {
			out = append(out, best)
			start = i + bestLen
			i = start - 1
		}
	}
	return out
}

func (r *refSentencePiece) segment(seg string, atStart bool) []int {
	if seg == "" {
		return nil
	}
	w := strings.ReplaceAll(seg, " ", "▁")
	switch {
	case r.t.Flags&FlagNoPrefix != 0:
	case r.t.Flags&FlagPrefixOnce != 0:
		if atStart && !strings.HasPrefix(w, "▁") {
			w = "▁" + w
		}
	default:
		w = "▁" + w
	}
	var syms []int
	for i := 0; i < len(w); {
		_, size := utf8.DecodeRuneInString(w[i:])
		if id, ok := r.piece[w[i:i+size]]; ok {
			syms = append(syms, id)
		} else {
			for _, c := range []byte(w[i : i+size]) {
				syms = append(syms, r.t.byteID[c])
			}
		}
		i += size
	}
	for {
		bestRank, at, merged := -1, -1, 0
		for i := 0; i+1 < len(syms); i++ {
			if m, ok := r.rules[[2]int{syms[i], syms[i+1]}]; ok && (bestRank < 0 || m[0] < bestRank) {
				bestRank, at, merged = m[0], i, m[1]
			}
		}
		if at < 0 {
			return syms
		}
		syms = append(syms[:at+1], syms[at+2:]...)
		syms[at] = merged
	}
}

// FuzzSentencePieceReference compares Encode of the shipped kind 1
// tokenizers (llama2: prefix on every segment; gemma3: no prefix, 6,415 added
// tokens, a token holding ">▁</") with the plain reference above, which merges
// each segment whole: it checks the word split and the cache of encode.go.
func FuzzSentencePieceReference(f *testing.F) {
	for _, s := range []string{
		"Hello world", "  two  spaces  ", "<s>a</s> b", "<table><tr><td>x</td></tr></table>", "a>▁</b> c",
		"▁▁▁ literal ▁", "\n\n\tx\t\t", "東京 🇮🇸 x\u0301", "\x00\u0085\U0010FFFF", "<start_of_turn>user\nhi<end_of_turn>",
	} {
		f.Add(s)
	}
	names := []string{"llama2", "gemma3"}
	toks := map[string]*Tokenizer{}
	refs := map[string]*refSentencePiece{}
	for _, n := range names {
		toks[n] = shipped(f, n)
		toks[n].prepare()
		refs[n] = newRefSentencePiece(toks[n])
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || len(s) > 300 {
			return
		}
		for _, n := range names {
			got, want := toks[n].Encode(s, false), refs[n].encode(s)
			if !slices.Equal(got, want) {
				t.Errorf("%s Encode(%q):\n got %v\nwant %v (reference)", n, s, got, want)
			}
		}
	})
}
