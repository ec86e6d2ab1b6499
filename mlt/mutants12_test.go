package mlt

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestMutants12ManyPrompts: config_sentence_transformers.json's prompts is a
// JSON object, so its names are unique; ReadHFEmbed must return them in
// byte order whatever their number (200 here, enough that sort.Slice leaves
// insertion sort). Expected order: "p000".."p199", zero-padded so that byte
// order is numeric order (derived by hand, not by the code under test).
func TestMutants12ManyPrompts(t *testing.T) {
	dir := t.TempDir()
	prompts := map[string]string{}
	for i := 199; i >= 0; i-- {
		prompts[fmt.Sprintf("p%03d", i)] = fmt.Sprintf("text %d: ", i)
	}
	b, _ := json.Marshal(map[string]any{"prompts": prompts, "default_prompt_name": "p100"})
	if err := os.WriteFile(filepath.Join(dir, "config_sentence_transformers.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := ReadHFEmbed(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Prompts) != 200 {
		t.Fatalf("%d prompts, want 200", len(e.Prompts))
	}
	for i, p := range e.Prompts {
		if want := fmt.Sprintf("p%03d", i); p.Name != want || p.Text != fmt.Sprintf("text %d: ", i) {
			t.Fatalf("prompt %d is %q %q, want %q", i, p.Name, p.Text, want)
		}
	}
	if e.DefaultPrompt != "p100" || e.Pooling != PoolMean || !e.Normalize || e.ExcludePrompt {
		t.Errorf("got %+v", e)
	}
}
