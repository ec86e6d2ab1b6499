package grammar

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/internal/testenv"
	"github.com/krafla/krafla/mlt"
)

const harmonyPrefix = "<|channel|>commentary to=functions.get <|constrain|>json<|message|>"

func harmonyCalls(t *testing.T) *Grammar {
	t.Helper()
	g, err := CompileCalls("", []Call{{Prefix: harmonyPrefix, Schema: []byte(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`)}}, "", 1, "")
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func allowed(t *testing.T, st *State, v *Vocab, id int) bool {
	t.Helper()
	mask := make([]uint64, v.Words())
	if err := st.Mask(v, mask); err != nil {
		t.Fatal(err)
	}
	return mask[id>>6]>>(id&63)&1 == 1
}

// TestSpecialMarkers: a special token given its text is allowed where a
// call's literal reads that text, and nowhere else; one without text never.
func TestSpecialMarkers(t *testing.T) {
	var toks [][]byte
	for b := range 256 {
		toks = append(toks, []byte{byte(b)})
	}
	special := make([]bool, 256, 260)
	add := func(s string, sp bool) int {
		toks, special = append(toks, []byte(s)), append(special, sp)
		return len(toks) - 1
	}
	channel := add("<|channel|>", true)
	constrain := add("<|constrain|>", true)
	message := add("<|message|>", true)
	imStart := add("", true) // a special token without text
	call := add("<|call|>", true)
	v, err := NewVocab(toks, special, []int{call})
	if err != nil {
		t.Fatal(err)
	}
	g := harmonyCalls(t)
	st := g.NewState()
	if !allowed(t, st, v, channel) || !allowed(t, st, v, '<') || allowed(t, st, v, constrain) || allowed(t, st, v, imStart) {
		t.Fatal("at the start: <|channel|> and < allowed, <|constrain|> and a textless special token not")
	}
	if allowed(t, st, v, 0xFF) || st.Clone().AcceptToken(v, 0xFF) == nil {
		t.Fatal("an ordinary token of the byte 0xff must not open a marker")
	}
	if err := st.AcceptToken(v, channel); err != nil {
		t.Fatal(err)
	}
	if allowed(t, st, v, channel) || !allowed(t, st, v, 'c') || allowed(t, st, v, message) {
		t.Fatal("after <|channel|>: only the literal's next byte")
	}
	if err := st.Accept([]byte("commentary to=functions.get ")); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int{constrain, 'j', 's', 'o', 'n', message} {
		if !allowed(t, st, v, id) {
			t.Fatalf("token %q not allowed along the literal", toks[id])
		}
		if err := st.AcceptToken(v, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Accept([]byte(`{"city":"`)); err != nil {
		t.Fatal(err)
	}
	if allowed(t, st, v, channel) || st.Clone().AcceptToken(v, channel) == nil || !allowed(t, st, v, '<') {
		t.Fatal("inside a JSON string: <|channel|> must not be allowed (its text as bytes is)")
	}
	if err := st.Accept([]byte(`<|channel|>"}`)); err != nil || !st.Accepting() || !allowed(t, st, v, call) {
		t.Fatalf("the call should be complete: %v", err)
	}
	// the text spelled out still matches, and a marker never passes as text
	if !g.Matches([]byte(harmonyPrefix+`{"city":"x"}`)) || g.Matches([]byte("\xff<|channel|>\xff")) {
		t.Fatal("Matches")
	}
	// a JSON schema grammar never allows a special token
	js := mustSchema(t, `{"type":"string"}`).NewState()
	js.Accept([]byte(`"`))
	if allowed(t, js, v, channel) {
		t.Fatal("a special token inside a JSON string")
	}
}

// realVocab: a tokenizer from ../shared with its special added tokens'
// texts, as serve builds it.
func realVocab(t *testing.T, dir string) (*Vocab, *mlt.Tokenizer) {
	t.Helper()
	base := os.Getenv("KRAFLA_SHARED")
	if base == "" {
		base = filepath.Join(filepath.Dir(testenv.RepoRoot(t)), "shared")
	}
	p := filepath.Join(base, dir, "tokenizer.json")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s not found", p)
	}
	tk, err := mlt.FromHF(p)
	if err != nil {
		t.Fatal(err)
	}
	toks, ctl := tk.TokenBytes()
	for id := range toks {
		if ctl[id] && tk.Tokens[id].Attr == mlt.AttrAdded {
			toks[id] = tk.Tokens[id].Bytes
		}
	}
	v, err := NewVocab(toks, ctl, tk.StopTokens())
	if err != nil {
		t.Fatal(err)
	}
	return v, tk
}

func tokenID(t *testing.T, tk *mlt.Tokenizer, text string) int {
	t.Helper()
	for id, tok := range tk.Tokens {
		if tok.Attr == mlt.AttrAdded && string(tok.Bytes) == text {
			return id
		}
	}
	t.Fatalf("no added token %q", text)
	return -1
}

// TestSpecialMarkersReal: gpt-oss's harmony markers are special tokens of
// its tokenizer (o200k_harmony: <|channel|> 200005, <|constrain|> 200003,
// <|message|> 200008); a walk that takes a special token wherever the mask
// allows one writes the call with exactly those tokens. Qwen 3's
// <tool_call> and DeepSeek V3's <｜tool▁calls▁begin｜> are added tokens that
// are not special: allowed as they are.
func TestSpecialMarkersReal(t *testing.T) {
	t.Run("gptoss", func(t *testing.T) {
		v, tk := realVocab(t, "tokenizers-next/gptoss")
		want := []int{tokenID(t, tk, "<|channel|>"), tokenID(t, tk, "<|constrain|>"), tokenID(t, tk, "<|message|>")}
		if want[0] != 200005 {
			t.Fatalf("<|channel|> is %d", want[0])
		}
		g := harmonyCalls(t)
		st := g.NewState()
		mask := make([]uint64, v.Words())
		var got []int
		markers := map[string]int{"<|channel|>": want[0], "<|constrain|>": want[1], "<|message|>": want[2]}
		for pos := 0; pos < len(harmonyPrefix); {
			if err := st.Mask(v, mask); err != nil {
				t.Fatal(err)
			}
			rest := harmonyPrefix[pos:]
			pick := -1
			for m, id := range markers {
				if strings.HasPrefix(rest, m) {
					if mask[id>>6]>>(id&63)&1 == 0 {
						t.Fatalf("%s (%d) not allowed at %d", m, id, pos)
					}
					pick = id
				}
			}
			if pick < 0 { // the longest allowed token of the text up to the next marker
				upto := len(rest)
				if i := strings.Index(rest, "<|"); i > 0 {
					upto = i
				}
				for id := range v.Len() {
					tb := v.Token(id)
					if mask[id>>6]>>(id&63)&1 == 1 && len(tb) <= upto && strings.HasPrefix(rest, string(tb)) && (pick < 0 || len(tb) > len(v.Token(pick))) {
						pick = id
					}
				}
			} else {
				got = append(got, pick)
			}
			if err := st.AcceptToken(v, pick); err != nil {
				t.Fatal(err)
			}
			pos += len(v.Token(pick))
		}
		if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
			t.Fatalf("special tokens %v, want %v", got, want)
		}
		for _, id := range want { // inside the arguments: never
			if err := st.Clone().Accept([]byte(`{"city":"`)); err != nil {
				t.Fatal(err)
			}
			in := st.Clone()
			in.Accept([]byte(`{"city":"`))
			if allowed(t, in, v, id) {
				t.Fatalf("%d allowed inside a JSON string", id)
			}
		}
	})
	for _, c := range []struct{ dir, marker string }{{"tokenizers/qwen3", "<tool_call>"}, {"tokenizers-next/deepseek_v3", "<｜tool▁calls▁begin｜>"}} {
		t.Run(filepath.Base(c.dir), func(t *testing.T) {
			v, tk := realVocab(t, c.dir)
			id := tokenID(t, tk, c.marker)
			g, err := CompileCalls(c.marker, []Call{{Schema: []byte(`{"type":"object"}`)}}, "", 1, strings.Replace(c.marker, "<", "</", 1))
			if err != nil {
				t.Fatal(err)
			}
			if !allowed(t, g.NewState(), v, id) {
				t.Fatalf("%s (%d) not allowed at the start", c.marker, id)
			}
		})
	}
}
