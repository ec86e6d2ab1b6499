package mlt

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/krafla/krafla/internal/testenv"
)

// pipelineCase is one tokenizer of testdata/pipeline/cases.json, with what
// Hugging Face tokenizers 0.23.2 made of each text (make_cases.js there).
type pipelineCase struct {
	Name      string          `json:"name"`
	Tokenizer json.RawMessage `json:"tokenizer"`
	Cases     []struct {
		Text    string `json:"text"`
		IDs     []int  `json:"ids"`
		Decoded string `json:"decoded"`
	} `json:"cases"`
}

func readPipelineCases(t testing.TB) []pipelineCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "pipeline", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cs []pipelineCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

// pipelineTokenizer builds c's tokenizer through FromHF and the .mlt bytes.
func pipelineTokenizer(t testing.TB, c pipelineCase) *Tokenizer {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), c.Tokenizer, 0o644); err != nil {
		t.Fatal(err)
	}
	return fromHFViaFile(t, dir)
}

// TestPipelineCases: every pipeline step (normalizers, pre-tokenizers with each
// behavior, added-token options, Metaspace schemes, missing byte tokens with
// and without unk) encodes and decodes as the tokenizers library does.
func TestPipelineCases(t *testing.T) {
	for _, c := range readPipelineCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			tk := pipelineTokenizer(t, c)
			for _, generalPath := range []bool{false, true} {
				if generalPath {
					tk = withGeneralPath(t, tk)
				}
				fails := 0
				for _, k := range c.Cases {
					got := tk.Encode(k.Text, false)
					if !slices.Equal(got, k.IDs) {
						if fails++; fails <= 3 {
							t.Errorf("general path %v, %q: got %v, want %v", generalPath, k.Text, got, k.IDs)
						}
					}
					if d := tk.Decode(k.IDs); d != k.Decoded {
						if fails++; fails <= 3 {
							t.Errorf("decode %q: got %q, want %q", k.Text, d, k.Decoded)
						}
					}
				}
			}
		})
	}
}

// withGeneralPath returns a copy of tk whose pipeline runs every regex
// through regexp2, never through the hand-written scanners.
func withGeneralPath(t testing.TB, tk *Tokenizer) *Tokenizer {
	t.Helper()
	generalOnly = true
	defer func() { generalOnly = false }()
	p, err := Parse(tk.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	p.prepare()
	return p
}

// asPipeline returns a byte-level tokenizer described by the SPEC.md flags
// as the equivalent pipeline tokenizer: NFC (flag 8), Digits (64), the regex
// the flags select as a Split, ByteLevel.
func asPipeline(t testing.TB, tk *Tokenizer) *Tokenizer {
	t.Helper()
	if tk.Pipeline != nil {
		return tk
	}
	p := &Pipeline{Unk: -1}
	if tk.Flags&FlagNFC != 0 {
		p.Normalizers = append(p.Normalizers, Step{Op: OpNFC})
	}
	if tk.Flags&FlagSplitDigits != 0 {
		p.PreTokenizers = append(p.PreTokenizers, Step{Op: OpDigits, Individual: true})
	}
	re := map[pattern]string{patLlama3: regexLlama3, patQwen2: regexQwen2, patQwen35: regexQwen35, patGPT2: regexGPT2}[patternFor(tk.Flags)]
	p.PreTokenizers = append(p.PreTokenizers, SplitRegex(re), Step{Op: OpByteLevel})
	out := &Tokenizer{Kind: tk.Kind, Flags: tk.Flags&(FlagAddBOS|FlagIgnoreMerges) | FlagPipeline, BOS: tk.BOS, EOS: tk.EOS,
		Tokens: tk.Tokens, Merges: tk.Merges, Pipeline: p}
	for _, tok := range tk.Tokens {
		if tok.Attr == AttrAdded {
			p.Added = append(p.Added, 0)
		}
	}
	if err := out.Validate(); err != nil {
		t.Fatal(err)
	}
	return out
}

// smallByteLevelPipeline is smallByteLevel with a pipeline using every step
// kind that has parameters.
func smallByteLevelPipeline() *Tokenizer {
	t := smallByteLevel()
	t.Flags = FlagPipeline
	t.Pipeline = &Pipeline{
		Normalizers: []Step{{Op: OpNFKC}, {Op: OpReplace, Pattern: `\s+`, Regex: true, Content: " "},
			{Op: OpPrepend, Pattern: "^"}, {Op: OpStrip, Left: true}, {Op: OpLowercase}},
		PreTokenizers: []Step{SplitRegex(`\p{N}{1,3}`), {Op: OpSplit, Pattern: "x", Behavior: MergedWithNext, Invert: true},
			{Op: OpDigits, Individual: true}, {Op: OpPunctuation, Behavior: Contiguous}, {Op: OpMetaspace, Pattern: "_", Prepend: PrependFirst, SplitWords: true},
			{Op: OpWhitespaceSplit}, {Op: OpByteLevel, AddPrefixSpace: true, UseRegex: true}},
		Added: []AddedOptions{AddedLStrip | AddedSpecial},
		Unk:   -1,
	}
	return t
}

// smallSentencePiecePipeline is smallSentencePiece without the byte tokens
// of 'a'..'c' (their ids become none tokens), with unk 257 ("a").
func smallSentencePiecePipeline() *Tokenizer {
	t := smallSentencePiece(0)
	t.Flags = FlagPipeline
	for c := 'a'; c <= 'c'; c++ {
		t.Tokens[c] = Token{Attr: AttrNone}
	}
	t.Pipeline = &Pipeline{
		Normalizers:   []Step{{Op: OpReplace, Pattern: " ", Content: "▁"}},
		PreTokenizers: []Step{{Op: OpMetaspace, Pattern: "▁", Prepend: PrependAlways}},
		Added:         []AddedOptions{AddedRStrip | AddedSingleWord | AddedSpecial},
		Unk:           257, FuseUnk: true, DecodeStrip: 1, DecodeBytes: true,
	}
	return t
}

func TestPipelineSectionRoundTrip(t *testing.T) {
	for _, tk := range []*Tokenizer{smallByteLevelPipeline(), smallSentencePiecePipeline()} {
		if err := tk.Validate(); err != nil {
			t.Fatal(err)
		}
		b := tk.Bytes()
		p, err := Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		if !sameTokenizer(tk, p) || !reflect.DeepEqual(tk.Pipeline, p.Pipeline) {
			t.Errorf("round trip changed the tokenizer: %+v, want %+v", p.Pipeline, tk.Pipeline)
		}
		if string(p.Bytes()) != string(b) {
			t.Errorf("Bytes of the parsed file differ")
		}
	}
}

// TestPipelineMissingBytes: a character whose byte tokens are missing is unk,
// consecutive ones fused; one whose bytes exist gets them.
func TestPipelineMissingBytes(t *testing.T) {
	tk := smallSentencePiecePipeline()
	// "▁a" (Metaspace always, then the merge) is 259; "x" (0x78) has its
	// byte token, "é" (C3 A9) too; "c" has neither a piece nor a byte token:
	// one unk (257) for "cc", appended once a character with a piece comes or
	// the word ends, so after the byte tokens of é (as tokenizers does:
	// testdata/pipeline, "☃ж☃").
	got := tk.Encode("axccé", false)
	want := []int{259, 'x', 0xC3, 0xA9, 257}
	if !slices.Equal(got, want) {
		t.Errorf("Encode: got %v, want %v", got, want)
	}
	// The byte tokens of é come before the pending unk of a preceding c.
	if got, want := tk.Encode("cé", false), []int{256, 0xC3, 0xA9, 257}; !slices.Equal(got, want) {
		t.Errorf("Encode(cé): got %v, want %v", got, want)
	}
	// None tokens decode to nothing.
	if got := tk.Decode([]int{'a', 257, 'b'}); got != "a" {
		t.Errorf("Decode with none tokens: got %q, want %q", got, "a")
	}
}

// pipelineImage returns the .mlt image of tk and the offset of its pipeline
// section's payload.
func pipelineImage(t *testing.T, tk *Tokenizer) ([]byte, int) {
	t.Helper()
	base := &Tokenizer{Kind: tk.Kind, BOS: tk.BOS, EOS: tk.EOS, Tokens: tk.Tokens, Merges: tk.Merges}
	return tk.Bytes(), len(base.Bytes()) + sectionHeaderSize
}

func TestPipelineSectionMalformed(t *testing.T) {
	base, at := pipelineImage(t, smallByteLevelPipeline())
	le := binary.LittleEndian
	for _, tc := range []struct {
		name string
		edit func(b []byte) []byte
		want string
	}{
		{"version", func(b []byte) []byte { le.PutUint32(b[at-4:], 2); return b }, "version 2"},
		{"length past the end", func(b []byte) []byte { le.PutUint32(b[at-8:], 1<<30); return b }, "section length"},
		{"truncated", func(b []byte) []byte {
			b = b[:len(b)-3]
			le.PutUint32(b[at-8:], uint32(len(b)-at+4))
			return b
		}, "runs past the end"},
		{"normalizer count", func(b []byte) []byte { le.PutUint32(b[at:], 1<<20); return b }, "step count"},
		{"unknown normalizer", func(b []byte) []byte { b[at+4] = 99; return b }, "unknown normalizer operation 99"},
		{"pre-tokenizer as normalizer", func(b []byte) []byte { b[at+4] = byte(OpSplit); return b }, "unknown normalizer operation 16"},
		{"bad bool", func(b []byte) []byte { b[at+6] = 2; return b }, "want 0 or 1"}, // Replace's regex flag
		{"string length", func(b []byte) []byte { le.PutUint32(b[at+7:], 1<<31); return b }, "length"},
		{"trailing bytes", func(b []byte) []byte {
			b = append(b, 0)
			le.PutUint32(b[at-8:], uint32(len(b)-at+4))
			return b
		}, "left over"},
		{"option bits", func(b []byte) []byte { b[len(b)-1] = 0x80; return b }, "unknown option bits"},
		{"flag without section", func(b []byte) []byte { return b[:at-8] }, "header is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.edit(slices.Clone(base)))
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want ML_E_FORMAT containing %q", err, tc.want)
			}
		})
	}
}

func TestPipelineValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(tk *Tokenizer)
		want string
	}{
		{"old flag", func(tk *Tokenizer) { tk.Flags |= FlagNFC }, "cannot be combined"},
		{"ByteLevel not last", func(tk *Tokenizer) {
			p := tk.Pipeline.PreTokenizers
			p[0], p[len(p)-1] = p[len(p)-1], p[0]
		}, "must end with its one ByteLevel"},
		{"bad regex", func(tk *Tokenizer) { tk.Pipeline.PreTokenizers[0].Pattern = `(?m:x)` }, "inline options"},
		{"unterminated regex", func(tk *Tokenizer) { tk.Pipeline.PreTokenizers[0].Pattern = `(x` }, "unterminated group"},
		{"behavior", func(tk *Tokenizer) { tk.Pipeline.PreTokenizers[1].Behavior = 9 }, "unknown behavior 9"},
		{"metaspace replacement", func(tk *Tokenizer) { tk.Pipeline.PreTokenizers[4].Pattern = "ab" }, "not one character"},
		{"added count", func(tk *Tokenizer) { tk.Pipeline.Added = nil }, "options for 0 added tokens"},
		{"unk in kind 2", func(tk *Tokenizer) { tk.Pipeline.Unk = 3 }, "for kind 1"},
		{"none token without pipeline", func(tk *Tokenizer) {
			tk.Flags, tk.Pipeline = 0, nil
			tk.Tokens = append(tk.Tokens, Token{Attr: AttrNone})
		}, "unknown attr 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tk := smallByteLevelPipeline()
			tc.edit(tk)
			err := tk.Validate()
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want ML_E_FORMAT containing %q", err, tc.want)
			}
		})
	}
	tk := smallSentencePiecePipeline()
	tk.Pipeline.Unk = 'x'
	if err := tk.Validate(); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "byte or none token") {
		t.Errorf("unk a byte token: got %v, want ML_E_FORMAT", err)
	}
}

// TestGeneralPathConformance: the byte-level tokenizers of the conformance
// folders give every expected id through the general path too (the flags'
// scanners replaced by their regexes in regexp2).
func TestGeneralPathConformance(t *testing.T) {
	for _, dir := range conformanceDirs(t) {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			tk := shippedDir(t, name, dir)
			// Byte-level flags: the equivalent pipeline (asPipeline). Kind 1
			// described by flags (gemma3, llama2): the pipeline section FromHF
			// would write for the same tokenizer.json; kind 1 with a pipeline
			// (gemini): itself. Each with the scanners off.
			p := tk
			if tk.Kind == KindSentencePiece && tk.Pipeline == nil {
				p = sentencePieceAsPipeline(t, dir)
			} else {
				p = asPipeline(t, tk)
			}
			g := withGeneralPath(t, p)
			for i, c := range readCaseLines(t, filepath.Join(dir, "cases.jsonl")) {
				if got := g.Encode(c.Text, false); !slices.Equal(got, c.IDs) {
					t.Fatalf("case %d %q: got %v, want %v", i, short(c.Text), firstIDs(got), firstIDs(c.IDs))
				}
			}
		})
	}
}

// sentencePieceAsPipeline maps dir's tokenizer.json onto a pipeline section
// (fromHFPipeline) although the flags describe it.
func sentencePieceAsPipeline(t *testing.T, dir string) *Tokenizer {
	t.Helper()
	var f hfFile
	var cfg hfConfig
	b, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil || json.Unmarshal(b, &f) != nil {
		t.Fatalf("tokenizer.json: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json")); err == nil {
		if err := json.Unmarshal(b, &cfg); err != nil {
			t.Fatal(err)
		}
	}
	p, err := fromHFPipeline(&f, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind != KindSentencePiece || p.Pipeline == nil {
		t.Fatalf("kind %d, pipeline %v: want a kind 1 pipeline", p.Kind, p.Pipeline != nil)
	}
	return p
}

// FuzzGeneralVsScanners encodes arbitrary text with a pipeline tokenizer whose
// Split regex has a hand-written scanner (one of the four, chosen by which)
// and with the same tokenizer on the general path (regexp2): the ids agree.
func FuzzGeneralVsScanners(f *testing.F) {
	res := []string{regexLlama3, regexQwen2, regexQwen35, regexGPT2, regexO200k}
	fast := make([]*Tokenizer, len(res))
	general := make([]*Tokenizer, len(res))
	for i, re := range res {
		tk := smallByteLevel()
		tk.Flags = FlagPipeline
		tk.Pipeline = &Pipeline{Unk: -1, Added: []AddedOptions{0},
			PreTokenizers: []Step{{Op: OpDigits, Individual: i == 1}, SplitRegex(re), {Op: OpByteLevel, UseRegex: i == 3}}}
		if err := tk.Validate(); err != nil {
			f.Fatal(err)
		}
		tk.prepare()
		fast[i], general[i] = tk, withGeneralPath(f, tk)
		if _, ok := fast[i].pipe.pres[1].split.(scannerSplitter); !ok {
			f.Fatalf("regex %d does not take the scanner", i)
		}
		if _, ok := general[i].pipe.pres[1].split.(regexSplitter); !ok {
			f.Fatalf("regex %d does not take regexp2 on the general path", i)
		}
	}
	for _, s := range []string{"Hello world", "I'LL 12345  \r\n x", "e\u0301 \u3000\u3000 ab", "'ſ (x) !!\n", "'\xc5 \xff\xfe a\xc3", "hello<|x|> 'Ve"} {
		f.Add(s, byte(0))
		f.Add(s, byte(3))
	}
	f.Fuzz(func(t *testing.T, s string, which byte) {
		i := int(which) % len(res)
		got, want := fast[i].Encode(s, false), general[i].Encode(s, false)
		if !slices.Equal(got, want) {
			t.Fatalf("regex %d on %q: scanner path %v, general path %v", i, s, got, want)
		}
	})
}

func TestTranslateOnigRefusals(t *testing.T) {
	for re, want := range map[string]string{
		`a{1,100001}`: "above Oniguruma's limit",
		`a{,100001}`:  "above Oniguruma's limit",
		`a{,2}*`:      "nested quantifier",
		`a++`:         "possessive",
		`a{2}*`:       "nested quantifier",
		`[a[b]]`:      "nested character class",
		`[a&&b]`:      "intersection",
		`\h`:          `escape \h`,
		`(?i:[a-z])`:  "character class inside a case-insensitive group",
		`(?i:é)`:      "non-ASCII letter",
		`(?i:ss)`:     "ligature or ß",
		`(?x) a`:      "inline options",
		`a)`:          "unbalanced",
		`\x{1F600}`:   "at most 4 hex digits",
	} {
		if _, err := compileOniguruma(re); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error containing %q", re, err, want)
		}
	}
	// What the translation keeps (Oniguruma's matches, worked out by hand).
	for _, tc := range []struct{ re, s, want string }{
		{`(?i:'s)`, "'ſ 'S 's", "'ſ|'S|'s"},
		{`(?i:k)+`, "kKK", "kKK"}, // U+212A KELVIN SIGN folds to k
		{`(?i:i)`, "İi", "i"},     // İ has only a multi-character fold
		{`\w+`, "a\u0903b", "a\u0903b"},
		{`^x`, "x\nx", "x|x"},
		{`\p{^L}+`, "ab12cd", "12"},
		{`a{2,3}`, "aaaa", "aaa"},
		{`\x{41}`, "A", "A"},
	} {
		got := strings.Join(generalSplit(t, tc.re, tc.s), "|")
		if got != tc.want {
			t.Errorf("%q on %q: got %q, want %q", tc.re, tc.s, got, tc.want)
		}
	}
}

// TestOnigClassesAreGo: \s and \d, passed to regexp2 unchanged, are the sets
// Oniguruma gives them (White_Space, Nd), and the \w translation is Oniguruma's
// (L, M, Nd, Pc), on every code point up to U+3100 and every 7th beyond.
func TestOnigClassesAreGo(t *testing.T) {
	sets := []struct {
		re string
		in func(rune) bool
	}{
		{`\s`, unicode.IsSpace},
		{`\d`, func(r rune) bool { return unicode.Is(unicode.Nd, r) }},
		{`\w`, func(r rune) bool {
			return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.Is(unicode.Nd, r) || unicode.Is(unicode.Pc, r)
		}},
	}
	for _, st := range sets {
		rx, err := compileOniguruma(`^` + st.re + `$`)
		if err != nil {
			t.Fatal(err)
		}
		for r := rune(0); r <= unicode.MaxRune; r++ {
			if r > 0x3100 {
				r += 6
			}
			if r >= 0xD800 && r < 0xE000 || r == '\n' {
				continue
			}
			ok, err := rx.MatchRunes([]rune{r})
			if err != nil {
				t.Fatal(err)
			}
			if ok != st.in(r) {
				t.Errorf("%s on U+%04X: regexp2 %v, want %v", st.re, r, ok, st.in(r))
			}
		}
	}
}

// TestSharedRegexesTakeFastPaths: the Split regexes of the real pipeline
// tokenizers (gptoss's o200k, gpt35turbo's cl100k = Llama 3 text, deepseek_v3's
// three) are matched by their exact text to a hand-written splitter.
func TestSharedRegexesTakeFastPaths(t *testing.T) {
	for _, name := range []string{"deepseek_v3", "gptoss", "gpt35turbo"} {
		tk := shippedDir(t, name, testenv.Shared(t, "tokenizers-next", name))
		tk.prepare()
		for k, st := range tk.pipe.pres {
			if _, general := st.split.(regexSplitter); general {
				t.Errorf("%s pre-tokenizer %d %s takes the general path", name, k, st.Step)
			}
		}
	}
}
