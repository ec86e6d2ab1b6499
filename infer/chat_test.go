package infer

import (
	"slices"
	"testing"

	"github.com/krafla/krafla/internal/testenv"
	"github.com/krafla/krafla/mlt"
)

// TestChatTemplates recognises each family from its real tokenizer and checks
// that the wrapped prompt encodes its turn markers as single added tokens and
// that generation would stop at the family's end-of-turn token.
func TestChatTemplates(t *testing.T) {
	for _, tc := range []struct {
		dir, want, start, end string
	}{
		{"llama3", "llama3", "<|start_header_id|>", "<|eot_id|>"},
		{"qwen3", "qwen", "<|im_start|>", "<|im_end|>"},
		{"gemma3", "gemma", "<start_of_turn>", "<end_of_turn>"},
		{"llama2", "", "", ""},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			tok, err := mlt.FromHF(testenv.Shared(t, "tokenizers", tc.dir))
			if err != nil {
				t.Fatal(err)
			}
			c, err := ChatTemplateFor(tok)
			if tc.want == "" {
				if err == nil {
					t.Errorf("got template %q, want an error (no chat tokens)", c.Name)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Name != tc.want {
				t.Errorf("template %q, want %q", c.Name, tc.want)
			}
			ids := tok.Encode(c.Apply("Hello"), AddBOS(tok))
			start, _ := tok.Lookup(tc.start)
			end, _ := tok.Lookup(tc.end)
			if n := countOf(ids, start); n != 2 {
				t.Errorf("%s appears %d times in %v, want 2 (user and assistant turns)", tc.start, n, ids)
			}
			if n := countOf(ids, end); n != 1 {
				t.Errorf("%s appears %d times in %v, want 1", tc.end, n, ids)
			}
			if !slices.Contains(tok.StopTokens(), end) {
				t.Errorf("stop tokens %v do not include %s (%d)", tok.StopTokens(), tc.end, end)
			}
		})
	}
}

func countOf(ids []int, id int) int {
	n := 0
	for _, v := range ids {
		if v == id {
			n++
		}
	}
	return n
}
