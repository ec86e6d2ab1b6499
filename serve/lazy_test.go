package serve

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/krafla/krafla/grammar"
)

// TestLazyGrammar: under tool_choice auto the answer is free until the
// format's trigger appears (here split across tokens), then the grammar
// holds from the trigger on; a text after the trigger that no call can
// continue leaves the answer free.
func TestLazyGrammar(t *testing.T) {
	toks := []string{"Sure, ", "<tool", "_call>", "\n{\"name\": \"pick\"", "<tool_call>\n{\"name\": \"other\""}
	var tb [][]byte
	for _, s := range toks {
		tb = append(tb, []byte(s))
	}
	v, err := grammar.NewVocab(tb, make([]bool, len(tb)), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := json.RawMessage(`[{"type":"function","function":{"name":"pick","parameters":{"type":"object"}}}]`)
	g, ae := callGrammar(tools, "hermes", "", false)
	if ae != nil {
		t.Fatal(ae)
	}
	run := func(ids ...int) *slot {
		sl := &slot{req: &request{p: genParams{grammar: g, trigger: "<tool_call>"}, gvocab: v}, lazy: []byte{}}
		for _, id := range ids {
			if sl.gst != nil {
				if err := sl.gst.AcceptToken(v, id); err != nil {
					t.Fatalf("token %d after the trigger: %v", id, err)
				}
				continue
			}
			(&scheduler{}).lazyGrammar(sl, id)
		}
		return sl
	}
	if sl := run(0, 1); sl.gst != nil || len(sl.lazy) > len("<tool_call>")-1 || !bytes.HasSuffix(sl.lazy, []byte("<tool")) {
		t.Errorf("before the trigger: constrained %v, kept %q (want the tail that may begin it)", sl.gst != nil, sl.lazy)
	}
	sl := run(0, 1, 2)
	if sl.gst == nil {
		t.Fatal("the trigger is complete: want the grammar on")
	}
	if err := sl.gst.Clone().AcceptToken(v, 3); err != nil {
		t.Errorf("a call of pick after the trigger: %v", err)
	}
	if sl.gst.Clone().AcceptToken(v, 0) == nil {
		t.Error("free text after the trigger passed the grammar")
	}
	if sl := run(0, 4); sl.gst != nil || sl.lazy != nil {
		t.Errorf("a call of an unknown tool: constrained %v, still watching %v; want free text", sl.gst != nil, sl.lazy != nil)
	}
}
