package grammar

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Proofs that two schemas share no value, for oneOf: oneOf is exact only
// when no output of one branch is valid against another. The proofs are
// sound, not complete: false means "not proved".

// follow resolves a schema that is only a $ref; nil where it cannot.
func (c *schemaCompiler) follow(s *jv) *jv {
	for i := 0; s != nil && s.kind == 'o' && s.get("$ref") != nil; i++ {
		r := s.get("$ref")
		if i > 32 || r.kind != 's' || len(constraints(s)) != 1 {
			return nil
		}
		t, err := c.resolve(r.str)
		if err != "" {
			return nil
		}
		s = t
	}
	return s
}

// constraints: s's keywords that are not annotations.
func constraints(s *jv) []string {
	var out []string
	for _, k := range s.keys {
		if !annotations[k] {
			out = append(out, k)
		}
	}
	return out
}

// values: the values an enum/const schema allows (ok false: not one).
func values(s *jv) ([]*jv, bool) {
	if k := s.get("const"); k != nil {
		return []*jv{k}, true
	}
	if e := s.get("enum"); e != nil && e.kind == 'a' {
		return e.vals, true
	}
	return nil, false
}

// semTypes: the types s allows by the specification ("type", or all).
func semTypes(s *jv) map[string]bool {
	out := map[string]bool{}
	t := s.get("type")
	switch {
	case t == nil:
		for _, x := range allTypes {
			out[x] = true
		}
	case t.kind == 's':
		out[t.str] = true
	case t.kind == 'a':
		for _, e := range t.vals {
			out[e.str] = true
		}
	}
	if out["number"] {
		out["integer"] = true
	}
	return out
}

func nested(s *jv) bool {
	return s.get("anyOf") != nil || s.get("oneOf") != nil || s.get("allOf") != nil || s.get("$ref") != nil
}

// disjoint reports whether no output of a (as compiled) is valid against b
// and no output of b is valid against a.
func (c *schemaCompiler) disjoint(a, b *jv, depth int) bool {
	return c.excludesAll(a, b, depth) && c.excludesAll(b, a, depth)
}

// excludesAll: no output of a is valid against b.
func (c *schemaCompiler) excludesAll(a, b *jv, depth int) bool {
	a, b = c.follow(a), c.follow(b)
	if a == nil || b == nil || depth > 16 {
		return false
	}
	if a.kind == 'b' || b.kind == 'b' {
		return (a.kind == 'b' && !a.b) || (b.kind == 'b' && !b.b)
	}
	if a.kind != 'o' || b.kind != 'o' || nested(a) {
		return false
	}
	if vals, ok := values(a); ok {
		for _, v := range vals {
			if !c.excludes(b, v, depth+1) {
				return false
			}
		}
		return true
	}
	if vals, ok := values(b); ok { // b allows only these values
		for _, v := range vals {
			if !c.excludes(a, v, depth+1) {
				return false
			}
		}
		return true
	}
	// b's nested anyOf/oneOf/allOf only narrow it: its own keywords suffice.
	saved := c.err
	emit, ok := c.types(a, "")
	c.err = saved
	if !ok {
		return false
	}
	sem := semTypes(b)
	for _, t := range emit {
		if !sem[t] {
			continue
		}
		switch t {
		case "integer", "number":
			if !c.rangesDisjoint(a, b, t == "integer" || !sem["number"]) {
				return false
			}
		case "object":
			if !c.objectsDisjoint(a, b, depth) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// rangesDisjoint: the numbers (integers only if integer) of a's bounds and
// of b's share no value.
func (c *schemaCompiler) rangesDisjoint(a, b *jv, integer bool) bool {
	saved := c.err
	lo1, hi1, ok1 := c.bounds(a, "")
	lo2, hi2, ok2 := c.bounds(b, "")
	c.err = saved
	if !ok1 || !ok2 {
		return false
	}
	if integer {
		l1, h1 := intBounds(lo1, hi1)
		l2, h2 := intBounds(lo2, hi2)
		return (hi1.set && lo2.set && h1 < l2) || (hi2.set && lo1.set && h2 < l1)
	}
	below := func(hi, lo bound) bool { // every x ≤ hi is < every y ≥ lo
		if !hi.set || !lo.set {
			return false
		}
		k := cmpDec(hi.v, lo.v)
		return k < 0 || (k == 0 && (hi.ex || lo.ex))
	}
	return below(hi1, lo2) || below(hi2, lo1)
}

// objectsDisjoint: a property required by both with disjoint schemas, or
// required by one and forbidden by the other.
func (c *schemaCompiler) objectsDisjoint(a, b *jv, depth int) bool {
	for _, pair := range [2][2]*jv{{a, b}, {b, a}} {
		x, y := pair[0], pair[1]
		for _, p := range required(x) {
			py, declared := propSchema(y, p)
			if py == nil && declared {
				return true // forbidden by additionalProperties: false
			}
			if contains(required(y), p) {
				px, _ := propSchema(x, p)
				if px != nil && py != nil && c.disjoint(px, py, depth+1) {
					return true
				}
			}
		}
	}
	return false
}

func required(s *jv) []string {
	var out []string
	if r := s.get("required"); r != nil && r.kind == 'a' {
		for _, e := range r.vals {
			if e.kind == 's' {
				out = append(out, e.str)
			}
		}
	}
	return out
}

func contains(l []string, x string) bool {
	for _, e := range l {
		if e == x {
			return true
		}
	}
	return false
}

// propSchema: the schema a property's value is checked against in s; nil
// and true when s forbids the property.
func propSchema(s *jv, name string) (*jv, bool) {
	if p := s.get("properties"); p != nil && p.kind == 'o' {
		if v := p.get(name); v != nil {
			return v, false
		}
	}
	if a := s.get("additionalProperties"); a != nil {
		if a.kind == 'b' && !a.b {
			return nil, true
		}
		return a, false
	}
	return &jv{kind: 'b', b: true}, false
}

// excludes reports whether value v is provably invalid against s.
func (c *schemaCompiler) excludes(s, v *jv, depth int) bool {
	s = c.follow(s)
	if s == nil || depth > 32 {
		return false
	}
	if s.kind == 'b' {
		return !s.b
	}
	if s.kind != 'o' {
		return false
	}
	if vals, ok := values(s); ok {
		cv := canonJSON(v)
		found := false
		for _, x := range vals {
			found = found || canonJSON(x) == cv
		}
		if !found {
			return true
		}
	}
	if s.get("type") != nil && !semTypes(s)[exactType(v)] {
		return true
	}
	switch v.kind {
	case 'n':
		saved := c.err
		lo, hi, ok := c.bounds(s, "")
		c.err = saved
		d, err := parseDec(string(v.num))
		if ok && err == nil {
			if lo.set && (cmpDec(d, lo.v) < 0 || (lo.ex && cmpDec(d, lo.v) == 0)) {
				return true
			}
			if hi.set && (cmpDec(d, hi.v) > 0 || (hi.ex && cmpDec(d, hi.v) == 0)) {
				return true
			}
		}
	case 's':
		n := utf8.RuneCountInString(v.str)
		if m, ok := count(s, "minLength"); ok && n < m {
			return true
		}
		if m, ok := count(s, "maxLength"); ok && n > m {
			return true
		}
	case 'o':
		for _, p := range required(s) {
			if v.get(p) == nil {
				return true
			}
		}
		for i, k := range v.keys {
			ps, forbidden := propSchema(s, k)
			if forbidden || c.excludes(ps, v.vals[i], depth+1) {
				return true
			}
		}
	}
	return false
}

// count reads a non-negative integer keyword quietly.
func count(s *jv, kw string) (int, bool) {
	v := s.get(kw)
	if v == nil || v.kind != 'n' {
		return 0, false
	}
	d, err := parseDec(string(v.num))
	if err != nil || d.neg || d.fp != "" {
		return 0, false
	}
	return int(d.ip), true
}

// canon: a text equal for JSON values the specification calls equal (1 and
// 1.0, members in any order).
func canonJSON(v *jv) string {
	switch v.kind {
	case 'n':
		neg, digits, exp, ok := numNorm(string(v.num))
		if !ok {
			return "n" + string(v.num)
		}
		return fmt.Sprint("n", neg, digits, "e", exp)
	case 'o':
		idx := make([]int, len(v.keys))
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, b int) bool { return v.keys[idx[a]] < v.keys[idx[b]] })
		var sb strings.Builder
		sb.WriteString("{")
		for _, i := range idx {
			sb.Write(appendJSONString(nil, v.keys[i]))
			sb.WriteString(":")
			sb.WriteString(canonJSON(v.vals[i]))
			sb.WriteString(",")
		}
		sb.WriteString("}")
		return sb.String()
	case 'a':
		var sb strings.Builder
		sb.WriteString("[")
		for _, e := range v.vals {
			sb.WriteString(canonJSON(e))
			sb.WriteString(",")
		}
		sb.WriteString("]")
		return sb.String()
	}
	return string(v.raw)
}

// numNorm writes a JSON number as sign, significant digits (no leading or
// trailing zeros; "0" for zero) and the exponent of their last digit.
func numNorm(num string) (neg bool, digits string, exp int, ok bool) {
	s := num
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e > 1<<30 || e < -1<<30 {
			return false, "", 0, false
		}
		s, exp = s[:i], e
	}
	ip, fp, _ := strings.Cut(s, ".")
	digits, exp = ip+fp, exp-len(fp)
	digits = strings.TrimLeft(digits, "0")
	n := len(digits)
	digits = strings.TrimRight(digits, "0")
	exp += n - len(digits)
	if digits == "" {
		return false, "0", 0, true
	}
	return neg, digits, exp, true
}

// exactType is v's JSON Schema type, "integer" for any number of integer
// value (1.0, 1e20).
func exactType(v *jv) string {
	if v.kind == 'n' {
		if _, _, exp, ok := numNorm(string(v.num)); ok && exp >= 0 {
			return "integer"
		}
		return "number"
	}
	return v.typeName()
}
