package mlt

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Tests of session 9's mutation pass over the encoding core (issue 27 item 5,
// mutenc9): each targets mutants that lived under the older tests. Expected
// values come from the Hugging Face tokenizers library (testdata/mutenc9,
// written by make_cases.js there) or from a definition worked out by hand.

// TestEncodeHFCases9: kind 1 tokenizers written with flags (legacy prefix,
// Metaspace "first" and "never", each with ignore_merges) and with a pipeline
// (ignore_merges per pre-token), over vocabularies with pieces no merge reaches
// and merges that cross a ▁, encode as the tokenizers library does.
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
			fails := 0
			for _, k := range c.Cases {
				// Twice: the second call runs from the merger's word cache.
				for pass := range 2 {
					if got := tk.Encode(k.Text, false); !slices.Equal(got, k.IDs) {
						if fails++; fails <= 5 {
							t.Errorf("pass %d Encode(%q): got %v, want %v", pass, k.Text, got, k.IDs)
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
