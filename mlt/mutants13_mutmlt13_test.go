package mlt

import (
	"slices"
	"testing"
)

// Tests of session 13's mutation pass (mutmlt13) over bpe.go, encode.go,
// pretok.go and hf.go: each targets mutants that lived under the older tests.
// Expected values are worked out by hand from the documented rule, or come
// from a second, simple implementation in the test.

// TestMutants13MergeStack: merge documents that a word of up to stackSymbols
// symbols needs no heap allocation (its linked list and heap live in arrays
// on the stack: at most n-1 initial pairs and two pushes per merge, so 3n
// entries). A word of exactly stackSymbols symbols, every pair merging, must
// allocate nothing; the result is checked against naiveMerge.
func TestMutants13MergeStack(t *testing.T) {
	// a=0, b=1; a b -> 2 (rank 0), 2 2 -> 3 (rank 1), 3 3 -> 4 (rank 2).
	rules := [][3]uint32{{0, 1, 2}, {2, 2, 3}, {3, 3, 4}}
	m := newMergerRules(rules)
	word := make([]int, stackSymbols)
	for i := range word {
		word[i] = i % 2
	}
	// 48 symbols: 24 "ab" → 24 × 2 → 12 × 3 → 6 × 4.
	want := []int{4, 4, 4, 4, 4, 4}
	if got := naiveMerge(rules, word); !slices.Equal(got, want) {
		t.Fatalf("naiveMerge: got %v, want %v", got, want)
	}
	buf := make([]int, len(word))
	copy(buf, word)
	if got := m.merge(buf); !slices.Equal(got, want) {
		t.Fatalf("merge: got %v, want %v", got, want)
	}
	if a := testing.AllocsPerRun(20, func() {
		copy(buf, word)
		m.merge(buf)
	}); a != 0 {
		t.Errorf("merge of %d symbols: %v allocations, want 0", stackSymbols, a)
	}
}

// TestMutants13InvalidByteKind1: Encode documents that kind 1 gives each
// invalid UTF-8 byte its byte-fallback token. A lone continuation byte 0x80
// (the first byte value past ASCII) at the start of a word, without and with
// the prefix ▁, and between pieces: smallSentencePiece's byte tokens have
// id = byte, "a" is 257, "▁" 256 and "▁a" 259 (merge ▁ a), so by hand
// "\x80a" → 128 257, "a\x80" → 257 128, and with the prefix "\x80" → 256 128.
func TestMutants13InvalidByteKind1(t *testing.T) {
	np := smallSentencePiece(FlagNoPrefix)
	pf := smallSentencePiece(0)
	for _, tc := range []struct {
		tk   *Tokenizer
		text string
		want []int
	}{
		{np, "\x80a", []int{128, 257}},
		{np, "a\x80", []int{257, 128}},
		{np, "\x80\xff", []int{128, 255}},
		{pf, "\x80", []int{256, 128}},
		{pf, "a \x80", []int{259, 256, 128}},
	} {
		if got := tc.tk.Encode(tc.text, false); !slices.Equal(got, tc.want) {
			t.Errorf("flags %#x Encode(%q): got %v, want %v", tc.tk.Flags, tc.text, got, tc.want)
		}
	}
}

// TestMutants13PretokEdges: the scanners at the end of the text, where a
// contraction is cut short, and on invalid UTF-8 (each invalid byte is one
// U+FFFD, a symbol: pretok.go's rule). Expected splits by hand from the
// regexes: "'r" has no contraction 're, so Llama 3 takes
// [^\r\n\p{L}\p{N}]?\p{L}+ ("'r" whole) and GPT-2, without that prefix,
// ` ?[^\s\p{L}\p{N}]+` then ` ?\p{L}+`; "'" before an invalid 0xC5 (the
// first byte of ſ, cut off) is a run of two symbols.
func TestMutants13PretokEdges(t *testing.T) {
	for _, tc := range []struct {
		p    pattern
		in   string
		want []string
	}{
		{patLlama3, "'r", []string{"'r"}},
		{patLlama3, "'v", []string{"'v"}},
		{patLlama3, "'L", []string{"'L"}},
		{patLlama3, "x'r", []string{"x", "'r"}},
		{patGPT2, "'r", []string{"'", "r"}},
		{patGPT2, "'l", []string{"'", "l"}},
		{patLlama3, "'\xc5", []string{"'\xc5"}},
		{patLlama3, "a'\xc5", []string{"a", "'\xc5"}},
		{patLlama3, "\x80", []string{"\x80"}},
		{patLlama3, "a\x80", []string{"a", "\x80"}},
		{patLlama3, "\x80\x80!", []string{"\x80\x80!"}},
		{patGPT2, "\x80", []string{"\x80"}},
		{patQwen35, " \x80", []string{" \x80"}},
	} {
		if got := scan(tc.p, tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("pattern %d, %q: got %q, want %q", tc.p, tc.in, got, tc.want)
		}
	}
}

// TestMutants13DigitFlags: patternFor picks Llama 3's \p{N}{1,3} without
// flags and single digits (Qwen 2) with flag 16. With a merge "1 2", "1234"
// is the pre-tokens "123" "4" under Llama 3, so ids "12" '3' '4', and "1" "2"
// "3" "4" under Qwen 2, so no merge.
func TestMutants13DigitFlags(t *testing.T) {
	for _, tc := range []struct {
		flags uint32
		want  []int
	}{
		{0, []int{256, '3', '4'}},
		{FlagSingleDigits, []int{'1', '2', '3', '4'}},
	} {
		tk := tinyByteLevel(t, tc.flags, []string{"12"}, [][2]string{{"1", "2"}})
		if got := tk.Encode("1234", false); !slices.Equal(got, tc.want) {
			t.Errorf("flags %#x: got %v, want %v", tc.flags, got, tc.want)
		}
	}
}

// TestMutants13EmptyNormalized: appendPlain (FIMPrompt's encoder) must give
// what Encode gives: a text that the normalizers empty (Strip on spaces) has
// no pre-token and so no ids. With ignore_merges and no pre-tokenizer, the
// empty text used to reach spPreToken as a pre-token, where the added-token
// matcher's "no match" (-1, length 0) equals its length 0 and id -1 was
// appended (found by encode.go:51's mutant `id = -1` → `+1`).
func TestMutants13EmptyNormalized(t *testing.T) {
	tk := smallSentencePiecePipeline()
	tk.Flags |= FlagIgnoreMerges
	tk.Pipeline.Normalizers = []Step{{Op: OpStrip, Left: true, Right: true}}
	tk.Pipeline.PreTokenizers = nil
	if err := tk.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"  ", " \t "} {
		if got := tk.appendPlain(nil, s, true); len(got) != 0 {
			t.Errorf("appendPlain(%q): got %v, want no ids", s, got)
		}
		if got := tk.Encode(s, false); len(got) != 0 {
			t.Errorf("Encode(%q): got %v, want no ids", s, got)
		}
	}
	// A text left non-empty still encodes: " a " strips to "a", the piece 257
	// (with ignore_merges a whole pre-token in the vocabulary is its id).
	if got, want := tk.appendPlain(nil, " a ", true), []int{257}; !slices.Equal(got, want) {
		t.Errorf("appendPlain(\" a \"): got %v, want %v", got, want)
	}
}
