package jinja

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Values the engine works with, Python's types in Go:
//
//	None      nil
//	bool      bool
//	int       int64
//	float     float64
//	str       string, or Markup (a str marked safe)
//	list      []any
//	tuple     Tuple
//	dict      *Dict (insertion-ordered)
//	Undefined Undefined
//
// plus *Namespace, *loopContext and callables (*function, *macro).

// Markup is a string marked safe (jinja2's Markup): adding a plain string to
// it HTML-escapes that string, as MarkupSafe does.
type Markup string

// bigInt is a JSON integer beyond int64, kept as its digits: it prints and
// serialises as Python's int does, compares by its digits, and refuses
// arithmetic (ints are 64-bit in this engine).
type bigInt string

// Tuple is a Python tuple.
type Tuple []any

// Undefined is jinja2's lenient Undefined: it prints as "", iterates as empty
// and is false, and any other use raises UndefinedError (or SecurityError
// when it stands for an attribute the sandbox refused).
type Undefined struct {
	hint     string // what was looked up, for the error
	security bool
}

// dictView is what dict.items(), keys() and values() return: iterable again
// and again, with a length, but no indexing; it prints as dict_items([...]).
type dictView struct {
	kind  string
	items []any
}

// Namespace is the object namespace() makes: the one value {% set ns.x = v %} may change.
type Namespace struct{ d *Dict }

// Dict is an insertion-ordered Python dict. Keys are str, int, float, bool,
// None or tuples of those; 1, 1.0 and True are one key, as in Python.
type Dict struct {
	keys, vals []any
	index      map[any]int
}

// NewDict returns an empty dict.
func NewDict() *Dict { return &Dict{index: map[any]int{}} }

// Len returns the number of entries.
func (d *Dict) Len() int { return len(d.keys) }

// Keys returns the keys in insertion order (the dict's own slice: do not change it).
func (d *Dict) Keys() []any { return d.keys }

// Get returns the value stored under k.
func (d *Dict) Get(k any) (any, bool) {
	h, ok := hashKey(k)
	if !ok {
		return nil, false
	}
	i, ok := d.index[h]
	if !ok {
		return nil, false
	}
	return d.vals[i], true
}

// Set stores v under k, keeping the first position of an existing key. It
// reports false for an unhashable key (a list or dict).
func (d *Dict) Set(k, v any) bool {
	h, ok := hashKey(k)
	if !ok {
		return false
	}
	if i, ok := d.index[h]; ok {
		d.vals[i] = v
		return true
	}
	d.index[h] = len(d.keys)
	d.keys = append(d.keys, k)
	d.vals = append(d.vals, v)
	return true
}

func (d *Dict) copy() *Dict {
	c := &Dict{keys: slices.Clone(d.keys), vals: slices.Clone(d.vals), index: make(map[any]int, len(d.index))}
	for k, v := range d.index {
		c.index[k] = v
	}
	return c
}

type (
	noneKey      struct{}
	undefinedKey struct{} // Undefined is hashable in jinja2, equal only to itself
)

// hashKey maps a value to a Go map key with Python's equality: numbers that
// compare equal share a key.
func hashKey(k any) (any, bool) { return hashDepth(k, 0) }

func hashDepth(k any, depth int) (any, bool) {
	switch v := k.(type) {
	case nil:
		return noneKey{}, true
	case Undefined:
		return undefinedKey{}, true
	case bigInt:
		return v, true
	case string:
		return v, true
	case Markup:
		return string(v), true
	case bool:
		if v {
			return int64(1), true
		}
		return int64(0), true
	case int64:
		return v, true
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<63 {
			return int64(v), true
		}
		return v, true
	case Tuple:
		if depth > maxValueDepth {
			return nil, false
		}
		// quoted parts cannot run into each other, so distinct tuples get distinct keys
		var b strings.Builder
		for _, x := range v {
			h, ok := hashDepth(x, depth+1)
			if !ok {
				return nil, false
			}
			fmt.Fprintf(&b, "%T:%q,", h, fmt.Sprint(h))
		}
		return "\x00tuple:" + b.String(), true
	}
	return nil, false
}

// typeName is Python's type name of v, for error messages.
func typeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int64, bigInt:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case Markup:
		return "Markup"
	case []any:
		return "list"
	case Tuple:
		return "tuple"
	case *Dict:
		return "dict"
	case Undefined:
		return "Undefined"
	case *Namespace:
		return "Namespace"
	case *loopContext:
		return "LoopContext"
	case *dictView:
		return x.kind
	case *cycler:
		return "Cycler"
	case *generator:
		return "generator"
	case *macro:
		return "Macro"
	case *function:
		return "function"
	}
	return fmt.Sprintf("%T", v)
}

func isString(v any) bool {
	switch v.(type) {
	case string, Markup:
		return true
	}
	return false
}

// asString returns the text of a str or Markup.
func asString(v any) (string, bool) {
	switch s := v.(type) {
	case string:
		return s, true
	case Markup:
		return string(s), true
	}
	return "", false
}

// truthy is Python's bool(v).
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case int64:
		return x != 0
	case float64:
		return x != 0
	case string:
		return x != ""
	case Markup:
		return x != ""
	case []any:
		return len(x) > 0
	case Tuple:
		return len(x) > 0
	case *Dict:
		return x.Len() > 0
	case *dictView:
		return len(x.items) > 0
	case Undefined:
		return false
	}
	return true
}

// pyStr is Python's str(v) (what {{ v }} prints).
func pyStr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case Markup:
		return string(x)
	case Undefined:
		return ""
	}
	var b strings.Builder
	writeRepr(&b, v, 0)
	return b.String()
}

// pyRepr is Python's repr(v).
func pyRepr(v any) string {
	var b strings.Builder
	writeRepr(&b, v, 0)
	return b.String()
}

func writeRepr(b *strings.Builder, v any, depth int) {
	if depth > maxValueDepth {
		b.WriteString("...")
		return
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case bigInt:
		b.WriteString(string(x))
	case float64:
		b.WriteString(floatRepr(x))
	case string:
		writeStrRepr(b, x)
	case Markup:
		b.WriteString("Markup(")
		writeStrRepr(b, string(x))
		b.WriteString(")")
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e, depth+1)
		}
		b.WriteByte(']')
	case Tuple:
		b.WriteByte('(')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e, depth+1)
		}
		if len(x) == 1 {
			b.WriteByte(',')
		}
		b.WriteByte(')')
	case *Dict:
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, k, depth+1)
			b.WriteString(": ")
			writeRepr(b, x.vals[i], depth+1)
		}
		b.WriteByte('}')
	case Undefined:
		b.WriteString("Undefined")
	case *Namespace:
		b.WriteString("<Namespace ")
		writeRepr(b, x.d, depth+1)
		b.WriteString(">")
	case *loopContext:
		fmt.Fprintf(b, "<LoopContext %d/%d>", x.i+1, len(x.items))
	case *generator:
		fmt.Fprintf(b, "<generator object %s>", x.name)
	case *dictView:
		b.WriteString(x.kind + "(")
		writeRepr(b, x.items, depth)
		b.WriteByte(')')
	case *macro:
		fmt.Fprintf(b, "<Macro '%s'>", x.name)
	case *function:
		fmt.Fprintf(b, "<built-in function %s>", x.name)
	default:
		fmt.Fprintf(b, "<%T>", v)
	}
}

// writeStrRepr writes Python's repr of a str: single quotes unless the text
// holds a single quote and no double one; non-printable characters escaped.
func writeStrRepr(b *strings.Builder, s string) {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(b, `\x%02x`, r)
		case r < 0x7f:
			b.WriteRune(r)
		case !isPrintable(r):
			switch {
			case r <= 0xff:
				fmt.Fprintf(b, `\x%02x`, r)
			case r <= 0xffff:
				fmt.Fprintf(b, `\u%04x`, r)
			default:
				fmt.Fprintf(b, `\U%08x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
}

// isPrintable is Python's str.isprintable for one character: everything but
// the categories Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs (the space excepted).
func isPrintable(r rune) bool {
	if r == ' ' {
		return true
	}
	if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Cs, unicode.Co, unicode.Zl, unicode.Zp, unicode.Zs) {
		return false
	}
	// Cn: unassigned code points belong to no category.
	return unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S)
}

// floatRepr is Python's repr(float): the shortest digits that read back the
// same, positional between 1e-4 and 1e16, scientific outside.
func floatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, exps, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(exps)
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimPrefix(mant, "-")
	digits := strings.Replace(mant, ".", "", 1)
	var out string
	if exp < -4 || exp >= 16 {
		out = digits[:1]
		if len(digits) > 1 {
			out += "." + digits[1:]
		}
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		out += fmt.Sprintf("e%s%02d", sign, exp)
	} else if exp < 0 {
		out = "0." + strings.Repeat("0", -exp-1) + digits
	} else if exp+1 >= len(digits) {
		out = digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
	} else {
		out = digits[:exp+1] + "." + digits[exp+1:]
	}
	if neg {
		out = "-" + out
	}
	return out
}

// isPySpace is Python's str.isspace for one character (it counts U+001C to
// U+001F, which unicode.IsSpace does not).
func isPySpace(r rune) bool {
	switch r {
	case 0x1c, 0x1d, 0x1e, 0x1f:
		return true
	}
	return unicode.IsSpace(r)
}

func rstripSpace(s string) string { return strings.TrimRightFunc(s, isPySpace) }
func lstripSpace(s string) string { return strings.TrimLeftFunc(s, isPySpace) }

// number returns v as a float and whether it is an int (bool counts as int).
func number(v any) (f float64, i int64, isInt, ok bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, 1, true, true
		}
		return 0, 0, true, true
	case int64:
		return float64(x), x, true, true
	case float64:
		return x, 0, false, true
	}
	return 0, 0, false, false
}

// pyEq is Python's ==.
func pyEq(a, b any) bool { return eqDepth(a, b, 0) }

// eqDepth is pyEq with the nesting reached so far: values nested deeper
// than maxValueDepth (Python would raise RecursionError) compare unequal.
func eqDepth(a, b any, depth int) bool {
	if depth > maxValueDepth {
		return false
	}
	if fa, ia, aInt, ok := number(a); ok {
		fb, ib, bInt, ok := number(b)
		if !ok {
			return false
		}
		if aInt && bInt {
			return ia == ib
		}
		return fa == fb
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string, Markup:
		sa, _ := asString(x)
		sb, ok := asString(b)
		return ok && sa == sb
	case []any:
		y, ok := b.([]any)
		return ok && seqEq(x, y, depth)
	case Tuple:
		y, ok := b.(Tuple)
		return ok && seqEq(x, y, depth)
	case *Dict:
		y, ok := b.(*Dict)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for i, k := range x.keys {
			w, ok := y.Get(k)
			if !ok || !eqDepth(x.vals[i], w, depth+1) {
				return false
			}
		}
		return true
	case Undefined:
		_, ok := b.(Undefined)
		return ok
	}
	return a == b
}

func seqEq(x, y []any, depth int) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if !eqDepth(x[i], y[i], depth+1) {
			return false
		}
	}
	return true
}

var errCompare = errors.New("not comparable")

// pyCompare orders a and b as Python's < does: numbers, strings (by code
// point), lists and tuples; anything else is a TypeError.
func pyCompare(a, b any) (int, error) { return compareDepth(a, b, 0) }

func compareDepth(a, b any, depth int) (int, error) {
	if depth > maxValueDepth {
		return 0, errCompare
	}
	if fa, ia, aInt, ok := number(a); ok {
		fb, ib, bInt, ok := number(b)
		if !ok {
			return 0, errCompare
		}
		if aInt && bInt {
			return cmpOrdered(ia, ib), nil
		}
		return cmpOrdered(fa, fb), nil
	}
	if sa, ok := asString(a); ok {
		sb, ok := asString(b)
		if !ok {
			return 0, errCompare
		}
		return strings.Compare(sa, sb), nil // UTF-8 byte order is code point order
	}
	var x, y []any
	switch xa := a.(type) {
	case []any:
		yb, ok := b.([]any)
		if !ok {
			return 0, errCompare
		}
		x, y = xa, yb
	case Tuple:
		yb, ok := b.(Tuple)
		if !ok {
			return 0, errCompare
		}
		x, y = xa, yb
	default:
		return 0, errCompare
	}
	for i := 0; i < len(x) && i < len(y); i++ {
		if eqDepth(x[i], y[i], depth+1) {
			continue
		}
		return compareDepth(x[i], y[i], depth+1)
	}
	return cmpOrdered(len(x), len(y)), nil
}

func cmpOrdered[T int | int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// maxValueDepth bounds the nesting of values decoded, converted and printed.
var maxValueDepth = 1000

// DecodeJSON decodes one JSON value into values the engine takes: objects
// become *Dict in the order of the text (Python dicts are ordered: printing
// and tojson follow insertion order), integers int64 and numbers with a
// fraction or exponent float64 (1 and 1.0 differ, as in Python), arrays
// []any. Integers too large for int64 become float64.
func DecodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("jinja: JSON: data after the value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxValueDepth {
		return nil, fmt.Errorf("jinja: JSON nested deeper than %d levels", maxValueDepth)
	}
	t, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("jinja: JSON: %w", err)
	}
	switch x := t.(type) {
	case json.Delim:
		switch x {
		case '[':
			l := []any{}
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			_, err := dec.Token()
			return l, err
		case '{':
			d := NewDict()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("jinja: JSON: %w", err)
				}
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				d.Set(kt.(string), v)
			}
			_, err := dec.Token()
			return d, err
		}
		return nil, fmt.Errorf("jinja: JSON: unexpected %v", x)
	case json.Number:
		return jsonNumber(x)
	}
	return t, nil // string, bool, nil
}

func jsonNumber(n json.Number) (any, error) {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		i, err := strconv.ParseInt(s, 10, 64)
		if err == nil {
			return i, nil
		}
		if errors.Is(err, strconv.ErrRange) {
			return bigInt(s), nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, fmt.Errorf("jinja: JSON number %q: %w", s, err)
	}
	return f, nil
}

// fromGo converts a variable given to Render into an engine value.
func fromGo(v any, depth int) (any, error) {
	if depth > maxValueDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxValueDepth)
	}
	switch x := v.(type) {
	case nil, bool, string, int64, float64, Markup, Undefined, bigInt:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case float32:
		return float64(x), nil
	case json.Number:
		return jsonNumber(x)
	case []any:
		return fromGoAll(x, depth)
	case []string:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = e
		}
		return l, nil
	case Tuple:
		l, err := fromGoAll(x, depth)
		return Tuple(l), err
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		d := NewDict()
		for _, k := range keys {
			c, err := fromGo(x[k], depth+1)
			if err != nil {
				return nil, err
			}
			d.Set(k, c)
		}
		return d, nil
	case *Dict:
		d := NewDict()
		for i, k := range x.keys {
			c, err := fromGo(x.vals[i], depth+1)
			if err != nil {
				return nil, err
			}
			d.Set(k, c)
		}
		return d, nil
	}
	return nil, fmt.Errorf("unsupported Go type %T", v)
}

func fromGoAll(x []any, depth int) ([]any, error) {
	l := make([]any, len(x))
	for i, e := range x {
		c, err := fromGo(e, depth+1)
		if err != nil {
			return nil, err
		}
		l[i] = c
	}
	return l, nil
}
