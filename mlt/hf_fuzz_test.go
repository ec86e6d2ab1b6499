package mlt

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzFromHF feeds arbitrary tokenizer.json bytes to FromHF: it returns a
// tokenizer or an error, never panics, and what it returns validates, is
// written and read back unchanged, and encodes text to ids in range.
func FuzzFromHF(f *testing.F) {
	for _, j := range []jsonObj{byteLevelJSON(), sentencePieceJSON()} {
		b, err := json.Marshal(j)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0},"merges":[]}}`))
	f.Add([]byte(`{"model":{"type":"WordPiece"}}`))
	dir := f.TempDir()
	path := filepath.Join(dir, "tokenizer.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		tk, err := FromHF(path)
		if err != nil {
			return
		}
		if err := tk.Validate(); err != nil {
			t.Fatalf("FromHF returned a tokenizer that does not validate: %v", err)
		}
		enc := tk.Bytes()
		back, err := Parse(enc)
		if err != nil {
			t.Fatalf("Parse of the written tokenizer: %v", err)
		}
		if !bytes.Equal(back.Bytes(), enc) {
			t.Fatal("the tokenizer read back encodes differently")
		}
		for _, id := range tk.Encode("Hello, world! 123 <s> ▁a he", true) {
			if id < 0 || id >= len(tk.Tokens) {
				t.Fatalf("Encode gave id %d outside the %d tokens", id, len(tk.Tokens))
			}
		}
	})
}
