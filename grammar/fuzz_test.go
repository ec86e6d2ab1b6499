package grammar

import (
	"math/rand/v2"
	"testing"
)

// FuzzSchema: any schema text compiles or is refused with an error (no
// panic, no hang), and a compiled one drives a random walk whose outputs
// match the grammar; any output text is matched or refused without panic.
func FuzzSchema(f *testing.F) {
	for _, s := range []string{`{"type":"integer","minimum":-3,"maximum":1000}`, `{"type":"string","pattern":"^a(b|c)*$"}`,
		`{"type":"object","properties":{"a":{"$ref":"#"}}}`, `{"type":"array","prefixItems":[{"enum":[1,"x"]}],"maxItems":3}`,
		`{"anyOf":[{"type":"number","exclusiveMinimum":0},{"format":"date-time"}]}`, `true`, `{"type":["null","boolean"]}`,
		`{"type":"number","minimum":-1.25,"exclusiveMaximum":3.005}`, `{"oneOf":[{"const":1},{"type":"object","properties":{"k":{"const":"a"}},"required":["k"]},{"type":"number","minimum":2}]}`} {
		f.Add([]byte(s), []byte(`{"a":[1]}`), uint64(1))
	}
	v, toks, stop := testVocab(rand.New(rand.NewPCG(3, 3)))
	f.Fuzz(func(t *testing.T, schema, text []byte, seed uint64) {
		g, err := CompileJSONSchema(schema)
		if err != nil {
			return
		}
		g.Matches(text)
		r := rand.New(rand.NewPCG(seed, 1))
		st := g.NewState()
		mask := make([]uint64, v.Words())
		var out []byte
		for range 64 {
			if err := st.Mask(v, mask); err != nil {
				return // overflow limits
			}
			var ids []int
			for id := range toks {
				if mask[id>>6]>>(id&63)&1 == 1 {
					ids = append(ids, id)
				}
			}
			id := ids[r.IntN(len(ids))]
			if id == stop {
				if !g.Matches(out) {
					t.Fatalf("stop allowed after %q, which does not match", out)
				}
				return
			}
			if err := st.AcceptToken(v, id); err != nil {
				t.Fatalf("masked-in token %q refused: %v", toks[id], err)
			}
			out = append(out, toks[id]...)
		}
	})
}
