package mlt

import (
	"errors"
	"slices"
	"strings"
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

// TestMutants13HFPipelineDefaults: a byte-level tokenizer.json whose Split
// regex is none of the four the flags name gets a pipeline section; with no
// post-processor, no tokenizer_config.json and no added token named like an
// EOS, it has no BOS and no EOS (-1), and no unk (kind 2 has none). The
// Split `\S+|\s+` (Isolated) then ByteLevel cut "he he" into "he" " " "he":
// ids 256 32 256 (byteLevelJSON: id = byte, "he" 256).
func TestMutants13HFPipelineDefaults(t *testing.T) {
	j := byteLevelJSON()
	j["pre_tokenizer"] = seqPre(split(`\S+|\s+`), byteLevelNoRegex)
	tk, err := FromHF(writeHF(t, j, nil))
	if err != nil {
		t.Fatal(err)
	}
	if tk.Pipeline == nil || tk.Kind != KindByteLevel {
		t.Fatalf("kind %d pipeline %v, want kind 2 with a pipeline", tk.Kind, tk.Pipeline != nil)
	}
	if tk.BOS != -1 || tk.EOS != -1 || tk.Pipeline.Unk != -1 {
		t.Errorf("BOS %d EOS %d unk %d, want -1 -1 -1", tk.BOS, tk.EOS, tk.Pipeline.Unk)
	}
	if got, want := tk.Encode("he he", true), []int{256, 32, 256}; !slices.Equal(got, want) {
		t.Errorf("Encode: got %v, want %v", got, want)
	}
}

// TestMutants13HFUnigramLayout: FromHF reads the model type first so that a
// Unigram file, whose vocab is a list of [piece, score] pairs, is refused by
// its type, not as invalid JSON.
func TestMutants13HFUnigramLayout(t *testing.T) {
	j := jsonObj{"model": jsonObj{"type": "Unigram", "unk_id": 0, "vocab": []any{[]any{"<unk>", 0.0}, []any{"a", -1.5}}}}
	_, err := FromHF(writeHF(t, j, nil))
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), `model type "Unigram" (only BPE)`) {
		t.Errorf("got %v, want the refusal of model type \"Unigram\"", err)
	}
}

// TestMutants13HFDescribeCut: a refused component is quoted as its JSON up to
// 300 bytes, longer ones cut to 300 and "...". {"type":"N…"} is 11 bytes
// plus the name: a 289-byte name makes exactly 300 (quoted whole), 290 makes
// 301 (cut).
func TestMutants13HFDescribeCut(t *testing.T) {
	for _, n := range []int{289, 290} {
		name := strings.Repeat("N", n)
		j := byteLevelJSON()
		j["normalizer"] = jsonObj{"type": name}
		_, err := FromHF(writeHF(t, j, nil))
		js := `{"type":"` + name + `"}`
		want := "normalizer " + name + " " + js
		if len(js) > 300 {
			want = "normalizer " + name + " " + js[:300] + "..."
		}
		if !errors.Is(err, ErrUnsupported) || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("name of %d bytes: got %v, want an error ending %q", n, err, want)
		}
	}
}

// TestMutants13HFStripSides: a Strip normalizer strips the sides it names;
// an absent strip_left or strip_right counts as true (FromHF's default). With
// the pipeline of TestMutants13HFPipelineDefaults, " he " becomes "he" (256)
// stripped both sides, " he" → " " "he" (32 256) right only, "he " (256 32)
// left only.
func TestMutants13HFStripSides(t *testing.T) {
	for _, tc := range []struct {
		norm jsonObj
		want []int
	}{
		{jsonObj{"type": "Strip"}, []int{256}},
		{jsonObj{"type": "Strip", "strip_left": true, "strip_right": true}, []int{256}},
		{jsonObj{"type": "Strip", "strip_left": false, "strip_right": true}, []int{32, 256}},
		{jsonObj{"type": "Strip", "strip_left": true, "strip_right": false}, []int{256, 32}},
	} {
		j := byteLevelJSON()
		j["pre_tokenizer"] = seqPre(split(`\S+|\s+`), byteLevelNoRegex)
		j["normalizer"] = tc.norm
		tk, err := FromHF(writeHF(t, j, nil))
		if err != nil {
			t.Fatal(err)
		}
		if got := tk.Encode(" he ", false); !slices.Equal(got, tc.want) {
			t.Errorf("%v: got %v, want %v", tc.norm, got, tc.want)
		}
	}
}

// TestMutants13HFPipelineDigits: a Digits pre-tokenizer in a pipeline splits
// every digit alone with individual_digits true, and keeps runs of digits
// together when it is false or absent (the tokenizers library's default).
// With the piece "12" (258, merge "1 2") and the Split of
// TestMutants13HFPipelineDefaults after it, "12" is 49 50 or 258.
func TestMutants13HFPipelineDigits(t *testing.T) {
	for _, tc := range []struct {
		digits jsonObj
		want   []int
	}{
		{jsonObj{"type": "Digits", "individual_digits": true}, []int{'1', '2'}},
		{jsonObj{"type": "Digits", "individual_digits": false}, []int{258}},
		{jsonObj{"type": "Digits"}, []int{258}},
	} {
		j := byteLevelJSON()
		m := j["model"].(jsonObj)
		m["vocab"].(jsonObj)["12"] = 258
		m["merges"] = []any{"h e", "1 2"}
		j["pre_tokenizer"] = seqPre(tc.digits, split(`\S+|\s+`), byteLevelNoRegex)
		tk, err := FromHF(writeHF(t, j, nil))
		if err != nil {
			t.Fatal(err)
		}
		if tk.Pipeline == nil {
			t.Fatalf("%v: no pipeline", tc.digits)
		}
		if got := tk.Encode("12", false); !slices.Equal(got, tc.want) {
			t.Errorf("%v: got %v, want %v", tc.digits, got, tc.want)
		}
	}
}

// TestMutants13HFMetaspaceReplacement: a Metaspace pre-tokenizer with a
// replacement other than ▁ (which the flags cannot say, so a pipeline)
// writes that replacement for spaces and the prefix: "a" → "_a", the piece
// 261 (merge "_ a"), not "▁a" (258).
func TestMutants13HFMetaspaceReplacement(t *testing.T) {
	j := sentencePieceJSON()
	m := j["model"].(jsonObj)
	m["vocab"].(jsonObj)["_"], m["vocab"].(jsonObj)["_a"] = 260, 261
	m["merges"] = []any{[]any{"▁", "a"}, []any{"_", "a"}}
	j["normalizer"] = nil
	j["pre_tokenizer"] = jsonObj{"type": "Metaspace", "replacement": "_", "prepend_scheme": "always", "split": false}
	tk, err := FromHF(writeHF(t, j, nil))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tk.Encode("a", false), []int{261}; tk.Pipeline == nil || !slices.Equal(got, want) {
		t.Errorf("pipeline %v, Encode(\"a\"): got %v, want %v", tk.Pipeline != nil, got, want)
	}
}

// TestMutants13HFMetaspaceDecoder: a Metaspace decoder strips the first
// token's leading space unless its prepend_scheme is "never", or, in files
// from before prepend_scheme, add_prefix_space is false. So "▁a" (258)
// decodes to " a" with strip 0 and "a" with strip 1.
func TestMutants13HFMetaspaceDecoder(t *testing.T) {
	for _, tc := range []struct {
		dec  jsonObj
		want string
	}{
		{jsonObj{"type": "Metaspace", "replacement": "▁", "add_prefix_space": false}, " a"},
		{jsonObj{"type": "Metaspace", "replacement": "▁", "add_prefix_space": true}, "a"},
		{jsonObj{"type": "Metaspace", "replacement": "▁"}, "a"},
		{jsonObj{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never", "add_prefix_space": true}, " a"},
		{jsonObj{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "add_prefix_space": false}, "a"},
	} {
		j := sentencePieceJSON()
		j["normalizer"] = nil
		j["pre_tokenizer"] = jsonObj{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": false}
		j["decoder"] = tc.dec
		tk, err := FromHF(writeHF(t, j, nil))
		if err != nil {
			t.Fatal(err)
		}
		if got := tk.Decode([]int{258}); tk.Pipeline == nil || got != tc.want {
			t.Errorf("%v: pipeline %v, Decode(▁a) = %q, want %q", tc.dec, tk.Pipeline != nil, got, tc.want)
		}
	}
}

// TestMutants13HFKind1DecoderOrder: kind 1's decoder Sequence must be
// Replace(▁→' '), ByteFallback, Fuse (and Strip) in that order; the same
// three in another order are refused.
func TestMutants13HFKind1DecoderOrder(t *testing.T) {
	j := sentencePieceJSON()
	j["decoder"] = jsonObj{"type": "Sequence", "decoders": []any{
		jsonObj{"type": "Fuse"}, jsonObj{"type": "ByteFallback"},
		jsonObj{"type": "Replace", "pattern": jsonObj{"String": "▁"}, "content": " "},
	}}
	_, err := FromHF(writeHF(t, j, nil))
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "kind 1 decodes as") {
		t.Errorf("got %v, want the kind 1 decoder refusal", err)
	}
}

// TestMutants13HFPipelineStripDecoder: a pipeline kind 1 (Metaspace with
// split true, which the flags cannot say) decodes with
// Sequence[Replace(▁→' '), ByteFallback, Fuse, Strip(' ', 1, 0)], where an
// absent stop counts as 0; a Strip with stop 1 would also cut the last
// character, which the section cannot say, so it is refused.
func TestMutants13HFPipelineStripDecoder(t *testing.T) {
	base := func(strip jsonObj) jsonObj {
		j := sentencePieceJSON()
		j["normalizer"] = nil
		j["pre_tokenizer"] = jsonObj{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": true}
		d := spDecoder(false)
		d["decoders"] = append(d["decoders"].([]any), strip)
		j["decoder"] = d
		return j
	}
	tk, err := FromHF(writeHF(t, base(jsonObj{"type": "Strip", "content": " ", "start": 1}), nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := tk.Decode([]int{258, 258}); tk.Pipeline == nil || got != "a a" {
		t.Errorf("pipeline %v, Decode(▁a ▁a) = %q, want \"a a\"", tk.Pipeline != nil, got)
	}
	_, err = FromHF(writeHF(t, base(jsonObj{"type": "Strip", "content": " ", "start": 1, "stop": 1}), nil))
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "kind 1 decodes as") {
		t.Errorf("Strip stop 1: got %v, want the kind 1 decoder refusal", err)
	}
}

// TestMutants13HFFlagsDecoder: the legacy kind 1 (flags, no pipeline) decodes
// with exactly Sequence[Replace(▁→' '), ByteFallback, Fuse, Strip(' ', 1, 0)]:
// an absent stop counts as 0 (accepted, no pipeline); the four in another
// order, or a Strip with stop 1, are refused by both mappings.
func TestMutants13HFFlagsDecoder(t *testing.T) {
	rep := jsonObj{"type": "Replace", "pattern": jsonObj{"String": "▁"}, "content": " "}
	bf, fuse := jsonObj{"type": "ByteFallback"}, jsonObj{"type": "Fuse"}
	seq := func(d ...any) jsonObj { return jsonObj{"type": "Sequence", "decoders": d} }
	j := sentencePieceJSON()
	j["decoder"] = seq(rep, bf, fuse, jsonObj{"type": "Strip", "content": " ", "start": 1})
	tk, err := FromHF(writeHF(t, j, nil))
	if err != nil {
		t.Fatal(err)
	}
	if tk.Pipeline != nil || tk.Flags != 0 {
		t.Errorf("Strip without stop: pipeline %v flags %v, want the flags mapping with no flags", tk.Pipeline != nil, FlagNames(tk.Flags))
	}
	for name, d := range map[string]jsonObj{
		"order":  seq(fuse, bf, rep, jsonObj{"type": "Strip", "content": " ", "start": 1, "stop": 0}),
		"stop 1": seq(rep, bf, fuse, jsonObj{"type": "Strip", "content": " ", "start": 1, "stop": 1}),
	} {
		j := sentencePieceJSON()
		j["decoder"] = d
		_, err := FromHF(writeHF(t, j, nil))
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "decoder") {
			t.Errorf("%s: got %v, want a decoder refusal", name, err)
		}
	}
}

// TestMutants13HFNormalizedAdded: an added token with normalized true is
// matched in the normalized text, against its own normalized content (the
// tokenizers library normalizes both), which the flags cannot say: the file
// gets a pipeline. The legacy normalizer (Prepend ▁, spaces → ▁) makes the
// token "▁<s>": " <s>" becomes "▁▁<s>", so "▁" (256) then <s> (259); in
// "a<s>a" → "▁a<s>a" it does not occur, so "▁a" (258), the byte tokens of
// '<' 's' '>' (no pieces), and "a" (257).
func TestMutants13HFNormalizedAdded(t *testing.T) {
	j := sentencePieceJSON()
	j["added_tokens"] = []any{jsonObj{"id": 259, "content": "<s>", "special": true, "normalized": true}}
	tk, err := FromHF(writeHF(t, j, nil))
	if err != nil {
		t.Fatal(err)
	}
	if tk.Pipeline == nil {
		t.Fatal("no pipeline")
	}
	for _, tc := range []struct {
		text string
		want []int
	}{
		{" <s>", []int{256, 259}},
		{"a<s>a", []int{258, '<', 's', '>', 257}},
	} {
		if got := tk.Encode(tc.text, false); !slices.Equal(got, tc.want) {
			t.Errorf("Encode(%q): got %v, want %v", tc.text, got, tc.want)
		}
	}
}

// TestMutants13HFVocabRefusals: buildVocab's refusals, each message worked
// out from its rule: ids 0..MaxVocab-1 (so MaxVocab itself is outside,
// "0..16777215"), the byte-level alphabet (U+0144 is one past its last code
// point U+0143), an added token's id given to another vocab piece, an added
// token that the ByteLevel decoder would map to other bytes ("Ġx" is " x"),
// and a gap past what a pipeline may leave, named with the highest id
// (byteLevelJSON's ids run to 256 before its added token; an added id 5000
// leaves 4743 ids free, more than 4096, and n-1 = 5000).
func TestMutants13HFVocabRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(j jsonObj)
		want string
	}{
		{"vocab id MaxVocab", func(j jsonObj) { j["model"].(jsonObj)["vocab"].(jsonObj)["zz"] = MaxVocab },
			`vocab entry "zz" has id 16777216 outside 0..16777215`},
		{"added id MaxVocab", func(j jsonObj) {
			j["added_tokens"] = []any{jsonObj{"id": MaxVocab, "content": "<|x|>"}}
		}, `added token "<|x|>" has id 16777216 outside 0..16777215`},
		{"outside the alphabet", func(j jsonObj) { j["model"].(jsonObj)["vocab"].(jsonObj)["\u0144"] = 258 },
			`vocab entry "ń" (id 258) is not written in the byte-level alphabet`},
		{"added id of another piece", func(j jsonObj) {
			j["added_tokens"] = []any{jsonObj{"id": 256, "content": "<|x|>"}}
		}, `added token "<|x|>" has id 256, which the vocab gives to "he"`},
		{"added through the decoder", func(j jsonObj) {
			j["added_tokens"] = []any{jsonObj{"id": 257, "content": "Ġx"}}
		}, `added token "Ġx" (id 257) decodes to " x" through the ByteLevel decoder`},
		{"gap", func(j jsonObj) {
			j["added_tokens"] = []any{jsonObj{"id": 5000, "content": "<|x|>"}}
		}, "no token has id 257 (ids must run from 0 to 5000 without gaps)"},
	} {
		j := byteLevelJSON()
		tc.edit(j)
		_, err := FromHF(writeHF(t, j, nil))
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want a refusal containing %q", tc.name, err, tc.want)
		}
	}
}

// TestMutants13HFPipelineGaps: a pipeline file may leave up to maxGaps (4096)
// ids without a token (AttrNone); the flags cannot, so a gap also sends a
// file the flags would describe to the pipeline. One gap more is refused,
// counting the missing ids themselves: an added token that repeats its vocab
// piece ("he", 256) is an entry but no new id.
func TestMutants13HFPipelineGaps(t *testing.T) {
	j := byteLevelJSON()
	j["added_tokens"] = []any{jsonObj{"id": 300, "content": "<|x|>"}}
	tk, err := FromHF(writeHF(t, j, nil))
	if err != nil {
		t.Fatal(err)
	}
	if tk.Pipeline == nil || len(tk.Tokens) != 301 || tk.Tokens[257].Attr != AttrNone || tk.Tokens[299].Attr != AttrNone || tk.Tokens[300].Attr != AttrAdded {
		t.Fatalf("pipeline %v, %d tokens, want a pipeline with ids 257..299 AttrNone and 300 added", tk.Pipeline != nil, len(tk.Tokens))
	}
	// ids 0..256 vocab, 257 <|x|>, "he" again as an added token, "hi" at
	// 4355: entries 260, ids 259, missing 258..4354 = 4097 ids. n = 4356 =
	// entries + 4096 passes the first check; the 4097th missing id, 4354, is
	// refused.
	j = byteLevelJSON()
	j["added_tokens"] = append(j["added_tokens"].([]any), jsonObj{"id": 256, "content": "he"})
	j["model"].(jsonObj)["vocab"].(jsonObj)["hi"] = 4355
	j["pre_tokenizer"] = seqPre(split(`\S+|\s+`), byteLevelNoRegex)
	_, err = FromHF(writeHF(t, j, nil))
	if want := "no token has id 4354 (ids must run from 0 to 4355 without gaps)"; !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), want) {
		t.Errorf("4097 gaps: got %v, want a refusal containing %q", err, want)
	}
}

// TestMutants13HFNoMerges: a model without a merges key has no merges (every
// byte its own token).
func TestMutants13HFNoMerges(t *testing.T) {
	j := byteLevelJSON()
	delete(j["model"].(jsonObj), "merges")
	tk, err := FromHF(writeHF(t, j, nil))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tk.Encode("he", false), []int{'h', 'e'}; len(tk.Merges) != 0 || !slices.Equal(got, want) {
		t.Errorf("%d merges, Encode(\"he\") = %v, want none and %v", len(tk.Merges), got, want)
	}
}

// TestMutants13HFBOSZero: BOS may be id 0: add_bos_token with bos_token an
// added token of id 0 sets flag 1 and BOS 0.
func TestMutants13HFBOSZero(t *testing.T) {
	j := byteLevelJSON()
	vocab := jsonObj{}
	for b := range 256 {
		vocab[string(byteToUnicode[b])] = b + 1
	}
	vocab["he"] = 257
	j["model"].(jsonObj)["vocab"] = vocab
	j["added_tokens"] = []any{jsonObj{"id": 0, "content": "<|x|>", "special": true}}
	tk, err := FromHF(writeHF(t, j, jsonObj{"add_bos_token": true, "bos_token": "<|x|>"}))
	if err != nil {
		t.Fatal(err)
	}
	if tk.BOS != 0 || tk.Flags&FlagAddBOS == 0 {
		t.Errorf("BOS %d flags %v, want BOS 0 with add-bos", tk.BOS, FlagNames(tk.Flags))
	}
	if got, want := tk.Encode("he", true), []int{0, 257}; !slices.Equal(got, want) {
		t.Errorf("Encode: got %v, want %v", got, want)
	}
}

// TestMutants13HFEmptyNormalizerSequence: a normalizer Sequence with no
// members normalizes nothing, so a normalized added token is matched as in
// the raw text and the flags describe the file (no pipeline).
func TestMutants13HFEmptyNormalizerSequence(t *testing.T) {
	j := byteLevelJSON()
	j["normalizer"] = jsonObj{"type": "Sequence", "normalizers": []any{}}
	j["added_tokens"] = []any{jsonObj{"id": 257, "content": "<|x|>", "special": true, "normalized": true}}
	tk, err := FromHF(writeHF(t, j, nil))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tk.Encode("he<|x|>", false), []int{256, 257}; tk.Pipeline != nil || !slices.Equal(got, want) {
		t.Errorf("pipeline %v, Encode: got %v, want %v and no pipeline", tk.Pipeline != nil, got, want)
	}
}

// TestMutants13HFTemplateBOSZero: the post-processor's BOS (a template
// [<|x|>] $A, <|x|> id 0) wins over tokenizer_config.json's bos_token, which
// is read only when the template gives none.
func TestMutants13HFTemplateBOSZero(t *testing.T) {
	j := byteLevelJSON()
	vocab := jsonObj{}
	for b := range 256 {
		vocab[string(byteToUnicode[b])] = b + 1
	}
	vocab["he"] = 257
	j["model"].(jsonObj)["vocab"] = vocab
	j["added_tokens"] = []any{jsonObj{"id": 0, "content": "<|x|>", "special": true}, jsonObj{"id": 258, "content": "<|y|>", "special": true}}
	sp := func(id string) jsonObj { return jsonObj{"SpecialToken": jsonObj{"id": id, "type_id": 0}} }
	sq := func(id string) jsonObj { return jsonObj{"Sequence": jsonObj{"id": id, "type_id": 0}} }
	j["post_processor"] = jsonObj{"type": "TemplateProcessing",
		"single":         []any{sp("<|x|>"), sq("A")},
		"pair":           []any{sp("<|x|>"), sq("A"), sp("<|x|>"), sq("B")},
		"special_tokens": jsonObj{"<|x|>": jsonObj{"id": "<|x|>", "ids": []int{0}}}}
	tk, err := FromHF(writeHF(t, j, jsonObj{"bos_token": "<|y|>"}))
	if err != nil {
		t.Fatal(err)
	}
	if tk.BOS != 0 || tk.Flags&FlagAddBOS == 0 {
		t.Errorf("BOS %d flags %v, want BOS 0 with add-bos", tk.BOS, FlagNames(tk.Flags))
	}
}

// TestMutants13HFOldFields: fields of older or rarer files. A model dropout
// other than 0 makes encoding random (refused), 0 is none; a
// CharDelimiterSplit without its delimiter is refused; a Metaspace
// pre-tokenizer from before prepend_scheme says add_prefix_space, false
// meaning no ▁ before the text ("a" → 257, with it "▁a" → 258).
func TestMutants13HFOldFields(t *testing.T) {
	j := byteLevelJSON()
	j["model"].(jsonObj)["dropout"] = 0.1
	if _, err := FromHF(writeHF(t, j, nil)); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "dropout 0.1") {
		t.Errorf("dropout 0.1: got %v, want a refusal", err)
	}
	j["model"].(jsonObj)["dropout"] = 0
	if _, err := FromHF(writeHF(t, j, nil)); err != nil {
		t.Errorf("dropout 0: %v", err)
	}
	j = byteLevelJSON()
	j["pre_tokenizer"] = seqPre(jsonObj{"type": "CharDelimiterSplit"}, byteLevelNoRegex)
	if _, err := FromHF(writeHF(t, j, nil)); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "CharDelimiterSplit without delimiter") {
		t.Errorf("CharDelimiterSplit: got %v, want a refusal", err)
	}
	for _, tc := range []struct {
		prefix bool
		want   []int
	}{{false, []int{257}}, {true, []int{258}}} {
		j := sentencePieceJSON()
		j["normalizer"] = nil
		j["pre_tokenizer"] = jsonObj{"type": "Metaspace", "replacement": "▁", "add_prefix_space": tc.prefix}
		tk, err := FromHF(writeHF(t, j, nil))
		if err != nil {
			t.Fatal(err)
		}
		if got := tk.Encode("a", false); tk.Pipeline == nil || !slices.Equal(got, tc.want) {
			t.Errorf("add_prefix_space %v: pipeline %v, got %v, want %v", tc.prefix, tk.Pipeline != nil, got, tc.want)
		}
	}
}
