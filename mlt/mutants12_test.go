package mlt

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestMutants12ManyPrompts: config_sentence_transformers.json's prompts is a
// JSON object, so its names are unique; ReadHFEmbed must return them in
// byte order whatever their number (200 here, enough that sort.Slice leaves
// insertion sort). Expected order: "p000".."p199", zero-padded so that byte
// order is numeric order (derived by hand, not by the code under test).
func TestMutants12ManyPrompts(t *testing.T) {
	prompts := map[string]string{}
	for i := 199; i >= 0; i-- {
		prompts[fmt.Sprintf("p%03d", i)] = fmt.Sprintf("text %d: ", i)
	}
	b, _ := json.Marshal(map[string]any{"prompts": prompts, "default_prompt_name": "p100"})
	e, err := ReadHFEmbed(writeFiles(t, map[string]string{"config_sentence_transformers.json": string(b)}))
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

// TestMutants12ChatBoundaries: ReadHFChat at each limit's edge, the values
// derived by hand from transformers' semantics and the .mlt limits
// (SPEC.md: at most MaxChatTemplates templates of at most MaxTemplateLen
// bytes, at most MaxChatStopIDs stop ids; ids 0..nVocab-1 are valid).
func TestMutants12ChatBoundaries(t *testing.T) {
	t.Run("EOS 0 appended", func(t *testing.T) {
		// Token id 0 is a valid EOS: it joins the stop ids after eos_token_id's.
		tok := &Tokenizer{EOS: 0, Tokens: make([]Token, 10)}
		c, err := ReadHFChat(writeFiles(t, map[string]string{"generation_config.json": `{"eos_token_id": 5}`}), tok)
		if err != nil {
			t.Fatal(err)
		}
		if want := []int32{5, 0}; c == nil || !slices.Equal(c.StopIDs, want) {
			t.Fatalf("chat %+v, want stop ids %v", c, want)
		}
	})
	t.Run("stop id 0 kept", func(t *testing.T) {
		tok := &Tokenizer{EOS: -1, Tokens: make([]Token, 10)}
		var warnings []string
		c, err := ReadHFChatWarn(writeFiles(t, map[string]string{"generation_config.json": `{"eos_token_id": [0, 9, 10]}`}), tok,
			func(s string) { warnings = append(warnings, s) })
		if err != nil {
			t.Fatal(err)
		}
		if want := []int32{0, 9}; c == nil || !slices.Equal(c.StopIDs, want) {
			t.Fatalf("chat %+v, want stop ids %v", c, want)
		}
		// 10 ids: the valid range is 0..9.
		if len(warnings) != 1 || !strings.Contains(warnings[0], "eos_token_id 10 is not one of the tokenizer's 10 ids (0..9): dropped") {
			t.Errorf("warnings %q, want one for 10 naming 0..9", warnings)
		}
	})
	t.Run("MaxChatStopIDs ids", func(t *testing.T) {
		tok := &Tokenizer{EOS: -1, Tokens: make([]Token, 2*MaxChatStopIDs)}
		ids := make([]string, MaxChatStopIDs)
		want := make([]int32, MaxChatStopIDs)
		for i := range ids {
			ids[i] = strconv.Itoa(i)
			want[i] = int32(i)
		}
		c, err := ReadHFChat(writeFiles(t, map[string]string{"generation_config.json": `{"eos_token_id": [` + strings.Join(ids, ",") + `]}`}), tok)
		if err != nil {
			t.Fatal(err)
		}
		if c == nil || !slices.Equal(c.StopIDs, want) {
			t.Fatalf("chat %+v, want stop ids 0..%d", c, MaxChatStopIDs-1)
		}
	})
	t.Run("MaxChatTemplates templates", func(t *testing.T) {
		tok := &Tokenizer{EOS: 1, Tokens: make([]Token, 10)}
		var list []string
		for i := 0; i < MaxChatTemplates; i++ {
			list = append(list, fmt.Sprintf(`{"name": "t%02d", "template": "x"}`, i))
		}
		c, err := ReadHFChat(writeFiles(t, map[string]string{"tokenizer_config.json": `{"chat_template": [` + strings.Join(list, ",") + `]}`}), tok)
		if err != nil {
			t.Fatal(err)
		}
		if c == nil || len(c.Templates) != MaxChatTemplates || c.Templates[0].Name != "t00" || c.Templates[MaxChatTemplates-1].Name != fmt.Sprintf("t%02d", MaxChatTemplates-1) {
			t.Fatalf("chat %+v, want %d templates t00..t%02d", c, MaxChatTemplates, MaxChatTemplates-1)
		}
	})
	t.Run("template of MaxTemplateLen bytes", func(t *testing.T) {
		tok := &Tokenizer{EOS: 1, Tokens: make([]Token, 10)}
		src := strings.Repeat("x", MaxTemplateLen)
		c, err := ReadHFChat(writeFiles(t, map[string]string{"chat_template.jinja": src}), tok)
		if err != nil {
			t.Fatal(err)
		}
		if c == nil || len(c.Templates) != 1 || c.Templates[0].Source != src {
			t.Fatalf("want the %d-byte template read whole", MaxTemplateLen)
		}
	})
	t.Run("clip at 40 bytes", func(t *testing.T) {
		// A 40-byte value (38 letters in quotes) is quoted whole; 41 bytes are cut to 40 and "…".
		tok := &Tokenizer{EOS: -1, Tokens: make([]Token, 10)}
		s40 := `"` + strings.Repeat("a", 38) + `"`
		_, err := ReadHFChat(writeFiles(t, map[string]string{"generation_config.json": `{"eos_token_id": ` + s40 + `}`}), tok)
		if err == nil || !strings.HasSuffix(err.Error(), "not "+s40) {
			t.Errorf("got %v, want it to end with %s", err, s40)
		}
		s41 := `"` + strings.Repeat("a", 39) + `"`
		_, err = ReadHFChat(writeFiles(t, map[string]string{"generation_config.json": `{"eos_token_id": ` + s41 + `}`}), tok)
		if err == nil || !strings.HasSuffix(err.Error(), "not "+s41[:40]+"…") {
			t.Errorf("got %v, want it to end with %s…", err, s41[:40])
		}
	})
}
