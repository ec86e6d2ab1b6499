package jinja

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Python's two string formatting languages: printf-style "%" and str.format
// (which jinja2's sandbox runs through its own getattr and getitem).

// percentFormat is Python's s % args.
func (st *state) percentFormat(s string, args any) string {
	// A tuple gives the arguments; anything else is the one argument, and
	// when it has items (dict, list, Undefined: Python's PyMapping_Check)
	// unused arguments are no error.
	var pos []any
	mapping, _ := args.(*Dict)
	itemsLike := false
	switch a := args.(type) {
	case Tuple:
		pos = a
	case *Dict, []any, Undefined:
		pos, itemsLike = []any{a}, true
	default:
		pos = []any{a}
	}
	next := 0
	take := func() any {
		if next >= len(pos) {
			st.fail(KindType, "not enough arguments for format string")
		}
		next++
		return pos[next-1]
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		i++
		if i >= len(s) {
			st.fail(KindValue, "incomplete format")
		}
		var v any
		haveV := false
		if s[i] == '(' {
			j := strings.IndexByte(s[i:], ')')
			if j < 0 || mapping == nil {
				st.fail(KindType, "format requires a mapping")
			}
			key := s[i+1 : i+j]
			val, ok := mapping.Get(key)
			if !ok {
				st.fail("KeyError", "%s", pyRepr(key))
			}
			v, haveV = val, true
			i += j + 1
		}
		var sp fmtSpec
		sp.align = '>'
		for ; i < len(s) && strings.IndexByte("-+ #0", s[i]) >= 0; i++ {
			switch s[i] {
			case '-':
				sp.align = '<'
			case '+', ' ':
				sp.sign = s[i]
			case '#':
				sp.alt = true
			case '0':
				sp.zero = true
			}
		}
		num := func() int {
			if i < len(s) && s[i] == '*' {
				i++
				return int(st.intArg("format", take()))
			}
			n := 0
			for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
				n = n*10 + int(s[i]-'0')
			}
			return n
		}
		sp.width = num()
		sp.prec = -1
		if i < len(s) && s[i] == '.' {
			i++
			sp.prec = num()
		}
		for i < len(s) && (s[i] == 'h' || s[i] == 'l' || s[i] == 'L') {
			i++
		}
		if i >= len(s) {
			st.fail(KindValue, "incomplete format")
		}
		c := s[i]
		if c == '%' {
			b.WriteByte('%')
			continue
		}
		if !haveV {
			v = take()
		}
		sp.kind = c
		switch c {
		case 's':
			b.WriteString(st.pad(truncRunes(pyStr(v), sp.prec), sp, false))
		case 'r', 'a':
			b.WriteString(st.pad(truncRunes(pyRepr(v), sp.prec), sp, false))
		case 'd', 'i', 'u', 'x', 'X', 'o', 'e', 'E', 'f', 'F', 'g', 'G':
			if u, ok := v.(Undefined); ok { // its __int__ and __float__ raise
				st.undefinedError(u)
			}
			if _, _, _, ok := number(v); !ok {
				st.fail(KindType, "%%%c format: a real number is required, not %s", c, typeName(v))
			}
			if c == 'i' || c == 'u' {
				sp.kind = 'd'
			}
			if sp.zero && sp.align == '>' {
				sp.fill, sp.align = '0', '='
			}
			b.WriteString(st.formatNumber(v, sp))
		case 'c':
			if _, i, isInt, ok := number(v); ok && isInt {
				b.WriteString(st.pad(string(rune(i)), sp, false))
			} else {
				b.WriteString(st.pad(st.strArg("%c", v), sp, false))
			}
		default:
			st.fail(KindValue, "unsupported format character '%c'", c)
		}
		st.checkLen(b.Len())
	}
	if !itemsLike && next < len(pos) {
		st.fail(KindType, "not all arguments converted during string formatting")
	}
	return b.String()
}

func truncRunes(s string, n int) string {
	if n < 0 || utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

type fmtSpec struct {
	fill  rune
	align byte // '<', '>', '^', '=' (after the sign)
	sign  byte // '+', ' ', '-' or 0
	alt   bool
	zero  bool
	width int
	comma byte
	prec  int // -1: none
	kind  byte
}

// pad aligns s in the spec's width.
func (st *state) pad(s string, sp fmtSpec, numeric bool) string {
	st.checkLen(sp.width)
	n := utf8.RuneCountInString(s)
	if sp.width <= n {
		return s
	}
	fill := sp.fill
	if fill == 0 {
		fill = ' '
	}
	gap := sp.width - n
	f := func(k int) string { return strings.Repeat(string(fill), k) }
	switch sp.align {
	case '<':
		return s + f(gap)
	case '^':
		return f(gap/2) + s + f(gap-gap/2)
	case '=':
		if numeric && s != "" && strings.IndexByte("+- ", s[0]) >= 0 {
			return s[:1] + f(gap) + s[1:]
		}
	}
	return f(gap) + s
}

// formatNumber formats an int or float per a spec of either language.
func (st *state) formatNumber(v any, sp fmtSpec) string {
	st.checkLen(sp.prec)
	f, i, isInt, _ := number(v)
	kind := sp.kind
	if isInt && strings.IndexByte("eEfFgG%", kind) >= 0 {
		isInt = false
	}
	var body string
	neg := false
	if isInt {
		neg = i < 0
		u := uint64(i)
		if neg {
			u = uint64(-i)
		}
		switch kind {
		case 'x', 'X':
			body = strconv.FormatUint(u, 16)
			if sp.alt {
				body = "0x" + body
			}
			if kind == 'X' {
				body = strings.ToUpper(body)
			}
		case 'o':
			body = strconv.FormatUint(u, 8)
			if sp.alt {
				body = "0o" + body
			}
		case 'b':
			body = strconv.FormatUint(u, 2)
		default:
			body = strconv.FormatUint(u, 10)
			if sp.comma != 0 {
				body = groupDigits(body, sp.comma)
			}
		}
	} else {
		if kind == 'd' || kind == 'x' || kind == 'X' || kind == 'o' {
			// %d of a float truncates, as Python's printf-style formatting does
			return st.formatNumber(int64(math.Trunc(f)), sp)
		}
		neg = math.Signbit(f) && !math.IsNaN(f)
		a := math.Abs(f)
		prec := sp.prec
		switch kind {
		case 'f', 'F':
			if prec < 0 {
				prec = 6
			}
			body = strconv.FormatFloat(a, 'f', prec, 64)
		case 'e', 'E':
			if prec < 0 {
				prec = 6
			}
			body = pyExp(strconv.FormatFloat(a, 'e', prec, 64))
		case 'g', 'G':
			if prec < 0 {
				prec = 6
			}
			body = pyGeneral(a, max(prec, 1), sp.alt)
		case '%':
			if prec < 0 {
				prec = 6
			}
			body = strconv.FormatFloat(a*100, 'f', prec, 64) + "%"
		default: // no type: repr, or general format when a precision is given
			if prec >= 0 {
				body = pyGeneral(a, max(prec, 1), false)
				if !strings.ContainsAny(body, ".e") && !math.IsInf(a, 0) && !math.IsNaN(a) {
					body += ".0"
				}
			} else {
				body = floatRepr(a)
			}
		}
		if math.IsInf(a, 0) {
			body = "inf"
		} else if math.IsNaN(a) {
			body = "nan"
		}
		if kind == 'E' || kind == 'G' || kind == 'F' {
			body = strings.ToUpper(body)
		}
		if sp.comma != 0 {
			ip, fp, _ := strings.Cut(body, ".")
			if fp != "" {
				fp = "." + fp
			}
			body = groupDigits(ip, sp.comma) + fp
		}
	}
	switch {
	case neg:
		body = "-" + body
	case sp.sign == '+':
		body = "+" + body
	case sp.sign == ' ':
		body = " " + body
	}
	return st.pad(body, sp, true)
}

func groupDigits(s string, sep byte) string {
	var b strings.Builder
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(sep)
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// pyExp turns Go's exponent (e+7) into Python's, at least two digits (e+07).
func pyExp(s string) string {
	m, e, ok := strings.Cut(s, "e")
	if !ok {
		return s
	}
	sign, d := e[:1], e[1:]
	if len(d) < 2 {
		d = "0" + d
	}
	return m + "e" + sign + d
}

// pyGeneral is Python's 'g' formatting with precision p.
func pyGeneral(a float64, p int, alt bool) string {
	if a == 0 {
		if alt {
			return "0." + strings.Repeat("0", p-1)
		}
		return "0"
	}
	e := strconv.FormatFloat(a, 'e', p-1, 64)
	_, es, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(es)
	var s string
	if exp < -4 || exp >= p {
		s = pyExp(e)
		if !alt {
			m, x, _ := strings.Cut(s, "e")
			if strings.Contains(m, ".") {
				m = strings.TrimRight(strings.TrimRight(m, "0"), ".")
			}
			s = m + "e" + x
		}
	} else {
		s = strconv.FormatFloat(a, 'f', max(p-1-exp, 0), 64)
		if !alt && strings.Contains(s, ".") {
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		}
	}
	return s
}

// strFormat is str.format(*args, **kwargs).
func (st *state) strFormat(s string, args []any, kw []kwarg) string {
	var b strings.Builder
	auto := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '}' {
			if i+1 < len(s) && s[i+1] == '}' {
				b.WriteByte('}')
				i++
				continue
			}
			st.fail(KindValue, "single '}' encountered in format string")
		}
		if c != '{' {
			b.WriteByte(c)
			continue
		}
		if i+1 < len(s) && s[i+1] == '{' {
			b.WriteByte('{')
			i++
			continue
		}
		// find the matching '}' (a spec may hold one nested {...})
		depth, j := 1, i+1
		for ; j < len(s) && depth > 0; j++ {
			switch s[j] {
			case '{':
				depth++
			case '}':
				depth--
			}
		}
		if depth != 0 {
			st.fail(KindValue, "expected '}' before end of string")
		}
		field := s[i+1 : j-1]
		i = j - 1
		spec := ""
		if k := strings.IndexByte(field, ':'); k >= 0 {
			field, spec = field[:k], field[k+1:]
		}
		conv := byte(0)
		if k := strings.IndexByte(field, '!'); k >= 0 {
			if k+2 != len(field) {
				st.fail(KindValue, "expected ':' after conversion specifier")
			}
			field, conv = field[:k], field[k+1]
		}
		if strings.Contains(spec, "{") {
			spec = st.strFormat(spec, args, kw)
		}
		// the argument: a number, a name or nothing, then .attr and [key] steps
		end := strings.IndexAny(field, ".[")
		if end < 0 {
			end = len(field)
		}
		head := field[:end]
		var v any
		switch {
		case head == "":
			if auto >= len(args) {
				st.fail("IndexError", "Replacement index %d out of range for positional args tuple", auto)
			}
			v = args[auto]
			auto++
		case head[0] >= '0' && head[0] <= '9':
			n, err := strconv.Atoi(head)
			if err != nil || n >= len(args) {
				st.fail("IndexError", "Replacement index %s out of range for positional args tuple", head)
			}
			v = args[n]
		default:
			found := false
			for _, k := range kw {
				if k.name == head {
					v, found = k.val, true
				}
			}
			if !found {
				st.fail("KeyError", "'%s'", head)
			}
		}
		for rest := field[end:]; rest != ""; {
			if rest[0] == '.' {
				k := strings.IndexAny(rest[1:], ".[")
				if k < 0 {
					k = len(rest) - 1
				}
				v = st.getattr(v, rest[1:1+k])
				rest = rest[1+k:]
				continue
			}
			k := strings.IndexByte(rest, ']')
			if k < 0 {
				st.fail(KindValue, "missing ']' in format string")
			}
			key := rest[1:k]
			var kv any = key
			if n, err := strconv.ParseInt(key, 10, 64); err == nil {
				kv = n
			}
			v = st.getitem(v, kv)
			rest = rest[k+1:]
		}
		switch conv {
		case 0:
		case 's':
			v = pyStr(v)
		case 'r', 'a':
			v = pyRepr(v)
		default:
			st.fail(KindValue, "unknown conversion specifier %c", conv)
		}
		b.WriteString(st.formatValue(v, spec))
		st.checkLen(b.Len())
	}
	return b.String()
}

// formatValue is Python's format(v, spec).
func (st *state) formatValue(v any, spec string) string {
	if spec == "" {
		return pyStr(v)
	}
	sp := fmtSpec{prec: -1}
	r := []rune(spec)
	k := 0
	isAlign := func(c rune) bool { return c == '<' || c == '>' || c == '^' || c == '=' }
	if len(r) >= 2 && isAlign(r[1]) {
		sp.fill, sp.align, k = r[0], byte(r[1]), 2
	} else if len(r) >= 1 && isAlign(r[0]) {
		sp.align, k = byte(r[0]), 1
	}
	if k < len(r) && (r[k] == '+' || r[k] == '-' || r[k] == ' ') {
		sp.sign = byte(r[k])
		k++
	}
	if k < len(r) && r[k] == '#' {
		sp.alt = true
		k++
	}
	if k < len(r) && r[k] == '0' {
		sp.zero = true
		k++
	}
	for ; k < len(r) && r[k] >= '0' && r[k] <= '9'; k++ {
		sp.width = sp.width*10 + int(r[k]-'0')
	}
	if k < len(r) && (r[k] == ',' || r[k] == '_') {
		sp.comma = byte(r[k])
		k++
	}
	if k < len(r) && r[k] == '.' {
		k++
		sp.prec = 0
		for ; k < len(r) && r[k] >= '0' && r[k] <= '9'; k++ {
			sp.prec = sp.prec*10 + int(r[k]-'0')
		}
	}
	if k < len(r) {
		sp.kind = byte(r[k])
		k++
	}
	if k != len(r) {
		st.fail(KindValue, "invalid format specifier")
	}
	if _, _, _, ok := number(v); ok {
		if _, isBool := v.(bool); isBool && sp.kind == 0 {
			v = pyStr(v)
		} else {
			if sp.align == 0 {
				sp.align = '>'
				if sp.zero {
					sp.fill, sp.align = '0', '='
				}
			}
			if sp.kind == 's' {
				st.fail(KindValue, "unknown format code 's' for object of type '%s'", typeName(v))
			}
			return st.formatNumber(v, sp)
		}
	}
	s, ok := asString(v)
	if !ok {
		st.fail(KindType, "unsupported format string passed to %s.__format__", typeName(v))
	}
	if sp.kind != 0 && sp.kind != 's' {
		st.fail(KindValue, "unknown format code '%c' for object of type 'str'", sp.kind)
	}
	if sp.align == 0 {
		sp.align = '<'
	}
	return st.pad(truncRunes(s, sp.prec), sp, false)
}
