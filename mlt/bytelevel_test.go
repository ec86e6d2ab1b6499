package mlt

import (
	"math/rand/v2"
	"slices"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// tinyByteLevel makes a kind 2 tokenizer whose ids 0..255 are the single bytes,
// followed by the given pieces; merges are given as (left, right) piece strings.
func tinyByteLevel(t *testing.T, flags uint32, pieces []string, merges [][2]string) *Tokenizer {
	t.Helper()
	tk := &Tokenizer{Kind: KindByteLevel, Flags: flags, BOS: -1, EOS: -1}
	id := map[string]int{}
	for b := range 256 {
		tk.Tokens = append(tk.Tokens, Token{Bytes: []byte{byte(b)}})
		id[string([]byte{byte(b)})] = b
	}
	for _, p := range pieces {
		id[p] = len(tk.Tokens)
		tk.Tokens = append(tk.Tokens, Token{Bytes: []byte(p)})
	}
	for _, m := range merges {
		tk.Merges = append(tk.Merges, [3]uint32{uint32(id[m[0]]), uint32(id[m[1]]), uint32(id[m[0]+m[1]])})
	}
	if err := tk.Validate(); err != nil {
		t.Fatal(err)
	}
	return tk
}

func TestEncodeByteLevelFlags(t *testing.T) {
	// 256 "ab", 257 "abc", 258 "é" (c3 a9), 259 " ab", 260 " 1"
	pieces := []string{"ab", "abc", "é", " ab", " 1"}
	merges := [][2]string{{"a", "b"}, {"\xc3", "\xa9"}, {" ", "ab"}, {" ", "1"}}
	tests := []struct {
		flags uint32
		in    string
		want  []int
	}{
		{0, "abc", []int{256, 'c'}},                       // no rule makes abc
		{FlagIgnoreMerges, "abc", []int{257}},             // but it is in the vocabulary
		{FlagIgnoreMerges, "abcab", []int{256, 'c', 256}}, // only whole pre-tokens count
		{0, "ab ab", []int{256, 259}},
		{0, "e\u0301", []int{'e', 0xcc, 0x81}},
		{FlagNFC, "e\u0301", []int{258}},
		{0, "ab12345", []int{256, '1', '2', '3', '4', '5'}},
		{FlagSplitDigits | FlagGPT2Regex, "ab 12", []int{256, ' ', '1', '2'}},
		{FlagGPT2Regex, "ab 12", []int{256, 260, '2'}},
		{0, "ab 12", []int{256, ' ', '1', '2'}}, // Llama 3: " " and "12" are separate pre-tokens
		{FlagGPT2Regex, "x ab", []int{'x', 259}},
		{FlagSplitDigits | FlagGPT2Regex, "1 ab", []int{'1', 259}},
	}
	for _, tc := range tests {
		tk := tinyByteLevel(t, tc.flags, pieces, merges)
		if got := tk.encodeByteLevel(tc.in, nil); !slices.Equal(got, tc.want) {
			t.Errorf("flags %d, %q: got %v, want %v", tc.flags, tc.in, got, tc.want)
		}
		// Again, now through the cache.
		if got := tk.encodeByteLevel(tc.in, nil); !slices.Equal(got, tc.want) {
			t.Errorf("flags %d, %q (cached): got %v, want %v", tc.flags, tc.in, got, tc.want)
		}
	}
}

// TestEncodeByteLevelConcurrent shares one tokenizer (and its pre-token cache)
// between goroutines; run with -race.
func TestEncodeByteLevelConcurrent(t *testing.T) {
	tk := tinyByteLevel(t, 0, []string{"ab", " ab"}, [][2]string{{"a", "b"}, {" ", "ab"}})
	want := []int{256, 257, 257, 'c'}
	done := make(chan []int)
	for range 4 {
		go func() {
			var got []int
			for range 200 {
				got = tk.encodeByteLevel("ab ab abc", got[:0])
			}
			done <- got
		}()
	}
	for range 4 {
		if got := <-done; !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	}
}

// refEncodeByteLevel is the byte-level pipeline built from the reference
// parts: NFC, the Digits split and the pre-tokenizer regex run by regexp2, the
// vocabulary lookup of ignore_merges, and naiveMerge over the bytes.
func refEncodeByteLevel(t testing.TB, tk *Tokenizer, vocab map[string]int, rank map[[2]int]int, s string) []int {
	if tk.Flags&FlagNFC != 0 {
		s = norm.NFC.String(s)
	}
	re := map[pattern]string{patLlama3: reLlama3, patQwen2: reQwen2, patQwen35: reQwen35, patGPT2: reGPT2}[patternFor(tk.Flags)]
	pieces := []string{s}
	if tk.Flags&FlagSplitDigits != 0 {
		pieces = refSplit(t, `\p{N}|\P{N}+`, s)
	}
	var out []int
	for _, piece := range pieces {
		for _, w := range refSplit(t, folded(re), piece) {
			if id, ok := vocab[w]; ok && tk.Flags&FlagIgnoreMerges != 0 {
				out = append(out, id)
				continue
			}
			var ids []int
			for i := 0; i < len(w); i++ {
				ids = append(ids, vocab[w[i:i+1]])
			}
			out = append(out, naiveMergeRanks(rank, tk.Merges, ids)...)
		}
	}
	return out
}

// TestByteLevelMatchesReference compares encodeByteLevel with the reference
// pipeline on random texts, with the shipped vocabularies under every regex
// and the digit pre-split.
func TestByteLevelMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, name := range []string{"llama3", "qwen3", "gpt2"} {
		base := shipped(t, name)
		rank := naiveRanks(base.Merges)
		vocab := map[string]int{} // normal tokens: bytes → id
		for id, tok := range base.Tokens {
			if tok.Attr == AttrNormal {
				vocab[string(tok.Bytes)] = id
			}
		}
		for _, flags := range []uint32{base.Flags, FlagGPT2Regex | FlagSplitDigits, FlagNFC | FlagQwen35Regex | FlagIgnoreMerges, FlagSingleDigits | FlagSplitDigits} {
			tk := &Tokenizer{Kind: base.Kind, Flags: flags, BOS: -1, EOS: -1, Tokens: base.Tokens, Merges: base.Merges}
			for range 60 {
				s := randomText(r, r.IntN(30))
				want := refEncodeByteLevel(t, tk, vocab, rank, s)
				if got := tk.encodeByteLevel(s, nil); !slices.Equal(got, want) {
					t.Fatalf("%s flags %d, %q: got %v, want %v", name, flags, s, got, want)
				}
			}
		}
	}
}

// TestUnmergedTokens: the tokens that the merges do not build from their
// bytes, those where ignore_merges decides, whatever the flags.
func TestUnmergedTokens(t *testing.T) {
	// 256 "ab", 257 "abc" (no rule makes it), 258 "é", 259 "ba", 260 "aba"
	// (a rule a+ba, but a+b ranks first, and ab+a has no rule).
	pieces := []string{"ab", "abc", "é", "ba", "aba"}
	merges := [][2]string{{"a", "b"}, {"\xc3", "\xa9"}, {"b", "a"}, {"a", "ba"}}
	for _, fl := range []uint32{0, FlagIgnoreMerges} {
		tk := tinyByteLevel(t, fl, pieces, merges)
		if got, want := tk.UnmergedTokens(), []int{257, 260}; !slices.Equal(got, want) {
			t.Errorf("flags %d: got %v, want %v", fl, got, want)
		}
	}
	sp := &Tokenizer{Kind: KindSentencePiece, BOS: -1, EOS: -1, Tokens: []Token{{Bytes: []byte("ab")}}}
	if got := sp.UnmergedTokens(); got != nil {
		t.Errorf("SentencePiece: got %v, want none", got)
	}
}
