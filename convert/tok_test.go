package convert

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/mlt"
)

func TestTokenizerBeside(t *testing.T) {
	dir := t.TempDir()
	if err := hfgen.Write(dir, "qwen2", hfgen.Options{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "m.mlb")
	rep, err := Convert(context.Background(), dir, Options{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(filepath.Dir(out), "m.mlt"); rep.Tokenizer != want {
		t.Errorf("tokenizer path: got %q, want %q", rep.Tokenizer, want)
	}
	tok, err := mlt.Open(rep.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	if len(tok.Tokens) != hfgen.TokenizerSize {
		t.Errorf("tokens: got %d, want %d", len(tok.Tokens), hfgen.TokenizerSize)
	}
	// " the" is one merged token of the small vocabulary.
	if got := tok.Encode(" the", false); len(got) != 1 {
		t.Errorf("Encode(\" the\"): got %v, want one token", got)
	}
}

func TestTokenizerRefusals(t *testing.T) {
	dir := t.TempDir()
	if err := hfgen.Write(dir, "llama", hfgen.Options{NoTokenizer: true}); err != nil {
		t.Fatal(err)
	}
	_, err := Convert(context.Background(), dir, Options{Out: filepath.Join(t.TempDir(), "m.mlb")})
	if err == nil || !strings.Contains(err.Error(), "no tokenizer.json") || !strings.Contains(err.Error(), "--no-tokenizer") {
		t.Errorf("missing tokenizer.json: got %v, want an error suggesting --no-tokenizer", err)
	}
	// A model whose vocabulary is smaller than the tokenizer's.
	dir = t.TempDir()
	if err := hfgen.Write(dir, "llama", hfgen.Options{}); err != nil {
		t.Fatal(err)
	}
	ck, _ := OpenCheckpoint(dir)
	ck.Close()
	if _, err := loadTokenizer(dir, false, hfgen.TokenizerSize-1, t.Logf); err == nil || !strings.Contains(err.Error(), "vocab") {
		t.Errorf("small vocab: got %v, want an error naming the vocab", err)
	}
}
