package mlt

import (
	"slices"
	"testing"
)

// Tests of session 13's mutation pass (mutpe13) over bytelevel.go and
// pipeline_encode.go: each targets mutants that lived under the older tests.
// Expected ids are worked out by hand from smallByteLevel (a byte's id is the
// byte; "<|x|>" is the added token 259) and the tokenizers library's rules.

// tinyPipeline is smallByteLevel with the pipeline made of the normalizers
// norms, a ByteLevel pre-tokenizer without regex (each stretch is one
// pre-token) and the added token 259 with the options o.
func tinyPipeline(t *testing.T, norms []Step, o AddedOptions) *Tokenizer {
	t.Helper()
	tk := smallByteLevel()
	tk.Flags = FlagPipeline
	tk.Pipeline = &Pipeline{Normalizers: norms, PreTokenizers: []Step{{Op: OpByteLevel}},
		Added: []AddedOptions{o}, Unk: -1}
	if err := tk.Validate(); err != nil {
		t.Fatal(err)
	}
	return tk
}

// TestMutPE13SingleWord: a single_word added token matches only when no word
// character touches it on either side (find_matches); otherwise its text is
// plain bytes ("<|x|>" is 60 124 120 124 62, no merge applies).
func TestMutPE13SingleWord(t *testing.T) {
	tk := tinyPipeline(t, nil, AddedSingleWord)
	x := []int{60, 124, 120, 124, 62}
	for _, c := range []struct {
		text string
		want []int
	}{
		{"<|x|>", []int{259}},
		{" <|x|> ", []int{32, 259, 32}},
		{"a<|x|>", append([]int{97}, x...)},     // a word character before
		{"<|x|>a", append(slices.Clone(x), 97)}, // a word character after
		{".<|x|>.", []int{46, 259, 46}},         // punctuation touches it: still a match
	} {
		if got := tk.Encode(c.text, false); !slices.Equal(got, c.want) {
			t.Errorf("%q: got %v, want %v", c.text, got, c.want)
		}
	}
}

// TestMutPE13EmptyStretch: find_matches gives no stretch of text before an
// added token at offset 0 nor after one at the end, so the normalizers never
// run on an empty text; a Replace of the regex `z*` (which matches the empty
// text, giving "h") must therefore add nothing around a lone "<|x|>", and an
// empty text encodes to nothing.
func TestMutPE13EmptyStretch(t *testing.T) {
	tk := tinyPipeline(t, []Step{{Op: OpReplace, Pattern: "z*", Regex: true, Content: "h"}}, 0)
	for _, c := range []struct {
		text string
		want []int
	}{
		{"<|x|>", []int{259}},
		{"<|x|><|x|>", []int{259, 259}},
		{"", nil},
	} {
		if got := tk.Encode(c.text, false); !slices.Equal(got, c.want) {
			t.Errorf("%q: got %v, want %v", c.text, got, c.want)
		}
	}
}
