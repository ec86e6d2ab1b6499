package mlt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Tests from the mutants left alive in mlt/postproc.go, pipeline.go and
// onig.go (docs/RELIABILITY.md, "mlt postproc.go, pipeline.go, onig.go,
// session 13 (mutmlt13c)"): each fails with a mutant it names planted.
// Expected values come from docs/FORMATS.md's layouts and limits, written out
// here, or from the documented rules, never from the code under test.

// postPayload13c writes a post-processor payload (docs/FORMATS.md): for the
// single then the pair template, u32 item count, then per item u8 kind and,
// for a special token (kind 0), u32 id count and the u32 ids.
func postPayload13c(tpls ...[]PostItem) []byte {
	le := binary.LittleEndian
	var b []byte
	for _, items := range tpls {
		b = le.AppendUint32(b, uint32(len(items)))
		for _, it := range items {
			b = append(b, it.Seq)
			if it.Seq == PostSpecial {
				b = le.AppendUint32(b, uint32(len(it.IDs)))
				for _, id := range it.IDs {
					b = le.AppendUint32(b, uint32(id))
				}
			}
		}
	}
	return b
}

var (
	post13cA = PostItem{Seq: PostSeqA}
	post13cB = PostItem{Seq: PostSeqB}
)

func post13cSpecial(ids ...int32) PostItem { return PostItem{Seq: PostSpecial, IDs: ids} }

// wantFormatErr13c checks that err is an ML_E_FORMAT *Error at offset off
// whose message contains says.
func wantFormatErr13c(t *testing.T, name string, err error, off int64, says string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrFormat) || e.Offset != off || !strings.Contains(e.Msg, says) {
		t.Errorf("%s: got %v, want ML_E_FORMAT at offset %d saying %q", name, err, off, says)
	}
}

// TestMut13cPostLimits: a template of exactly MaxPostItems items and a
// special token of exactly MaxPostTokenIDs ids are accepted, one more is
// not; ids 0 and n_vocab-1 are in the vocabulary, n_vocab is not
// (postproc.go validatePost `>` → `>=` twice, `id < 0` → `<=`,
// `>= nVocab` → `>`; parsePostSection's count `>` → `>=`).
func TestMut13cPostLimits(t *testing.T) {
	n := int32(len(smallByteLevel().Tokens)) // 260
	ids := func(k int) []int32 {
		out := make([]int32, k)
		for i := range out {
			out[i] = int32(i) % n
		}
		return out
	}
	many := func(k int) []PostItem { // k items: k-1 specials and $A
		items := []PostItem{post13cA}
		for range k - 1 {
			items = append(items, post13cSpecial(7))
		}
		return items
	}
	pair := []PostItem{post13cA, post13cB}
	for _, c := range []struct {
		name   string
		single []PostItem
		says   string // "" when valid
	}{
		{"64 items", many(MaxPostItems), ""},
		{"65 items", many(MaxPostItems + 1), "single template has 65 items, more than the limit 64"},
		{"64 ids", []PostItem{post13cSpecial(ids(MaxPostTokenIDs)...), post13cA}, ""},
		{"65 ids", []PostItem{post13cSpecial(ids(MaxPostTokenIDs + 1)...), post13cA}, "single item 0: 65 ids, want 1..64"},
		{"id 0", []PostItem{post13cSpecial(0), post13cA}, ""},
		{"id n_vocab-1", []PostItem{post13cA, post13cSpecial(n - 1)}, ""},
		{"id n_vocab", []PostItem{post13cA, post13cSpecial(n)}, "single item 1: id 260 outside the vocabulary of 260 tokens"},
		{"id -1", []PostItem{post13cA, post13cSpecial(-1)}, "single item 1: id -1 outside the vocabulary"},
	} {
		tok := smallByteLevel()
		tok.SetPost(&Post{Single: c.single, Pair: pair})
		err := tok.Validate()
		if c.says == "" {
			if err != nil {
				t.Errorf("%s: Validate: %v", c.name, err)
				continue
			}
			// And through the file, whose counts are then at their limits.
			back, err := Parse(tok.Bytes())
			if err != nil {
				t.Errorf("%s: Parse: %v", c.name, err)
			} else if !slices.EqualFunc(back.Post.Single, c.single, func(a, b PostItem) bool {
				return a.Seq == b.Seq && slices.Equal(a.IDs, b.IDs)
			}) {
				t.Errorf("%s: parsed single template %v, want %v", c.name, back.Post.Single, c.single)
			}
			continue
		}
		// Validate on a tokenizer in memory: not about a place (offset -1).
		wantFormatErr13c(t, c.name, err, -1, c.says)
	}
}

// TestMut13cPostParseErrors: parsePostSection's errors, each at the offset of
// the field it is about (the payload at file offset 1000; the version field
// the 4 bytes before it), with the bytes-left counts of the message worked out
// from the layout.
func TestMut13cPostParseErrors(t *testing.T) {
	const off = 1000
	le := binary.LittleEndian
	s1 := []PostItem{post13cA}
	ab := []PostItem{post13cA, post13cB}
	good := postPayload13c(s1, ab) // 4+1 + 4+1+1 = 11 bytes
	for _, c := range []struct {
		name    string
		version uint32
		p       []byte
		at      int64 // offset in p
		says    string
	}{
		{"version", 2, good, -4, "post-processor section version 2 is not supported"},
		// single: count 1, a special whose id count has 2 of its 4 bytes.
		{"short u32", 1, []byte{1, 0, 0, 0, PostSpecial, 5, 0}, 5, "single item 0 id count: the payload ends (2 bytes left, need 4)"},
		// single [A] (5 bytes), then a pair count of 3 with 2 bytes left.
		{"pair count", 1, append(le.AppendUint32(postPayload13c(s1), 3), PostSeqA, PostSeqB), 5, "pair item count 3 above the limit 64 or the 2 bytes left"},
		// An id count of 2 with one id's 4 bytes left.
		{"id count", 1, append(postPayload13c(s1), 1, 0, 0, 0, PostSpecial, 2, 0, 0, 0, 9, 0, 0, 0), 10, "pair item 0 id count 2 above the limit 64 or the 4 bytes left"},
		// Two pair items announced, one special of 9 bytes given: the count
		// fits the 1-byte minimum, item 1 finds the payload's end.
		{"items end", 1, append(postPayload13c(s1), 2, 0, 0, 0, PostSpecial, 1, 0, 0, 0, 9, 0, 0, 0), 18, "pair item 1: the payload ends"},
		{"kind 3", 1, append(postPayload13c(s1), 1, 0, 0, 0, 3), 9, "pair item 0: unknown kind 3"},
		{"trailing", 1, append(slices.Clone(good), 0, 0), 11, "2 bytes after the pair template"},
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", c.name, r)
				}
			}()
			tok := smallByteLevel()
			err := parsePostSection(tok, c.version, c.p, off)
			wantFormatErr13c(t, c.name, err, off+c.at, c.says)
		}()
	}
	// Exact fits: the pair count covers exactly the 2 bytes left, an id
	// count of 1 exactly the 4.
	for _, p := range [][]byte{good, postPayload13c(s1, []PostItem{post13cA, post13cB, post13cSpecial(3)})} {
		tok := smallByteLevel()
		if err := parsePostSection(tok, 1, p, off); err != nil {
			t.Errorf("% x: %v", p, err)
		}
	}
}

// TestMut13cEncodePairLong: EncodePair of a short first and a long second
// text (the capacity estimate stays positive: `len(a)+len(b)` → `-` would
// panic) is a's ids, the separator, b's ids.
func TestMut13cEncodePairLong(t *testing.T) {
	tok := postTokenizer(t) // pair: $A, 3, $B
	b := strings.Repeat("x", 40)
	want := []int{'a', 3}
	for range 40 {
		want = append(want, 'x')
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("EncodePair panicked: %v", r)
			}
		}()
		if got := tok.EncodePair("a", b, true); !slices.Equal(got, want) {
			t.Errorf("EncodePair: got %v, want %v", got, want)
		}
	}()
}

// pipePayload13c builds a pipeline payload (docs/FORMATS.md, "Pipeline
// section") from raw parts: little-endian u32s for uint32, single bytes for
// byte, a u32 length and the bytes for string.
func pipePayload13c(parts ...any) []byte {
	le := binary.LittleEndian
	var b []byte
	for _, p := range parts {
		switch v := p.(type) {
		case uint32:
			b = le.AppendUint32(b, v)
		case byte:
			b = append(b, v)
		case string:
			b = append(le.AppendUint32(b, uint32(len(v))), v...)
		case []byte:
			b = append(b, v...)
		default:
			panic("pipePayload13c: bad part")
		}
	}
	return b
}

// pipeTail13c is the part after the steps: unk -1, fuse_unk, decode_strip,
// decode_bytes 0, and the added-token count n (11 bytes), then n options.
func pipeTail13c(opts ...byte) []byte {
	return pipePayload13c(uint32(0xFFFFFFFF), byte(0), byte(0), byte(0), uint32(len(opts)), opts)
}

// TestMut13cPipelineParseErrors: parsePipelineSection's errors at the offset
// of the field they are about (payload at file offset 1000, version 4 bytes
// before), with the bytes-left counts of their messages worked out from the
// layout; and the exact fits (a u32 ending the payload, a string of exactly
// maxPipelineStr bytes, exactly maxSteps steps) accepted.
func TestMut13cPipelineParseErrors(t *testing.T) {
	const off = 1000
	none := uint32(0)
	big := strings.Repeat("p", maxPipelineStr)
	nfc := make([]byte, maxSteps)
	for i := range nfc {
		nfc[i] = byte(OpNFC)
	}
	for _, c := range []struct {
		name    string
		version uint32
		p       []byte
		at      int64
		says    string
	}{
		{"version", 2, pipePayload13c(none, none, pipeTail13c()), -4, "pipeline section version 2 is not supported"},
		// A Strip normalizer whose two bools are missing: the first u8 read
		// is at the payload's end (byte 5).
		{"u8 at the end", 1, pipePayload13c(uint32(1), byte(OpStrip)), 5, "normalizer 0 (Strip) left runs past the end of the section"},
		// unk with 2 of its 4 bytes.
		{"short u32", 1, pipePayload13c(none, none, byte(0xFF), byte(0xFF)), 8, "unk runs past the end of the section"},
		{"bool 2", 1, pipePayload13c(uint32(1), byte(OpStrip), byte(1), byte(2)), 6, "normalizer 0 (Strip) right is 2, want 0 or 1"},
		// Prepend's prefix: 1 more than the limit, with 3 bytes after the length.
		{"string limit", 1, pipePayload13c(uint32(1), byte(OpPrepend), uint32(maxPipelineStr+1), []byte("abc")), 5,
			"normalizer 0 (Prepend) prefix length 65537 is above the limit 65536 or the 3 bytes left"},
		// A string length 4 with 3 bytes after it: past the end, not past the limit.
		{"string past the end", 1, pipePayload13c(none, uint32(1), byte(OpMetaspace), uint32(4), []byte("abc")), 9,
			"pre-tokenizer 0 (Metaspace) replacement length 4 is above the limit 65536 or the 3 bytes left"},
		// A string that ends the payload exactly is read; the next field is not there.
		{"string at the end", 1, pipePayload13c(uint32(1), byte(OpPrepend), "ab"), 11, "step count runs past the end of the section"},
		{"invalid UTF-8", 1, pipePayload13c(uint32(1), byte(OpPrepend), "\xff", none, pipeTail13c()), 9, `normalizer 0 (Prepend) prefix "\xff" is not valid UTF-8`},
		// Pre-tokenizer count 5 with 2 bytes after it.
		{"pre-tokenizer count", 1, pipePayload13c(none, uint32(5), byte(0), byte(0)), 4,
			"step count 5 is above the limit 1024 or needs more than the 2 bytes left"},
		{"step count limit", 1, pipePayload13c(uint32(maxSteps+1), nfc, byte(OpNFC), none, pipeTail13c()), 0, "step count 1025 is above the limit 1024"},
		{"normalizer as pre-tokenizer", 1, pipePayload13c(none, uint32(1), byte(OpLowercase), pipeTail13c()), 8, "pre-tokenizer 0: unknown pre-tokenizer operation 5"},
		{"pre-tokenizer as normalizer", 1, pipePayload13c(uint32(1), byte(OpSplit), none, pipeTail13c()), 4, "normalizer 0: unknown normalizer operation 16"},
		{"option bits", 1, pipePayload13c(none, none, pipeTail13c(byte(AddedSpecial), 0x20)), 20, "added token 1: unknown option bits 0x20"},
		{"trailing", 1, pipePayload13c(none, none, pipeTail13c(), byte(0), byte(0)), 19, "2 bytes left over after the added-token options"},
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", c.name, r)
				}
			}()
			err := parsePipelineSection(&Tokenizer{}, c.version, c.p, off)
			wantFormatErr13c(t, c.name, err, off+c.at, c.says)
		}()
	}
	for _, c := range []struct {
		name string
		p    []byte
		want Pipeline
	}{
		// No added tokens: the payload ends with the u32 count.
		{"count at the end", pipePayload13c(none, none, pipeTail13c()), Pipeline{Normalizers: []Step{}, PreTokenizers: []Step{}, Added: []AddedOptions{}, Unk: -1}},
		{"longest string", pipePayload13c(uint32(1), byte(OpPrepend), big, none, pipeTail13c()),
			Pipeline{Normalizers: []Step{{Op: OpPrepend, Pattern: big}}, PreTokenizers: []Step{}, Added: []AddedOptions{}, Unk: -1}},
		{"bools", pipePayload13c(uint32(1), byte(OpStrip), byte(1), byte(0), uint32(1), byte(OpDigits), byte(1), pipeTail13c(byte(AddedLStrip))),
			Pipeline{Normalizers: []Step{{Op: OpStrip, Left: true}}, PreTokenizers: []Step{{Op: OpDigits, Individual: true}}, Added: []AddedOptions{AddedLStrip}, Unk: -1}},
	} {
		tk := &Tokenizer{}
		if err := parsePipelineSection(tk, 1, c.p, off); err != nil {
			t.Errorf("%s: %v", c.name, err)
		} else if !reflect.DeepEqual(*tk.Pipeline, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, *tk.Pipeline, c.want)
		}
	}
	tk := &Tokenizer{}
	if err := parsePipelineSection(tk, 1, pipePayload13c(uint32(maxSteps), nfc, none, pipeTail13c()), off); err != nil || len(tk.Pipeline.Normalizers) != maxSteps {
		t.Errorf("%d NFC normalizers: %v", maxSteps, err)
	}
}

// TestMut13cPipelineValidate: validatePipeline's rules at their edges, from
// the Pipeline and Step documentation: a normalizer op is below 16 and a
// pre-tokenizer op 16 or above; behaviors 0..4, prepend schemes 0..2; one
// ByteLevel, last, in kind 2 (alone is fine) and none in kind 1; kind 2 has
// unk -1 and no kind 1 decoder settings; kind 1's unk is -1 or a normal or
// added token; decode_strip 0 or 1; one option byte per added token, of the
// five known bits. The errors are about no place (-1), the flags one about
// the header's flags field (28).
func TestMut13cPipelineValidate(t *testing.T) {
	kind2 := smallByteLevelPipeline     // pre-tokenizers: Split, Split, Digits, Punctuation, Metaspace, WhitespaceSplit, ByteLevel
	kind1 := smallSentencePiecePipeline // 262 tokens: bytes 0..255 ('a'..'c' none), 256..260 normal, 261 added
	for _, c := range []struct {
		name string
		tk   func() *Tokenizer
		edit func(tk *Tokenizer)
		off  int64
		says string // "" when valid
	}{
		{"flags", kind2, func(tk *Tokenizer) { tk.Flags |= FlagSplitDigits }, 28, "cannot be combined with a pipeline section"},
		{"Split as normalizer", kind2, func(tk *Tokenizer) {
			tk.Pipeline.Normalizers = append(tk.Pipeline.Normalizers, Step{Op: OpSplit, Pattern: "x"})
		}, -1, "pipeline normalizer 5: unknown normalizer operation 16"},
		{"Lowercase as pre-tokenizer", kind2, func(tk *Tokenizer) { tk.Pipeline.PreTokenizers[0] = Step{Op: OpLowercase} }, -1,
			"pipeline pre-tokenizer 0: unknown pre-tokenizer operation 5"},
		{"literal Replace and Split", kind2, func(tk *Tokenizer) {
			tk.Pipeline.Normalizers[1].Regex = false
			tk.Pipeline.Normalizers[1].Pattern = `(x`
			tk.Pipeline.PreTokenizers[1].Pattern = `(x`
		}, -1, ""},
		{"bad Replace regex", kind2, func(tk *Tokenizer) { tk.Pipeline.Normalizers[1].Pattern = `(x` }, -1, "pipeline normalizer 1 (Replace): regex"},
		{"Punctuation behavior 5", kind2, func(tk *Tokenizer) { tk.Pipeline.PreTokenizers[3].Behavior = 5 }, -1,
			"pipeline pre-tokenizer 3 (Punctuation): unknown behavior 5 (0..4)"},
		{"prepend never", kind2, func(tk *Tokenizer) { tk.Pipeline.PreTokenizers[4].Prepend = PrependNever }, -1, ""},
		{"prepend 3", kind2, func(tk *Tokenizer) { tk.Pipeline.PreTokenizers[4].Prepend = 3 }, -1, "unknown prepend_scheme 3"},
		{"ByteLevel alone", kind2, func(tk *Tokenizer) { tk.Pipeline.PreTokenizers = []Step{{Op: OpByteLevel}} }, -1, ""},
		{"two ByteLevels", kind2, func(tk *Tokenizer) { tk.Pipeline.PreTokenizers = []Step{{Op: OpByteLevel}, {Op: OpByteLevel}} }, -1,
			"pipeline pre-tokenizers 0 and 1 are both ByteLevel"},
		{"no ByteLevel", kind2, func(tk *Tokenizer) { tk.Pipeline.PreTokenizers = []Step{{Op: OpWhitespaceSplit}} }, -1, "must end with its one ByteLevel"},
		{"kind 2 fuse_unk", kind2, func(tk *Tokenizer) { tk.Pipeline.FuseUnk = true }, -1, "a byte-level tokenizer has -1, 0, 0, 0"},
		{"kind 2 decode_strip", kind2, func(tk *Tokenizer) { tk.Pipeline.DecodeStrip = 1 }, -1, "a byte-level tokenizer has -1, 0, 0, 0"},
		{"kind 2 decode_bytes", kind2, func(tk *Tokenizer) { tk.Pipeline.DecodeBytes = true }, -1, "a byte-level tokenizer has -1, 0, 0, 0"},
		{"option bits", kind2, func(tk *Tokenizer) { tk.Pipeline.Added[0] = 0x40 }, -1, "pipeline added token 0: unknown option bits 0x40"},
		{"all options", kind2, func(tk *Tokenizer) {
			tk.Pipeline.Added[0] = AddedLStrip | AddedRStrip | AddedSingleWord | AddedNormalized | AddedSpecial
		}, -1, ""},
		{"two added, one option", kind2, func(tk *Tokenizer) { tk.Tokens[258].Attr = AttrAdded }, -1,
			"pipeline has options for 1 added tokens, the vocabulary has 2"},
		{"two added, two options", kind2, func(tk *Tokenizer) {
			tk.Tokens[258].Attr = AttrAdded
			tk.Pipeline.Added = append(tk.Pipeline.Added, 0)
		}, -1, ""},
		{"kind 1 ByteLevel", kind1, func(tk *Tokenizer) {
			tk.Pipeline.PreTokenizers = append([]Step{{Op: OpByteLevel}}, tk.Pipeline.PreTokenizers...)
		}, -1, "pipeline pre-tokenizer 0: ByteLevel belongs to byte-level tokenizers"},
		{"kind 1 unk -1", kind1, func(tk *Tokenizer) { tk.Pipeline.Unk = -1 }, -1, ""},
		{"kind 1 unk -2", kind1, func(tk *Tokenizer) { tk.Pipeline.Unk = -2 }, -1, "pipeline unk id -2 out of range (-1 or 0..261)"},
		{"kind 1 unk added", kind1, func(tk *Tokenizer) { tk.Pipeline.Unk = 261 }, -1, ""},
		{"kind 1 unk n_vocab", kind1, func(tk *Tokenizer) { tk.Pipeline.Unk = 262 }, -1, "pipeline unk id 262 out of range (-1 or 0..261)"},
		{"kind 1 unk byte 0", kind1, func(tk *Tokenizer) { tk.Pipeline.Unk = 0 }, -1, "pipeline unk id 0 is a byte or none token"},
		{"kind 1 unk none", kind1, func(tk *Tokenizer) { tk.Pipeline.Unk = 'b' }, -1, "pipeline unk id 98 is a byte or none token"},
		{"kind 1 decode_strip 0", kind1, func(tk *Tokenizer) { tk.Pipeline.DecodeStrip = 0 }, -1, ""},
		{"kind 1 decode_strip 2", kind1, func(tk *Tokenizer) { tk.Pipeline.DecodeStrip = 2 }, -1, "pipeline decode_strip 2, want 0 or 1"},
	} {
		tk := c.tk()
		c.edit(tk)
		err := tk.Validate()
		if c.says == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		wantFormatErr13c(t, c.name, err, c.off, c.says)
	}
}

// TestMut13cNames: Op and Behavior names, and the fallback for the values
// past the last one (Behavior's `<` → `<=` indexes past the names).
func TestMut13cNames(t *testing.T) {
	for b, want := range map[Behavior]string{Removed: "Removed", Contiguous: "Contiguous", 5: "behavior(5)", 255: "behavior(255)"} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("Behavior(%d).String panicked: %v", uint8(b), r)
				}
			}()
			if got := b.String(); got != want {
				t.Errorf("Behavior(%d).String() = %q, want %q", uint8(b), got, want)
			}
		}()
	}
	for o, want := range map[Op]string{OpNFC: "NFC", OpStripAccents: "StripAccents", OpSplit: "Split", OpWhitespaceSplit: "WhitespaceSplit", 0: "op(0)", 10: "op(10)", 23: "op(23)"} {
		if got := o.String(); got != want {
			t.Errorf("Op(%d).String() = %q, want %q", uint8(o), got, want)
		}
	}
}

// TestMut13cOnigTranslation: what the Oniguruma (Ruby syntax) patterns match,
// worked out by hand from Oniguruma's rules: (?i) for the rest of the group,
// comments, lazy quantifiers, intervals at their digit and length edges, what
// is not an interval is literal, \p{..} inside a pattern, \w in a class,
// \xHH, \x{..} and \uHHHH at every hex digit edge, back-references, escaped
// non-ASCII characters, classes starting with ']' and single '&'.
func TestMut13cOnigTranslation(t *testing.T) {
	for _, c := range []struct{ re, s, want string }{
		{`(?i)ab`, "AB aB ab Ab", "AB|aB|ab|Ab"},
		{`a(?#c)b`, "ab a b", "ab"},
		{`a+?`, "aaa", "a|a|a"},
		{`a{2`, "aa{2", "a{2"},
		{`a{2,`, "a{2,", "a{2,"},
		{`a{}*`, "a{}}", "a{}}"},
		{`a{9}`, strings.Repeat("a", 9), strings.Repeat("a", 9)},
		{`a{10}`, strings.Repeat("a", 12), strings.Repeat("a", 10)},
		{`a{2,}`, "aaaa", "aaaa"},
		{`ba{,2}`, "b baaa", "b|baa"}, // Ruby syntax: {,m} is {0,m}
		{`a{,}`, "a{,}", "a{,}"},      // literal text
		{`a{,x}`, "a{,x}", "a{,x}"},
		{`a\p{L}b`, "aeb a1b", "aeb"},
		{`[\w]+`, "a_b c", "a_b|c"},
		{`(?i:a\n)`, "A\n", "A\n"},
		{`\x41\x09`, "A\t", "A\t"},
		{`\x{000041}`, "A", "A"},
		{`\u0041`, "A", "A"},
		{`(a)\1`, "ab aa", "aa"},
		{"\\\u0080", "\u0080", "\u0080"},
		{`\é+`, "éé", "éé"},
		{"\uFFFD", "a\uFFFD", "\uFFFD"},
		{`x[ab]y`, "xby", "xby"},
		{`[]a]+`, "a]b", "a]"},
		{`[^]a]+`, "a]b", "b"},
		{`[a&b]+`, "a&b", "a&b"},
		{`[\&&]+`, "a&&", "&&"}, // an escaped '&' and a single one: no intersection
	} {
		got := strings.Join(generalSplit(t, c.re, c.s), "|")
		if got != c.want {
			t.Errorf("%q on %q: got %q, want %q", c.re, c.s, got, c.want)
		}
	}
	// Translated without error (regexp2 itself may take them differently or
	// slowly): the largest repeat bound, U+FFFF, every hex digit edge, \9.
	for _, re := range []string{`a{1,100000}`, `\x{FFFF}`, `\x09\xaf\xAF`, `\u09af\uAF09`, `(a)\9`} {
		if _, _, err := translateOnig(re); err != nil {
			t.Errorf("%q: %v", re, err)
		}
	}
}

// TestMut13cOnigRefusals: the patterns translateOnig must refuse, each with
// the reason it gives, and compileOniguruma's own error for what regexp2
// rejects.
func TestMut13cOnigRefusals(t *testing.T) {
	for _, c := range []struct{ re, want string }{
		{"\xff", "invalid UTF-8 at byte 0"},
		{"a\xff", "invalid UTF-8 at byte 1"},
		{`x(?#c`, "unterminated comment"},
		{`a\`, "trailing backslash"},
		{`\p`, `\p without {name}`},
		{`\p{L`, `unterminated \p{`},
		{`(?i:\d)`, `\d in a case-insensitive group`},
		{`(?i:\D)`, `\D in a case-insensitive group`},
		{`(?i:\s)`, `\s in a case-insensitive group`},
		{`(?i:\S)`, `\S in a case-insensitive group`},
		{`(?i:\p{L})`, `\p in a case-insensitive group`},
		{`\x`, `\x needs two hex digits`},
		{`\x4`, `\x needs two hex digits`},
		{`\x4g`, `\x needs two hex digits`},
		{`\x{41`, `bad \x{...}`},
		{`\x{}`, `bad \x{...}`},
		{`\x{0000041}`, `bad \x{...}`},
		{`\x{10000}`, `\x{10000} is not supported`},
		{`\x{zz}`, `\x{zz} is not supported`},
		{`\u004`, `\u needs four hex digits`},
		{`\u004g`, `\u needs four hex digits`},
		{`\0`, `escape \0 has no exact regexp2 equivalent`},
		{`[`, "unterminated character class"},
		{`[^`, "unterminated character class"},
		{`[a&`, "unterminated character class"},
		{`[\h]`, `escape \h`},
		{`[\W]`, `\W inside a character class`},
		{`(a`, "unterminated group"},
		{`*a`, `regex "*a": `},
		// The group's text is quoted whole up to 20 bytes, cut at 20 beyond.
		{"(?x" + strings.Repeat("a", 18), `group "?x` + strings.Repeat("a", 18) + `" is not supported`},
		{"(?x" + strings.Repeat("a", 19), `group "?x` + strings.Repeat("a", 18) + `..." is not supported`},
	} {
		if _, err := compileOniguruma(c.re); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error containing %q", c.re, err, c.want)
		}
	}
}

// TestMut13cOnigCache: the cache gives back the compiled pattern it holds
// and starts over once it holds maxOnigCache patterns, never more.
func TestMut13cOnigCache(t *testing.T) {
	onigCache.Lock()
	onigCache.m = nil
	onigCache.Unlock()
	a, err := compileOniguruma(`a13c`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := compileOniguruma(`b13c`); err != nil {
		t.Fatal(err)
	}
	if again, _ := compileOniguruma(`a13c`); again != a {
		t.Error("the second compile of a pattern is not the cached one")
	}
	for i := range maxOnigCache + 10 {
		if _, err := compileOniguruma(fmt.Sprintf("x%d", i)); err != nil {
			t.Fatal(err)
		}
		onigCache.Lock()
		n := len(onigCache.m)
		onigCache.Unlock()
		if n > maxOnigCache {
			t.Fatalf("after %d patterns the cache holds %d, above %d", i+3, n, maxOnigCache)
		}
	}
}
