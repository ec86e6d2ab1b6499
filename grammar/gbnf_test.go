package grammar

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// llama.cpp's grammars/json.gbnf (ggml-org/llama.cpp, as of 2024-2025).
const llamaJSON = `root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws

object ::=
  "{" ws (
            string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws

array  ::=
  "[" ws (
            value
    ("," ws value)*
  )? "]" ws

string ::=
  "\"" (
    [^"\\\x7F\x00-\x1F] |
    "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) # escapes
  )* "\"" ws

number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-7]{0,15})? ws

# Optional space: by convention, applied in this grammar after literal chars when allowed
ws ::= | " " | "\n" [ \t]{0,20}
`

func TestGBNF(t *testing.T) {
	cases := []struct {
		src     string
		yes, no []string
	}{
		{llamaJSON, []string{`{}`, `{"a": [1, 2.5e3, "x\n", {"b": null}]}`, "{\"é\":true} "}, []string{`[]`, `{"a":}`, `{"a":01}`, "{\"a\":\"\x7f\"}"}},
		{`root ::= "a"{2,3} "b"+ [^a-c]? ("x" | "yz")*`, []string{"aab", "aaabbbd", "aabxyzx"}, []string{"ab", "aaaab", "aabc", "aabyy"}},
		{`root ::= expr
expr ::= term ("+" term)*
term ::= [0-9]+ | "(" expr ")"`, []string{"1+2", "(1+(2+3))+4"}, []string{"1+", "(1", "+1"}},
		{"root ::= \"\\u00e9\" . [\\U0001F600-\\U0001F64F]", []string{"éa😀", "é\n🙏"}, []string{"e a😀", "éa☺"}},
	}
	for _, c := range cases {
		g, err := CompileGBNF(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		for _, y := range c.yes {
			if !g.Matches([]byte(y)) {
				t.Errorf("%q should match %q", c.src, y)
			}
		}
		for _, n := range c.no {
			if g.Matches([]byte(n)) {
				t.Errorf("%q should not match %q", c.src, n)
			}
		}
	}
}

func TestGBNFErrors(t *testing.T) {
	for src, want := range map[string]string{
		`root ::= foo`:                   "foo is used but never defined",
		`start ::= "a"`:                  "no rule named root",
		"root ::= \"a\"\nroot ::= \"b\"": "line 2 column 10: rule root defined twice",
		`root ::= root "a" | "b"`:        "left-recursive",
		`root ::= ("a"?)*`:               "left-recursive",
		`root ::= "a`:                    "unterminated literal",
		`root ::= [b-a]`:                 "reversed",
		`root ::= "a"{3,1}`:              "maximum below minimum",
		`root ::= "a"{99999}`:            "repetition bound",
		`root ::= <think>`:               "token references",
		`root ::= "\q"`:                  "unknown escape",
		`root ::= x
x ::= x`: "matches no string",
		`root ::= "a" root`: "matches no string",
	} {
		_, err := CompileGBNF(src)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", src, err, want)
		}
	}
}

// TestGBNFMask: the GBNF JSON grammar under the random-weight model: the
// mask equals the per-token check, and outputs are JSON objects.
func TestGBNFMask(t *testing.T) {
	g, err := CompileGBNF(llamaJSON)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 5))
	v, toks, stop := testVocab(r)
	n := 0
	for range 40 {
		out, ok := generate(t, g, v, toks, stop, r, true)
		if !ok {
			continue
		}
		n++
		if _, err := decodeAny(out); err != nil || strings.TrimSpace(string(out))[0] != '{' {
			t.Fatalf("%q is not a JSON object: %v", out, err)
		}
	}
	if n == 0 {
		t.Fatal("no output ended with a stop")
	}
}

func FuzzGBNF(f *testing.F) {
	f.Add(llamaJSON, "{}")
	f.Add(`root ::= ("a" | [b-d]+){1,3} "x"?`, "abx")
	f.Fuzz(func(t *testing.T, src, text string) {
		g, err := CompileGBNF(src)
		if err != nil {
			return
		}
		g.Matches([]byte(text))
	})
}
