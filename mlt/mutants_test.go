package mlt

import (
	"testing"
	"unicode/utf8"
)

// Tests from the mutants gremlins left alive in mlt (docs/RELIABILITY.md,
// "mlt, session 8"): each fails with the mutant it names planted.

// TestDecodeEdgeIDs: the id just past the vocabulary is skipped like any
// other outside it (decode.go's `id >= len(t.Tokens)`; `>` faults on it), in
// Decode and in a StreamDecoder.
func TestDecodeEdgeIDs(t *testing.T) {
	bl := smallByteLevel()
	sp := smallSentencePiece(0)
	for _, tk := range []*Tokenizer{bl, sp} {
		n := len(tk.Tokens)
		if got := tk.Decode([]int{'a', n, 'b', n - 1}); tk == bl && got != "ab<|x|>" || tk == sp && got != "ab<s>" {
			t.Errorf("kind %d: Decode with id %d = n_vocab: %q", tk.Kind, n, got)
		}
		d := tk.NewStreamDecoder()
		if got := d.Add(n) + d.Flush(); got != "" {
			t.Errorf("kind %d: stream Add(n_vocab) = %q, want nothing", tk.Kind, got)
		}
	}
}

// TestDecodeNormalizedAdded: with a pipeline, an added token marked
// normalized decodes to its normalized text (decodeAs), as the tokenizers
// library's decode of its normalized content does, and an added token not
// marked so decodes to its own bytes (decode.go's `tok.Attr == AttrAdded`).
func TestDecodeNormalizedAdded(t *testing.T) {
	tk := smallByteLevelPipeline()
	tk.Tokens[259].Bytes = []byte("<|X|>")
	tk.Tokens = append(tk.Tokens, Token{Attr: AttrAdded, Bytes: []byte("<|Y|>")}) // 260
	tk.Pipeline.Normalizers = []Step{{Op: OpLowercase}}
	tk.Pipeline.Added = []AddedOptions{AddedNormalized, 0}
	if err := tk.Validate(); err != nil {
		t.Fatal(err)
	}
	if got, want := tk.Decode([]int{259, 'a', 260}), "<|x|>a<|Y|>"; got != want {
		t.Errorf("Decode = %q, want %q", got, want)
	}
}

// lossyRef is String::from_utf8_lossy by its definition: a valid character
// is kept; otherwise the longest prefix that can still begin a valid
// character (utf8.FullRune false: the maximal subpart) or else one byte
// becomes one U+FFFD.
func lossyRef(b []byte) string {
	var out []byte
	for len(b) > 0 {
		if r, s := utf8.DecodeRune(b); r != utf8.RuneError || s > 1 {
			out, b = append(out, b[:s]...), b[s:]
			continue
		}
		k := 1
		for j := 2; j <= min(3, len(b)) && !utf8.FullRune(b[:j]); j++ {
			k = j
		}
		out, b = utf8.AppendRune(out, utf8.RuneError), b[k:]
	}
	return string(out)
}

// TestLossyExhaustive: appendLossy equals lossyRef on every sequence of one
// and two bytes and on every sequence of up to four bytes drawn from the
// boundaries of UTF-8's byte ranges (seqInfo's cases, the continuation range,
// ASCII); and a byte-level StreamDecoder fed the bytes one at a time gives the
// same text, each piece valid UTF-8 (incompleteTail holds back exactly the
// bytes that may still become a character).
func TestLossyExhaustive(t *testing.T) {
	tk := smallByteLevel()
	check := func(b []byte) {
		t.Helper()
		want := lossyRef(b)
		if got := string(appendLossy(nil, b)); got != want {
			t.Fatalf("appendLossy(% x) = %q, want %q", b, got, want)
		}
		d := tk.NewStreamDecoder()
		var got string
		for _, c := range b {
			piece := d.Add(int(c))
			if !utf8.ValidString(piece) {
				t.Fatalf("stream of % x: piece %q is not valid UTF-8", b, piece)
			}
			got += piece
		}
		if got += d.Flush(); got != want {
			t.Fatalf("stream of % x = %q, want %q", b, got, want)
		}
	}
	for c := range 256 {
		check([]byte{byte(c)})
		for c2 := range 256 {
			check([]byte{byte(c), byte(c2)})
		}
	}
	edges := []byte{0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF,
		0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF}
	for _, a := range edges {
		for _, b := range edges {
			for _, c := range edges {
				check([]byte{a, b, c})
				for _, e := range edges {
					check([]byte{a, b, c, e})
				}
			}
		}
	}
}

// TestDecodePipelineStrip: with a pipeline, the Strip decoder's count says
// whether the text's leading space goes (decode.go's `DecodeStrip > 0`),
// whatever flag 128 says.
func TestDecodePipelineStrip(t *testing.T) {
	for _, tc := range []struct {
		strip int
		flags uint32
		want  string
	}{{1, 0, "a b"}, {0, 0, " a b"}, {1, FlagNoPrefix, "a b"}, {0, FlagNoPrefix, " a b"}} {
		tk := smallSentencePiecePipeline()
		tk.Pipeline.DecodeStrip = uint8(tc.strip)
		tk.Flags |= tc.flags
		if got := tk.Decode([]int{259, 256, 258}); got != tc.want {
			t.Errorf("DecodeStrip %d, flags %d: Decode = %q, want %q", tc.strip, tc.flags, got, tc.want)
		}
	}
}

// TestDecodeMetaspaceAtEnd: a kind 1 token ending in the first two bytes of
// ▁ (E2 96) decodes to its bytes; indexMetaspace reads no byte past the
// token (decode.go's `i+2 < len(b)`).
func TestDecodeMetaspaceAtEnd(t *testing.T) {
	tk := smallSentencePiece(0)
	tk.Tokens = append(tk.Tokens, Token{Attr: AttrAdded, Bytes: []byte("x\xE2\x96")}, // 262
		Token{Attr: AttrAdded, Bytes: []byte("y\xE2\x96\x81")}) // 263: ends in ▁
	if err := tk.Validate(); err != nil {
		t.Fatal(err)
	}
	if got, want := tk.Decode([]int{262, 263}), "x\xE2\x96y "; got != want {
		t.Errorf("Decode = %q, want %q", got, want)
	}
}
