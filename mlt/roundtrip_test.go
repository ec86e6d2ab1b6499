package mlt

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRoundTrip checks decode(encode(s)) == s where that must hold:
//
//   - llama3 and gpt2 (byte-level, no normalizer): every byte of the text is
//     kept by some token and the ByteLevel decoder gives the bytes back, so
//     it holds for all valid UTF-8.
//   - gemma3 (kind 1, no ▁ prefix, no Strip decoder, byte fallback): spaces
//     become ▁ and come back as spaces and unknown characters go through byte
//     tokens, so it holds for valid UTF-8 without a literal ▁ (which decodes
//     as a space).
//
// It cannot hold for llama2 (a ▁ is prepended to every segment between added
// tokens and only the first is stripped by the decoder: "<s>a" decodes as
// "<s> a"), for qwen3 (NFC: NFD input comes back composed) or for claude
// (NFKC, and refused by FromHF anyway). For every tokenizer and any input,
// even invalid UTF-8, Encode must not panic and every id must be in range.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{
		"", "Hello world", "  leading and trailing  ", "\n\n\t x", "<|eot_id|><s></s><start_of_turn>",
		"naïve café 東京 🇮🇸 👩‍👩‍👧", "\x00\u0085\u2028\U0010FFFF", "it's 1234567 o'CLOCK", "a\u0301e\u0301",
		"<|endoftext|>", "<|begin_of_text", "\xff\xfe bad utf8 \xc3",
	} {
		f.Add(s)
	}
	names := []string{"llama3", "gpt2", "gemma3", "llama2", "qwen3"}
	toks := map[string]*Tokenizer{}
	for _, n := range names {
		toks[n] = shipped(f, n)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, n := range names {
			tk := toks[n]
			ids := tk.Encode(s, true)
			for _, id := range ids {
				if id < 0 || id >= len(tk.Tokens) {
					t.Fatalf("%s: Encode(%q) gave id %d outside the vocabulary", n, s, id)
				}
			}
			if !utf8.ValidString(s) {
				continue
			}
			must := n == "llama3" || n == "gpt2" || (n == "gemma3" && !strings.Contains(s, "▁"))
			if !must {
				continue
			}
			ids = tk.Encode(s, false)
			if got := tk.Decode(ids); got != s {
				t.Errorf("%s: Decode(Encode(%q)) = %q, ids %v", n, s, got, ids)
			}
		}
	})
}

// TestStopTokens checks the stop ids of the shipped tokenizers against the
// ids their model cards and generation configs list (ARCHITECTURES.md §9).
func TestStopTokens(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []int
	}{
		// Llama 3: <|end_of_text|> 128001, <|eot_id|> 128009 (this is a 3.0
		// file: 128008 is a reserved token, <|eom_id|> came with 3.1).
		{"llama3", []int{128001, 128009}},
		// Qwen: <|endoftext|> 151643, <|im_end|> 151645.
		{"qwen3", []int{151643, 151645}},
		// Gemma 3: <eos> 1, <end_of_turn> 106 (not </s>, an HTML tag there).
		{"gemma3", []int{1, 106}},
		// Llama 2 / Mistral SentencePiece: </s> 2.
		{"llama2", []int{2}},
		// GPT-2: <|endoftext|> 50256.
		{"gpt2", []int{50256}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := shipped(t, tc.name).StopTokens()
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestLookup checks Lookup against ids documented for the shipped files.
func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		name, piece string
		want        int
		ok          bool
	}{
		{"llama3", "<|begin_of_text|>", 128000, true},
		{"llama3", "<|eot_id|>", 128009, true},
		{"gemma3", "<bos>", 2, true},
		{"gemma3", "<s>", 203, true}, // the strikethrough tag (README)
		{"llama2", "<s>", 1, true},
		{"llama2", "<0x00>", 3, true}, // byte tokens at ids 3-258 (README)
		{"llama2", "<0xFF>", 258, true},
		{"llama2", "<0xff>", 0, false},
		{"gpt2", "<|endoftext|>", 50256, true},
		{"gpt2", "no such piece at all", 0, false},
	} {
		id, ok := shipped(t, tc.name).Lookup(tc.piece)
		if id != tc.want || ok != tc.ok {
			t.Errorf("%s Lookup(%q): got %d %v, want %d %v", tc.name, tc.piece, id, ok, tc.want, tc.ok)
		}
	}
}
