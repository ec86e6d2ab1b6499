package mlt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Tests from the mutants gremlins left alive in mlt/format.go and the files
// after it (docs/RELIABILITY.md, "mlt format.go ..., session 9 (mutfmt9)"):
// each fails with the mutant it names planted. Expected values come from
// SPEC.md's layout and definitions, written out here, never from the code.

// TestFlagNamesBits: every known bit by its name in bit order, unknown bits
// as one hex rest, nothing for 0 (format.go FlagNames: `flags&f.bit != 0`,
// `flags != 0`).
func TestFlagNamesBits(t *testing.T) {
	all := []string{"add_bos", "ignore_merges", "prefix_once", "nfc", "single_digits", "gpt2_regex",
		"split_digits", "no_prefix", "qwen35_regex", "pipeline", "chat", "post", "embed", "pair"}
	for _, c := range []struct {
		flags uint32
		want  []string
	}{
		{0, nil},
		{1<<14 - 1, all},
		{1 | 512 | 1<<14 | 1<<20, []string{"add_bos", "pipeline", "0x104000"}},
		{1 << 31, []string{"0x80000000"}},
		{8192, []string{"pair"}},
	} {
		if got := FlagNames(c.flags); !slices.Equal(got, c.want) {
			t.Errorf("FlagNames(0x%x) = %q, want %q", c.flags, got, c.want)
		}
	}
	if got := Kind(7).String(); got != "kind(7)" {
		t.Errorf("Kind(7).String() = %q", got)
	}
}

// TestCheckFlagsCombinations: each flag alone on the kind it belongs to is
// valid, and each rule of checkFlags refuses exactly its combination (every
// `!= 0` and kind comparison of checkFlags).
func TestCheckFlagsCombinations(t *testing.T) {
	ok := []struct {
		k Kind
		f uint32
	}{
		{KindSentencePiece, 0}, {KindByteLevel, 0},
		{KindSentencePiece, FlagAddBOS}, {KindSentencePiece, FlagIgnoreMerges}, {KindSentencePiece, FlagPrefixOnce},
		{KindSentencePiece, FlagNoPrefix}, {KindSentencePiece, FlagPost}, {KindSentencePiece, FlagPipeline | FlagChat | FlagEmbed | FlagPair},
		{KindByteLevel, FlagAddBOS}, {KindByteLevel, FlagNFC}, {KindByteLevel, FlagSingleDigits}, {KindByteLevel, FlagGPT2Regex},
		{KindByteLevel, FlagSplitDigits}, {KindByteLevel, FlagQwen35Regex}, {KindByteLevel, FlagPost},
		{KindByteLevel, FlagGPT2Regex | FlagSplitDigits | FlagNFC}, {KindByteLevel, FlagSingleDigits | FlagSplitDigits},
	}
	for _, c := range ok {
		if err := checkFlags(c.k, c.f); err != nil {
			t.Errorf("checkFlags(%v, 0x%x) = %v, want nil", c.k, c.f, err)
		}
	}
	for _, c := range []struct {
		k    Kind
		f    uint32
		says string
	}{
		{KindByteLevel, 1 << 14, "unknown flag bits 0x4000 (known: 0x3fff)"},
		{KindSentencePiece, 1<<31 | FlagAddBOS, "unknown flag bits 0x80000000"},
		{KindSentencePiece, FlagNFC, "flags [nfc] are for byte-level tokenizers (kind 2), not kind 1"},
		{KindSentencePiece, FlagSingleDigits | FlagAddBOS, "flags [single_digits] are for byte-level"},
		{KindSentencePiece, FlagGPT2Regex, "flags [gpt2_regex] are for byte-level"},
		{KindSentencePiece, FlagSplitDigits, "flags [split_digits] are for byte-level"},
		{KindSentencePiece, FlagQwen35Regex, "flags [qwen35_regex] are for byte-level"},
		{KindByteLevel, FlagPrefixOnce, "flags [prefix_once] are for SentencePiece tokenizers (kind 1), not kind 2"},
		{KindByteLevel, FlagNoPrefix | FlagNFC, "flags [no_prefix] are for SentencePiece"},
		{KindSentencePiece, FlagPrefixOnce | FlagNoPrefix, "flags prefix_once (4) and no_prefix (128) contradict each other"},
		{KindByteLevel, FlagGPT2Regex | FlagQwen35Regex, "select two different regexes"},
		{KindSentencePiece, FlagAddBOS | FlagPost, "flags add_bos (1) and post (2048) are both set"},
		{KindByteLevel, FlagAddBOS | FlagPost, "flags add_bos (1) and post (2048) are both set"},
		{KindByteLevel, FlagGPT2Regex | FlagSingleDigits, "flag single_digits (16) modifies the Llama 3 regex"},
	} {
		err := checkFlags(c.k, c.f)
		if err == nil || err.Offset != -1 || !strings.Contains(err.Error(), c.says) {
			t.Errorf("checkFlags(%v, 0x%x) = %v, want an error saying %q", c.k, c.f, err, c.says)
		}
	}
	// Parse puts the header's flags offset on it.
	b := smallByteLevel().Bytes()
	binary.LittleEndian.PutUint32(b[28:], FlagGPT2Regex|FlagSingleDigits)
	_, err := Parse(b)
	var e *Error
	if !errors.As(err, &e) || e.Offset != 28 || !strings.Contains(err.Error(), "single_digits (16)") {
		t.Errorf("Parse(gpt2_regex|single_digits) = %v, want the flag error at offset 28", err)
	}
}

// TestValidateInMemory: Validate and validate refuse each invalid tokenizer
// built by hand with its own message, and accept the valid neighbours.
func TestValidateInMemory(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Tokenizer)
		says string
	}{
		{"kind 0", func(t *Tokenizer) { t.Kind = 0 }, "unknown kind 0"},
		{"kind 3", func(t *Tokenizer) { t.Kind = 3 }, "unknown kind 3"},
		{"flags", func(t *Tokenizer) { t.Flags = FlagPrefixOnce }, "flags [prefix_once] are for SentencePiece"},
		{"no tokens", func(t *Tokenizer) { t.Tokens = nil; t.Merges = nil; t.EOS = -1 }, "n_vocab 0 out of range 1..16777216"},
		{"attr 4", func(t *Tokenizer) { t.Tokens[5].Attr = 4 }, "token 5: unknown attr 4"},
		{"none without pipeline", func(t *Tokenizer) { t.Tokens[6] = Token{Attr: AttrNone} }, "token 6: unknown attr 3"},
		{"token too long", func(t *Tokenizer) { t.Tokens[259].Bytes = make([]byte, MaxTokenLen+1) }, "token 259: length 65537 above the limit 65536"},
		{"duplicate piece", func(t *Tokenizer) { t.Tokens = append(t.Tokens, Token{Bytes: []byte("he")}) }, `token 260: piece "he" duplicates token 256`},
		{"empty added", func(t *Tokenizer) { t.Tokens = append(t.Tokens, Token{Attr: AttrAdded}) }, "token 260: empty added token"},
		{"byte token in kind 2", func(t *Tokenizer) { t.Tokens[7].Attr = AttrByte }, "token 7: byte tokens (attr 2) exist only in kind 1"},
		{"missing single byte", func(t *Tokenizer) { t.Tokens[0].Attr = AttrAdded }, "kind 2 needs a normal token for every single byte; 0x00 is missing"},
		{"bos -2", func(t *Tokenizer) { t.BOS = -2 }, "bos id -2 out of range (-1 or 0..259)"},
		{"eos -2", func(t *Tokenizer) { t.EOS = -2 }, "eos id -2 out of range (-1 or 0..259)"},
		{"empty normal", func(t *Tokenizer) { t.Tokens = append(t.Tokens, Token{}) }, "token 260: empty normal token"},
		{"duplicate added", func(t *Tokenizer) { t.Tokens = append(t.Tokens, Token{Attr: AttrAdded, Bytes: []byte("<|x|>")}) },
			`token 260: added token "<|x|>" duplicates token 259`},
		{"merge right part", func(t *Tokenizer) { t.Merges[0] = [3]uint32{'l', 'e', 257} }, `merge 0: "l" + "e" does not make token 257 "ll"`},
		{"merge left part", func(t *Tokenizer) { t.Merges[0] = [3]uint32{'h', 'l', 257} }, `merge 0: "h" + "l" does not make token 257 "ll"`},
		{"merge longer", func(t *Tokenizer) { t.Merges[0] = [3]uint32{'h', 256, 256} }, `merge 0: "h" + "he" does not make token 256 "he"`},
	} {
		tk := smallByteLevel()
		c.edit(tk)
		err := tk.Validate()
		// An in-memory tokenizer has no offsets, but bos and eos name their
		// header fields.
		off := map[string]int64{"bos -2": 20, "eos -2": 24}[c.name]
		if off == 0 {
			off = -1
		}
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.says) || e.Offset != off {
			t.Errorf("%s: Validate = %v, want ML_E_FORMAT saying %q at offset %d", c.name, err, c.says, off)
		}
	}
	for _, c := range []struct {
		name string
		edit func(*Tokenizer)
		says string
	}{
		{"byte token of 2 bytes", func(t *Tokenizer) { t.Tokens[7].Bytes = []byte{7, 7} }, "token 7: byte token of 2 bytes, want 1"},
		{"byte token of 0 bytes", func(t *Tokenizer) { t.Tokens[7].Bytes = nil }, "token 7: byte token of 0 bytes, want 1"},
		{"duplicate byte token", func(t *Tokenizer) { t.Tokens[0x41].Bytes = []byte{0} }, "token 65: byte token <0x00> duplicates token 0"},
		{"missing byte token", func(t *Tokenizer) { t.Tokens[0x41] = Token{Bytes: []byte("A")} }, "kind 1 needs all 256 byte-fallback tokens; <0x41> is missing"},
		{"none token with bytes", func(t *Tokenizer) {
			t.Flags, t.Pipeline = FlagPipeline, smallSentencePiecePipeline().Pipeline
			t.Tokens[9] = Token{Attr: AttrNone, Bytes: []byte{9}}
		}, "token 9: a none token (attr 3) must be empty, it has 1 bytes"},
		{"merge of a byte token", func(t *Tokenizer) { t.Merges[1] = [3]uint32{'a', 258, 260} }, "merge 1 uses byte or none token 97"},
		{"merge of a none token", func(t *Tokenizer) {
			t.Flags, t.Pipeline = FlagPipeline, smallSentencePiecePipeline().Pipeline
			t.Tokens['a'] = Token{Attr: AttrNone}
			t.Merges[1] = [3]uint32{257, 'a', 260}
		}, "merge 1 uses byte or none token 97"},
	} {
		tk := smallSentencePiece(0)
		c.edit(tk)
		err := tk.Validate()
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.says) || e.Offset != -1 {
			t.Errorf("%s: Validate = %v, want ML_E_FORMAT saying %q", c.name, err, c.says)
		}
	}
	// Valid: bos and eos -1, a none token with a pipeline, a kind 1 tokenizer
	// with a pipeline whose byte tokens are not all there.
	for _, tk := range []*Tokenizer{smallByteLevel(), smallSentencePiecePipeline()} {
		tk.BOS, tk.EOS = -1, -1
		if err := tk.Validate(); err != nil {
			t.Errorf("valid tokenizer: %v", err)
		}
	}
}

// TestParseErrorPlaces: Parse's structural errors point at the byte they are
// about (offsets from SPEC.md's layout: 32-byte header, tokens of u8 attr, u32
// length, bytes; merges of three u32), and panics are errors.
func TestParseErrorPlaces(t *testing.T) {
	le := binary.LittleEndian
	hdr := func(nVocab, nMerges uint32) []byte {
		b := []byte("MLT1")
		for _, v := range []uint32{1, uint32(KindByteLevel), nVocab, nMerges, 0xFFFFFFFF, 0xFFFFFFFF, 0} {
			b = le.AppendUint32(b, v)
		}
		return b
	}
	tok := func(attr byte, n uint32, body ...byte) []byte {
		return append(le.AppendUint32([]byte{attr}, n), body...)
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	good := smallByteLevel().Bytes()
	for _, c := range []struct {
		name string
		b    []byte
		says string
		off  int64
	}{
		// Token 0 of 4 bytes leaves 3 of the 12 after the header: n_vocab 2
		// fits the 5-byte minimum, token 1's header does not.
		{"second header past the end", cat(hdr(2, 0), tok(0, 4, 'a', 'b', 'c', 'd'), []byte{0, 0, 0}), "token 1: header runs past the end of the file", 41},
		{"length above the limit", cat(hdr(2, 0), tok(0, 1, 'a'), tok(0, MaxTokenLen+1)), "token 1: length 65537 above the limit 65536", 38 + 1},
		{"bytes past the end", cat(hdr(2, 0), tok(0, 1, 'a'), tok(0, 3, 'x', 'y')), "token 1: 3 bytes run past the end of the file", 38 + 5},
		{"attr 4", cat(hdr(2, 0), tok(0, 1, 'a'), tok(4, 0)), "token 1: unknown attr 4", 38},
		{"attr 3 without pipeline", cat(hdr(2, 0), tok(0, 1, 'a'), tok(3, 0)), "token 1: unknown attr 3", 38},
		// One empty token and 11 of a merge's 12 bytes: the counts need 17.
		{"counts", cat(hdr(1, 1), tok(1, 0), make([]byte, 11)), "n_vocab 1 and n_merges 1 need at least 17 bytes, the file has 16 after the header", 12},
		{"merges", cat(hdr(1, 1), tok(1, 2, 'a', 'b'), make([]byte, 11)), "1 merges need 12 bytes, 11 remain", 39},
		{"merges of the small tokenizer", good[:len(good)-4], "3 merges need 36 bytes, 32 remain", int64(len(good) - 36)},
		{"trailing", append(slices.Clone(good), 1, 2, 3), "3 trailing bytes after the last section", int64(len(good))},
		{"magic", append([]byte("MLT2"), good[4:]...), `bad magic "MLT2", want "MLT1"`, 0},
		{"version", cat(good[:4], []byte{0, 0, 0, 0}, good[8:]), "unsupported version 0, want 1", 4},
		{"kind", cat(good[:8], []byte{0, 0, 0, 0}, good[12:]), "unknown kind 0", 8},
		{"n_vocab", cat(good[:12], []byte{0, 0, 0, 0}, good[16:]), "n_vocab 0 out of range 1..16777216", 12},
		{"short", good[:1], "file of 1 bytes is shorter than the 32-byte header", 1},
		{"empty", []byte{}, "empty file", 0},
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", c.name, r)
				}
			}()
			_, err := Parse(c.b)
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.says) || e.Offset != c.off {
				t.Errorf("%s: got %v, want ML_E_FORMAT saying %q at offset %d", c.name, err, c.says, c.off)
			}
		}()
	}
	// A pipeline file's none token parses; attr 4 there is still unknown.
	pb := smallSentencePiecePipeline().Bytes()
	if _, err := Parse(pb); err != nil {
		t.Errorf("pipeline file with none tokens: %v", err)
	}
	o := tokenOffset(pb, 'a')
	pb[o] = 4
	if _, err := Parse(pb); err == nil || !strings.Contains(err.Error(), "token 97: unknown attr 4") {
		t.Errorf("pipeline file, attr 4: %v", err)
	}
}

// refImage is SPEC.md's layout written out: the header fields, each token's
// attr, u32 length and bytes, each merge's three u32, little-endian.
func refImage(tk *Tokenizer) []byte {
	var w bytes.Buffer
	w.WriteString("MLT1")
	for _, v := range []uint32{1, uint32(tk.Kind), uint32(len(tk.Tokens)), uint32(len(tk.Merges)), uint32(tk.BOS), uint32(tk.EOS), tk.Flags} {
		binary.Write(&w, binary.LittleEndian, v)
	}
	for _, tok := range tk.Tokens {
		w.WriteByte(tok.Attr)
		binary.Write(&w, binary.LittleEndian, uint32(len(tok.Bytes)))
		w.Write(tok.Bytes)
	}
	for _, m := range tk.Merges {
		binary.Write(&w, binary.LittleEndian, m)
	}
	return w.Bytes()
}

// TestBytesUnvalidated: Bytes encodes any tokenizer, valid or not, in the
// layout (its capacity estimate, headerSize + 12·merges + Σ(5 + len), never
// goes negative: `-` for `+` there makes a negative capacity and a panic).
func TestBytesUnvalidated(t *testing.T) {
	many := make([][3]uint32, 10)
	for i := range many {
		many[i] = [3]uint32{uint32(i), uint32(i + 1), uint32(i * 7)}
	}
	for _, tk := range []*Tokenizer{
		{Kind: KindByteLevel, BOS: 3, EOS: -1, Flags: FlagNFC, Merges: many},
		{Kind: KindSentencePiece, BOS: -1, EOS: 2, Tokens: []Token{{Attr: AttrAdded, Bytes: bytes.Repeat([]byte("x"), 100)}}},
		{Kind: 9, BOS: -5, EOS: 7, Tokens: []Token{{Attr: 7}, {Bytes: []byte("ab")}}, Merges: many[:1]},
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("Bytes panicked: %v", r)
				}
			}()
			if got, want := tk.Bytes(), refImage(tk); !bytes.Equal(got, want) {
				t.Errorf("Bytes() =\n% x\nwant\n% x", got, want)
			}
		}()
	}
}

// TestWriteOpenIOErrors: a write into a missing directory, a missing file, a
// read of a directory and a file above the size limit are errors about the
// whole file (offset -1, no " at offset" in the text).
func TestWriteOpenIOErrors(t *testing.T) {
	dir := t.TempDir()
	whole := func(what string, err error, code error, says string) {
		t.Helper()
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, code) || e.Offset != -1 || !strings.Contains(err.Error(), says) || strings.Contains(err.Error(), " at offset") {
			t.Errorf("%s: %v, want %v saying %q at offset -1", what, err, code, says)
		}
	}
	path := filepath.Join(dir, "missing", "tok.mlt")
	err := smallByteLevel().Write(path)
	whole("Write into a missing directory", err, ErrIO, "cannot write file")
	if e := (*Error)(nil); !errors.As(err, &e) || e.Path != path {
		t.Errorf("Write into a missing directory: %v, want the path %s", err, path)
	}
	_, err = Open(filepath.Join(dir, "none.mlt"))
	whole("Open(missing)", err, ErrIO, "cannot open")
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir)
	if st.Size() > 0 {
		whole("Open(directory)", err, ErrIO, "short read")
		if !strings.Contains(err.Error(), dir) {
			t.Errorf("Open(directory): %v does not name it", err)
		}
	} else if !errors.Is(err, ErrFormat) {
		t.Errorf("Open(directory of 0 bytes): %v, want ML_E_FORMAT", err)
	}
	big := filepath.Join(dir, "big.mlt")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1<<31 + 1); err != nil {
		f.Close()
		t.Skipf("cannot make a sparse file of 2 GiB + 1: %v", err)
	}
	f.Close()
	_, err = Open(big)
	whole("Open(2 GiB + 1)", err, ErrFormat, "larger than any tokenizer")
}

// TestNoteCross: the characters right before each ▁ of a piece, other than
// ▁, the first ▁ included when the piece starts with one; ASCII in the
// table, others (from U+0080) in the map, which is made on first use.
func TestNoteCross(t *testing.T) {
	var tk Tokenizer
	for _, p := range []string{"▁a▁b", "x>▁</▁é▁▁z▁", "\u0080▁", "c▁▁d▁", "▁", "▁▁", "plain", "ü▁"} {
		tk.noteCross(p)
	}
	wantASCII := map[rune]bool{'a': true, '>': true, '/': true, 'z': true, 'c': true, 'd': true}
	gotASCII := map[rune]bool{}
	for c, on := range tk.crossASCII {
		if on {
			gotASCII[rune(c)] = true
		}
	}
	if !maps.Equal(gotASCII, wantASCII) {
		t.Errorf("crossASCII = %q, want %q", slices.Sorted(maps.Keys(gotASCII)), slices.Sorted(maps.Keys(wantASCII)))
	}
	wantOther := map[rune]bool{'é': true, 0x80: true, 'ü': true}
	if !maps.Equal(tk.crossOther, wantOther) {
		t.Errorf("crossOther = %q, want %q", slices.Sorted(maps.Keys(tk.crossOther)), slices.Sorted(maps.Keys(wantOther)))
	}
	var none Tokenizer
	none.noteCross("▁x")
	none.noteCross("abc")
	if none.crossOther != nil || none.crossASCII != [128]bool{} {
		t.Errorf("pieces without a character before a ▁ noted %v %v", none.crossASCII, none.crossOther)
	}
}

// TestCrossWordMerge: a kind 1 piece "▁a▁b" is reached from " a b" (the
// merges run over the whole segment, so ▁a + ▁b makes it; a word split before
// the second ▁ would leave ▁a ▁b), as the plain reference encoder says.
func TestCrossWordMerge(t *testing.T) {
	tk := smallSentencePiece(0)
	tk.Tokens = append(tk.Tokens, Token{Bytes: []byte("▁b")}, Token{Bytes: []byte("▁a▁b")}) // 262, 263
	tk.Merges = append(tk.Merges, [3]uint32{256, 258, 262}, [3]uint32{259, 262, 263})
	if err := tk.Validate(); err != nil {
		t.Fatal(err)
	}
	tk.prepare()
	ref := newRefSentencePiece(tk)
	for _, s := range []string{"a b", "a b a b", "ba b", " a b", "a  b", "aa b"} {
		got, want := tk.Encode(s, false), ref.encode(s)
		if !slices.Equal(got, want) {
			t.Errorf("Encode(%q) = %v, want %v (reference)", s, got, want)
		}
	}
	if got := tk.Encode("a b", false); !slices.Equal(got, []int{263}) {
		t.Errorf(`Encode("a b") = %v, want [263] ("▁a▁b")`, got)
	}
}

// TestSinglePieceByteFallback: in kind 1 the byte fallback uses the byte
// tokens, even where a normal piece of one byte (here the lone 0xC3, not a
// character) exists (prepare: byteID is set from normal tokens only in kind 2,
// and only from pieces of one byte).
func TestSinglePieceByteFallback(t *testing.T) {
	tk := smallSentencePiece(FlagNoPrefix)
	tk.Tokens = append(tk.Tokens, Token{Bytes: []byte{0xC3}}) // 262
	if err := tk.Validate(); err != nil {
		t.Fatal(err)
	}
	if got, want := tk.Encode("é", false), []int{0xC3, 0xA9}; !slices.Equal(got, want) {
		t.Errorf(`kind 1 Encode("é") = %v, want the byte tokens %v`, got, want)
	}
	// Kind 2: the single-byte normal tokens are the bytes; longer pieces never are.
	bl := smallByteLevel()
	bl.Merges = nil
	if got, want := bl.Encode("hel", false), []int{'h', 'e', 'l'}; !slices.Equal(got, want) {
		t.Errorf(`kind 2 without merges Encode("hel") = %v, want %v`, got, want)
	}
}

// TestPipelineWordUnk: a kind 1 pipeline whose vocabulary has neither ▁ nor
// its byte tokens keeps each pre-token one word (prepare's spSplit false),
// so the unknown characters of "▁c▁c" fuse into one unk, as the tokenizers
// library's BPE with fuse_unk does for a word.
func TestPipelineWordUnk(t *testing.T) {
	tk := smallSentencePiecePipeline()
	tk.Tokens[256] = Token{Bytes: []byte("z")}
	tk.Tokens[259] = Token{Bytes: []byte("y")}
	tk.Tokens[0xE2] = Token{Attr: AttrNone}
	tk.Merges = [][3]uint32{{257, 258, 260}}
	if err := tk.Validate(); err != nil {
		t.Fatal(err)
	}
	if got, want := tk.Encode("c c", false), []int{257}; !slices.Equal(got, want) {
		t.Errorf(`Encode("c c") = %v, want one fused unk %v`, got, want)
	}
}

// TestUnmergedTwoBytes: a two-byte piece no rule builds is unmerged
// (UnmergedTokens' `len(tok.Bytes) < 2`; `<= 2` skips it).
func TestUnmergedTwoBytes(t *testing.T) {
	tk := tinyByteLevel(t, 0, []string{"cd", "ab", "abc"}, [][2]string{{"a", "b"}, {"ab", "c"}})
	if got, want := tk.UnmergedTokens(), []int{256}; !slices.Equal(got, want) {
		t.Errorf("UnmergedTokens = %v, want %v", got, want)
	}
}

// TestTokenBytesKinds: TokenBytes by its definition (tokbytes.go): a kind 1
// piece with ▁ as a space, a kind 2 piece as its raw bytes, a byte token as
// its byte (control in a pipeline whose decoder does not turn byte tokens
// into bytes), a none token and a special added token as control, and an
// added token its options mark not special as its text; the options go with
// the added tokens in id order, and an added token past them is control.
func TestTokenBytesKinds(t *testing.T) {
	type want struct {
		id      int
		bytes   string
		control bool
	}
	check := func(name string, tk *Tokenizer, ws []want) {
		t.Helper()
		toks, control := tk.TokenBytes()
		if len(toks) != len(tk.Tokens) || len(control) != len(tk.Tokens) {
			t.Fatalf("%s: %d bytes and %d control for %d tokens", name, len(toks), len(control), len(tk.Tokens))
		}
		for _, w := range ws {
			if string(toks[w.id]) != w.bytes || control[w.id] != w.control || (w.control && toks[w.id] != nil) {
				t.Errorf("%s: id %d = %q control %v, want %q control %v", name, w.id, toks[w.id], control[w.id], w.bytes, w.control)
			}
		}
	}
	sp := smallSentencePiece(0)
	sp.Tokens = append(sp.Tokens, Token{Bytes: []byte("a▁▁b")}) // 262
	check("kind 1", sp, []want{{0x41, "A", false}, {0xE2, "\xe2", false}, {256, " ", false}, {257, "a", false}, {259, " a", false}, {261, "", true}, {262, "a  b", false}})

	bl := smallByteLevel()
	bl.Tokens = append(bl.Tokens, Token{Bytes: []byte("▁x")}) // 260: kind 2 keeps ▁
	check("kind 2", bl, []want{{0, "\x00", false}, {0xE2, "\xe2", false}, {258, "hell", false}, {259, "", true}, {260, "▁x", false}})

	// Pipeline: added tokens 259 (special), 260 (not special), 261 (no
	// options left: control), none token 262.
	pl := smallByteLevelPipeline()
	pl.Tokens = append(pl.Tokens, Token{Attr: AttrAdded, Bytes: []byte("<t>")}, Token{Attr: AttrAdded, Bytes: []byte("<u>")}, Token{Attr: AttrNone})
	pl.Pipeline.Added = []AddedOptions{AddedSpecial, AddedLStrip}
	check("kind 2 pipeline", pl, []want{{'a', "a", false}, {259, "", true}, {260, "<t>", false}, {261, "", true}, {262, "", true}})
	// The first added token not special, the second special.
	pl.Pipeline.Added = []AddedOptions{0, AddedSpecial}
	check("kind 2 pipeline, first not special", pl, []want{{259, "<|x|>", false}, {260, "", true}, {261, "", true}})

	spp := smallSentencePiecePipeline() // DecodeBytes set; 'a'..'c' none
	check("kind 1 pipeline", spp, []want{{0x41, "A", false}, {'a', "", true}, {259, " a", false}, {261, "", true}})
	spp.Pipeline.DecodeBytes = false
	check("kind 1 pipeline without byte decoding", spp, []want{{0x41, "", true}, {'b', "", true}, {256, " ", false}})
	spp.Pipeline.Added = []AddedOptions{AddedRStrip}
	check("kind 1 pipeline, <s> not special", spp, []want{{261, "<s>", false}})
}

// TestChatLimits: a chat section exactly at each limit of docs/FORMATS.md (64
// templates, a 256-byte name, a 1 MiB source, bos and eos strings of
// MaxTokenLen bytes, 1024 stop ids) validates and survives Bytes and Parse;
// one more is refused by Validate with the limit in the message (chat.go's
// `>` limits, `>=` refuses the limit itself).
func TestChatLimits(t *testing.T) {
	big := func() *Tokenizer {
		tk := smallByteLevel()
		for i := range 800 { // ids 260..1059
			tk.Tokens = append(tk.Tokens, Token{Bytes: fmt.Appendf(nil, "t%d", i)})
		}
		var c Chat
		for i := range MaxChatTemplates {
			c.Templates = append(c.Templates, NamedTemplate{fmt.Sprintf("t%02d", i), "x"})
		}
		c.Templates[0].Name = strings.Repeat("n", MaxTemplateName)
		c.Templates[1].Source = strings.Repeat("s", MaxTemplateLen)
		c.BOSToken = strings.Repeat("b", MaxTokenLen)
		c.EOSToken = strings.Repeat("e", MaxTokenLen)
		for i := range MaxChatStopIDs {
			c.StopIDs = append(c.StopIDs, int32(i))
		}
		tk.SetChat(&c)
		return tk
	}
	tk := big()
	if err := tk.Validate(); err != nil {
		t.Fatalf("chat at the limits: %v", err)
	}
	p, err := Parse(tk.Bytes())
	if err != nil {
		t.Fatalf("Parse of a chat at the limits: %v", err)
	}
	if len(p.Chat.Templates) != MaxChatTemplates || len(p.Chat.StopIDs) != MaxChatStopIDs || p.Chat.Templates[1].Source != tk.Chat.Templates[1].Source || p.Chat.EOSToken != tk.Chat.EOSToken {
		t.Errorf("Parse gave back a different chat section")
	}
	for _, c := range []struct {
		name string
		edit func(*Chat)
		says string
	}{
		{"65 templates", func(c *Chat) { c.Templates = append(c.Templates, NamedTemplate{"more", "x"}) }, "65 templates, more than the limit 64"},
		{"name of 257 bytes", func(c *Chat) { c.Templates[0].Name += "n" }, "template 0: name length 257 out of range 1..256"},
		{"source above 1 MiB", func(c *Chat) { c.Templates[1].Source += "s" }, "1048577 bytes, above the limit 1048576"},
		{"bos_token above the limit", func(c *Chat) { c.BOSToken += "b" }, "bos_token: 65537 bytes, above the limit 65536"},
		{"eos_token above the limit", func(c *Chat) { c.EOSToken += "e" }, "eos_token: 65537 bytes, above the limit 65536"},
		{"1025 stop ids", func(c *Chat) { c.StopIDs = append(c.StopIDs, 1024) }, "1025 stop ids, more than the limit 1024"},
		{"stop id = n_vocab", func(c *Chat) { c.StopIDs[5] = 1060 }, "stop id 1060 (index 5) outside the vocabulary of 1060 tokens"},
		{"stop id -1", func(c *Chat) { c.StopIDs[5] = -1 }, "stop id -1 (index 5) outside"},
	} {
		tk := big()
		c.edit(tk.Chat)
		err := tk.Validate()
		if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: Validate = %v, want ML_E_FORMAT saying %q", c.name, err, c.says)
		}
	}
	// Stop id 0 and n_vocab-1 are in the vocabulary.
	tk = big()
	tk.Chat.StopIDs = []int32{0, 1059}
	if err := tk.Validate(); err != nil {
		t.Errorf("stop ids 0 and n_vocab-1: %v", err)
	}
}

// TestStopTokensEOSZero: an EOS of id 0 is a stop token (decode.go
// StopTokens' `t.EOS >= 0`); EOS -1 adds none.
func TestStopTokensEOSZero(t *testing.T) {
	tk := smallByteLevel()
	tk.EOS = 0
	if got := tk.StopTokens(); !slices.Equal(got, []int{0}) {
		t.Errorf("EOS 0: StopTokens = %v, want [0]", got)
	}
	tk = smallByteLevel()
	tk.EOS = -1
	if got := tk.StopTokens(); len(got) != 0 {
		t.Errorf("EOS -1: StopTokens = %v, want none", got)
	}
}

// TestChatErrorPlaces: the chat reader's errors name the byte they are about
// (the payload starts 8 bytes after the merges: section length, version) and
// the bytes left, from docs/FORMATS.md's layout: u32 template count, per
// template a u32-length name and source, u32-length bos and eos strings, u32
// stop id count, u32 ids.
func TestChatErrorPlaces(t *testing.T) {
	base := int64(len(smallByteLevel().Bytes()))
	pay := base + 8
	huge := uint32(0xffffffff)
	for _, c := range []struct {
		name string
		sec  []byte
		says string
		off  int64
	}{
		{"version", chatPayload(2, uint32(0), "", "", uint32(0)), "chat section version 2 is not supported (this reader knows 1)", base + 4},
		{"bos missing", chatPayload(1, uint32(0)), "chat section: bos_token length: the payload ends (0 bytes left, need 4)", pay + 4},
		{"eos cut", chatPayload(1, uint32(0), "", []byte{1, 0}), "eos_token length: the payload ends (2 bytes left, need 4)", pay + 8},
		{"name length huge", chatPayload(1, uint32(1), huge, []byte("xxxxxxxx")), "template name: length 4294967295 above the limit 256", pay + 4},
		// count 4 + name 4+7 = 15: the source length is at 15, 34 bytes in all.
		{"source past the section", chatPayload(1, uint32(1), "default", uint32(100), []byte("abc"), "", "", uint32(0)), "template source: 100 bytes run past the section (15 left)", pay + 15},
		{"source one byte past the section", chatPayload(1, uint32(1), "default", uint32(16), []byte("abc"), "", "", uint32(0)), "template source: 16 bytes run past the section (15 left)", pay + 15},
		{"template count past the bytes", chatPayload(1, uint32(3), "a", "b"), "template count 3 needs at least 24 bytes, 10 left", pay},
		{"stop ids past the bytes", chatPayload(1, uint32(0), "", "", uint32(2), uint32(5)), "stop id count 2 needs at least 8 bytes, 4 left", pay + 12},
		{"stop ids above the limit", chatPayload(1, uint32(0), "", "", uint32(MaxChatStopIDs+1)), "stop id count 1025 above the limit 1024", pay + 12},
		{"trailing", chatPayload(1, uint32(0), "", "", uint32(0), []byte{0, 0}), "chat section: 2 bytes after the stop ids", pay + 16},
		{"stop id twice", chatPayload(1, uint32(0), "", "", uint32(2), uint32(5), uint32(5)), "stop id 5 listed twice", pay},
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", c.name, r)
				}
			}()
			_, err := Parse(withChatSection(c.sec))
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.says) || e.Offset != c.off {
				t.Errorf("%s: got %v, want ML_E_FORMAT saying %q at offset %d", c.name, err, c.says, c.off)
			}
		}()
	}
}
