package mlt

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
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
