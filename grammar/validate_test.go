package grammar

// An independent JSON Schema validator for the keywords the compiler
// supports, written from the specification (2020-12) on decoded values; it
// shares no code with the compiler.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

func decodeAny(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("trailing data")
	}
	return v, nil
}

type validator struct{ root any }

func rat(n json.Number) *big.Rat {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok { // an exponent too large for big.Rat: ±10^400 (or 0) stands in
		f, err := strconv.ParseFloat(string(n), 64)
		if err == nil || math.IsInf(f, 0) || f == 0 {
			huge := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(400), nil))
			switch {
			case f == 0:
				return new(big.Rat)
			case f < 0:
				return huge.Neg(huge)
			}
			return huge
		}
		panic("bad number " + n)
	}
	return r
}

func typeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if rat(x).IsInt() {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	}
	return "object"
}

func canon(v any) string {
	switch x := v.(type) {
	case json.Number:
		return "n:" + rat(x).RatString()
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, canon(e))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case map[string]any:
		var parts []string
		for k, e := range x {
			parts = append(parts, strconv.Quote(k)+":"+canon(e))
		}
		sortStrings(parts)
		return "{" + strings.Join(parts, ",") + "}"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

var (
	reTime = regexp.MustCompile(`^(\d\d):(\d\d):(\d\d)(\.\d+)?(Z|z|[+-](\d\d):(\d\d))$`)
	reUUID = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
)

func validTime(s string) bool {
	m := reTime.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	h, _ := strconv.Atoi(m[1])
	mi, _ := strconv.Atoi(m[2])
	se, _ := strconv.Atoi(m[3])
	if h > 23 || mi > 59 || se > 59 {
		return false
	}
	if m[6] != "" {
		th, _ := strconv.Atoi(m[6])
		tm, _ := strconv.Atoi(m[7])
		return th <= 23 && tm <= 59
	}
	return true
}

func validFormat(f, s string) bool {
	switch f {
	case "date":
		_, err := time.Parse("2006-01-02", s)
		return err == nil
	case "time":
		return validTime(s)
	case "date-time":
		i := strings.IndexAny(s, "Tt ")
		if i < 0 {
			return false
		}
		_, err := time.Parse("2006-01-02", s[:i])
		return err == nil && validTime(s[i+1:])
	case "uuid":
		return reUUID.MatchString(s)
	case "ipv4":
		parts := strings.Split(s, ".")
		for _, p := range parts {
			n, err := strconv.Atoi(p)
			if err != nil || n < 0 || n > 255 || p != strconv.Itoa(n) {
				return false
			}
		}
		return len(parts) == 4
	}
	panic("format " + f)
}

// check returns "" when v is valid against s, else why not.
func (vd *validator) check(s, v any, depth int) string {
	if depth > 200 {
		return "too deep"
	}
	if b, ok := s.(bool); ok {
		if b {
			return ""
		}
		return "false schema"
	}
	m := s.(map[string]any)
	if r, ok := m["$ref"].(string); ok {
		t := vd.root
		for _, p := range strings.Split(strings.TrimPrefix(r, "#"), "/")[1:] {
			t = t.(map[string]any)[p]
		}
		if e := vd.check(t, v, depth+1); e != "" {
			return "$ref: " + e
		}
	}
	if t, ok := m["type"]; ok {
		ts := []any{t}
		if l, ok := t.([]any); ok {
			ts = l
		}
		got, ok := typeOf(v), false
		for _, x := range ts {
			ok = ok || x == got || (x == "number" && got == "integer")
		}
		if !ok {
			return fmt.Sprintf("type %s not in %v", got, ts)
		}
	}
	if c, ok := m["const"]; ok && canon(c) != canon(v) {
		return "const"
	}
	if e, ok := m["enum"].([]any); ok {
		found := false
		for _, x := range e {
			found = found || canon(x) == canon(v)
		}
		if !found {
			return "enum"
		}
	}
	if l, ok := m["anyOf"].([]any); ok {
		n := 0
		for _, x := range l {
			if vd.check(x, v, depth+1) == "" {
				n++
			}
		}
		if n == 0 {
			return "anyOf"
		}
	}
	if l, ok := m["oneOf"].([]any); ok {
		n := 0
		for _, x := range l {
			if vd.check(x, v, depth+1) == "" {
				n++
			}
		}
		if n != 1 {
			return fmt.Sprintf("oneOf: %d match", n)
		}
	}
	if l, ok := m["allOf"].([]any); ok {
		for _, x := range l {
			if e := vd.check(x, v, depth+1); e != "" {
				return "allOf: " + e
			}
		}
	}
	switch x := v.(type) {
	case string:
		n := float64(utf8.RuneCountInString(x))
		if f, ok := m["minLength"].(json.Number); ok && n < mustF(f) {
			return "minLength"
		}
		if f, ok := m["maxLength"].(json.Number); ok && n > mustF(f) {
			return "maxLength"
		}
		if p, ok := m["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(x) {
			return "pattern"
		}
		if f, ok := m["format"].(string); ok && !validFormat(f, x) {
			return "format " + f
		}
	case json.Number:
		r := rat(x)
		if b, ok := m["minimum"].(json.Number); ok && r.Cmp(rat(b)) < 0 {
			return "minimum"
		}
		if b, ok := m["maximum"].(json.Number); ok && r.Cmp(rat(b)) > 0 {
			return "maximum"
		}
		if b, ok := m["exclusiveMinimum"].(json.Number); ok && r.Cmp(rat(b)) <= 0 {
			return "exclusiveMinimum"
		}
		if b, ok := m["exclusiveMaximum"].(json.Number); ok && r.Cmp(rat(b)) >= 0 {
			return "exclusiveMaximum"
		}
	case []any:
		n := float64(len(x))
		if f, ok := m["minItems"].(json.Number); ok && n < mustF(f) {
			return "minItems"
		}
		if f, ok := m["maxItems"].(json.Number); ok && n > mustF(f) {
			return "maxItems"
		}
		pre, _ := m["prefixItems"].([]any)
		for i, e := range x {
			var es any = true
			if i < len(pre) {
				es = pre[i]
			} else if it, ok := m["items"]; ok {
				es = it
			}
			if err := vd.check(es, e, depth+1); err != "" {
				return fmt.Sprintf("item %d: %s", i, err)
			}
		}
	case map[string]any:
		props, _ := m["properties"].(map[string]any)
		if r, ok := m["required"].([]any); ok {
			for _, k := range r {
				if _, ok := x[k.(string)]; !ok {
					return "required " + k.(string)
				}
			}
		}
		for k, e := range x {
			ps, ok := props[k]
			if !ok {
				ps, ok = m["additionalProperties"]
				if !ok {
					ps = true
				}
			}
			if err := vd.check(ps, e, depth+1); err != "" {
				return fmt.Sprintf("property %q: %s", k, err)
			}
		}
	}
	return ""
}

func mustF(n json.Number) float64 {
	f, err := n.Float64()
	if err != nil {
		panic(err)
	}
	return f
}

var _ = reflect.DeepEqual
