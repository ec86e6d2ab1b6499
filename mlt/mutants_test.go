package mlt

import "testing"

// Tests from the mutants gremlins left alive in mlt (docs/RELIABILITY.md,
// "mlt, session 8"): each fails with the mutant it names planted.

// TestDecodeEdgeIDs: the id just past the vocabulary is skipped like any
// other outside it (decode.go's `id >= len(t.Tokens)`; `>` faults on it), in
// Decode and in a StreamDecoder.
func TestDecodeEdgeIDs(t *testing.T) {
	bl := smallByteLevel()
	sp := smallSentencePiece(0)
	for _, tk := range []*Tokenizer{bl, sp} {
		n := len(tk.Tokens)
		if got := tk.Decode([]int{'a', n, 'b', n - 1}); tk == bl && got != "ab<|x|>" || tk == sp && got != "ab<s>" {
			t.Errorf("kind %d: Decode with id %d = n_vocab: %q", tk.Kind, n, got)
		}
		d := tk.NewStreamDecoder()
		if got := d.Add(n) + d.Flush(); got != "" {
			t.Errorf("kind %d: stream Add(n_vocab) = %q, want nothing", tk.Kind, got)
		}
	}
}

// TestDecodeNormalizedAdded: with a pipeline, an added token marked
// normalized decodes to its normalized text (decodeAs), as the tokenizers
// library's decode of its normalized content does, and an added token not
// marked so decodes to its own bytes (decode.go's `tok.Attr == AttrAdded`).
func TestDecodeNormalizedAdded(t *testing.T) {
	tk := smallByteLevelPipeline()
	tk.Tokens[259].Bytes = []byte("<|X|>")
	tk.Tokens = append(tk.Tokens, Token{Attr: AttrAdded, Bytes: []byte("<|Y|>")}) // 260
	tk.Pipeline.Normalizers = []Step{{Op: OpLowercase}}
	tk.Pipeline.Added = []AddedOptions{AddedNormalized, 0}
	if err := tk.Validate(); err != nil {
		t.Fatal(err)
	}
	if got, want := tk.Decode([]int{259, 'a', 260}), "<|x|>a<|Y|>"; got != want {
		t.Errorf("Decode = %q, want %q", got, want)
	}
}
