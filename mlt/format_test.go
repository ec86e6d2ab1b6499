package mlt

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// smallByteLevel is a kind 2 tokenizer: the 256 single bytes (id = byte),
// then "he", "ll", "hell", and the added token "<|x|>".
func smallByteLevel() *Tokenizer {
	t := &Tokenizer{Kind: KindByteLevel, BOS: -1, EOS: 259}
	for c := range 256 {
		t.Tokens = append(t.Tokens, Token{Attr: AttrNormal, Bytes: []byte{byte(c)}})
	}
	t.Tokens = append(t.Tokens,
		Token{Attr: AttrNormal, Bytes: []byte("he")},   // 256
		Token{Attr: AttrNormal, Bytes: []byte("ll")},   // 257
		Token{Attr: AttrNormal, Bytes: []byte("hell")}, // 258
		Token{Attr: AttrAdded, Bytes: []byte("<|x|>")}, // 259
	)
	t.Merges = [][3]uint32{{'h', 'e', 256}, {'l', 'l', 257}, {256, 257, 258}}
	return t
}

// smallSentencePiece is a kind 1 tokenizer: the 256 byte tokens (id = byte),
// then "▁", "a", "b", "▁a", "ab" and the added token "<s>", which is BOS.
func smallSentencePiece(flags uint32) *Tokenizer {
	t := &Tokenizer{Kind: KindSentencePiece, BOS: 261, EOS: -1, Flags: flags}
	for c := range 256 {
		t.Tokens = append(t.Tokens, Token{Attr: AttrByte, Bytes: []byte{byte(c)}})
	}
	t.Tokens = append(t.Tokens,
		Token{Attr: AttrNormal, Bytes: []byte("▁")},  // 256
		Token{Attr: AttrNormal, Bytes: []byte("a")},  // 257
		Token{Attr: AttrNormal, Bytes: []byte("b")},  // 258
		Token{Attr: AttrNormal, Bytes: []byte("▁a")}, // 259
		Token{Attr: AttrNormal, Bytes: []byte("ab")}, // 260
		Token{Attr: AttrAdded, Bytes: []byte("<s>")}, // 261
	)
	t.Merges = [][3]uint32{{256, 257, 259}, {257, 258, 260}}
	return t
}

// tokenOffset returns the file offset of token i's attr byte in image b.
func tokenOffset(b []byte, i int) int {
	off := headerSize
	for range i {
		off += tokenHeaderSize + int(binary.LittleEndian.Uint32(b[off+1:]))
	}
	return off
}

func sameTokenizer(a, b *Tokenizer) bool {
	if a.Kind != b.Kind || a.Flags != b.Flags || a.BOS != b.BOS || a.EOS != b.EOS ||
		len(a.Tokens) != len(b.Tokens) || !slices.Equal(a.Merges, b.Merges) {
		return false
	}
	for i := range a.Tokens {
		if a.Tokens[i].Attr != b.Tokens[i].Attr || string(a.Tokens[i].Bytes) != string(b.Tokens[i].Bytes) {
			return false
		}
	}
	return true
}

func TestParseRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		tok  *Tokenizer
	}{
		{"bytelevel", smallByteLevel()},
		{"sentencepiece", smallSentencePiece(FlagAddBOS)},
		{"sentencepiece-noprefix", smallSentencePiece(FlagAddBOS | FlagNoPrefix)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.tok.Bytes()
			// Header fields at the offsets SPEC.md gives.
			le := binary.LittleEndian
			if string(b[:4]) != "MLT1" || le.Uint32(b[4:]) != 1 || le.Uint32(b[8:]) != uint32(tc.tok.Kind) ||
				le.Uint32(b[12:]) != uint32(len(tc.tok.Tokens)) || le.Uint32(b[16:]) != uint32(len(tc.tok.Merges)) ||
				int32(le.Uint32(b[20:])) != tc.tok.BOS || int32(le.Uint32(b[24:])) != tc.tok.EOS || le.Uint32(b[28:]) != tc.tok.Flags {
				t.Fatalf("header % x does not hold the tokenizer's fields", b[:32])
			}
			p, err := Parse(b)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !sameTokenizer(p, tc.tok) {
				t.Errorf("Parse(Bytes()) differs from the original")
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	good := smallByteLevel().Bytes()
	sp := smallSentencePiece(0).Bytes()
	le := binary.LittleEndian
	mod := func(src []byte, f func(b []byte) []byte) []byte {
		return f(slices.Clone(src))
	}
	put := func(off int, v uint32) func([]byte) []byte {
		return func(b []byte) []byte { le.PutUint32(b[off:], v); return b }
	}
	lastMerge := len(good) - mergeSize
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "empty file"},
		{"short header", good[:20], "shorter than the 32-byte header"},
		{"magic", mod(good, func(b []byte) []byte { copy(b, "MLB1"); return b }), "bad magic"},
		{"version", mod(good, put(4, 2)), "unsupported version 2"},
		{"kind", mod(good, put(8, 3)), "unknown kind 3"},
		{"unknown flag", mod(good, put(28, 16384)), "unknown flag bits 0x4000"},
		{"section flag without its section", mod(good, put(28, 512)), "pipeline section's 8-byte header is missing"},
		{"kind 1 flag on kind 2", mod(good, put(28, FlagNoPrefix)), "are for SentencePiece tokenizers"},
		{"kind 2 flag on kind 1", mod(sp, put(28, FlagNFC)), "are for byte-level tokenizers"},
		{"contradicting prefix flags", mod(sp, put(28, FlagPrefixOnce|FlagNoPrefix)), "contradict"},
		{"two regexes", mod(good, put(28, FlagGPT2Regex|FlagQwen35Regex)), "two different regexes"},
		{"zero vocab", mod(good, put(12, 0)), "n_vocab 0 out of range"},
		{"vocab above limit", mod(good, put(12, MaxVocab+1)), "out of range"},
		{"lying vocab count", mod(good, put(12, 1<<20)), "need at least"},
		{"lying merge count", mod(good, put(16, 0xFFFFFFFF)), "need at least"},
		{"truncated merges", good[:len(good)-4], "merges need 36 bytes"},
		{"trailing bytes", append(slices.Clone(good), 0), "1 trailing bytes"},
		{"unknown attr", mod(good, func(b []byte) []byte { b[tokenOffset(b, 0)] = 3; return b }), "token 0: unknown attr 3"},
		{"token too long", mod(good, put(tokenOffset(good, 5)+1, MaxTokenLen+1)), "token 5: length 65537 above the limit"},
		{"token past end", mod(good, put(tokenOffset(good, 259)+1, 60000)), "token 259: 60000 bytes run past the end"},
		{"bos out of range", mod(good, put(20, 999)), "bos id 999 out of range"},
		{"eos out of range", mod(good, put(24, 0xFFFFFFFE)), "eos id -2 out of range"},
		{"add_bos without bos", mod(good, put(28, FlagAddBOS)), "bos is -1"},
		{"merge names missing token", mod(good, put(lastMerge+8, 9999)), "merge 2 names token 9999, which does not exist"},
		{"merge does not concatenate", mod(good, put(lastMerge+8, 'x')), "does not make token 120"},
		{"duplicate piece", mod(good, func(b []byte) []byte { b[tokenOffset(b, 'a')+5] = 'b'; return b }), "duplicates token"},
		{"missing byte", mod(good, func(b []byte) []byte { b[tokenOffset(b, 0)] = AttrAdded; return b }), "0x00 is missing"},
		{"byte token in kind 2", mod(good, func(b []byte) []byte { b[tokenOffset(b, 7)] = AttrByte; return b }), "exist only in kind 1"},
		{"missing byte token", mod(sp, func(b []byte) []byte { b[tokenOffset(b, 0x41)] = AttrNormal; return b }), "<0x41> is missing"},
		{"empty added token", mod(good, func(b []byte) []byte {
			o := tokenOffset(b, 259)
			le.PutUint32(b[o+1:], 0)
			return append(b[:o+5], b[o+5+5:]...)
		}), "empty added token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.b)
			if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an ML_E_FORMAT error containing %q", err, tc.want)
			}
		})
	}
}

func TestWriteOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tok.mlt")
	want := smallSentencePiece(FlagAddBOS)
	if err := want.Write(path); err != nil {
		t.Fatal(err)
	}
	got, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if !sameTokenizer(got, want) {
		t.Errorf("Open(Write(t)) differs from t")
	}
	// An invalid tokenizer is refused and leaves nothing behind.
	bad := smallByteLevel()
	bad.Merges[0][2] = 5000
	if err := bad.Write(filepath.Join(dir, "bad.mlt")); err == nil || !errors.Is(err, ErrFormat) {
		t.Errorf("Write(invalid): got %v, want ML_E_FORMAT", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries after the writes, want 1 (tok.mlt)", len(entries))
	}
	if _, err := Open(filepath.Join(dir, "missing.mlt")); !errors.Is(err, ErrIO) {
		t.Errorf("Open(missing): got %v, want ML_E_IO", err)
	}
	if err := os.WriteFile(path, []byte("MLT1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), path) {
		t.Errorf("Open(truncated): got %v, want ML_E_FORMAT naming the file", err)
	}
}

// FuzzParse feeds arbitrary bytes to Parse (seeded from testdata/fuzz/FuzzParse
// and the small tokenizers): no panic, no huge allocation, and a file that
// parses is canonical (Bytes gives it back) and can encode and decode.
func FuzzParse(f *testing.F) {
	f.Add(smallByteLevel().Bytes())
	f.Add(smallSentencePiece(FlagAddBOS).Bytes())
	f.Add(smallSentencePiece(FlagPrefixOnce).Bytes())
	f.Add(smallByteLevelPipeline().Bytes())
	f.Add(smallSentencePiecePipeline().Bytes())
	pe := smallByteLevel()
	pe.SetPost(&Post{Single: []PostItem{{Seq: PostSeqA}, {Seq: PostSpecial, IDs: []int32{1, 2}}},
		Pair: []PostItem{{Seq: PostSpecial, IDs: []int32{3}}, {Seq: PostSeqB}, {Seq: PostSeqA}}})
	pe.SetEmbed(&Embed{Pooling: PoolLast, Normalize: true, Prompts: []NamedPrompt{{"query", "q: "}}, DefaultPrompt: "query"})
	f.Add(pe.Bytes())
	paired := smallByteLevel()
	paired.SetPair([PairIDSize]byte{1, 2, 3})
	f.Add(paired.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		tk, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not match ErrFormat", err)
			}
			return
		}
		got := tk.Bytes()
		if string(got) != string(b) {
			t.Fatalf("Bytes() of a parsed file differs from the file")
		}
		// parse → encode → parse: the same tokenizer.
		tk2, err := Parse(got)
		if err != nil {
			t.Fatalf("re-parse of Bytes(): %v", err)
		}
		if tk2.Kind != tk.Kind || tk2.Flags != tk.Flags || tk2.BOS != tk.BOS || tk2.EOS != tk.EOS ||
			!reflect.DeepEqual(tk2.Tokens, tk.Tokens) || !reflect.DeepEqual(tk2.Merges, tk.Merges) ||
			!reflect.DeepEqual(tk2.Pipeline, tk.Pipeline) || !reflect.DeepEqual(tk2.Chat, tk.Chat) ||
			!reflect.DeepEqual(tk2.Post, tk.Post) || !reflect.DeepEqual(tk2.Embed, tk.Embed) {
			t.Fatalf("re-parse of Bytes() gives a different tokenizer")
		}
		if tk.Post != nil {
			tk.EncodePair("ab", "c", true)
		}
		// A byte-level tokenizer without a pipeline whose vocabulary has every
		// single byte as a normal token must give any valid UTF-8 text back.
		roundTrip := tk.Kind == KindByteLevel && tk.Pipeline == nil
		if roundTrip {
			var has [256]bool
			for _, tok := range tk.Tokens {
				if tok.Attr == AttrNormal && len(tok.Bytes) == 1 {
					has[tok.Bytes[0]] = true
				}
			}
			for _, h := range has {
				roundTrip = roundTrip && h
			}
		}
		for _, s := range []string{"", "hello <|x|> world", " a b ab<s>", "\xff\xc3", "東京 🇮🇸", "hellhello\x00\n"} {
			ids := tk.Encode(s, true)
			for _, id := range ids {
				if id < 0 || id >= len(tk.Tokens) {
					t.Fatalf("Encode(%q) gave id %d outside the vocabulary", s, id)
				}
			}
			_ = tk.Decode(ids)
			if roundTrip && utf8.ValidString(s) { // Decode writes U+FFFD for invalid UTF-8
				if d := tk.Decode(tk.Encode(s, false)); d != s {
					t.Fatalf("byte-level: Decode(Encode(%q)) = %q", s, d)
				}
			}
		}
		_ = tk.StopTokens()
	})
}
