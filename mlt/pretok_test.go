package mlt

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// The exact regexes of the tokenizer.json files (../shared/tokenizers/*/tokenizer.json,
// Split pre-tokenizer "pattern.Regex"), of SPEC-NOTES.md for Qwen 3.5, and of the
// tokenizers library's ByteLevel pre-tokenizer (use_regex) for GPT-2.
const (
	reLlama3 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	reQwen2  = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	reQwen35 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	reGPT2   = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
)

// Oniguruma (which tokenizers uses) folds case with Unicode case folding, under
// which U+017F ſ folds to s; regexp2 lower-cases instead and leaves ſ alone. The
// reference regexes therefore spell the case-insensitive group out with its
// Unicode case-fold equivalents; TestFoldedGroupEqualsExact shows that this is the
// only difference from the exact regex.
const foldedContractions = `(?:'[sSſ]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])`

func folded(re string) string {
	return strings.ReplaceAll(re, `(?i:'s|'t|'re|'ve|'m|'ll|'d)`, foldedContractions)
}

var patterns = []struct {
	name string
	p    pattern
	re   string
}{
	{"llama3", patLlama3, reLlama3},
	{"qwen2", patQwen2, reQwen2},
	{"qwen35", patQwen35, reQwen35},
	{"gpt2", patGPT2, reGPT2},
	{"o200k", patO200k, regexO200k},
}

var refCache = map[string]*regexp2.Regexp{}

// refSplit returns the matches of re in s, found left to right by regexp2.
func refSplit(t testing.TB, re, s string) []string {
	t.Helper()
	rx := refCache[re]
	if rx == nil {
		rx = regexp2.MustCompile(re, regexp2.None)
		refCache[re] = rx
	}
	var out []string
	m, err := rx.FindStringMatch(s)
	for ; m != nil && err == nil; m, err = rx.FindNextMatch(m) {
		out = append(out, m.String())
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func scan(p pattern, s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := p.next(s, i)
		out = append(out, s[i:j])
		i = j
	}
	return out
}

func TestPretokTable(t *testing.T) {
	// Expected splits worked out by hand from the regexes.
	tests := []struct {
		pat  pattern
		in   string
		want []string
	}{
		{patLlama3, "Hello world", []string{"Hello", " world"}},
		{patLlama3, "I'LL don't 'Re", []string{"I", "'LL", " don", "'t", " '", "Re"}},
		{patLlama3, "'ſa", []string{"'ſ", "a"}},
		{patLlama3, "12345 1234567", []string{"123", "45", " ", "123", "456", "7"}},
		{patQwen2, "12345", []string{"1", "2", "3", "4", "5"}},
		{patLlama3, "a  b   c", []string{"a", " ", " b", "  ", " c"}},
		{patLlama3, "x \r\n\r\n  y", []string{"x", " \r\n\r\n", " ", " y"}},
		{patLlama3, "end  ", []string{"end", "  "}},
		{patLlama3, "(hello) !!\n\nx", []string{"(hello", ")", " !!\n\n", "x"}},
		{patLlama3, "\tfoo\n bar", []string{"\tfoo", "\n", " bar"}},
		{patLlama3, "e\u0301t\u0301", []string{"e", "\u0301t", "\u0301"}},
		{patQwen35, "e\u0301t\u0301 \u0301", []string{"e\u0301t\u0301", " \u0301"}},
		{patGPT2, "I'LL don't 's", []string{"I", "'", "LL", " don", "'t", " '", "s"}},
		{patGPT2, "a  b\n\n c 12345", []string{"a", " ", " b", "\n\n", " c", " 12345"}},
		{patGPT2, "(hi)", []string{"(", "hi", ")"}},
		{patGPT2, "x\u3000\u3000y ", []string{"x", "\u3000", "\u3000", "y", " "}},
	}
	for _, tc := range tests {
		if got := scan(tc.pat, tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("scan(%d, %q): got %q, want %q", tc.pat, tc.in, got, tc.want)
		}
	}
}

// pieces of text that exercise the regexes' corners.
var pretokAlphabet = []string{
	"a", "Z", "é", "e\u0301", "\u0301", "\u0903", "ß", "ſ", "K", "中", "ア", "ｱ", "한", "ب", "\u0645\u064e", "क", "ि", "ก", "\u0e31", "Ω",
	"0", "7", "٣", "½", "Ⅻ", "²",
	" ", " ", "  ", "\t", "\n", "\r", "\r\n", "\v", "\f", "\u00a0", "\u3000", "\u2028", "\u0085", "\u200b",
	"'", "'s", "'S", "'t", "'re", "'RE", "'Ve", "'m", "'ll", "'lL", "'d", "'x", "’s",
	".", ",", "!", "?", "(", ")", "<|", "|>", "_", "-", "$", "€", "😀", "👍🏽", "\u200d", "\x00", "\x7f", "\U0010ffff", "\ufeff",
	"一", "龥", "\u9fa6", "ぁ", "ゟ", "゠", "ヿ", "ㇰ", "\\", "`", "^", "~", "/", "\ue000", "\u00ad",
}

func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(pretokAlphabet[r.IntN(len(pretokAlphabet))])
	}
	return b.String()
}

// generalSplit returns the matches of the Oniguruma pattern re in s found by
// the general path (translateOnig and regexp2), as strings.
func generalSplit(t testing.TB, re, s string) []string {
	t.Helper()
	rx, err := compileOniguruma(re)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range (regexSplitter{rx}).matches(s, nil, new(pipeScratch)) {
		out = append(out, s[m.start:m.end])
	}
	return out
}

// checkAgainstRegexp2 compares a scanner with the general path on s; the
// general path spells out the case folds itself (no folded() needed).
func checkAgainstRegexp2(t *testing.T, p pattern, re, s string) {
	t.Helper()
	want := generalSplit(t, re, s)
	if utf8.ValidString(s) {
		if ref := refSplit(t, folded(re), s); !slices.Equal(ref, want) {
			t.Fatalf("general path on %q: %q, regexp2 with the folded group: %q", s, want, ref)
		}
	}
	if strings.Join(want, "") != s {
		t.Fatalf("regexp2 matches of %q do not tile the text: %q", s, want)
	}
	if got := scan(p, s); !slices.Equal(got, want) {
		t.Fatalf("scan(%d, %q): got %q, want %q (regexp2)", p, s, got, want)
	}
}

func TestPretokMatchesRegexp2(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, pt := range patterns {
		t.Run(pt.name, func(t *testing.T) {
			for range 1500 {
				checkAgainstRegexp2(t, pt.p, pt.re, randomText(r, r.IntN(24)))
			}
		})
	}
}

func TestFoldedGroupEqualsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, pt := range patterns[:3] {
		for range 500 {
			s := strings.ReplaceAll(randomText(r, r.IntN(24)), "ſ", "s")
			got, want := refSplit(t, folded(pt.re), s), refSplit(t, pt.re, s)
			if !slices.Equal(got, want) {
				t.Fatalf("%s on %q: folded regex gives %q, exact %q", pt.name, s, got, want)
			}
		}
	}
}

func TestSplitDigits(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"abc", []string{"abc"}},
		{"a12 b3", []string{"a", "1", "2", " b", "3"}},
		{"٣½x", []string{"٣", "½", "x"}},
	}
	for _, tc := range tests {
		var got []string
		splitDigits(tc.in, func(s string) { got = append(got, s) })
		if !slices.Equal(got, tc.want) {
			t.Errorf("splitDigits(%q): got %q, want %q", tc.in, got, tc.want)
		}
	}
}

func fuzzPattern(f *testing.F, p pattern, re string) {
	for _, s := range []string{"Hello world", "I'LL 12345  \r\n x", "e\u0301 \u3000\u3000 ab", "'ſ (x) !!\n", "'\xc5 \xff\xfe a\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// On any bytes, valid UTF-8 or not, the pre-tokens are non-empty and tile s.
		parts := scan(p, s)
		for _, part := range parts {
			if part == "" {
				t.Fatalf("scan(%d, %q) gave an empty pre-token: %q", p, s, parts)
			}
		}
		if strings.Join(parts, "") != s {
			t.Fatalf("scan(%d, %q) = %q does not tile the text", p, s, parts)
		}
		// The general path (regexp2 after translateOnig) finds the same
		// pre-tokens; invalid UTF-8 is one U+FFFD per byte in both.
		checkAgainstRegexp2(t, p, re, s)
	})
}

func FuzzPretokLlama3(f *testing.F) { fuzzPattern(f, patLlama3, reLlama3) }
func FuzzPretokQwen2(f *testing.F)  { fuzzPattern(f, patQwen2, reQwen2) }
func FuzzPretokQwen35(f *testing.F) { fuzzPattern(f, patQwen35, reQwen35) }
func FuzzPretokGPT2(f *testing.F)   { fuzzPattern(f, patGPT2, reGPT2) }
func FuzzPretokO200k(f *testing.F)  { fuzzPattern(f, patO200k, regexO200k) }

// checkSplitter compares a fast splitter of a non-tiling regex with the
// general path on s.
func checkSplitter(t *testing.T, re string, s string) {
	t.Helper()
	var got []string
	for _, m := range fastSplitters[re].matches(s, nil, new(pipeScratch)) {
		got = append(got, s[m.start:m.end])
	}
	if want := generalSplit(t, re, s); !slices.Equal(got, want) {
		t.Fatalf("%q on %q: fast splitter %q, general path %q", re, s, got, want)
	}
}

func TestFastSplittersMatchGeneral(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for re := range fastSplitters {
		for range 1500 {
			checkSplitter(t, re, randomText(r, r.IntN(24)))
		}
	}
}

// FuzzDeepSeekSplitters: DeepSeek V3's three regexes (which selects one) give
// the same matches through their splitters and through the general path.
func FuzzDeepSeekSplitters(f *testing.F) {
	res := []string{regexDigits3, regexCJK, regexDeepSeekMain}
	for _, s := range []string{"Hello world 12345", "中文字符かなカナ 한국어", ".Hello !!\r\n  x", "\x00a\u0301 \ufeffb", "'\xc5 \xff a"} {
		for w := range res {
			f.Add(s, byte(w))
		}
	}
	f.Fuzz(func(t *testing.T, s string, which byte) {
		checkSplitter(t, res[int(which)%len(res)], s)
	})
}
