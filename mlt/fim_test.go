package mlt

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/krafla/krafla/internal/testenv"
)

// fimByteLevel is a kind 2 tokenizer: the 256 single bytes (id = byte),
// then the added tokens in order from 256.
func fimByteLevel(t *testing.T, flags uint32, bos int32, added ...string) *Tokenizer {
	t.Helper()
	tk := &Tokenizer{Kind: KindByteLevel, Flags: flags, BOS: bos, EOS: -1}
	for c := range 256 {
		tk.Tokens = append(tk.Tokens, Token{Attr: AttrNormal, Bytes: []byte{byte(c)}})
	}
	for _, a := range added {
		tk.Tokens = append(tk.Tokens, Token{Attr: AttrAdded, Bytes: []byte(a)})
	}
	if err := tk.Validate(); err != nil {
		t.Fatal(err)
	}
	return tk
}

// fimSentencePiece is smallSentencePiece (256 "▁", 257 "a", 258 "b", 259
// "▁a", 260 "ab", 261 "<s>" = BOS) with more tokens from 262, normal pieces
// (CodeLlama's sentinels are pieces of its SentencePiece model) or added.
func fimSentencePiece(t *testing.T, flags uint32, attr uint8, more ...string) *Tokenizer {
	t.Helper()
	tk := smallSentencePiece(flags)
	for _, m := range more {
		tk.Tokens = append(tk.Tokens, Token{Attr: attr, Bytes: []byte(m)})
	}
	if err := tk.Validate(); err != nil {
		t.Fatal(err)
	}
	return tk
}

// TestFIMPrompt checks each family's prompt against ids written by hand from
// the reference builders: llama.cpp's format_prompt_infill (tools/server/
// server-common.cpp, llama.cpp v0.4.0): [BOS if the vocabulary adds it]
// FIM_PRE prefix FIM_SUF suffix FIM_MID, prefix and suffix each tokenized by
// itself (so SentencePiece gives each its ▁); and for Codestral
// mistral-common's encode_fim, whose test expects
// "<s>[SUFFIX]return▁a▁+▁b[PREFIX]▁def▁f(": the suffix without ▁, the
// prefix with it.
func TestFIMPrompt(t *testing.T) {
	const a, b = 'a', 'b'
	for _, tc := range []struct {
		name           string
		tok            *Tokenizer
		family         string
		prefix, suffix string
		addBOS         bool
		want           []int
		stops          []int
	}{
		{"qwen", fimByteLevel(t, 0, -1, "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>"),
			"Qwen2.5-Coder", "ab", "b", false, []int{256, a, b, 257, b, 258}, []int{259, 260, 261}},
		// a sentinel's spelling in the text is text (llama.cpp's
		// parse_special false): its bytes, not the token
		{"specials as text", fimByteLevel(t, 0, -1, "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"),
			"Qwen2.5-Coder", "<|fim_middle|>", "", false, append(append([]int{256}, bytesOf("<|fim_middle|>")...), 257, 258), nil},
		// the middle sentinel is found wherever it sits among the ids
		{"starcoder", fimByteLevel(t, 0, -1, "<fim_middle>", "<fim_prefix>", "<fim_suffix>", "<fim_pad>", "<file_sep>"),
			"StarCoder", "a", "bb", false, []int{257, a, 258, b, b, 256}, []int{259}},
		{"deepseek", fimByteLevel(t, FlagAddBOS, 256, "<｜begin▁of▁sentence｜>", "<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"),
			"DeepSeek-Coder", "a", "b", true, []int{256, 257, a, 258, b, 259}, nil},
		{"deepseek without BOS", fimByteLevel(t, FlagAddBOS, 256, "<｜begin▁of▁sentence｜>", "<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"),
			"DeepSeek-Coder", "a", "b", false, []int{257, a, 258, b, 259}, nil},
		// CodeLlama: legacy SentencePiece (▁ on every segment): "ab" is
		// ▁ab = [▁a, b], "b" is ▁b = [▁, b].
		{"codellama", fimSentencePiece(t, FlagAddBOS, AttrNormal, "▁<PRE>", "▁<SUF>", "▁<MID>", "▁<EOT>"),
			"CodeLlama", "ab", "b", true, []int{261, 262, 259, 258, 263, 256, 258, 264}, []int{265}},
		{"codellama unspaced", fimSentencePiece(t, FlagAddBOS, AttrAdded, "<PRE>", "<SUF>", "<MID>", "<EOT>"),
			"CodeLlama", "a", "", true, []int{261, 262, 259, 263, 264}, []int{265}},
		// Codestral: Metaspace "first"; the suffix follows [SUFFIX] and
		// gets no ▁, the prefix is the text's start and gets it.
		{"codestral", fimSentencePiece(t, FlagAddBOS|FlagPrefixOnce, AttrAdded, "[SUFFIX]", "[PREFIX]", "[MIDDLE]"),
			"Codestral", "ab", "b", true, []int{261, 262, 258, 263, 259, 258}, nil},
		{"codestral empty suffix", fimSentencePiece(t, FlagAddBOS|FlagPrefixOnce, AttrAdded, "[SUFFIX]", "[PREFIX]"),
			"Codestral", "a", "", true, []int{261, 262, 263, 259}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := tc.tok.FIM()
			if !ok {
				t.Fatal("no FIM format found")
			}
			if f.Family != tc.family {
				t.Errorf("family %q, want %q", f.Family, tc.family)
			}
			if got := f.Prompt(tc.tok, tc.prefix, tc.suffix, tc.addBOS); !slices.Equal(got, tc.want) {
				t.Errorf("Prompt(%q, %q) = %v, want %v", tc.prefix, tc.suffix, got, tc.want)
			}
			if !slices.Equal(f.Stops, tc.stops) {
				t.Errorf("stops %v, want %v", f.Stops, tc.stops)
			}
		})
	}
}

func bytesOf(s string) []int {
	out := make([]int, len(s))
	for i := range len(s) {
		out[i] = int(s[i])
	}
	return out
}

// TestFIMPromptWithin: a prompt over the limit keeps the end of the prefix
// and the start of the suffix, the suffix a quarter of the room (llama.cpp's
// 3:1 of format_prompt_infill) or what the prefix leaves; ids by hand (a
// byte-level vocabulary without merges: one id a byte).
func TestFIMPromptWithin(t *testing.T) {
	qwen := fimByteLevel(t, 0, -1, "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>")
	ds := fimByteLevel(t, FlagAddBOS, 256, "<s>", "<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>")
	b := bytesOf
	cat := func(parts ...[]int) []int { return slices.Concat(parts...) }
	for _, tc := range []struct {
		name           string
		tok            *Tokenizer
		prefix, suffix string
		bos            bool
		limit          int
		want           []int
		trimmed        bool
	}{
		{"no limit", qwen, "abcdefgh", "ABCD", false, 0, cat([]int{256}, b("abcdefgh"), []int{257}, b("ABCD"), []int{258}), false},
		{"fits exactly", qwen, "abcdefgh", "ABCD", false, 15, cat([]int{256}, b("abcdefgh"), []int{257}, b("ABCD"), []int{258}), false},
		// room 8: suffix 2, prefix 6
		{"3:1", qwen, "abcdefgh", "ABCD", false, 11, cat([]int{256}, b("cdefgh"), []int{257}, b("AB"), []int{258}), true},
		// room 5: the prefix takes 2, the suffix the other 3
		{"short prefix", qwen, "ab", "ABCDEFGH", false, 8, cat([]int{256}, b("ab"), []int{257}, b("ABC"), []int{258}), true},
		// BOS counts: room 4 = suffix 1, prefix 3
		{"with BOS", ds, "abcdefgh", "ABCD", true, 8, cat([]int{256, 257}, b("fgh"), []int{258}, b("A"), []int{259}), true},
		{"no room", qwen, "ab", "AB", false, 2, []int{256, 257, 258}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := tc.tok.FIM()
			got, trimmed := f.PromptWithin(tc.tok, tc.prefix, tc.suffix, tc.bos, tc.limit)
			if !slices.Equal(got, tc.want) || trimmed != tc.trimmed {
				t.Errorf("got %v (trimmed %v), want %v (trimmed %v)", got, trimmed, tc.want, tc.trimmed)
			}
		})
	}
}

// TestFIMFormat checks the layout shown by inspect.
func TestFIMFormat(t *testing.T) {
	for _, tc := range []struct {
		tok  *Tokenizer
		want string
	}{
		{fimByteLevel(t, 0, -1, "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"), "<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>"},
		{fimSentencePiece(t, 0, AttrAdded, "[SUFFIX]", "[PREFIX]"), "[SUFFIX]{suffix}[PREFIX]{prefix}"},
	} {
		f, _ := tc.tok.FIM()
		if f.Format != tc.want {
			t.Errorf("format %q, want %q", f.Format, tc.want)
		}
	}
}

// TestFIMNone: no format without every sentinel of one family, and none
// mixed from two.
func TestFIMNone(t *testing.T) {
	for _, tc := range []struct {
		name string
		tok  *Tokenizer
	}{
		{"no sentinels", fimByteLevel(t, 0, -1, "<|im_start|>", "<|im_end|>")},
		{"no middle", fimByteLevel(t, 0, -1, "<|fim_prefix|>", "<|fim_suffix|>")},
		{"two families", fimByteLevel(t, 0, -1, "<|fim_prefix|>", "<|fim_suffix|>", "<fim_middle>")},
		{"codestral without prefix", fimSentencePiece(t, 0, AttrAdded, "[SUFFIX]", "[MIDDLE]")},
		// llama.cpp matches the exact spelling: case counts
		{"lower case", fimSentencePiece(t, 0, AttrAdded, "<pre>", "<suf>", "<mid>")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if f, ok := tc.tok.FIM(); ok {
				t.Errorf("found %+v, want none", f)
			}
		})
	}
}

// TestFIMQwen3 builds a prompt with Qwen3's tokenizer.json (the Qwen2.5
// vocabulary, FIM sentinels included); the ids are its added_tokens'
// (<|fim_prefix|> 151659, <|fim_middle|> 151660, <|fim_suffix|> 151661,
// <|fim_pad|> 151662, <|repo_name|> 151663, <|file_sep|> 151664) and its
// vocab's ("def" 750, "Ġf" 282, "(" 7, "Ġreturn" 470, "Ġa" 264, "Ġ+" 488,
// "Ġb" 293), read from the file by hand.
func TestFIMQwen3(t *testing.T) {
	tok, err := FromHF(filepath.Join(testenv.Shared(t, "tokenizers", "qwen3"), "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	f, ok := tok.FIM()
	if !ok {
		t.Fatal("no FIM format found")
	}
	want := []int{151659, 750, 282, 7, 151661, 470, 264, 488, 293, 151660}
	if got := f.Prompt(tok, "def f(", " return a + b", false); !slices.Equal(got, want) {
		t.Errorf("prompt %v, want %v", got, want)
	}
	if want := []int{151662, 151663, 151664}; !slices.Equal(f.Stops, want) {
		t.Errorf("stops %v, want %v", f.Stops, want)
	}
	// A source file that holds special tokens' spellings: they stay text
	// (<|endoftext|> is 151643), and the ids between the sentinels decode
	// back to the prefix.
	prefix := "s = '<|endoftext|><|fim_suffix|>'\n"
	ids := f.Prompt(tok, prefix, "x", false)
	if slices.Contains(ids, 151643) || ids[0] != 151659 || ids[len(ids)-3] != 151661 || ids[len(ids)-1] != 151660 {
		t.Fatalf("prompt %v: want <|fim_prefix|> text <|fim_suffix|> x <|fim_middle|>", ids)
	}
	if got := tok.Decode(ids[1 : len(ids)-3]); got != prefix {
		t.Errorf("the prefix's ids decode to %q, want %q", got, prefix)
	}
}

// FuzzFIMPrompt: any prefix and suffix give a prompt with the sentinels in
// the family's order around them, and never a panic.
func FuzzFIMPrompt(f *testing.F) {
	f.Add("ab", "b", true)
	f.Add("", "", false)
	f.Add("<|fim_suffix|>[SUFFIX]", "\xff\xfe a", true)
	f.Fuzz(func(t *testing.T, prefix, suffix string, bos bool) {
		for _, tok := range []*Tokenizer{
			fimByteLevel(t, FlagAddBOS, 256, "<s>", "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"),
			fimSentencePiece(t, FlagAddBOS|FlagPrefixOnce, AttrAdded, "[SUFFIX]", "[PREFIX]"),
		} {
			fim, ok := tok.FIM()
			if !ok {
				t.Fatal("no FIM format")
			}
			ids := fim.Prompt(tok, prefix, suffix, bos)
			if bos {
				if len(ids) == 0 || ids[0] != int(tok.BOS) {
					t.Fatalf("%v: no BOS first", ids)
				}
				ids = ids[1:]
			}
			first, second := fim.Pre, fim.Suf
			if fim.SuffixFirst {
				first, second = second, first
			}
			if len(ids) < 2 || ids[0] != first || !slices.Contains(ids[1:], second) {
				t.Fatalf("%v: want %d first, then %d", ids, first, second)
			}
			if fim.Mid >= 0 && ids[len(ids)-1] != fim.Mid {
				t.Fatalf("%v: want %d last", ids, fim.Mid)
			}
			// the texts are plain: each sentinel comes once, whatever
			// spellings prefix and suffix hold
			for _, id := range []int{fim.Pre, fim.Suf, fim.Mid} {
				if n := count(ids, id); id >= 0 && n != 1 {
					t.Fatalf("%v: sentinel %d %d times, want once", ids, id, n)
				}
			}
			for _, id := range ids {
				if id < 0 || id >= len(tok.Tokens) {
					t.Fatalf("%v: id %d outside the vocabulary", ids, id)
				}
			}
		}
	})
}

func count(ids []int, id int) int {
	n := 0
	for _, x := range ids {
		if x == id {
			n++
		}
	}
	return n
}
