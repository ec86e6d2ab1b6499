package grammar

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// randSchema draws a schema from the supported keywords.
func randSchema(r *rand.Rand, depth int, defs map[string]any) map[string]any {
	k := r.IntN(14)
	if depth > 2 {
		k = r.IntN(7)
	}
	bnd := func() json.Number { return json.Number(fmt.Sprint(r.IntN(400) - 200)) }
	switch k {
	case 0:
		return map[string]any{"type": "null"}
	case 1:
		return map[string]any{"type": "boolean"}
	case 2:
		s := map[string]any{"type": "integer"}
		lo, hi := bnd(), bnd()
		if mustF(lo) > mustF(hi) {
			lo, hi = hi, lo
		}
		kws := [][2]string{{"minimum", "maximum"}, {"exclusiveMinimum", "maximum"}, {"minimum", "exclusiveMaximum"}}[r.IntN(3)]
		if r.IntN(3) > 0 {
			s[kws[0]] = lo
		}
		if r.IntN(3) > 0 && !(kws[0]+kws[1] != "minimummaximum" && s[kws[0]] != nil && mustF(hi) <= mustF(lo)+1) { // an exclusive bound: keep an integer between
			s[kws[1]] = hi
		}
		return s
	case 3:
		s := map[string]any{"type": "number"}
		lo, hi := bnd(), bnd()
		if r.IntN(2) == 0 { // fractional bounds
			lo = json.Number(fmt.Sprintf("%.2f", float64(r.IntN(4000)-2000)/100))
			hi = json.Number(fmt.Sprintf("%.3f", float64(r.IntN(4000)-2000)/100+float64(r.IntN(10))/1000))
		}
		if mustF(lo) >= mustF(hi) {
			lo, hi = hi, json.Number(fmt.Sprint(mustF(lo)+1))
		}
		if r.IntN(2) == 0 {
			s[[]string{"minimum", "exclusiveMinimum"}[r.IntN(2)]] = lo
		}
		if r.IntN(2) == 0 {
			s[[]string{"maximum", "exclusiveMaximum"}[r.IntN(2)]] = hi
		}
		return s
	case 4:
		s := map[string]any{"type": "string"}
		switch r.IntN(4) {
		case 0:
			a := r.IntN(4)
			s["minLength"] = a
			if r.IntN(2) == 0 {
				s["maxLength"] = a + r.IntN(5)
			}
		case 1:
			s["pattern"] = []string{`^[a-z]{2,4}-\d+$`, `^(ab|cd)*x?$`, `^\w+@\w+\.(com|org)$`, `é`, `^[^"\\]{0,3}"$`, `^.\n.$`, `^ab$|^c\d$|x$`,
				`^\S{1,4}\s?\S*$`, `^[^\s"\\]{0,3}$`}[r.IntN(9)]
		case 2:
			s["format"] = []string{"date", "time", "date-time", "uuid", "ipv4"}[r.IntN(5)]
		}
		return s
	case 5:
		s := map[string]any{"enum": []any{"a", json.Number("1"), nil, "é\"", []any{true}, json.Number("7"), "abc"}[:1+r.IntN(7)]}
		switch r.IntN(4) { // other keywords beside: the values they allow
		case 0:
			s["maxLength"], s["type"] = 1, []any{"string", "null"}
		case 1:
			s["minimum"], s["type"] = 2, []any{"integer", "array", "null"}
			s["enum"] = append(s["enum"].([]any), json.Number("3")) // one value of them at least
		}
		return s
	case 6:
		return map[string]any{"const": map[string]any{"k": []any{json.Number("2.5"), "v"}}}
	case 7, 8:
		props := map[string]any{}
		var req []any
		for i := range r.IntN(4) {
			name := fmt.Sprintf("p%d", i)
			props[name] = randSchema(r, depth+1, defs)
			if r.IntN(2) == 0 {
				req = append(req, name)
			}
		}
		s := map[string]any{"type": "object", "properties": props}
		if len(req) > 0 {
			s["required"] = req
		}
		switch r.IntN(4) {
		case 0, 1:
			s["additionalProperties"] = false
		case 2: // beside the properties; maybe a required name of its own
			if r.IntN(3) == 0 {
				s["additionalProperties"] = true
			} else {
				s["additionalProperties"] = randSchema(r, depth+1, defs)
			}
			if r.IntN(3) == 0 {
				s["required"] = append(req, "q")
			}
		}
		if len(props) == 0 && r.IntN(2) == 0 {
			s = map[string]any{"type": "object", "additionalProperties": randSchema(r, depth+1, defs)}
		}
		return s
	case 9:
		s := map[string]any{"type": "array", "items": randSchema(r, depth+1, defs)}
		a := r.IntN(3)
		if r.IntN(2) == 0 {
			s["minItems"] = a
		}
		if r.IntN(2) == 0 {
			s["maxItems"] = a + r.IntN(3)
		}
		if r.IntN(3) == 0 {
			s["prefixItems"] = []any{randSchema(r, depth+1, defs), randSchema(r, depth+1, defs)}
			if r.IntN(2) == 0 {
				s["items"] = false
				delete(s, "minItems")
			}
		}
		return s
	case 10:
		return map[string]any{"anyOf": []any{randSchema(r, depth+1, defs), randSchema(r, depth+1, defs)}}
	case 11:
		return randOneOf(r, depth, defs)
	case 12:
		return map[string]any{"allOf": []any{
			map[string]any{"type": "object", "properties": map[string]any{"a": randSchema(r, depth+1, defs)}, "required": []any{"a"}},
			map[string]any{"properties": map[string]any{"b": randSchema(r, depth+1, defs)}},
		}}
	default:
		name := fmt.Sprintf("d%d", len(defs))
		defs[name] = true // reserved while its body is drawn
		defs[name] = randSchema(r, depth+1, defs)
		return map[string]any{"$ref": "#/$defs/" + name}
	}
}

// testVocab: every byte, then fragments (JSON punctuation, words, numbers,
// multi-byte characters whole and split), two special tokens and a stop.
func testVocab(r *rand.Rand) (*Vocab, [][]byte, int) {
	var toks [][]byte
	for b := range 256 {
		toks = append(toks, []byte{byte(b)})
	}
	frags := []string{`{"`, `":`, `",`, `"}`, `}`, `]`, `[`, `, `, `": "`, "true", "null", "false", "p0", "p1", `p2":`, "-", "0", "12", "3.", ".5", "e+", "é", "😀", "\xf0\x9f", "\x98\x80", "ab", "cd", "com", "@", "\\n", `\"`, `\u00e9`, "2024-", "02-29", "T12:", "00:00Z", "a\n", "  ", "\n  ", "\u00a0", "\u3000", `\u000b`, `\u0009`}
	for _, f := range frags {
		toks = append(toks, []byte(f))
	}
	for range 200 {
		n := 1 + r.IntN(5)
		b := make([]byte, n)
		for i := range b {
			const alpha = " {}[]\":,0123456789abcdep.-\\"
			b[i] = alpha[r.IntN(len(alpha))]
		}
		toks = append(toks, b)
	}
	special := make([]bool, len(toks)+3)
	toks = append(toks, []byte("<|im_start|>"), []byte("<tool_call>"), []byte("</s>"))
	special[len(toks)-3], special[len(toks)-2], special[len(toks)-1] = true, true, true
	stop := len(toks) - 1
	v, err := NewVocab(toks, special, []int{stop})
	if err != nil {
		panic(err)
	}
	return v, toks, stop
}

// generate runs a random-weight "model" (random logits each step) under the
// mask until it samples the stop; ok false when it ran out of steps.
func generate(t testing.TB, g *Grammar, v *Vocab, toks [][]byte, stop int, r *rand.Rand, check bool) ([]byte, bool) {
	st := g.NewState()
	mask := make([]uint64, v.Words())
	var out []byte
	for step := 0; step < 300; step++ {
		if err := st.Mask(v, mask); err != nil {
			t.Fatalf("mask after %q: %v", out, err)
		}
		if check { // the trie walk must equal the per-token check
			for id := range toks {
				c := st.Clone()
				want := id != stop && !v.spec[id] && c.Accept(toks[id]) == nil
				if id == stop {
					want = st.Accepting()
				}
				if got := mask[id>>6]>>(id&63)&1 == 1; got != want {
					t.Fatalf("after %q token %q: mask %v, per-token check %v", out, toks[id], got, want)
				}
			}
		}
		best, bestL := -1, math.Inf(-1)
		for id := range toks {
			if mask[id>>6]>>(id&63)&1 == 0 {
				continue
			}
			l := r.NormFloat64()
			if id == stop {
				l += float64(step) / 10
			}
			if l > bestL {
				best, bestL = id, l
			}
		}
		if best == stop {
			return out, true
		}
		if err := st.AcceptToken(v, best); err != nil {
			t.Fatalf("token %q allowed by the mask but refused: %v", toks[best], err)
		}
		out = append(out, toks[best]...)
	}
	return out, false
}

type propCase struct {
	Schema json.RawMessage `json:"schema"`
	Output string          `json:"output"`
}

// propCases generates n random schemas and one constrained output each.
func propCases(t testing.TB, n int, seed uint64) []propCase {
	r := rand.New(rand.NewPCG(seed, 7))
	v, toks, stop := testVocab(r)
	var cases []propCase
	for i := 0; len(cases) < n && i < 20*n; i++ {
		defs := map[string]any{}
		s := randSchema(r, 0, defs)
		if len(defs) > 0 {
			s["$defs"] = defs
		}
		sb, _ := json.Marshal(s)
		g, err := CompileJSONSchema(sb)
		if err != nil {
			t.Fatalf("schema %s: %v", sb, err)
		}
		out, ok := generate(t, g, v, toks, stop, r, i%10 == 0)
		if !ok {
			continue
		}
		if !g.Matches(out) {
			t.Fatalf("schema %s: generated %q does not match its own grammar", sb, out)
		}
		cases = append(cases, propCase{sb, string(out)})
	}
	if len(cases) < n/2 {
		t.Fatalf("only %d of %d runs ended with a stop", len(cases), n)
	}
	return cases
}

func TestPropertyRandomSchemas(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 100
	}
	cases := propCases(t, n, 1)
	for _, c := range cases {
		if !utf8.ValidString(c.Output) || !json.Valid([]byte(c.Output)) {
			t.Fatalf("schema %s: output %q is not valid UTF-8 JSON", c.Schema, c.Output)
		}
		sv, _ := decodeAny(c.Schema)
		ov, err := decodeAny([]byte(c.Output))
		if err != nil {
			t.Fatal(err)
		}
		vd := &validator{root: sv}
		if why := vd.check(sv, ov, 0); why != "" {
			t.Errorf("schema %s: output %s invalid: %s", c.Schema, c.Output, why)
		}
	}
	t.Logf("%d random schemas, each output valid", len(cases))
}

// TestAjv validates the random outputs with ajv (JSON Schema 2020-12, full
// formats); scripts/test.sh installs it into testdata/ajv, the test skips
// without node or that install.
func TestAjv(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found")
	}
	dir, _ := filepath.Abs(filepath.Join("testdata", "ajv"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "ajv", "package.json")); err != nil {
		t.Skip("ajv not installed: (cd grammar/testdata/ajv && npm install), as scripts/test.sh does")
	}
	cases := propCases(t, 200, 2)
	b, _ := json.Marshal(cases)
	f := filepath.Join(t.TempDir(), "cases.json")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, filepath.Join(dir, "validate.js"), f).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var res []*string
	if err := json.Unmarshal(out, &res); err != nil || len(res) != len(cases) {
		t.Fatalf("ajv answered %q (%v)", out, err)
	}
	for i, e := range res {
		if e != nil {
			t.Errorf("schema %s: output %s: ajv: %s", cases[i].Schema, cases[i].Output, *e)
		}
	}
	t.Logf("ajv accepts all %d outputs", len(cases))
}

// randOneOf draws a oneOf whose branches are disjoint in one of the ways
// the compiler proves (types, values, a discriminator property, ranges).
func randOneOf(r *rand.Rand, depth int, defs map[string]any) map[string]any {
	var br []any
	switch r.IntN(5) {
	case 0:
		br = []any{map[string]any{"type": "string", "maxLength": 3}, map[string]any{"type": "integer", "minimum": 0}, map[string]any{"type": "null"}}
	case 1: // a discriminator
		for i := range 2 + r.IntN(2) {
			props := map[string]any{"kind": map[string]any{"const": fmt.Sprint("k", i)}}
			req := []any{"kind"}
			if depth < 2 {
				props["v"] = randSchema(r, depth+1, defs)
				if r.IntN(2) == 0 {
					req = append(req, "v")
				}
			}
			b := map[string]any{"type": "object", "properties": props, "required": req}
			if r.IntN(2) == 0 {
				b["additionalProperties"] = false
			}
			br = append(br, b)
		}
	case 2: // disjoint ranges, integer and number
		cut := r.IntN(20) - 10
		frac := json.Number(fmt.Sprintf("%.1f", float64(cut)+0.5))
		br = []any{
			map[string]any{"type": "integer", "maximum": cut},
			map[string]any{"type": "number", "exclusiveMinimum": cut, "maximum": frac},
			map[string]any{"type": []any{"number", "string"}, "exclusiveMinimum": frac, "maxLength": 2},
		}
	case 3: // values
		br = []any{map[string]any{"enum": []any{"a", json.Number("1"), nil}}, map[string]any{"const": json.Number("1.5")},
			map[string]any{"type": "string", "minLength": 2}, map[string]any{"type": "integer", "minimum": 2}}
	default: // a required property present in one, forbidden in the other
		br = []any{
			map[string]any{"type": "object", "properties": map[string]any{"a": randSchema(r, depth+1, defs)}, "required": []any{"a"}},
			map[string]any{"type": "object", "properties": map[string]any{"b": randSchema(r, depth+1, defs)}, "additionalProperties": false},
		}
	}
	return map[string]any{"oneOf": br}
}
