package jinja

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The functions transformers adds to jinja2's environment (chat_template_utils.py).

// raiseException is raise_exception(message): jinja2's TemplateError.
func raiseException(st *state, args []any, kw []kwarg) any {
	p := st.bind("raise_exception", args, kw, "message")
	panic(&Error{Kind: KindTemplate, Msg: pyStr(orDefault(p[0], "")), pos: st.pos})
}

// strftimeNow is strftime_now(format): datetime.now().strftime(format), the
// clock being Options.Now.
func strftimeNow(st *state, args []any, kw []kwarg) any {
	p := st.bind("strftime_now", args, kw, "format")
	return strftime(st.now, st.strArg("strftime_now", p[0]))
}

// strftime formats t as C's strftime does in the C locale (with glibc's "-"
// flag that drops the padding).
func strftime(t time.Time, f string) string {
	days := []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' || i+1 >= len(f) {
			b.WriteByte(f[i])
			continue
		}
		i++
		pad := true
		if f[i] == '-' && i+1 < len(f) {
			pad = false
			i++
		}
		num := func(v, width int) {
			s := strconv.Itoa(v)
			if pad {
				s = strings.Repeat("0", max(width-len(s), 0)) + s
			}
			b.WriteString(s)
		}
		hour12 := t.Hour() % 12
		if hour12 == 0 {
			hour12 = 12
		}
		switch f[i] {
		case 'a':
			b.WriteString(days[t.Weekday()][:3])
		case 'A':
			b.WriteString(days[t.Weekday()])
		case 'b', 'h':
			b.WriteString(t.Month().String()[:3])
		case 'B':
			b.WriteString(t.Month().String())
		case 'd':
			num(t.Day(), 2)
		case 'e':
			s := strconv.Itoa(t.Day())
			if pad && len(s) < 2 {
				s = " " + s
			}
			b.WriteString(s)
		case 'm':
			num(int(t.Month()), 2)
		case 'Y':
			num(t.Year(), 1)
		case 'y':
			num(t.Year()%100, 2)
		case 'C':
			num(t.Year()/100, 2)
		case 'H':
			num(t.Hour(), 2)
		case 'I':
			num(hour12, 2)
		case 'M':
			num(t.Minute(), 2)
		case 'S':
			num(t.Second(), 2)
		case 'f':
			num(t.Nanosecond()/1000, 6)
		case 'j':
			num(t.YearDay(), 3)
		case 'p':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'w':
			num(int(t.Weekday()), 1)
		case 'u':
			num((int(t.Weekday())+6)%7+1, 1)
		case 'D', 'x':
			b.WriteString(strftime(t, "%m/%d/%y"))
		case 'F':
			b.WriteString(strftime(t, "%Y-%m-%d"))
		case 'T', 'X':
			b.WriteString(strftime(t, "%H:%M:%S"))
		case 'R':
			b.WriteString(strftime(t, "%H:%M"))
		case 'c':
			b.WriteString(strftime(t, "%a %b %e %H:%M:%S %Y"))
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'Z', 'z': // a naive datetime has no zone
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(f[i])
		}
	}
	return b.String()
}

// filterToJSON is transformers' tojson: json.dumps(x, ensure_ascii=False,
// indent=None, separators=None, sort_keys=False), which (unlike jinja2's own
// tojson) escapes nothing for HTML.
func filterToJSON(st *state, args []any, kw []kwarg) any {
	p := st.bind("tojson", args, kw, "x", "ensure_ascii", "indent", "separators", "sort_keys")
	e := jsonEncoder{st: st, ascii: truthy(orDefault(p[1], false)), sortKeys: truthy(orDefault(p[4], false))}
	e.item, e.key = ", ", ": "
	switch ind := orDefault(p[2], nil).(type) {
	case nil:
	case string:
		e.indent, e.indented, e.item = ind, true, ","
	default:
		n := max(st.intArg("tojson", ind), 0)
		st.checkLen(int(min(n, int64(st.maxOut)+1)))
		e.indent, e.indented, e.item = strings.Repeat(" ", int(n)), true, ","
	}
	if sep := orDefault(p[3], nil); sep != nil {
		parts := st.iterate(sep)
		if len(parts) != 2 {
			st.fail(KindValue, "separators must be an (item_separator, key_separator) pair")
		}
		e.item, e.key = st.strArg("tojson", parts[0]), st.strArg("tojson", parts[1])
	}
	e.encode(p[0], 0)
	return e.b.String()
}

type jsonEncoder struct {
	st        *state
	b         strings.Builder
	ascii     bool
	sortKeys  bool
	indented  bool
	indent    string
	item, key string
}

func (e *jsonEncoder) newline(level int) {
	if e.indented {
		e.b.WriteByte('\n')
		e.b.WriteString(strings.Repeat(e.indent, level))
	}
}

func (e *jsonEncoder) encode(v any, level int) {
	if level > maxValueDepth {
		e.st.fail(KindValue, "value nested too deeply for tojson")
	}
	e.st.checkLen(e.b.Len())
	switch x := v.(type) {
	case nil:
		e.b.WriteString("null")
	case bool:
		e.b.WriteString(strconv.FormatBool(x))
	case int64:
		e.b.WriteString(strconv.FormatInt(x, 10))
	case bigInt:
		e.b.WriteString(string(x))
	case float64:
		e.b.WriteString(jsonFloat(x))
	case string:
		e.str(x)
	case Markup:
		e.str(string(x))
	case []any:
		e.list(x, level)
	case Tuple:
		e.list(x, level)
	case *Dict:
		if x.Len() == 0 {
			e.b.WriteString("{}")
			return
		}
		order := make([]int, x.Len())
		for i := range order {
			order[i] = i
		}
		if e.sortKeys {
			keys := make([]any, len(order))
			for i := range order {
				keys[i] = i
			}
			e.st.sortValues(keys, func(k any) any { return x.keys[k.(int)] }, false)
			for i, k := range keys {
				order[i] = k.(int)
			}
		}
		e.b.WriteByte('{')
		for n, i := range order {
			if n > 0 {
				e.b.WriteString(e.item)
			}
			e.newline(level + 1)
			e.str(e.keyString(x.keys[i]))
			e.b.WriteString(e.key)
			e.encode(x.vals[i], level+1)
		}
		e.newline(level)
		e.b.WriteByte('}')
	default:
		e.st.fail(KindType, "Object of type %s is not JSON serializable", typeName(v))
	}
}

func (e *jsonEncoder) keyString(k any) string {
	switch x := k.(type) {
	case string:
		return x
	case Markup:
		return string(x)
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return jsonFloat(x)
	}
	e.st.fail(KindType, "keys must be str, int, float, bool or None, not %s", typeName(k))
	return ""
}

func (e *jsonEncoder) list(items []any, level int) {
	if len(items) == 0 {
		e.b.WriteString("[]")
		return
	}
	e.b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			e.b.WriteString(e.item)
		}
		e.newline(level + 1)
		e.encode(it, level+1)
	}
	e.newline(level)
	e.b.WriteByte(']')
}

func (e *jsonEncoder) str(s string) {
	e.b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			e.b.WriteString(`\"`)
		case '\\':
			e.b.WriteString(`\\`)
		case '\n':
			e.b.WriteString(`\n`)
		case '\r':
			e.b.WriteString(`\r`)
		case '\t':
			e.b.WriteString(`\t`)
		case '\b':
			e.b.WriteString(`\b`)
		case '\f':
			e.b.WriteString(`\f`)
		default:
			switch {
			case r < 0x20 || e.ascii && r == 0x7f:
				fmt.Fprintf(&e.b, `\u%04x`, r)
			case e.ascii && r > 0x7f:
				if r > 0xffff {
					r -= 0x10000
					fmt.Fprintf(&e.b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
				} else {
					fmt.Fprintf(&e.b, `\u%04x`, r)
				}
			default:
				e.b.WriteRune(r)
			}
		}
	}
	e.b.WriteByte('"')
}

// jsonFloat is json.dumps of a float: repr, with NaN and Infinity spelled as JavaScript does.
func jsonFloat(f float64) string {
	switch s := floatRepr(f); s {
	case "nan":
		return "NaN"
	case "inf":
		return "Infinity"
	case "-inf":
		return "-Infinity"
	default:
		return s
	}
}
