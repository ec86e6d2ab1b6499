package jinja

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The Python attributes templates reach on values: methods of str, list,
// tuple and dict, namespace and loop attributes. The immutable sandbox
// refuses the methods that change a list or dict (jinja2's _mutable_spec,
// with list.pop and list.clear as jinja2 3.1.5 and later refuse them): they
// read as an undefined that raises SecurityError when called.

type method func(st *state, self any, args []any, kw []kwarg) any

var (
	strMethods   map[string]method
	listMethods  map[string]method
	tupleMethods map[string]method
	dictMethods  map[string]method
	listMutating = map[string]bool{"append": true, "extend": true, "insert": true, "pop": true, "remove": true,
		"reverse": true, "sort": true, "clear": true}
	dictMutating = map[string]bool{"clear": true, "pop": true, "popitem": true, "setdefault": true, "update": true}
)

func (st *state) pyAttr(obj any, name string) (any, bool) {
	if strings.HasPrefix(name, "__") && strings.HasSuffix(name, "__") {
		return Undefined{hint: fmt.Sprintf("access to attribute '%s' of '%s' object is unsafe", name, typeName(obj)), security: true}, true
	}
	var table map[string]method
	var mutating map[string]bool
	switch x := obj.(type) {
	case string, Markup:
		table = strMethods
	case []any:
		table, mutating = listMethods, listMutating
	case Tuple:
		if len(x) == 2 && (name == "grouper" || name == "list") { // groupby's pairs
			if name == "grouper" {
				return x[0], true
			}
			return x[1], true
		}
		table = tupleMethods
	case *Dict:
		table, mutating = dictMethods, dictMutating
	case *Namespace:
		v, ok := x.d.Get(name)
		return v, ok
	case *loopContext:
		return x.attr(name)
	case *cycler:
		return x.attr(name)
	case *macro:
		if name == "name" {
			return x.name, true
		}
		return nil, false
	case bool, int64, float64:
		switch name {
		case "real":
			if b, ok := x.(bool); ok {
				_, i, _, _ := number(b)
				return i, true
			}
			return x, true
		case "imag":
			if _, ok := x.(float64); ok {
				return 0.0, true
			}
			return int64(0), true
		case "is_integer":
			if f, ok := x.(float64); ok {
				return &function{name, func(st *state, args []any, kw []kwarg) any { return f == float64(int64(f)) }}, true
			}
		}
		return nil, false
	default:
		return nil, false
	}
	if m, ok := table[name]; ok {
		if _, isMarkup := obj.(Markup); isMarkup {
			return markupMethod(name, m, obj), true
		}
		return &function{name, func(st *state, args []any, kw []kwarg) any { return m(st, obj, args, kw) }}, true
	}
	if mutating[name] {
		return Undefined{hint: fmt.Sprintf("access to attribute '%s' of '%s' object is unsafe", name, typeName(obj)), security: true}, true
	}
	return nil, false
}

// markupEscaping lists the str methods MarkupSafe wraps so that their string
// arguments are escaped and their string result stays Markup.
var markupEscaping = map[string]bool{"capitalize": true, "title": true, "lower": true, "upper": true,
	"replace": true, "ljust": true, "rjust": true, "lstrip": true, "rstrip": true, "center": true,
	"strip": true, "expandtabs": true, "swapcase": true, "zfill": true, "format": true, "join": true}

func markupMethod(name string, m method, self any) *function {
	return &function{name, func(st *state, args []any, kw []kwarg) any {
		if !markupEscaping[name] {
			switch name {
			case "split", "rsplit", "splitlines", "partition", "rpartition":
				return markupParts(m(st, self, args, kw))
			}
			return m(st, self, args, kw)
		}
		esc := func(v any) any {
			switch x := v.(type) {
			case Markup:
				return x
			case string:
				return escapeHTML(x)
			}
			if name == "format" { // EscapeFormatter escapes every formatted value
				if _, _, _, isNum := number(v); !isNum {
					return escapeHTML(pyStr(v))
				}
			}
			return v
		}
		args = slices.Clone(args)
		for i, a := range args {
			if name == "join" {
				items := slices.Clone(st.iterate(a))
				for j, it := range items {
					items[j] = esc(it)
				}
				a = items
			}
			args[i] = esc(a)
		}
		kw = slices.Clone(kw)
		for i := range kw {
			kw[i].val = esc(kw[i].val)
		}
		r := m(st, self, args, kw)
		if s, ok := r.(string); ok {
			return Markup(s)
		}
		return r
	}}
}

// markupParts makes the strings split and partition return Markup, as MarkupSafe's do.
func markupParts(r any) any {
	switch x := r.(type) {
	case []any:
		for i, v := range x {
			if s, ok := v.(string); ok {
				x[i] = Markup(s)
			}
		}
	case Tuple:
		for i, v := range x {
			if s, ok := v.(string); ok {
				x[i] = Markup(s)
			}
		}
	}
	return r
}

func strM(f func(st *state, s string, p []any) any, names ...string) method {
	return func(st *state, self any, args []any, kw []kwarg) any {
		s, _ := asString(self)
		return f(st, s, st.bind("str method", args, kw, names...))
	}
}

func strOnly(f func(string) string) method {
	return strM(func(st *state, s string, p []any) any { return f(s) })
}

func strPred(f func(string) bool) method {
	return strM(func(st *state, s string, p []any) any { return f(s) })
}

func allRunes(f func(rune) bool) func(string) bool {
	return func(s string) bool {
		if s == "" {
			return false
		}
		for _, r := range s {
			if !f(r) {
				return false
			}
		}
		return true
	}
}

// runeIndex converts a byte offset in s into a code point index.
func runeIndex(s string, b int) int64 {
	if b < 0 {
		return -1
	}
	return int64(utf8.RuneCountInString(s[:b]))
}

// subRange returns s limited to Python's [start:end] code point range and the rune offset.
func (st *state) subRange(s string, start, end any) (string, int64) {
	rs := []rune(s)
	var b [3]*int64
	if start != missing && start != nil {
		v := st.intArg("str method", start)
		b[0] = &v
	}
	if end != missing && end != nil {
		v := st.intArg("str method", end)
		b[1] = &v
	}
	lo, hi, _ := st.sliceBounds(len(rs), b)
	if hi < lo {
		return "", -1
	}
	return string(rs[lo:hi]), int64(lo)
}

func affixMethod(suffix bool) method {
	return strM(func(st *state, s string, p []any) any {
		sub, off := st.subRange(s, p[1], p[2])
		if off < 0 {
			return false
		}
		var affixes []any
		switch x := p[0].(type) {
		case Tuple:
			affixes = x
		default:
			affixes = []any{x}
		}
		for _, a := range affixes {
			t, ok := asString(a)
			if !ok {
				st.fail(KindType, "startswith/endswith first arg must be str or a tuple of str, not %s", typeName(a))
			}
			if suffix && strings.HasSuffix(sub, t) || !suffix && strings.HasPrefix(sub, t) {
				return true
			}
		}
		return false
	}, "prefix", "start", "end")
}

func findMethod(right, raise bool) method {
	return strM(func(st *state, s string, p []any) any {
		t := st.strArg("find", p[0])
		sub, off := st.subRange(s, p[1], p[2])
		i := int64(-1)
		if off >= 0 {
			var b int
			if right {
				b = strings.LastIndex(sub, t)
			} else {
				b = strings.Index(sub, t)
			}
			if b >= 0 {
				i = runeIndex(sub, b) + off
			}
		}
		if i < 0 && raise {
			st.fail(KindValue, "substring not found")
		}
		return i
	}, "sub", "start", "end")
}

func padMethod(f func(s string, w int, fill string) string) method {
	return strM(func(st *state, s string, p []any) any {
		w := int(st.intArg("pad", p[0]))
		fill := " "
		if p[1] != missing {
			fill = st.strArg("pad", p[1])
			if utf8.RuneCountInString(fill) != 1 {
				st.fail(KindType, "the fill character must be exactly one character long")
			}
		}
		st.checkLen(w)
		return f(s, w, fill)
	}, "width", "fillchar")
}

func init() {
	strMethods = map[string]method{
		"strip":  strM(func(st *state, s string, p []any) any { return pyStrip(s, orDefault(p[0], nil), true, true) }, "chars"),
		"lstrip": strM(func(st *state, s string, p []any) any { return pyStrip(s, orDefault(p[0], nil), true, false) }, "chars"),
		"rstrip": strM(func(st *state, s string, p []any) any { return pyStrip(s, orDefault(p[0], nil), false, true) }, "chars"),
		"split": strM(func(st *state, s string, p []any) any {
			return st.pySplit(s, orDefault(p[0], nil), int(st.intArg("split", orDefault(p[1], int64(-1)))), false)
		}, "sep", "maxsplit"),
		"rsplit": strM(func(st *state, s string, p []any) any {
			return st.pySplit(s, orDefault(p[0], nil), int(st.intArg("rsplit", orDefault(p[1], int64(-1)))), true)
		}, "sep", "maxsplit"),
		"splitlines": strM(func(st *state, s string, p []any) any {
			var out []any
			for _, l := range splitLines(s, truthy(orDefault(p[0], false))) {
				out = append(out, l)
			}
			return append([]any{}, out...)
		}, "keepends"),
		"startswith": affixMethod(false),
		"endswith":   affixMethod(true),
		"replace": strM(func(st *state, s string, p []any) any {
			return st.pyReplace(s, st.strArg("replace", p[0]), st.strArg("replace", p[1]), int(st.intArg("replace", orDefault(p[2], int64(-1)))))
		}, "old", "new", "count"),
		"upper":      strOnly(pyUpper),
		"lower":      strOnly(pyLower),
		"casefold":   strOnly(pyCasefold),
		"title":      strOnly(pyTitle),
		"capitalize": strOnly(pyCapitalize),
		"swapcase":   strOnly(pySwapcase),
		"find":       findMethod(false, false),
		"rfind":      findMethod(true, false),
		"index":      findMethod(false, true),
		"rindex":     findMethod(true, true),
		"count": strM(func(st *state, s string, p []any) any {
			sub, off := st.subRange(s, p[1], p[2])
			if off < 0 {
				return int64(0)
			}
			t := st.strArg("count", p[0])
			if t == "" {
				return int64(utf8.RuneCountInString(sub) + 1)
			}
			return int64(strings.Count(sub, t))
		}, "sub", "start", "end"),
		"join": func(st *state, self any, args []any, kw []kwarg) any {
			s, _ := asString(self)
			p := st.bind("join", args, kw, "iterable")
			var parts []string
			for _, it := range st.iterate(p[0]) {
				t, ok := asString(it)
				if !ok {
					st.fail(KindType, "sequence item %d: expected str instance, %s found", len(parts), typeName(it))
				}
				parts = append(parts, t)
			}
			r := strings.Join(parts, s)
			st.checkLen(len(r))
			return r
		},
		"format": func(st *state, self any, args []any, kw []kwarg) any {
			s, _ := asString(self)
			return st.strFormat(s, args, kw)
		},
		"isdigit":   strPred(allRunes(unicode.IsDigit)),
		"isdecimal": strPred(allRunes(func(r rune) bool { return unicode.Is(unicode.Nd, r) })),
		"isnumeric": strPred(allRunes(unicode.IsNumber)),
		"isalpha":   strPred(allRunes(unicode.IsLetter)),
		"isalnum":   strPred(allRunes(func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) })),
		"isspace":   strPred(allRunes(isPySpace)),
		"islower":   strPred(isLowerPy),
		"isupper":   strPred(isUpperPy),
		"istitle":   strPred(func(s string) bool { return s != "" && pyTitle(s) == s && strings.ToLower(s) != s }),
		"partition": strM(func(st *state, s string, p []any) any {
			sep := st.strArg("partition", p[0])
			if sep == "" {
				st.fail(KindValue, "empty separator")
			}
			if a, b, ok := strings.Cut(s, sep); ok {
				return Tuple{a, sep, b}
			}
			return Tuple{s, "", ""}
		}, "sep"),
		"rpartition": strM(func(st *state, s string, p []any) any {
			sep := st.strArg("rpartition", p[0])
			if sep == "" {
				st.fail(KindValue, "empty separator")
			}
			if i := strings.LastIndex(s, sep); i >= 0 {
				return Tuple{s[:i], sep, s[i+len(sep):]}
			}
			return Tuple{"", "", s}
		}, "sep"),
		"removeprefix": strM(func(st *state, s string, p []any) any { return strings.TrimPrefix(s, st.strArg("removeprefix", p[0])) }, "prefix"),
		"removesuffix": strM(func(st *state, s string, p []any) any { return strings.TrimSuffix(s, st.strArg("removesuffix", p[0])) }, "suffix"),
		"center":       padMethod(pyCenter),
		"ljust": padMethod(func(s string, w int, fill string) string {
			return s + strings.Repeat(fill, max(w-utf8.RuneCountInString(s), 0))
		}),
		"rjust": padMethod(func(s string, w int, fill string) string {
			return strings.Repeat(fill, max(w-utf8.RuneCountInString(s), 0)) + s
		}),
		"zfill": strM(func(st *state, s string, p []any) any {
			w := int(st.intArg("zfill", p[0]))
			st.checkLen(w)
			n := w - utf8.RuneCountInString(s)
			if n <= 0 {
				return s
			}
			sign := ""
			if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
				sign, s = s[:1], s[1:]
			}
			return sign + strings.Repeat("0", n) + s
		}, "width"),
		"expandtabs": strM(func(st *state, s string, p []any) any {
			ts := int(st.intArg("expandtabs", orDefault(p[0], int64(8))))
			var b strings.Builder
			col := 0
			for _, r := range s {
				switch r {
				case '\t':
					if ts > 0 {
						n := ts - col%ts
						st.checkLen(b.Len() + n)
						b.WriteString(strings.Repeat(" ", n))
						col += n
					}
				case '\n', '\r':
					b.WriteRune(r)
					col = 0
				default:
					b.WriteRune(r)
					col++
				}
				st.checkLen(b.Len())
			}
			return b.String()
		}, "tabsize"),
	}
	seqIndex := func(st *state, self any, args []any, kw []kwarg) any {
		p := st.bind("index", args, kw, "value", "start", "stop")
		items := st.iterate(self)
		for i, it := range items {
			if pyEq(it, p[0]) {
				return int64(i)
			}
		}
		st.fail(KindValue, "%s is not in list", pyRepr(p[0]))
		return nil
	}
	seqCount := func(st *state, self any, args []any, kw []kwarg) any {
		p := st.bind("count", args, kw, "value")
		n := int64(0)
		for _, it := range st.iterate(self) {
			if pyEq(it, p[0]) {
				n++
			}
		}
		return n
	}
	listMethods = map[string]method{
		"index": seqIndex,
		"count": seqCount,
		"copy":  func(st *state, self any, args []any, kw []kwarg) any { return slices.Clone(self.([]any)) },
	}
	tupleMethods = map[string]method{"index": seqIndex, "count": seqCount}
	dictMethods = map[string]method{
		"get": func(st *state, self any, args []any, kw []kwarg) any {
			if len(kw) > 0 {
				st.fail(KindType, "get() takes no keyword arguments")
			}
			if len(args) < 1 || len(args) > 2 {
				st.fail(KindType, "get expected 1 or 2 arguments, got %d", len(args))
			}
			if _, ok := hashKey(args[0]); !ok {
				st.fail(KindType, "unhashable type: '%s'", typeName(args[0]))
			}
			if v, ok := self.(*Dict).Get(args[0]); ok {
				return v
			}
			if len(args) == 2 {
				return args[1]
			}
			return nil
		},
		"items": func(st *state, self any, args []any, kw []kwarg) any {
			st.bind("items", args, kw)
			d := self.(*Dict)
			out := make([]any, d.Len())
			for i, k := range d.keys {
				out[i] = Tuple{k, d.vals[i]}
			}
			return &dictView{"dict_items", out}
		},
		"keys": func(st *state, self any, args []any, kw []kwarg) any {
			st.bind("keys", args, kw)
			return &dictView{"dict_keys", slices.Clone(self.(*Dict).keys)}
		},
		"values": func(st *state, self any, args []any, kw []kwarg) any {
			st.bind("values", args, kw)
			return &dictView{"dict_values", slices.Clone(self.(*Dict).vals)}
		},
		"copy": func(st *state, self any, args []any, kw []kwarg) any { return self.(*Dict).copy() },
	}
}

// loopContext is the loop variable of a for loop.
type loopContext struct {
	items   []any
	i       int
	depth0  int
	last    any
	changed bool
	recurse func(seq any) string // loop(items) of a recursive loop
}

func (l *loopContext) attr(name string) (any, bool) {
	n := len(l.items)
	switch name {
	case "index":
		return int64(l.i + 1), true
	case "index0":
		return int64(l.i), true
	case "revindex":
		return int64(n - l.i), true
	case "revindex0":
		return int64(n - l.i - 1), true
	case "first":
		return l.i == 0, true
	case "last":
		return l.i == n-1, true
	case "length":
		return int64(n), true
	case "depth":
		return int64(l.depth0 + 1), true
	case "depth0":
		return int64(l.depth0), true
	case "previtem":
		if l.i == 0 {
			return Undefined{hint: "there is no previous item"}, true
		}
		return l.items[l.i-1], true
	case "nextitem":
		if l.i+1 >= n {
			return Undefined{hint: "there is no next item"}, true
		}
		return l.items[l.i+1], true
	case "cycle":
		return &function{"cycle", func(st *state, args []any, kw []kwarg) any {
			if len(args) == 0 {
				st.fail(KindType, "no items for cycling given")
			}
			return args[l.i%len(args)]
		}}, true
	case "changed":
		return &function{"changed", func(st *state, args []any, kw []kwarg) any {
			v := Tuple(args)
			if l.changed && pyEq(l.last, v) {
				return false
			}
			l.last, l.changed = v, true
			return true
		}}, true
	}
	return nil, false
}
