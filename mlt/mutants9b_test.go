package mlt

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// Tests of session 9's mutation pass over the encoding core (issue 27 item 5,
// mutenc9): each targets mutants that lived under the older tests. Expected
// values come from the Hugging Face tokenizers library (testdata/mutenc9,
// written by make_cases.js there) or from a definition worked out by hand.

// TestEncodeHFCases9: kind 1 tokenizers written with flags (legacy prefix,
// Metaspace "first" and "never", each with ignore_merges) and with a pipeline
// (ignore_merges per pre-token), over vocabularies with pieces no merge reaches
// and merges that cross a ▁, and kind 2 pipelines whose Split regex matches the
// empty string (each behavior, before ByteLevel's prefix space), encode as the
// tokenizers library does, on the fast and on the general (regexp2) path.
func TestEncodeHFCases9(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "mutenc9", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cs []pipelineCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	// The flags FromHF must choose, so that each case reaches the path it aims at.
	const pipe = ^uint32(0)
	wantFlags := map[string]uint32{
		"sp_legacy":                     0,
		"sp_legacy_ignore":              FlagIgnoreMerges,
		"sp_first":                      FlagPrefixOnce,
		"sp_first_ignore":               FlagPrefixOnce | FlagIgnoreMerges,
		"sp_never_ignore":               FlagNoPrefix | FlagIgnoreMerges,
		"sp_pipeline_split_ignore":      pipe,
		"sp_pipeline_split":             pipe,
		"sp_pipeline_whitespace_ignore": pipe,
		"sp_wsplit_first":               pipe,
		"sp_punct_first_split":          pipe,
		"empty_split_isolated":          pipe,
		"empty_split_removed":           pipe,
		"empty_split_removed_invert":    pipe,
		"empty_split_merged_previous":   pipe,
		"empty_split_merged_next":       pipe,
		"empty_split_contiguous":        pipe,
	}
	if len(cs) != len(wantFlags) {
		t.Fatalf("%d tokenizers in cases.json, want %d", len(cs), len(wantFlags))
	}
	for _, c := range cs {
		t.Run(c.Name, func(t *testing.T) {
			tk := pipelineTokenizer(t, c)
			want, ok := wantFlags[c.Name]
			switch {
			case !ok:
				t.Fatalf("no expected flags for %s", c.Name)
			case want == pipe:
				if tk.Pipeline == nil {
					t.Fatalf("FromHF wrote no pipeline")
				}
			default:
				const kindFlags = FlagIgnoreMerges | FlagPrefixOnce | FlagNoPrefix | FlagPipeline
				if tk.Pipeline != nil || tk.Flags&kindFlags != want || tk.Kind != KindSentencePiece {
					t.Fatalf("FromHF: kind %d flags %#x pipeline %v, want kind 1 flags %#x, no pipeline", tk.Kind, tk.Flags, tk.Pipeline != nil, want)
				}
			}
			tks := []*Tokenizer{tk}
			if tk.Pipeline != nil {
				tks = append(tks, withGeneralPath(t, tk))
			}
			fails := 0
			for _, k := range c.Cases {
				for path, tk := range tks {
					// Twice: the second call runs from the merger's word cache.
					for pass := range 2 {
						if got := tk.Encode(k.Text, false); !slices.Equal(got, k.IDs) {
							if fails++; fails <= 5 {
								t.Errorf("general path %v, pass %d, Encode(%q): got %v, want %v", path == 1, pass, k.Text, got, k.IDs)
							}
						}
					}
				}
				if d := tk.Decode(k.IDs); d != k.Decoded {
					if fails++; fails <= 5 {
						t.Errorf("Decode(%q): got %q, want %q", k.Text, d, k.Decoded)
					}
				}
			}
		})
	}
}

// TestEncodeEdges9: ids 0 as BOS, as an added token and as a byte token; an
// empty added token in a tokenizer built by hand (Validate refuses one, Encode
// must still not fault); Lookup's edges. Expected ids follow from the
// definitions: BOS goes first, an added token is its id, a character without a
// piece is its bytes' tokens.
func TestEncodeEdges9(t *testing.T) {
	// BOS id 0 with flag 1.
	sp := smallSentencePiece(FlagAddBOS)
	sp.BOS = 0
	if err := sp.Validate(); err != nil {
		t.Fatal(err)
	}
	plain := sp.Encode("ab", false)
	if got := sp.Encode("ab", true); !slices.Equal(got, append([]int{0}, plain...)) {
		t.Errorf("BOS 0: Encode(ab, true) = %v, want [0] + %v", got, plain)
	}
	// Byte token 0: "\x00" has no piece, so it is its byte token, id 0; "a\x00b" keeps it between.
	sp0 := smallSentencePiece(FlagNoPrefix)
	if got := sp0.Encode("\x00", false); !slices.Equal(got, []int{0}) {
		t.Errorf("Encode(\\x00) = %v, want [0] (byte token 0)", got)
	}
	if got := sp0.Encode("a\x00b", false); !slices.Equal(got, []int{257, 0, 258}) {
		t.Errorf("Encode(a\\x00b) = %v, want [257 0 258]", got)
	}

	// Added token id 0 in a kind 2 tokenizer: ids 1..256 are the bytes.
	bl := &Tokenizer{Kind: KindByteLevel, BOS: -1, EOS: -1}
	bl.Tokens = append(bl.Tokens, Token{Attr: AttrAdded, Bytes: []byte("<|0|>")})
	for b := range 256 {
		bl.Tokens = append(bl.Tokens, Token{Bytes: []byte{byte(b)}})
	}
	if err := bl.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := bl.Encode("a<|0|>b", false); !slices.Equal(got, []int{'a' + 1, 0, 'b' + 1}) {
		t.Errorf("added token 0: Encode = %v, want [98 0 99]", got)
	}
	if id, ok := bl.Lookup("<|0|>"); !ok || id != 0 {
		t.Errorf("Lookup(<|0|>) = %d, %v, want 0, true", id, ok)
	}
	// Kind 2 has no <0xXX> byte tokens.
	if id, ok := bl.Lookup("<0x41>"); ok {
		t.Errorf("kind 2 Lookup(<0x41>) = %d, true, want not found", id)
	}

	// An empty added token (no Validate) matches nothing.
	e := smallSentencePiece(0)
	want := e.Encode("a<s>b", false)
	e2 := smallSentencePiece(0)
	e2.Tokens = append(e2.Tokens, Token{Attr: AttrAdded})
	if got := e2.Encode("a<s>b", false); !slices.Equal(got, want) {
		t.Errorf("with an empty added token: %v, want %v", got, want)
	}

	// Lookup: the empty string, byte tokens only in upper case and exactly <0xXX>.
	lk := smallSentencePiece(0)
	for _, c := range []struct {
		piece string
		id    int
		ok    bool
	}{
		{"", 0, false}, {"<0x0A>", 10, true}, {"<0x0a>", 0, false}, {"<0x0A?", 0, false}, {"<0x0AB", 0, false},
		{"[0x0A>", 0, false}, {"<0x0A", 0, false}, {"<0x00>", 0, true}, {"<0xFF>", 255, true}, {"<0xG0>", 0, false},
		{"<s>", 261, true}, {"▁a", 259, true}, {"▁b", 0, false},
	} {
		if id, ok := lk.Lookup(c.piece); id != c.id || ok != c.ok {
			t.Errorf("Lookup(%q) = %d, %v, want %d, %v", c.piece, id, ok, c.id, c.ok)
		}
	}
}

// TestPreTokenCache9: the merger caches the ids of each pre-token (kind 2) and
// word (kind 1) of up to maxCachedPreToken bytes, serves them from there (a
// planted entry is what comes back), never caches a longer one, and starts over
// once maxCacheEntries are held.
func TestPreTokenCache9(t *testing.T) {
	bl := tinyByteLevel(t, FlagGPT2Regex, nil, nil)
	bl.prepare()
	at := strings.Repeat("a", maxCachedPreToken)
	over := at + "a"
	bl.merger.store(at, []int{7})
	bl.merger.store(over, []int{8})
	if got := bl.Encode(at, false); !slices.Equal(got, []int{7}) {
		t.Errorf("kind 2, %d-byte pre-token: got %v, want the cached [7]", len(at), got)
	}
	if got := bl.Encode(over, false); len(got) != len(over) {
		t.Errorf("kind 2, %d-byte pre-token: got %v, want its %d bytes (not cached)", len(over), got, len(over))
	}
	bl.merger.cache = nil
	bl.Encode(over+"."+at, false) // pre-tokens: over, ".", at
	if _, ok := bl.merger.cache[over]; ok || len(bl.merger.cache) != 1 {
		t.Errorf("kind 2 cache after %d- and %d-byte pre-tokens (a single byte is never cached): %d entries, want 1 (not the longer)", len(over), len(at), len(bl.merger.cache))
	}

	sp := smallSentencePiece(FlagNoPrefix)
	sp.prepare()
	sp.merger.store(at, []int{7})
	sp.merger.store(over, []int{8})
	if got := sp.Encode(at, false); !slices.Equal(got, []int{7}) {
		t.Errorf("kind 1, %d-byte word: got %v, want the cached [7]", len(at), got)
	}
	if got := sp.Encode(over, false); len(got) != len(over) {
		t.Errorf("kind 1, %d-byte word: got %v, want its %d pieces (not cached)", len(over), got, len(over))
	}

	// The bound: maxCacheEntries distinct pre-tokens fill the cache; one more starts it over.
	c := &merger{}
	for i := range maxCacheEntries {
		c.store(strconv.Itoa(i), []int{i})
	}
	if len(c.cache) != maxCacheEntries {
		t.Fatalf("%d entries after %d stores", len(c.cache), maxCacheEntries)
	}
	if got, ok := c.cached("12345", nil); !ok || !slices.Equal(got, []int{12345}) {
		t.Errorf("cached(12345) = %v, %v", got, ok)
	}
	c.store("x", []int{1})
	if len(c.cache) != 1 {
		t.Errorf("%d entries after one store past the bound, want 1", len(c.cache))
	}
}

// TestSplitterEdges9: charSplitter takes an invalid byte alone and a real
// U+FFFD whole (three bytes, also at the very end); isPunctuation is, for
// ASCII, Rust's is_ascii_punctuation; isRustWord holds the two joiners.
func TestSplitterEdges9(t *testing.T) {
	fffd := charSplitter(func(r rune) bool { return r == utf8.RuneError })
	for _, c := range []struct {
		s    string
		want []span
	}{
		{"\uFFFD", []span{{0, 3}}},
		{"a\uFFFD", []span{{1, 4}}},
		{"a\uFFFDb", []span{{1, 4}}},
		{"\xff", []span{{0, 1}}},
		{"a\xffb\xef\xbf", []span{{1, 2}, {3, 4}, {4, 5}}},
		{"\xef\xbf\xbd\xef", []span{{0, 3}, {3, 4}}},
	} {
		if got := fffd.matches(c.s, nil, nil); !slices.Equal(got, c.want) {
			t.Errorf("charSplitter(U+FFFD).matches(%q) = %v, want %v", c.s, got, c.want)
		}
	}
	const asciiPunct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
	for r := rune(0); r < utf8.RuneSelf; r++ {
		if got, want := isPunctuation(r), strings.ContainsRune(asciiPunct, r); got != want {
			t.Errorf("isPunctuation(%q) = %v, want %v", r, got, want)
		}
	}
	for _, c := range []struct {
		r    rune
		want bool
	}{{0x200C, true}, {0x200D, true}, {0x200B, false}, {'a', true}, {'_', true}, {'5', true}, {' ', false}, {'-', false}, {0x0301, true}, {0x2160, true}} {
		if got := isRustWord(c.r); got != c.want {
			t.Errorf("isRustWord(%U) = %v, want %v", c.r, got, c.want)
		}
	}
}

// TestRegexSplitterEmpty9: the general path's matches follow the onig crate's
// find_iter, which drops an empty match that ends where the previous match
// ended (worked out by hand from its FindMatches::next): `o*` over "or" gives
// "o" and the empty match at the end, not the one at 1; a first match that is
// empty stands wherever it is (`(?=b)` over "ab": at 1).
func TestRegexSplitterEmpty9(t *testing.T) {
	for _, c := range []struct {
		re, s string
		want  []span
	}{
		{`o*`, "or", []span{{0, 1}, {2, 2}}},
		{`o*`, "xo", []span{{0, 0}, {1, 2}}},
		{`o*`, "xoox", []span{{0, 0}, {1, 3}, {4, 4}}},
		{`o*`, "", []span{{0, 0}}},
		{`(?=b)`, "ab", []span{{1, 1}}},
		{`(?=b)`, "abb", []span{{1, 1}, {2, 2}}},
	} {
		sp, err := newSplitter(c.re, true)
		if err != nil {
			t.Fatal(err)
		}
		if got := sp.matches(c.s, nil, new(pipeScratch)); !slices.Equal(got, c.want) {
			t.Errorf("%s over %q: %v, want %v", c.re, c.s, got, c.want)
		}
	}
}

// TestSentencePieceWordSplit9 compares Encode of small kind 1 tokenizers whose
// pieces hold characters right before a ▁ (ASCII, DEL, a two-byte and a
// three-byte character, and ▁ itself) with refSentencePiece
// (sentencepiece_test.go), which merges each segment whole, on random strings
// of those characters, under each prefix rule: spWords may cut a segment into
// words only before a ▁ that no piece joins to what comes before it.
func TestSentencePieceWordSplit9(t *testing.T) {
	chars := []string{"a", "b", " ", "▁", "\x7f", "é", "中", "x"}
	pieces := []string{"▁", "a", "b", "é", "中", "\x7f", "a▁", "\x7f▁", "é▁", "中▁", "▁a", "▁▁", "a▁b", "▁b", "é▁a", "ab", "▁▁a"}
	merges := [][2]string{{"a", "▁"}, {"▁", "a"}, {"\x7f", "▁"}, {"é", "▁"}, {"▁", "▁"}, {"中", "▁"}, {"a▁", "b"},
		{"▁", "b"}, {"é▁", "a"}, {"a", "b"}, {"▁▁", "a"}}
	for _, flags := range []uint32{0, FlagPrefixOnce, FlagNoPrefix} {
		tk := &Tokenizer{Kind: KindSentencePiece, BOS: -1, EOS: -1, Flags: flags}
		for c := range 256 {
			tk.Tokens = append(tk.Tokens, Token{Attr: AttrByte, Bytes: []byte{byte(c)}})
		}
		id := map[string]uint32{}
		for _, p := range pieces {
			id[p] = uint32(len(tk.Tokens))
			tk.Tokens = append(tk.Tokens, Token{Attr: AttrNormal, Bytes: []byte(p)})
		}
		tk.Tokens = append(tk.Tokens, Token{Attr: AttrAdded, Bytes: []byte("<x>")})
		for _, m := range merges {
			tk.Merges = append(tk.Merges, [3]uint32{id[m[0]], id[m[1]], id[m[0]+m[1]]})
		}
		if err := tk.Validate(); err != nil {
			t.Fatal(err)
		}
		tk.prepare()
		ref := newRefSentencePiece(tk)
		r := rand.New(rand.NewPCG(9, uint64(flags)))
		fails := 0
		for range 3000 {
			var sb strings.Builder
			for n := r.IntN(12); n > 0; n-- {
				if r.IntN(20) == 0 {
					sb.WriteString("<x>")
				}
				sb.WriteString(chars[r.IntN(len(chars))])
			}
			s := sb.String()
			if got, want := tk.Encode(s, false), ref.encode(s); !slices.Equal(got, want) {
				if fails++; fails <= 5 {
					t.Errorf("flags %#x Encode(%q) = %v, want %v (reference)", flags, s, got, want)
				}
			}
		}
	}
}
