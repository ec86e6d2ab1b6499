package grammar

import (
	"errors"
	"strings"
	"testing"
)

func mustSchema(t testing.TB, s string) *Grammar {
	t.Helper()
	g, err := CompileJSONSchema([]byte(s))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return g
}

// Hand-written cases: each text is valid (true) or invalid (false) by the
// JSON Schema specification, decided by reading it, not by the code.
func TestSchemaCases(t *testing.T) {
	cases := []struct {
		schema string
		yes    []string
		no     []string
	}{
		{`{"type":"integer","minimum":-5,"maximum":12}`, []string{"-5", "0", "7", "12", "-1", "10"}, []string{"13", "-6", "012", "1.5", "-0", "100"}},
		{`{"type":"integer","exclusiveMinimum":99}`, []string{"100", "12345"}, []string{"99", "0", "-100"}},
		{`{"type":"integer","maximum":-10}`, []string{"-10", "-11", "-99999"}, []string{"-9", "0", "5"}},
		{`{"type":"number","minimum":0,"exclusiveMaximum":2}`, []string{"0", "1", "1.99", "0.5", "0.0"}, []string{"2", "2.0", "-1", "-0.5", "3"}},
		{`{"type":"number","exclusiveMinimum":-1,"maximum":0}`, []string{"-0.5", "0", "-0.0001"}, []string{"-1", "-1.5", "0.1", "1"}},
		{`{"type":"number","minimum":-1.25,"exclusiveMaximum":3.5}`, []string{"-1.25", "-1.250", "-1.2", "-1", "0", "3", "3.4999", "-0.5", "1.25"}, []string{"-1.26", "-1.2501", "3.5", "3.50", "4", "3.6", "-2", "3e0"}},
		{`{"type":"number","exclusiveMinimum":0.1,"maximum":0.3}`, []string{"0.3", "0.30", "0.2", "0.10001", "0.11"}, []string{"0.1", "0.10", "0", "0.31", "0.3001", "1", "-0.2"}},
		{`{"type":"number","exclusiveMinimum":2.5}`, []string{"2.51", "3", "1000.5", "2.500001"}, []string{"2.5", "2.5000", "2", "-3", "0"}},
		{`{"type":"number","maximum":-0.5}`, []string{"-0.5", "-0.50", "-1", "-0.6", "-100.25"}, []string{"-0.4", "-0.49999", "0", "-0", "1"}},
		{`{"type":"number","minimum":1.5,"maximum":1.5}`, []string{"1.5", "1.50"}, []string{"1.51", "1.4", "1", "2"}},
		{`{"type":"number","minimum":0.05,"maximum":0.5}`, []string{"0.05", "0.050", "0.5", "0.1", "0.06", "0.4999"}, []string{"0.04", "0.049", "0.5001", "0.51", "0", "1"}},
		{`{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":0.01}`, []string{"0.001", "0.00999", "0.005"}, []string{"0", "0.0", "-0.001", "0.01", "0.010", "0.011"}},
		{`{"type":"number","minimum":1e-3,"maximum":2E1}`, []string{"0.001", "20", "20.000", "19.99", "1"}, []string{"0.0009", "20.01", "21", "0"}},
		{`{"type":"number","minimum":-2.75,"maximum":-2.5}`, []string{"-2.75", "-2.6", "-2.5", "-2.50"}, []string{"-2.76", "-2.4", "-3", "-2", "2.6"}},
		{`{"type":"integer","minimum":1.5,"exclusiveMaximum":4}`, []string{"2", "3"}, []string{"1", "4", "2.5"}},
		{`{"type":"integer","exclusiveMinimum":-3,"maximum":-0.5}`, []string{"-2", "-1"}, []string{"-3", "0", "-0"}},
		{`{"type":"string","minLength":2,"maxLength":3}`, []string{`"ab"`, `"abc"`, `"é\n"`, `"😀😀"`}, []string{`"a"`, `"abcd"`, `""`}},
		{`{"type":"string","pattern":"^[a-c]+x$"}`, []string{`"abx"`, `"cx"`}, []string{`"x"`, `"abxx"`, `"dx"`}},
		{`{"type":"string","pattern":"^a$|^bc$"}`, []string{`"a"`, `"bc"`}, []string{`"abc"`, `"xa"`, `"bcx"`, `""`}},
		{`{"type":"string","pattern":"x|^b"}`, []string{`"axa"`, `"x"`, `"bz"`}, []string{`"zb"`, `""`}},
		{`{"type":"string","pattern":"(^ab)"}`, []string{`"abx"`, `"ab"`}, []string{`"xab"`}},
		{`{"type":"string","pattern":"^(?:a$|b)"}`, []string{`"a"`, `"b"`, `"bzz"`}, []string{`"az"`, `"za"`}},
		{`{"type":"string","pattern":"b"}`, []string{`"b"`, `"abc"`}, []string{`"ac"`}},
		{`{"type":"string","format":"date"}`, []string{`"2024-02-29"`, `"2000-02-29"`, `"2023-12-31"`, `"2023-04-30"`}, []string{`"2023-02-29"`, `"1900-02-29"`, `"2023-04-31"`, `"2023-13-01"`}},
		{`{"type":"string","format":"time"}`, []string{`"23:59:59Z"`, `"00:00:00.5+01:00"`}, []string{`"24:00:00Z"`, `"12:60:00Z"`}},
		{`{"type":"string","format":"ipv4"}`, []string{`"0.0.0.0"`, `"255.255.255.255"`, `"10.199.249.9"`, `"192.168.1.100"`},
			[]string{`"256.1.1.1"`, `"01.1.1.1"`, `"1.1.1"`, `"1.1.1.1.1"`, `"1.1.1.260"`, `"1..1.1"`, `"+1.1.1.1"`}},
		{`{"type":"string","format":"uuid"}`, []string{`"123e4567-e89b-12d3-a456-426614174000"`}, []string{`"123e4567e89b12d3a456426614174000"`}},
		{`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}},"required":["b"],"additionalProperties":false}`,
			[]string{`{"b":"x"}`, `{"a":1,"b":"x"}`, `{ "a": 1, "b": "x" }`}, []string{`{}`, `{"a":1}`, `{"b":"x","c":1}`, `{"b":"x","a":1}`}},
		{`{"type":"array","items":{"type":"boolean"},"minItems":1,"maxItems":2}`, []string{`[true]`, `[true,false]`}, []string{`[]`, `[true,true,true]`, `[1]`}},
		{`{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}],"items":false}`, []string{`[1,"a"]`, `[1]`, `[]`}, []string{`[1,"a",2]`, `["a"]`}},
		{`{"enum":["a",1,null]}`, []string{`"a"`, `1`, `null`}, []string{`"b"`, `2`}},
		{`{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`, []string{`{}`, `{"next":{"next":{}}}`}, []string{`{"next":1}`}},
		{`{"oneOf":[{"type":"string"},{"type":"integer"}]}`, []string{`"a"`, `3`}, []string{`null`, `1.5`}},
		{`{"oneOf":[{"type":"object","properties":{"kind":{"const":"a"},"x":{"type":"integer"}},"required":["kind","x"],"additionalProperties":false},{"type":"object","properties":{"kind":{"const":"b"},"y":{"type":"string"}},"required":["kind","y"],"additionalProperties":false}]}`,
			[]string{`{"kind":"a","x":1}`, `{"kind":"b","y":"s"}`}, []string{`{"kind":"a","y":"s"}`, `{"kind":"c","x":1}`, `{"x":1}`}},
		{`{"oneOf":[{"enum":["a","b"]},{"enum":["c",1]},{"const":2}]}`, []string{`"a"`, `"c"`, `1`, `2`}, []string{`"d"`, `3`}},
		{`{"oneOf":[{"type":"integer","maximum":0},{"type":"integer","minimum":1,"maximum":9},{"type":"integer","exclusiveMinimum":9}]}`, []string{`-5`, `0`, `5`, `10`}, []string{`1.5`, `"a"`}},
		{`{"oneOf":[{"type":"number","exclusiveMaximum":0.5},{"type":"number","minimum":0.5}]}`, []string{`0.4999`, `0.5`, `3`, `-2`}, []string{`"a"`}},
		{`{"oneOf":[{"const":"automatic"},{"type":"string","maxLength":3}]}`, []string{`"automatic"`, `"ab"`}, []string{`"abcd"`}},
		{`{"$defs":{"a":{"type":"object","properties":{"t":{"enum":[1,2]}},"required":["t"]}},"oneOf":[{"$ref":"#/$defs/a"},{"type":"object","properties":{"t":{"const":3}},"required":["t"]}]}`, []string{`{"t":1}`, `{"t":3}`}, []string{`{"t":4}`}},
		{`{"oneOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},{"type":"object","properties":{"b":{"type":"integer"}},"required":["b"],"additionalProperties":false}]}`, []string{`{"a":1}`, `{"b":2}`}, []string{`{}`}},
		{`{"allOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},{"properties":{"b":{"type":"null"}}}]}`, []string{`{"a":1}`, `{"a":1,"b":null}`}, []string{`{"b":null}`}},
		{`{"type":["string","null"]}`, []string{`"x"`, `null`}, []string{`1`}},
		// enum and const beside other keywords: the values valid against them.
		{`{"type":"string","enum":["a","abcd","é",1],"maxLength":2}`, []string{`"a"`, `"é"`}, []string{`"abcd"`, `1`}},
		{`{"enum":[1,5,10,"x",null,7.5],"type":["integer","null"],"minimum":2,"maximum":9}`, []string{`5`, `null`}, []string{`1`, `10`, `"x"`, `7.5`}},
		{`{"const":"abc","pattern":"^a"}`, []string{`"abc"`}, []string{`"a"`}},
		// \s and \S are ECMA-262's white space (RE2's \s is ASCII only).
		{`{"type":"string","pattern":"^\\S+$"}`, []string{`"ab"`, `"é"`, `"\u0001"`}, []string{`""`, `"a b"`, "\"\u00a0\"", `"\u000b"`, "\"a\u3000\"", "\"\ufeff\"", "\"\u2028\""}},
		{`{"type":"string","pattern":"^[^\\s\"]$"}`, []string{`"a"`, `"\u0001"`}, []string{`" "`, `"\""`, "\"\u00a0\"", `"\u000c"`, "\"\u205f\""}},
		{`{"type":"string","pattern":"^\\s[\\sx]$"}`, []string{`" x"`, "\"\u00a0\u2000\"", `"\u000b\u0009"`, "\"\ufeff \""}, []string{`"xx"`, `" y"`, "\"\u200b \""}},
		{`{"type":"string","pattern":"^[\\]\\s]\\\\s$"}`, []string{`"]\\s"`, `" \\s"`}, []string{`"]\\ "`, `"s\\s"`}},
		// additionalProperties beside properties: the additional members
		// follow the properties, their keys none of the properties' names.
		{`{"type":"object","properties":{"a":{"type":"integer"},"ab":{"type":"null"}},"required":["a"],"additionalProperties":{"type":"boolean"}}`,
			[]string{`{"a":1}`, `{"a":1,"ab":null}`, `{"a":1,"b":true}`, `{"a":1,"ab":null,"abc":false,"":true,"a b":true}`, `{"a":1,"é":true}`},
			[]string{`{"a":1,"b":2}`, `{"a":1,"a":true}`, `{"a":1,"ab":true}`, `{"b":true,"a":1}`, `{"b":true}`, `{"a":1,"\u0061":true}`}},
		{`{"type":"object","properties":{"":{"type":"integer"}},"additionalProperties":true}`,
			[]string{`{}`, `{"":1}`, `{"x":[1,{}]}`, `{"":1,"y":"z"}`}, []string{`{"":"s"}`, `{"x":1,"":2}`}},
		{`{"type":"object","required":["k"],"additionalProperties":{"type":"integer"}}`,
			[]string{`{"k":1}`, `{"k":1,"j":2}`}, []string{`{}`, `{"k":"s"}`, `{"j":2}`, `{"k":1,"k":2}`}},
	}
	for _, c := range cases {
		g := mustSchema(t, c.schema)
		for _, y := range c.yes {
			if !g.Matches([]byte(y)) {
				t.Errorf("%s: %s should match", c.schema, y)
			}
		}
		for _, n := range c.no {
			if g.Matches([]byte(n)) {
				t.Errorf("%s: %s should not match", c.schema, n)
			}
		}
	}
}

func TestSchemaRefusals(t *testing.T) {
	for schema, want := range map[string]string{
		`{"type":"string","minLength":1,"uniqueItems":true}`:                                                                "uniqueItems",
		`{"type":"object","patternProperties":{}}`:                                                                          "patternProperties",
		`{"type":"string","format":"email"}`:                                                                                "format",
		`{"oneOf":[{"type":"integer"},{"type":"number"}]}`:                                                                  "oneOf",
		`{"oneOf":[{"type":"integer","minimum":0,"maximum":5},{"type":"integer","minimum":5}]}`:                             "branches 0 and 1",
		`{"oneOf":[{"type":"number","maximum":0.5},{"type":"number","minimum":0.5}]}`:                                       "oneOf",
		`{"oneOf":[{"type":"integer","maximum":1.5},{"type":"number","minimum":0.25}]}`:                                     "oneOf",
		`{"oneOf":[{"enum":["a","b"]},{"enum":["b"]}]}`:                                                                     "oneOf",
		`{"oneOf":[{"const":1},{"const":1.0}]}`:                                                                             "oneOf",
		`{"oneOf":[{"const":{"a":1,"b":2}},{"const":{"b":2,"a":1}}]}`:                                                       "oneOf",
		`{"oneOf":[{"type":"object","properties":{"k":{"const":"a"}}},{"type":"object","properties":{"k":{"const":"b"}}}]}`: "oneOf",
		`{"oneOf":[{"type":"string"},{"type":"string","maxLength":2}]}`:                                                     "oneOf",
		`{"oneOf":[{"properties":{"k":{"const":"a"}},"required":["k"]},{"type":"string"}]}`:                                 "oneOf",
		`{"oneOf":[{"type":"integer"},{"anyOf":[{"type":"string"}]}]}`:                                                      "oneOf",
		`{"type":"number","minimum":1e-50}`:                                                                                 "minimum",
		`{"type":"number","minimum":0.5,"maximum":0.25}`:                                                                    "no value",
		`{"type":"number","exclusiveMinimum":1.5,"exclusiveMaximum":1.5}`:                                                   "no value",
		`{"type":"number","maximum":1e16}`:                                                                                  "1e15",
		`{"type":"string","pattern":"a$b"}`:                                                                                 "pattern",
		`{"type":"string","pattern":"(a)\\1"}`:                                                                              "pattern",
		`{"$ref":"#/$defs/missing"}`:                                                                                        "$ref",
		`false`:                                                                                                             "false",
		`{"type":"array","maxItems":100000}`:                                                                                "maxItems",
		`{"$defs":{"x":{"$ref":"#/$defs/x"}},"$ref":"#/$defs/x"}`:                                                           "no string",
		`{"not":{}}`:                           "not",
		`{"type":"string","pattern":"[\\Sa]"}`: `\S inside`,
		`{"const":"abc","pattern":"^b"}`:       "no value",
		`{"enum":["a"],"uniqueItems":true}`:    "uniqueItems",
		`{"type":"string","pattern":"a\\b"}`:   `\b`,
	} {
		_, err := CompileJSONSchema([]byte(schema))
		if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrGrammar) {
			t.Errorf("%s: error %v, want one naming %q", schema, err, want)
		}
	}
}

func TestJSONObject(t *testing.T) {
	g, err := CompileJSONObject()
	if err != nil {
		t.Fatal(err)
	}
	for _, y := range []string{`{}`, `{"a":[1,2,{"b":null}],"c":"\u00e9"}`, ` {"x": -1.5e+3} `} {
		if !g.Matches([]byte(y)) {
			t.Errorf("%s should match", y)
		}
	}
	for _, n := range []string{`[]`, `1`, `{"a":}`, `{"a":1,}`, `{"a":01}`, "{\"a\":\"\x01\"}"} {
		if g.Matches([]byte(n)) {
			t.Errorf("%s should not match", n)
		}
	}
}

func TestJSONSchemaAround(t *testing.T) {
	g, err := CompileJSONSchemaAround("<tool_call>\n", []byte(`{"type":"object","properties":{"name":{"const":"f"}},"required":["name"],"additionalProperties":false}`), "\n</tool_call>", "\n", 2)
	if err != nil {
		t.Fatal(err)
	}
	one := "<tool_call>\n{\"name\":\"f\"}\n</tool_call>"
	for _, y := range []string{one, one + "\n" + one} {
		if !g.Matches([]byte(y)) {
			t.Errorf("%q should match", y)
		}
	}
	for _, n := range []string{"", `{"name":"f"}`, one + "\n" + one + "\n" + one, "<tool_call>\n{\"name\":\"g\"}\n</tool_call>"} {
		if g.Matches([]byte(n)) {
			t.Errorf("%q should not match", n)
		}
	}
}
