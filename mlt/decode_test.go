package mlt

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestAppendLossy checks the replacement of invalid UTF-8 against Rust's
// String::from_utf8_lossy, which replaces each maximal subpart of an invalid
// sequence with one U+FFFD (Unicode 15 §3.9, "U+FFFD Substitution of Maximal
// Subparts"; the examples are those of its Table 3-8 and the WHATWG decoder).
func TestAppendLossy(t *testing.T) {
	const r = "\uFFFD"
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"abc", "abc"},
		{"中文", "中文"},
		{"\xE2\x82A", r + "A"},              // truncated 3-byte sequence: one replacement
		{"\x80\x80", r + r},                 // lone continuation bytes: one each
		{"\xF0\x90\x80", r},                 // truncated 4-byte sequence at the end
		{"\xED\xA0\x80", r + r + r},         // surrogate: ED A0 is not a valid start
		{"\xC0\xAF", r + r},                 // overlong lead byte
		{"\xF4\x90\x80\x80", r + r + r + r}, // above U+10FFFF
		{"\xE0\x80\x80", r + r + r},         // overlong 3-byte
		{"a\xF1\x80\x80\xE1\x80\xC2b", "a" + r + r + r + "b"}, // Table 3-8
		{"\xFF", r},
	} {
		got := string(appendLossy(nil, []byte(tc.in)))
		if got != tc.want {
			t.Errorf("appendLossy(%q): got %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDecodeKinds(t *testing.T) {
	const r = "\uFFFD"
	bl := smallByteLevel()
	sp := smallSentencePiece(FlagAddBOS)
	np := smallSentencePiece(FlagAddBOS | FlagNoPrefix)
	for _, tc := range []struct {
		name string
		tok  *Tokenizer
		ids  []int
		want string
	}{
		{"bytes", bl, []int{258, 'o', ' ', 259}, "hello <|x|>"},
		{"bytelevel lossy", bl, []int{0xE2, 0x82, 'A'}, r + "A"},
		{"bytelevel out of range skipped", bl, []int{'a', 100000, -1, 'b'}, "ab"},
		// Kind 1: ▁ → space, then one leading space of the whole text removed.
		{"strip", sp, []int{259, 258}, "ab"},
		{"strip once", sp, []int{256, 259}, " a"},
		{"added first", sp, []int{261, 259, 258}, "<s> ab"},
		{"no prefix keeps space", np, []int{259, 258}, " ab"},
		// ByteFallback: a valid run becomes its text, an invalid one one U+FFFD per byte.
		{"byte run", sp, []int{0xE4, 0xB8, 0xAD, 257}, "中a"},
		{"bad byte run", sp, []int{0xE4, 0xB8, 0xAD, 0x80, 257}, r + r + r + r + "a"},
		{"byte space stripped", sp, []int{' ', 257}, "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.tok.Decode(tc.ids); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			d := tc.tok.NewStreamDecoder()
			var sb strings.Builder
			for _, id := range tc.ids {
				p := d.Add(id)
				if !utf8.ValidString(p) {
					t.Errorf("stream piece %q is not valid UTF-8", p)
				}
				sb.WriteString(p)
			}
			sb.WriteString(d.Flush())
			if sb.String() != tc.want {
				t.Errorf("stream: got %q, want %q", sb.String(), tc.want)
			}
		})
	}
}

// TestStreamHoldsPartialCharacters: a character split over byte tokens comes
// out whole, with the token that completes it.
func TestStreamHoldsPartialCharacters(t *testing.T) {
	d := smallByteLevel().NewStreamDecoder()
	var got []string
	for _, id := range []int{'a', 0xE4, 0xB8, 0xAD, 0xF0, 0x9F} {
		got = append(got, d.Add(id))
	}
	got = append(got, d.Flush())
	want := []string{"a", "", "", "中", "", "", "\uFFFD"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestEncodeSentencePieceFlags checks the ▁ prefix rules on the small kind 1
// tokenizer (ids: 256 ▁, 257 a, 258 b, 259 ▁a, 260 ab, 261 <s>; merges ▁+a
// before a+b), derived by hand from the Hugging Face behaviours: legacy
// Prepend on every non-empty segment, Metaspace "first" (flag 4) only at the
// text's start and not before a leading space, and none with flag 128.
func TestEncodeSentencePieceFlags(t *testing.T) {
	for _, tc := range []struct {
		flags uint32
		text  string
		want  []int
	}{
		{0, "ab", []int{259, 258}},          // ▁ a b: ▁+a wins by rank
		{0, "a b", []int{259, 256, 258}},    // ▁a ▁ b
		{0, " ab", []int{256, 259, 258}},    // ▁▁ab
		{0, "<s>ab", []int{261, 259, 258}},  // prefix after the added token too
		{0, "ab<s>", []int{259, 258, 261}},  // the empty segment after <s> gets nothing
		{0, "", []int{}},                    //
		{0, "c", []int{256, 'c'}},           // c is not a piece: byte fallback
		{0, "é", []int{256, 0xC3, 0xA9}},    // both bytes of é
		{0, "\xffa", []int{256, 0xFF, 257}}, // invalid UTF-8: the byte's token
		{FlagPrefixOnce, "ab", []int{259, 258}},
		{FlagPrefixOnce, " ab", []int{259, 258}}, // already starts with ▁
		{FlagPrefixOnce, "▁ab", []int{259, 258}},
		{FlagPrefixOnce, "<s>ab", []int{261, 260}}, // not at the start: a+b merge
		{FlagPrefixOnce, "ab<s>ab", []int{259, 258, 261, 260}},
		{FlagNoPrefix, "ab", []int{260}},
		{FlagNoPrefix, " ab", []int{259, 258}},
		{FlagNoPrefix, "<s>ab", []int{261, 260}},
	} {
		got := smallSentencePiece(tc.flags).Encode(tc.text, false)
		if !slices.Equal(got, tc.want) {
			t.Errorf("flags %d Encode(%q): got %v, want %v", tc.flags, tc.text, got, tc.want)
		}
	}
	// BOS only with addBOS and flag 1.
	if got := smallSentencePiece(FlagAddBOS).Encode("ab", true); !slices.Equal(got, []int{261, 259, 258}) {
		t.Errorf("Encode with BOS: got %v, want [261 259 258]", got)
	}
	if got := smallSentencePiece(0).Encode("ab", true); !slices.Equal(got, []int{259, 258}) {
		t.Errorf("Encode with addBOS but no flag: got %v, want [259 258]", got)
	}
	if got := smallSentencePiece(FlagAddBOS).EncodePrompt("ab"); !slices.Equal(got, []int{261, 259, 258}) {
		t.Errorf("EncodePrompt with flag 1: got %v, want [261 259 258]", got)
	}
}

// TestAddedLongestMatch: of added tokens starting at the same place the
// longest wins; the leftmost start wins over a longer later one.
func TestAddedLongestMatch(t *testing.T) {
	tk := smallByteLevel()
	tk.Tokens = append(tk.Tokens, Token{Attr: AttrAdded, Bytes: []byte("<|x|>y")}, Token{Attr: AttrAdded, Bytes: []byte("|x|>yz")})
	for _, tc := range []struct {
		text string
		want []int
	}{
		{"<|x|>", []int{259}},
		{"<|x|>y", []int{260}},
		{"<|x|>yz", []int{260, 'z'}},
		{"<|x|", []int{'<', '|', 'x', '|'}},
	} {
		if got := tk.Encode(tc.text, false); !slices.Equal(got, tc.want) {
			t.Errorf("Encode(%q): got %v, want %v", tc.text, got, tc.want)
		}
	}
}
