package serve

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/krafla/krafla/mlt"
)

// TestPromptTemplate: a raw prompt (/v1/completions, ollama's raw generate)
// starts with the special tokens the tokenizer's post-processor puts before
// a text and not with those after it: `[BOS] $A [EOS]` gives BOS and the
// text, one token more than the text alone and one fewer than the whole
// template (an EOS-ended prompt is nothing to continue).
func TestPromptTemplate(t *testing.T) {
	m, _ := tinyModel(t)
	pt, err := mlt.Open(strings.TrimSuffix(tinyPath(t), ".mlb") + ".mlt")
	if err != nil {
		t.Fatal(err)
	}
	pt.Flags &^= mlt.FlagAddBOS
	pt.SetPost(&mlt.Post{
		Single: []mlt.PostItem{{Seq: mlt.PostSpecial, IDs: []int32{1}}, {Seq: mlt.PostSeqA}, {Seq: mlt.PostSpecial, IDs: []int32{2}}},
		Pair:   []mlt.PostItem{{Seq: mlt.PostSeqA}, {Seq: mlt.PostSeqB}},
	})
	if err := pt.Validate(); err != nil {
		t.Fatal(err)
	}
	s := NewServer(Config{Name: "tiny", Ctx: 128})
	if err := s.Start(m, pt); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		hs.Close()
		s.Close()
	})
	want := 1 + len(pt.Encode("ab c", false))
	resp, b := post(t, hs.URL+"/v1/completions", map[string]any{"model": "tiny", "prompt": "ab c", "max_tokens": 1, "temperature": 0})
	if c := decodeCompletion(t, b); resp.StatusCode != 200 || c.Usage == nil || c.Usage.PromptTokens != want {
		t.Errorf("/v1/completions: %d %s; want %d prompt tokens", resp.StatusCode, b, want)
	}
	code, b := ollamaDo(t, http.MethodPost, hs.URL+"/api/generate", map[string]any{"model": "tiny", "prompt": "ab c", "raw": true, "stream": false, "options": map[string]any{"num_predict": 1}})
	var d ollamaDone
	if err := json.Unmarshal(b, &d); err != nil || code != 200 || d.PromptN != want {
		t.Errorf("/api/generate raw: %d %s; want prompt_eval_count %d", code, b, want)
	}
}
