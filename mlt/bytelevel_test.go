package mlt

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/krafla/krafla/internal/testenv"
)

// gpt2ByteChars is the tokenizers library's bytes_to_unicode table: the
// printable character that stands for each byte in a byte-level vocabulary.
func gpt2ByteChars() map[rune]byte {
	m := map[rune]byte{}
	n := 0
	for b := range 256 {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			m[rune(b)] = byte(b)
		} else {
			m[rune(256+n)] = byte(b)
			n++
		}
	}
	return m
}

// loadByteLevelJSON builds a kind 2 Tokenizer straight from a byte-level BPE
// tokenizer.json, for testing the encoder independently of FromHF.
func loadByteLevelJSON(t testing.TB, path string, flags uint32) *Tokenizer {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Model struct {
			Vocab  map[string]int    `json:"vocab"`
			Merges []json.RawMessage `json:"merges"`
		} `json:"model"`
		Added []struct {
			ID      int    `json:"id"`
			Content string `json:"content"`
		} `json:"added_tokens"`
	}
	if err := json.Unmarshal(raw, &j); err != nil {
		t.Fatal(err)
	}
	chars := gpt2ByteChars()
	unmap := func(s string) []byte {
		var b []byte
		for _, r := range s {
			c, ok := chars[r]
			if !ok {
				t.Fatalf("%s: %q is not byte-level", path, s)
			}
			b = append(b, c)
		}
		return b
	}
	n := 0
	for _, id := range j.Model.Vocab {
		n = max(n, id+1)
	}
	for _, a := range j.Added {
		n = max(n, a.ID+1)
	}
	tk := &Tokenizer{Kind: KindByteLevel, Flags: flags, BOS: -1, EOS: -1, Tokens: make([]Token, n)}
	for s, id := range j.Model.Vocab {
		tk.Tokens[id] = Token{Bytes: unmap(s)}
	}
	for _, a := range j.Added {
		tk.Tokens[a.ID] = Token{Attr: AttrAdded, Bytes: []byte(a.Content)}
	}
	for _, m := range j.Model.Merges {
		var l, r string
		var pair []string
		if json.Unmarshal(m, &pair) == nil && len(pair) == 2 {
			l, r = pair[0], pair[1]
		} else {
			var s string
			if err := json.Unmarshal(m, &s); err != nil {
				t.Fatal(err)
			}
			l, r, _ = strings.Cut(s, " ")
		}
		tk.Merges = append(tk.Merges, [3]uint32{uint32(j.Model.Vocab[l]), uint32(j.Model.Vocab[r]), uint32(j.Model.Vocab[l+r])})
	}
	if err := tk.Validate(); err != nil {
		t.Fatal(err)
	}
	return tk
}

// encodeSegments splits text at added tokens (leftmost, longest) and encodes
// the stretches between them with encodeByteLevel.
func encodeSegments(t *Tokenizer, text string) []int {
	t.prepare()
	var out []int
	start := 0
	for i := 0; i < len(text); {
		if id, n := t.added.match(text[i:]); id >= 0 {
			out = t.encodeByteLevel(text[start:i], out)
			out = append(out, id)
			i += n
			start = i
			continue
		}
		i++
	}
	return t.encodeByteLevel(text[start:], out)
}

type hfCase struct {
	Text    string `json:"text"`
	IDs     []int  `json:"ids"`
	Decoded string `json:"decoded"`
}

func readCases(t testing.TB, path string) []hfCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cs []hfCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var c hfCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cs
}

var byteLevelSets = []struct {
	dir   string
	flags uint32
}{
	{"llama3", FlagIgnoreMerges},
	{"qwen3", FlagNFC | FlagSingleDigits},
	{"gpt2", FlagGPT2Regex},
}

// TestByteLevelCases runs the shipped Hugging Face cases through the byte-level
// encoder alone (tokenizers built here from tokenizer.json, not by FromHF).
func TestByteLevelCases(t *testing.T) {
	for _, set := range byteLevelSets {
		t.Run(set.dir, func(t *testing.T) {
			dir := testenv.Shared(t, "tokenizers", set.dir)
			tk := loadByteLevelJSON(t, filepath.Join(dir, "tokenizer.json"), set.flags)
			cases := readCases(t, filepath.Join(dir, "cases.jsonl"))
			bad := 0
			for i, c := range cases {
				if got := encodeSegments(tk, c.Text); !slices.Equal(got, c.IDs) {
					bad++
					if bad <= 5 {
						t.Errorf("case %d %.80q: got %v, want %v", i, c.Text, trunc(got), trunc(c.IDs))
					}
				}
			}
			t.Logf("%s: %d/%d cases match", set.dir, len(cases)-bad, len(cases))
		})
	}
}

func trunc(ids []int) []int {
	if len(ids) > 40 {
		return ids[:40]
	}
	return ids
}

// longDocument concatenates the long mixed documents of a cases.jsonl (the
// texts of 10 KB or more: 20, 40 and 60 KB in the shipped files).
func longDocument(b testing.TB, path string) string {
	var sb strings.Builder
	for _, c := range readCases(b, path) {
		if len(c.Text) >= 10000 {
			sb.WriteString(c.Text)
		}
	}
	if sb.Len() == 0 {
		b.Skipf("%s has no long documents", path)
	}
	return sb.String()
}

// BenchmarkByteLevelEncode measures encoding of the long documents, in MB/s.
// The pre-token cache is emptied before each pass ("cold") or kept ("warm").
func BenchmarkByteLevelEncode(b *testing.B) {
	for _, set := range byteLevelSets {
		dir := testenv.Shared(b, "tokenizers", set.dir)
		tk := loadByteLevelJSON(b, filepath.Join(dir, "tokenizer.json"), set.flags)
		tk.prepare()
		doc := longDocument(b, filepath.Join(dir, "cases.jsonl"))
		for _, cold := range []bool{true, false} {
			name := set.dir + "/warm"
			if cold {
				name = set.dir + "/cold"
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(doc)))
				for b.Loop() {
					if cold {
						tk.merger.cache = nil
					}
					encodeSegments(tk, doc)
				}
			})
		}
	}
}

// tinyByteLevel makes a kind 2 tokenizer whose ids 0..255 are the single bytes,
// followed by the given pieces; merges are given as (left, right) piece strings.
func tinyByteLevel(t *testing.T, flags uint32, pieces []string, merges [][2]string) *Tokenizer {
	t.Helper()
	tk := &Tokenizer{Kind: KindByteLevel, Flags: flags, BOS: -1, EOS: -1}
	id := map[string]int{}
	for b := range 256 {
		tk.Tokens = append(tk.Tokens, Token{Bytes: []byte{byte(b)}})
		id[string([]byte{byte(b)})] = b
	}
	for _, p := range pieces {
		id[p] = len(tk.Tokens)
		tk.Tokens = append(tk.Tokens, Token{Bytes: []byte(p)})
	}
	for _, m := range merges {
		tk.Merges = append(tk.Merges, [3]uint32{uint32(id[m[0]]), uint32(id[m[1]]), uint32(id[m[0]+m[1]])})
	}
	if err := tk.Validate(); err != nil {
		t.Fatal(err)
	}
	return tk
}

func TestEncodeByteLevelFlags(t *testing.T) {
	// 256 "ab", 257 "abc", 258 "é" (c3 a9), 259 " ab", 260 " 1"
	pieces := []string{"ab", "abc", "é", " ab", " 1"}
	merges := [][2]string{{"a", "b"}, {"\xc3", "\xa9"}, {" ", "ab"}, {" ", "1"}}
	tests := []struct {
		flags uint32
		in    string
		want  []int
	}{
		{0, "abc", []int{256, 'c'}},                       // no rule makes abc
		{FlagIgnoreMerges, "abc", []int{257}},             // but it is in the vocabulary
		{FlagIgnoreMerges, "abcab", []int{256, 'c', 256}}, // only whole pre-tokens count
		{0, "ab ab", []int{256, 259}},
		{0, "e\u0301", []int{'e', 0xcc, 0x81}},
		{FlagNFC, "e\u0301", []int{258}},
		{0, "ab12345", []int{256, '1', '2', '3', '4', '5'}},
		{FlagSplitDigits | FlagGPT2Regex, "ab 12", []int{256, ' ', '1', '2'}},
		{FlagGPT2Regex, "ab 12", []int{256, 260, '2'}},
		{0, "ab 12", []int{256, ' ', '1', '2'}}, // Llama 3: " " and "12" are separate pre-tokens
		{FlagGPT2Regex, "x ab", []int{'x', 259}},
		{FlagSplitDigits | FlagGPT2Regex, "1 ab", []int{'1', 259}},
	}
	for _, tc := range tests {
		tk := tinyByteLevel(t, tc.flags, pieces, merges)
		if got := tk.encodeByteLevel(tc.in, nil); !slices.Equal(got, tc.want) {
			t.Errorf("flags %d, %q: got %v, want %v", tc.flags, tc.in, got, tc.want)
		}
		// Again, now through the cache.
		if got := tk.encodeByteLevel(tc.in, nil); !slices.Equal(got, tc.want) {
			t.Errorf("flags %d, %q (cached): got %v, want %v", tc.flags, tc.in, got, tc.want)
		}
	}
}
