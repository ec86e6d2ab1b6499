package grammar

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// maxNest bounds the nesting of free-form JSON values (json_object, {}).
const maxNest = 16

// Annotations that constrain nothing and are accepted.
var annotations = map[string]bool{
	"title": true, "description": true, "$schema": true, "$id": true, "$comment": true,
	"default": true, "examples": true, "deprecated": true, "readOnly": true, "writeOnly": true,
	"$defs": true, "definitions": true,
}

// Keywords the compiler enforces.
var supported = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"enum": true, "const": true, "anyOf": true, "oneOf": true, "allOf": true, "$ref": true,
	"items": true, "prefixItems": true, "minItems": true, "maxItems": true,
	"minLength": true, "maxLength": true, "pattern": true, "format": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
}

var formats = map[string]bool{"date": true, "time": true, "date-time": true, "uuid": true, "ipv4": true}

// SchemaError is a schema the compiler refuses: Path is a JSON pointer to
// the schema, Keyword the keyword at fault.
type SchemaError struct {
	Path, Keyword, Msg string
}

func (e *SchemaError) Error() string {
	p := e.Path
	if p == "" {
		p = "#"
	}
	if e.Keyword != "" {
		return fmt.Sprintf("json schema %s: %s: %s", p, e.Keyword, e.Msg)
	}
	return fmt.Sprintf("json schema %s: %s", p, e.Msg)
}

func (e *SchemaError) Unwrap() error { return ErrGrammar }

type schemaCompiler struct {
	b     *builder
	root  *jv
	refs  map[string]int32
	cache map[string]sym
	depth int
	err   *SchemaError
}

// CompileJSONSchema compiles a JSON Schema (as JSON text) into a grammar of
// the JSON texts valid against it. A keyword the grammar cannot enforce is
// refused by name (a *SchemaError).
func CompileJSONSchema(schema []byte) (*Grammar, error) {
	if len(schema) > 1<<20 {
		return nil, &SchemaError{Msg: "schema over 1 MiB"}
	}
	root, err := parseJSON(schema)
	if err != nil {
		return nil, &SchemaError{Msg: err.Error()}
	}
	c := &schemaCompiler{b: newBuilder(), root: root, refs: map[string]int32{}, cache: map[string]sym{}}
	top := c.b.newRule("root")
	body := c.value(root, "")
	if c.err != nil {
		return nil, c.err
	}
	c.b.setRule(top, cat(one(c.ws()), body, one(c.ws())))
	g, err := c.b.build(top)
	if err != nil {
		return nil, &SchemaError{Msg: err.Error()}
	}
	return g, nil
}

// CompileJSONSchemaAround compiles prefix, then a JSON value valid against
// schema, then suffix, repeated up to max times (at least once; max 1: once)
// with sep between: the shape of a tool call (<tool_call>{…}</tool_call>).
func CompileJSONSchemaAround(prefix string, schema []byte, suffix, sep string, max int) (*Grammar, error) {
	return CompileCalls("", []Call{{prefix, schema, suffix}}, sep, max, "")
}

// Call is one tool's shape in a constrained answer: Prefix, a JSON value
// valid against Schema, Suffix.
type Call struct {
	Prefix string
	Schema []byte
	Suffix string
}

// CompileCalls compiles open, then one to max calls, each any of calls,
// with sep between, then close: the answer of a model made to call tools in
// its template's format (a name in the prefix, as Kimi K2 and gpt-oss
// write it, or in the schema, as Hermes does).
func CompileCalls(open string, calls []Call, sep string, max int, close string) (*Grammar, error) {
	if len(calls) == 0 {
		return nil, &SchemaError{Msg: "no call to compile"}
	}
	c := &schemaCompiler{b: newBuilder(), cache: map[string]sym{}}
	var alts [][]sym
	size := 0
	for _, call := range calls {
		if size += len(call.Schema); size > 1<<20 {
			return nil, &SchemaError{Msg: "schemas over 1 MiB"}
		}
		root, err := parseJSON(call.Schema)
		if err != nil {
			return nil, &SchemaError{Msg: err.Error()}
		}
		c.root, c.refs = root, map[string]int32{} // $ref resolves within its own schema
		body := c.value(root, "")
		if c.err != nil {
			return nil, c.err
		}
		alts = append(alts, cat(c.marker(call.Prefix), one(c.ws()), body, one(c.ws()), c.marker(call.Suffix)))
	}
	top := c.b.newRule("root")
	item := one(c.b.alt("call", alts...))
	c.b.setRule(top, cat(c.marker(open), item, c.b.rep(cat(c.marker(sep), item), 0, max-1), c.marker(close)))
	g, err := c.b.build(top)
	if err != nil {
		return nil, &SchemaError{Msg: err.Error()}
	}
	return g, nil
}

// marker: literal text s in which any substring may also come as one
// special token of that text (see NewVocab): byte by byte, or a marker
// byte, the substring, a marker byte. R(j) reads s[j:], E(j) is inside a
// special token at s[j].
func (c *schemaCompiler) marker(s string) []sym {
	if s == "" {
		return nil
	}
	b := c.b
	n := len(s)
	r := make([]sym, n+1)
	e := make([]sym, n)
	var rest []sym // R(n): nothing left
	for j := n - 1; j >= 0; j-- {
		ch := lit(s[j : j+1])
		if j == n-1 {
			e[j] = b.alt("special", cat(ch, lit("\xff"), rest))
		} else {
			e[j] = b.alt("special", cat(ch, lit("\xff"), rest), cat(ch, one(e[j+1])))
		}
		r[j] = b.alt("literal", cat(ch, rest), cat(lit("\xff"), one(e[j])))
		rest = one(r[j])
	}
	return rest
}

// CompileJSONObject compiles OpenAI's json_object: any JSON object (nesting
// up to 16 levels).
func CompileJSONObject() (*Grammar, error) {
	c := &schemaCompiler{b: newBuilder(), cache: map[string]sym{}}
	top := c.b.newRule("root")
	c.b.setRule(top, cat(one(c.ws()), one(c.anyObject(0)), one(c.ws())))
	return c.b.build(top)
}

func (c *schemaCompiler) fail(path, kw, format string, args ...any) []sym {
	if c.err == nil {
		c.err = &SchemaError{Path: path, Keyword: kw, Msg: fmt.Sprintf(format, args...)}
	}
	return nil
}

func (c *schemaCompiler) memo(key string, f func() sym) sym {
	if s, ok := c.cache[key]; ok {
		return s
	}
	s := f()
	c.cache[key] = s
	return s
}

// ws is llama.cpp's SPACE_RULE: nothing, one space, or a newline and up to
// 20 spaces or tabs (a model cannot loop on whitespace).
func (c *schemaCompiler) ws() sym {
	return c.memo("ws", func() sym {
		b := c.b
		return b.alt("ws", nil, lit(" "), cat(lit("\n"), b.rep(one(b.class([]cpRange{{' ', ' '}, {'\t', '\t'}})), 0, 20)))
	})
}

func (c *schemaCompiler) digit() sym { return byteSym('0', '9') }

// strChar is one character inside a JSON string, raw or escaped (never an
// escaped surrogate, so each unit is one code point).
func (c *schemaCompiler) strChar() sym {
	return c.memo("char", func() sym {
		b := c.b
		raw := b.class([]cpRange{{0x20, 0x21}, {0x23, 0x5B}, {0x5D, 0x10FFFF}})
		hex := b.class([]cpRange{{'0', '9'}, {'a', 'f'}, {'A', 'F'}})
		nonSur := b.alt("u", cat(one(b.class([]cpRange{{'0', '9'}, {'a', 'c'}, {'A', 'C'}, {'e', 'f'}, {'E', 'F'}})), []sym{hex, hex, hex}),
			cat(one(b.class([]cpRange{{'d', 'd'}, {'D', 'D'}})), one(byteSym('0', '7')), []sym{hex, hex}))
		esc := b.alt("esc", one(b.class([]cpRange{{'"', '"'}, {'\\', '\\'}, {'/', '/'}, {'b', 'b'}, {'f', 'f'}, {'n', 'n'}, {'r', 'r'}, {'t', 't'}})),
			cat(lit("u"), one(nonSur)))
		return b.alt("char", one(raw), cat(lit("\\"), one(esc)))
	})
}

func (c *schemaCompiler) quoted(body []sym) []sym { return cat(lit(`"`), body, lit(`"`)) }

func (c *schemaCompiler) anyString() sym {
	return c.memo("string", func() sym { return c.b.alt("string", c.quoted(one(c.b.star(one(c.strChar()))))) })
}

func (c *schemaCompiler) anyNumber() sym {
	return c.memo("number", func() sym {
		b := c.b
		d := one(c.digit())
		frac := b.opt(cat(lit("."), b.rep(d, 1, -1)))
		exp := b.opt(cat(one(b.class([]cpRange{{'e', 'e'}, {'E', 'E'}})), one(b.opt(one(b.class([]cpRange{{'+', '+'}, {'-', '-'}})))), b.rep(d, 1, -1)))
		return b.alt("number", cat(one(c.anyInteger()), []sym{frac, exp}))
	})
}

func (c *schemaCompiler) anyInteger() sym {
	return c.memo("integer", func() sym {
		b := c.b
		return b.alt("integer", cat(one(b.opt(lit("-"))), one(b.alt("nat", lit("0"), cat(one(byteSym('1', '9')), one(b.star(one(c.digit()))))))))
	})
}

func (c *schemaCompiler) anyValue(d int) sym {
	return c.memo(fmt.Sprint("value", d), func() sym {
		b := c.b
		alts := [][]sym{lit("null"), lit("true"), lit("false"), one(c.anyString()), one(c.anyNumber())}
		if d < maxNest {
			alts = append(alts, one(c.anyObject(d)), one(c.anyArray(d)))
		}
		return b.alt("value", alts...)
	})
}

func (c *schemaCompiler) anyObject(d int) sym {
	return c.memo(fmt.Sprint("object", d), func() sym {
		b := c.b
		ws := c.ws()
		member := cat(one(c.anyString()), []sym{ws}, lit(":"), []sym{ws, c.anyValue(d + 1), ws})
		more := b.star(cat(lit(","), one(ws), member))
		return b.alt("object", cat(lit("{"), one(ws), one(b.opt(cat(member, one(more)))), lit("}")))
	})
}

func (c *schemaCompiler) anyArray(d int) sym {
	return c.memo(fmt.Sprint("array", d), func() sym {
		b := c.b
		ws := c.ws()
		item := []sym{c.anyValue(d + 1), ws}
		more := b.star(cat(lit(","), one(ws), item))
		return b.alt("array", cat(lit("["), one(ws), one(b.opt(cat(item, one(more)))), lit("]")))
	})
}

func ptr(path, k string) string {
	k = strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
	return path + "/" + k
}

// value returns the symbols of one JSON value valid against s.
func (c *schemaCompiler) value(s *jv, path string) []sym {
	if c.err != nil {
		return nil
	}
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > 64 {
		return c.fail(path, "", "schema nested deeper than 64")
	}
	if s.kind == 'b' {
		if s.b {
			return one(c.anyValue(0))
		}
		return c.fail(path, "", "the schema false matches nothing")
	}
	if s.kind != 'o' {
		return c.fail(path, "", "a schema must be an object or a boolean")
	}
	var constraining []string
	for _, k := range s.keys {
		if annotations[k] {
			continue
		}
		if !supported[k] {
			return c.fail(path, k, "keyword not supported (it cannot be enforced while decoding)")
		}
		constraining = append(constraining, k)
	}
	has := func(k string) bool { return s.get(k) != nil }
	others := func(allowed ...string) string {
		for _, k := range constraining {
			ok := false
			for _, a := range allowed {
				ok = ok || a == k
			}
			if !ok {
				return k
			}
		}
		return ""
	}
	switch {
	case has("$ref"):
		if k := others("$ref"); k != "" {
			return c.fail(path, k, "not supported next to $ref")
		}
		return c.ref(s.get("$ref"), ptr(path, "$ref"))
	case has("allOf"):
		return c.allOf(s, path)
	case has("anyOf") || has("oneOf"):
		kw := "anyOf"
		if has("oneOf") {
			kw = "oneOf"
		}
		if k := others(kw); k != "" {
			return c.fail(path, k, "not supported next to %s", kw)
		}
		return c.anyOf(s.get(kw), ptr(path, kw), kw == "oneOf")
	case has("enum") || has("const"):
		return c.enum(s, path, others)
	}
	types, ok := c.types(s, path)
	if !ok {
		return nil
	}
	var alts [][]sym
	for _, t := range types {
		var v []sym
		switch t {
		case "null":
			v = lit("null")
		case "boolean":
			v = one(c.b.alt("boolean", lit("true"), lit("false")))
		case "string":
			v = c.str(s, path)
		case "integer", "number":
			v = c.num(s, path, t == "integer")
		case "object":
			v = c.object(s, path)
		case "array":
			v = c.array(s, path)
		}
		if c.err != nil {
			return nil
		}
		alts = append(alts, v)
	}
	if len(alts) == 1 {
		return alts[0]
	}
	return one(c.b.alt("types", alts...))
}

var typeKeywords = map[string]string{
	"properties": "object", "required": "object", "additionalProperties": "object",
	"items": "array", "prefixItems": "array", "minItems": "array", "maxItems": "array",
	"minLength": "string", "maxLength": "string", "pattern": "string", "format": "string",
	"minimum": "number", "maximum": "number", "exclusiveMinimum": "number", "exclusiveMaximum": "number",
}

var allTypes = []string{"null", "boolean", "object", "array", "number", "string"}

// types lists the types s allows: its "type", or those its keywords imply
// (a subset of what it allows: output of the others is never produced).
func (c *schemaCompiler) types(s *jv, path string) ([]string, bool) {
	t := s.get("type")
	if t == nil {
		seen := map[string]bool{}
		var out []string
		for _, k := range s.keys {
			if tt, ok := typeKeywords[k]; ok && !seen[tt] {
				seen[tt] = true
				out = append(out, tt)
			}
		}
		if len(out) == 0 {
			out = allTypes
		}
		return out, true
	}
	var list []*jv
	switch t.kind {
	case 's':
		list = []*jv{t}
	case 'a':
		list = t.vals
	default:
		c.fail(path, "type", "must be a string or an array of strings")
		return nil, false
	}
	var out []string
	seen := map[string]bool{}
	for _, e := range list {
		ok := e.kind == 's'
		if ok {
			switch e.str {
			case "null", "boolean", "object", "array", "number", "string", "integer":
			default:
				ok = false
			}
		}
		if !ok {
			c.fail(ptr(path, "type"), "type", "unknown type %s", e.raw)
			return nil, false
		}
		if !seen[e.str] {
			seen[e.str] = true
			out = append(out, e.str)
		}
	}
	if seen["number"] && seen["integer"] { // integers are numbers
		out = slicesDelete(out, "integer")
	}
	if len(out) == 0 {
		c.fail(path, "type", "an empty list of types matches nothing")
		return nil, false
	}
	return out, true
}

func slicesDelete(s []string, x string) []string {
	var out []string
	for _, e := range s {
		if e != x {
			out = append(out, e)
		}
	}
	return out
}

func (c *schemaCompiler) ref(r *jv, path string) []sym {
	if r.kind != 's' {
		return c.fail(path, "$ref", "must be a string")
	}
	if rule, ok := c.refs[r.str]; ok {
		return one(ref(rule))
	}
	target, err := c.resolve(r.str)
	if err != "" {
		return c.fail(path, "$ref", "%s", err)
	}
	rule := c.b.newRule("ref " + r.str)
	c.refs[r.str] = rule
	body := c.value(target, strings.TrimPrefix(r.str, "#"))
	c.b.setRule(rule, body)
	return one(ref(rule))
}

// resolve follows a JSON pointer inside the root document.
func (c *schemaCompiler) resolve(p string) (*jv, string) {
	if !strings.HasPrefix(p, "#") {
		return nil, fmt.Sprintf("%q: only references inside the schema (#/...) are supported", p)
	}
	cur := c.root
	rest := strings.TrimPrefix(p, "#")
	if rest == "" {
		return cur, ""
	}
	if !strings.HasPrefix(rest, "/") {
		return nil, fmt.Sprintf("%q: anchors are not supported", p)
	}
	for _, part := range strings.Split(rest[1:], "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		var next *jv
		switch cur.kind {
		case 'o':
			next = cur.get(part)
		case 'a':
			if i, err := strconv.Atoi(part); err == nil && i >= 0 && i < len(cur.vals) {
				next = cur.vals[i]
			}
		}
		if next == nil {
			return nil, fmt.Sprintf("%q does not resolve", p)
		}
		cur = next
	}
	return cur, ""
}

func (c *schemaCompiler) deref(s *jv, path string) (*jv, string) {
	for i := 0; s.kind == 'o' && s.get("$ref") != nil; i++ {
		r := s.get("$ref")
		if i > 32 || r.kind != 's' || len(s.keys) != 1 {
			c.fail(path, "$ref", "not supported inside allOf")
			return nil, ""
		}
		t, err := c.resolve(r.str)
		if err != "" {
			c.fail(path, "$ref", "%s", err)
			return nil, ""
		}
		s, path = t, strings.TrimPrefix(r.str, "#")
	}
	return s, path
}

func (c *schemaCompiler) anyOf(list *jv, path string, one_ bool) []sym {
	if list.kind != 'a' || len(list.vals) == 0 {
		return c.fail(path, "", "must be a non-empty array of schemas")
	}
	if one_ {
		// oneOf is exact only when no output of a branch matches another:
		// refuse branches that are not provably disjoint.
		for i := range list.vals {
			for j := 0; j < i; j++ {
				if !c.disjoint(list.vals[j], list.vals[i], 0) {
					if c.err != nil {
						return nil
					}
					return c.fail(path, "oneOf", "branches %d and %d may both match one value (oneOf is supported where branches are provably disjoint: different types, different const/enum values, a required property with disjoint schemas, disjoint number ranges; use anyOf)", j, i)
				}
			}
		}
	}
	var alts [][]sym
	for i, e := range list.vals {
		alts = append(alts, c.value(e, fmt.Sprint(path, "/", i)))
	}
	if c.err != nil {
		return nil
	}
	return one(c.b.alt("anyOf", alts...))
}

func (c *schemaCompiler) enum(s *jv, path string, others func(...string) string) []sym {
	var rest *Grammar // the schema's other keywords, when it has some
	if others("enum", "const", "type") != "" {
		if rest = c.restGrammar(s, path); rest == nil {
			return nil
		}
	}
	var vals []*jv
	if e := s.get("enum"); e != nil {
		if e.kind != 'a' {
			return c.fail(path, "enum", "must be an array")
		}
		vals = e.vals
	}
	if k := s.get("const"); k != nil {
		if s.get("enum") != nil {
			found := false
			for _, v := range vals {
				found = found || string(v.raw) == string(k.raw)
			}
			if !found {
				return c.fail(path, "const", "not among the enum values")
			}
		}
		vals = []*jv{k}
	}
	types := map[string]bool{}
	if s.get("type") != nil {
		ts, ok := c.types(s, path)
		if !ok {
			return nil
		}
		for _, t := range ts {
			types[t] = true
		}
	}
	var alts [][]sym
	for _, v := range vals {
		t := v.typeName()
		if len(types) > 0 && !types[t] && !(t == "integer" && types["number"]) {
			continue
		}
		if rest != nil && !rest.Matches(v.raw) {
			continue
		}
		alts = append(alts, lit(string(v.raw)))
	}
	if len(alts) == 0 {
		return c.fail(path, "enum", "no value matches the schema")
	}
	return one(c.b.alt("enum", alts...))
}

// restGrammar compiles s without enum and const (its $refs resolve in the
// same root): a value of the enum is kept when this grammar matches its
// text, which, the grammar being sound, makes it valid against the other
// keywords. A keyword of them that is not supported is refused as anywhere.
func (c *schemaCompiler) restGrammar(s *jv, path string) *Grammar {
	r := &jv{kind: 'o'}
	for i, k := range s.keys {
		if k != "enum" && k != "const" {
			r.keys, r.vals = append(r.keys, k), append(r.vals, s.vals[i])
		}
	}
	sub := &schemaCompiler{b: newBuilder(), root: c.root, refs: map[string]int32{}, cache: map[string]sym{}, depth: c.depth}
	top := sub.b.newRule("root")
	body := sub.value(r, path)
	if sub.err != nil {
		c.err = sub.err
		return nil
	}
	sub.b.setRule(top, body)
	g, err := sub.b.build(top)
	if err != nil {
		c.fail(path, "enum", "%v", err)
		return nil
	}
	return g
}

// allOf of object schemas, merged into one object.
func (c *schemaCompiler) allOf(s *jv, path string) []sym {
	list := s.get("allOf")
	if list.kind != 'a' || len(list.vals) == 0 {
		return c.fail(path, "allOf", "must be a non-empty array of schemas")
	}
	parts := []*jv{}
	self := &jv{kind: 'o'}
	for i, k := range s.keys {
		if k != "allOf" && !annotations[k] {
			self.keys, self.vals = append(self.keys, k), append(self.vals, s.vals[i])
		}
	}
	if len(self.keys) > 0 {
		parts = append(parts, self)
	}
	paths := []string{path}
	for i, e := range list.vals {
		p := fmt.Sprint(path, "/allOf/", i)
		e, p = c.deref(e, p)
		if c.err != nil {
			return nil
		}
		if e.kind == 'o' && e.get("allOf") != nil {
			return c.fail(p, "allOf", "nested allOf is not supported")
		}
		parts = append(parts, e)
		paths = append(paths, p)
	}
	merged := &jv{kind: 'o'}
	props := &jv{kind: 'o'}
	var required []*jv
	reqSeen := map[string]bool{}
	var allowed map[string]bool // nil: any declared property
	for i, p := range parts {
		pp := paths[min(i, len(paths)-1)]
		if p.kind != 'o' {
			return c.fail(pp, "allOf", "only object schemas are supported")
		}
		for j, k := range p.keys {
			v := p.vals[j]
			switch k {
			case "type":
				if v.kind != 's' || v.str != "object" {
					return c.fail(pp, "allOf", "only object schemas are supported")
				}
			case "properties":
				if v.kind != 'o' {
					return c.fail(pp, "properties", "must be an object")
				}
				for m, name := range v.keys {
					if prev := props.get(name); prev != nil {
						if string(prev.raw) != string(v.vals[m].raw) {
							return c.fail(pp, "allOf", "property %q is declared twice with different schemas", name)
						}
						continue
					}
					props.keys, props.vals = append(props.keys, name), append(props.vals, v.vals[m])
				}
			case "required":
				for _, r := range v.vals {
					if r.kind == 's' && !reqSeen[r.str] {
						reqSeen[r.str] = true
						required = append(required, r)
					}
				}
			case "additionalProperties":
				if v.kind == 'b' && !v.b {
					decl := map[string]bool{}
					if pr := p.get("properties"); pr != nil {
						for _, n := range pr.keys {
							if allowed == nil || allowed[n] {
								decl[n] = true
							}
						}
					}
					allowed = decl
				} else if !(v.kind == 'b' && v.b) {
					return c.fail(pp, "additionalProperties", "a schema is not supported inside allOf")
				}
			default:
				if !annotations[k] {
					return c.fail(pp, k, "not supported inside allOf (only type, properties, required, additionalProperties)")
				}
			}
		}
	}
	if allowed != nil {
		kept := &jv{kind: 'o'}
		for i, k := range props.keys {
			if allowed[k] {
				kept.keys, kept.vals = append(kept.keys, k), append(kept.vals, props.vals[i])
			}
		}
		for _, r := range required {
			if !allowed[r.str] {
				return c.fail(path, "allOf", "required property %q is forbidden by additionalProperties: false", r.str)
			}
		}
		props = kept
	}
	merged.keys = []string{"type", "properties", "required"}
	merged.vals = []*jv{{kind: 's', str: "object"}, props, {kind: 'a', vals: required}}
	return c.object(merged, path)
}

func (c *schemaCompiler) count(s *jv, path, kw string) (int, bool) {
	v := s.get(kw)
	if v == nil {
		return -1, true
	}
	f, err := strconv.ParseFloat(string(v.num), 64)
	if v.kind != 'n' || err != nil || f < 0 || f != math.Trunc(f) {
		c.fail(path, kw, "must be a non-negative integer")
		return 0, false
	}
	if f > maxRepeat {
		c.fail(path, kw, "over %d is not supported", maxRepeat)
		return 0, false
	}
	return int(f), true
}

func (c *schemaCompiler) str(s *jv, path string) []sym {
	minL, ok1 := c.count(s, path, "minLength")
	maxL, ok2 := c.count(s, path, "maxLength")
	if !ok1 || !ok2 {
		return nil
	}
	if minL < 0 {
		minL = 0
	}
	if maxL >= 0 && maxL < minL {
		return c.fail(path, "maxLength", "smaller than minLength")
	}
	pat, fm := s.get("pattern"), s.get("format")
	lengths := s.get("minLength") != nil || s.get("maxLength") != nil
	if (pat != nil && (fm != nil || lengths)) || (fm != nil && lengths) {
		return c.fail(path, "pattern", "pattern, format and minLength/maxLength cannot be combined")
	}
	if fm != nil {
		if fm.kind != 's' || !formats[fm.str] {
			return c.fail(path, "format", "format %s not supported (date, time, date-time, uuid, ipv4 are)", fm.raw)
		}
		return c.quoted(c.format(fm.str))
	}
	if pat != nil {
		if pat.kind != 's' {
			return c.fail(path, "pattern", "must be a string")
		}
		body, err := c.pattern(pat.str)
		if err != nil {
			return c.fail(path, "pattern", "%v", err)
		}
		return c.quoted(body)
	}
	if !lengths {
		return one(c.anyString())
	}
	return c.quoted(c.b.rep(one(c.strChar()), minL, maxL))
}

func (c *schemaCompiler) object(s *jv, path string) []sym {
	b := c.b
	ws := c.ws()
	props := s.get("properties")
	if props != nil && props.kind != 'o' {
		return c.fail(path, "properties", "must be an object")
	}
	req := map[string]bool{}
	var reqOrder []string
	if r := s.get("required"); r != nil {
		if r.kind != 'a' {
			return c.fail(path, "required", "must be an array of strings")
		}
		for _, e := range r.vals {
			if e.kind != 's' {
				return c.fail(path, "required", "must be an array of strings")
			}
			if !req[e.str] {
				req[e.str] = true
				reqOrder = append(reqOrder, e.str)
			}
		}
	}
	addl := s.get("additionalProperties")
	addlOpen := addl != nil && !(addl.kind == 'b' && !addl.b)
	type prop struct {
		name   string
		schema *jv
		path   string
	}
	var list []prop
	declared := map[string]bool{}
	if props != nil {
		for i, k := range props.keys {
			declared[k] = true
			list = append(list, prop{k, props.vals[i], ptr(ptr(path, "properties"), k)})
		}
	}
	var extra []sym // additional members: "," and one, repeated
	if addlOpen {
		val := []sym{c.anyValue(1)}
		if !(addl.kind == 'b' && addl.b) {
			val = c.value(addl, ptr(path, "additionalProperties"))
		}
		if len(list) == 0 && len(req) == 0 {
			member := cat(one(c.anyString()), []sym{ws}, lit(":"), one(ws), val, one(ws))
			more := b.star(cat(lit(","), one(ws), member))
			return one(b.alt("map", cat(lit("{"), one(ws), one(b.opt(cat(member, one(more)))), lit("}"))))
		}
		for _, r := range reqOrder {
			if !declared[r] { // a required name beside the properties: the additional schema's
				declared[r] = true
				list = append(list, prop{r, addl, ptr(path, "required")})
			}
		}
		// Beside properties, the additional members come after them, with a
		// key that is none of theirs: JSON.parse keeps a repeated key's last
		// value, which the property's schema would not have checked.
		names := make([]string, len(list))
		for i, p := range list {
			names[i] = p.name
		}
		member := cat(c.keyNotIn(names), []sym{ws}, lit(":"), one(ws), val, one(ws))
		extra = cat(lit(","), one(ws), member)
	}
	for _, r := range reqOrder {
		if !declared[r] {
			if addl != nil { // additionalProperties: false
				return c.fail(path, "required", "%q is not among the properties and additionalProperties is false", r)
			}
			list = append(list, prop{r, &jv{kind: 'b', b: true}, ptr(path, "required")})
		}
	}
	// R(i, first): the members from i on; first: no comma before the next.
	n := len(list)
	vals := make([][]sym, n)
	for i, p := range list {
		vals[i] = cat(lit(string(appendJSONString(nil, p.name))), one(ws), lit(":"), one(ws), c.value(p.schema, p.path), one(ws))
		if c.err != nil {
			return nil
		}
	}
	memo := map[[2]int]sym{}
	var rest func(i int, first bool) []sym
	rest = func(i int, first bool) []sym {
		if i == n {
			if extra == nil {
				return nil
			}
			if first { // the first member: no comma before it
				return one(b.opt(cat(extra[1:], one(b.star(extra)))))
			}
			return one(b.star(extra))
		}
		k := [2]int{i, 0}
		if first {
			k[1] = 1
		}
		if s, ok := memo[k]; ok {
			return one(s)
		}
		var sep []sym
		if !first {
			sep = cat(lit(","), one(ws))
		}
		with := cat(sep, vals[i], rest(i+1, false))
		var s sym
		if req[list[i].name] {
			s = b.alt("members", with)
		} else {
			s = b.alt("members", with, rest(i+1, first))
		}
		memo[k] = s
		return one(s)
	}
	return one(b.alt("object", cat(lit("{"), one(ws), rest(0, true), lit("}"))))
}

// keyNotIn returns a JSON string, quotes included, that spells none of
// names: its characters are raw (no escapes), so the text is the key, and a
// trie of the names steers away from each. A name with a character that
// must be escaped can never be spelled so, and is left out.
func (c *schemaCompiler) keyNotIn(names []string) []sym {
	b := c.b
	raw := []cpRange{{0x20, 0x21}, {0x23, 0x5B}, {0x5D, 0x10FFFF}}
	isRaw := func(r rune) bool { return r >= 0x20 && r != '"' && r != '\\' }
	type node struct {
		end  bool
		kids map[rune]*node
	}
	root := &node{}
names:
	for _, name := range names {
		for _, r := range name {
			if !isRaw(r) {
				continue names
			}
		}
		x := root
		for _, r := range name {
			if x.kids == nil {
				x.kids = map[rune]*node{}
			}
			if x.kids[r] == nil {
				x.kids[r] = &node{}
			}
			x = x.kids[r]
		}
		x.end = true
	}
	anyRaw := b.star(one(b.class(raw)))
	var walk func(x *node) sym
	walk = func(x *node) sym {
		var alts [][]sym
		if !x.end {
			alts = append(alts, nil) // the key ends here
		}
		kids := make([]rune, 0, len(x.kids))
		taken := make([]cpRange, 0, len(x.kids))
		for r := range x.kids {
			kids = append(kids, r)
			taken = append(taken, cpRange{r, r})
		}
		slices.Sort(kids)
		// A character no name goes on with here, then any: raw ∖ taken.
		if others := negate(normalize(append(negate(normalize(raw)), taken...))); len(others) > 0 {
			alts = append(alts, cat(one(b.class(others)), one(anyRaw)))
		}
		for _, r := range kids {
			alts = append(alts, cat(lit(string(r)), one(walk(x.kids[r]))))
		}
		return b.alt("key", alts...)
	}
	return c.quoted(one(walk(root)))
}

func (c *schemaCompiler) array(s *jv, path string) []sym {
	b := c.b
	ws := c.ws()
	minI, ok1 := c.count(s, path, "minItems")
	maxI, ok2 := c.count(s, path, "maxItems")
	if !ok1 || !ok2 {
		return nil
	}
	if minI < 0 {
		minI = 0
	}
	var prefix []*jv
	if p := s.get("prefixItems"); p != nil {
		if p.kind != 'a' {
			return c.fail(path, "prefixItems", "must be an array of schemas")
		}
		prefix = p.vals
	}
	items := s.get("items")
	if items != nil && items.kind == 'a' {
		return c.fail(path, "items", "an array of schemas is draft-07 tuple syntax; use prefixItems")
	}
	if items != nil && items.kind == 'b' && !items.b {
		if maxI < 0 || maxI > len(prefix) {
			maxI = len(prefix)
		}
	}
	if maxI >= 0 && maxI < minI {
		return c.fail(path, "maxItems", "smaller than minItems (or than what items: false allows)")
	}
	elem := func(i int) []sym {
		if i < len(prefix) {
			return c.value(prefix[i], fmt.Sprint(path, "/prefixItems/", i))
		}
		if items == nil {
			return one(c.anyValue(1))
		}
		return c.value(items, ptr(path, "items"))
	}
	elems := map[int][]sym{}
	el := func(i int) []sym {
		k := i
		if i >= len(prefix) {
			k = len(prefix)
		}
		if e, ok := elems[k]; ok {
			return e
		}
		e := elem(i)
		elems[k] = e
		return e
	}
	if maxI == 0 {
		return cat(lit("["), one(ws), lit("]"))
	}
	// T(i): after i elements.
	var tail func(i int) []sym
	tail = func(i int) []sym {
		if c.err != nil {
			return nil
		}
		if maxI >= 0 && i >= maxI {
			return nil
		}
		next := cat(lit(","), one(ws), el(i), one(ws))
		if i >= minI && i >= len(prefix) && maxI < 0 {
			return one(b.star(next))
		}
		r := b.newRule("items")
		rest := tail(i + 1)
		if i >= minI {
			b.setRule(r, cat(next, rest), nil)
		} else {
			b.setRule(r, cat(next, rest))
		}
		return one(ref(r))
	}
	body := cat(el(0), one(ws), tail(1))
	if minI == 0 {
		body = one(b.opt(body))
	}
	return cat(lit("["), one(ws), body, lit("]"))
}
