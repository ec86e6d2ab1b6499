package grammar

import (
	"fmt"
	"math"
	"regexp/syntax"
	"strconv"
	"strings"
)

const maxBound = 1e15

type bound struct {
	set bool
	v   int64
	ex  bool
}

// bounds reads minimum/maximum/exclusive*; for integers a fractional bound
// is rounded inward, for numbers it is refused.
func (c *schemaCompiler) bounds(s *jv, path string, integer bool) (lo, hi bound, ok bool) {
	read := func(kw string, up bool) (bound, bool) {
		v := s.get(kw)
		if v == nil {
			return bound{}, true
		}
		if v.kind != 'n' {
			c.fail(path, kw, "must be a number")
			return bound{}, false
		}
		f, err := strconv.ParseFloat(string(v.num), 64)
		if err != nil || math.Abs(f) > maxBound {
			c.fail(path, kw, "bounds beyond ±1e15 are not supported")
			return bound{}, false
		}
		ex := strings.HasPrefix(kw, "exclusive")
		if f != math.Trunc(f) {
			if !integer {
				c.fail(path, kw, "a fractional bound on a number is not supported (integer bounds are)")
				return bound{}, false
			}
			if up {
				f = math.Floor(f)
			} else {
				f = math.Ceil(f)
			}
			ex = false
		}
		return bound{true, int64(f), ex}, true
	}
	mn, ok1 := read("minimum", false)
	emn, ok2 := read("exclusiveMinimum", false)
	mx, ok3 := read("maximum", true)
	emx, ok4 := read("exclusiveMaximum", true)
	if !(ok1 && ok2 && ok3 && ok4) {
		return lo, hi, false
	}
	lo, hi = mn, mx
	if emn.set && (!lo.set || emn.v >= lo.v) {
		lo = emn
	}
	if emx.set && (!hi.set || emx.v <= hi.v) {
		hi = emx
	}
	if integer { // exclusive integer bounds are inclusive ±1
		if lo.set && lo.ex {
			lo = bound{true, lo.v + 1, false}
		}
		if hi.set && hi.ex {
			hi = bound{true, hi.v - 1, false}
		}
	}
	return lo, hi, true
}

func (c *schemaCompiler) num(s *jv, path string, integer bool) []sym {
	lo, hi, ok := c.bounds(s, path, integer)
	if !ok {
		return nil
	}
	if !lo.set && !hi.set {
		if integer {
			return one(c.anyInteger())
		}
		return one(c.anyNumber())
	}
	var alts [][]sym
	if integer {
		if !hi.set || hi.v >= 0 {
			a := int64(0)
			if lo.set && lo.v > 0 {
				a = lo.v
			}
			h := int64(-1)
			if hi.set {
				h = hi.v
			}
			if h < 0 || a <= h {
				alts = append(alts, one(c.nat(a, h)))
			}
		}
		if !lo.set || lo.v < 0 {
			a := int64(1)
			if hi.set && hi.v < 0 {
				a = -hi.v
			}
			h := int64(-1)
			if lo.set {
				h = -lo.v
			}
			if h < 0 || a <= h {
				alts = append(alts, cat(lit("-"), one(c.nat(a, h))))
			}
		}
	} else {
		if !hi.set || hi.v >= 0 {
			l := bound{true, 0, false}
			if lo.set && lo.v >= 0 {
				l = lo
			}
			if a := c.nonneg(l, hi); a != nil {
				alts = append(alts, a)
			}
		}
		if !lo.set || lo.v < 0 {
			l := bound{true, 0, true}
			if hi.set && hi.v < 0 {
				l = bound{true, -hi.v, hi.ex}
			}
			h := bound{}
			if lo.set {
				h = bound{true, -lo.v, lo.ex}
			}
			if a := c.nonneg(l, h); a != nil {
				alts = append(alts, cat(lit("-"), a))
			}
		}
	}
	if len(alts) == 0 {
		return c.fail(path, "minimum", "no value lies between the bounds")
	}
	return one(c.b.alt("range", alts...))
}

// nonneg: decimals x ≥ 0 with lo ≤ x ≤ hi (exclusive where marked; hi may
// be unset), without exponent.
func (c *schemaCompiler) nonneg(lo, hi bound) []sym {
	b := c.b
	d := one(c.digit())
	frac := cat(lit("."), b.rep(d, 1, -1))
	nz := cat(lit("."), one(b.star(d)), one(byteSym('1', '9')), one(b.star(d)))
	var alts [][]sym
	il := lo.v
	if lo.ex {
		il++
	}
	ih := int64(-1)
	if hi.set {
		ih = hi.v
		if hi.ex {
			ih--
		}
	}
	if !hi.set || il <= ih { // plain integers
		alts = append(alts, one(c.nat(il, ih)))
	}
	fh := int64(-1) // n.f for n ≤ hi-1
	if hi.set {
		fh = hi.v - 1
	}
	if !hi.set || il <= fh {
		alts = append(alts, cat(one(c.nat(il, fh)), frac))
	}
	if lo.ex && (!hi.set || lo.v < hi.v) {
		alts = append(alts, cat(one(c.nat(lo.v, lo.v)), nz))
	}
	if len(alts) == 0 {
		return nil
	}
	return one(b.alt("nonneg", alts...))
}

// nat: decimal integers lo..hi without leading zeros (hi < 0: unbounded).
func (c *schemaCompiler) nat(lo, hi int64) sym {
	return c.memo(fmt.Sprint("nat", lo, ",", hi), func() sym {
		var alts [][]sym
		ls := strconv.FormatInt(lo, 10)
		if hi < 0 {
			top := strings.Repeat("9", len(ls))
			alts = append(alts, c.sameLen(ls, top)...)
			alts = append(alts, cat(one(byteSym('1', '9')), c.b.rep(one(c.digit()), len(ls), -1)))
		} else {
			hs := strconv.FormatInt(hi, 10)
			for k := len(ls); k <= len(hs); k++ {
				a, z := "1"+strings.Repeat("0", k-1), strings.Repeat("9", k)
				if k == 1 {
					a = "0"
				}
				if k == len(ls) {
					a = ls
				}
				if k == len(hs) {
					z = hs
				}
				alts = append(alts, c.sameLen(a, z)...)
			}
		}
		return c.b.alt("nat", alts...)
	})
}

// sameLen: digit strings of one length between a and z.
func (c *schemaCompiler) sameLen(a, z string) [][]sym {
	if a == "" {
		return [][]sym{nil}
	}
	n := len(a) - 1
	rest := func(x string) [][]sym {
		out := c.sameLen(x[1:], z[1:])
		return out
	}
	if a[0] == z[0] {
		var out [][]sym
		for _, s := range rest(a) {
			out = append(out, cat(lit(a[:1]), s))
		}
		return out
	}
	all := func(lo, hi byte) []sym { return cat(one(byteSym(lo, hi)), c.b.rep(one(c.digit()), n, n)) }
	loFull := strings.Trim(a[1:], "0") == ""
	hiFull := strings.Trim(z[1:], "9") == ""
	var out [][]sym
	l, h := a[0], z[0]
	if !loFull {
		for _, s := range c.sameLen(a[1:], strings.Repeat("9", n)) {
			out = append(out, cat(lit(a[:1]), s))
		}
		l++
	}
	if !hiFull {
		h--
	}
	if l <= h {
		out = append(out, all(l, h))
	}
	if !hiFull {
		for _, s := range c.sameLen(strings.Repeat("0", n), z[1:]) {
			out = append(out, cat(lit(z[:1]), s))
		}
	}
	return out
}

// format: the string bodies of date, time, date-time, uuid (as ajv-formats
// checks them in full mode: real days of month, leap years).
func (c *schemaCompiler) format(f string) []sym {
	b := c.b
	d := one(c.digit())
	two := func(s string) []sym { return lit(s) }
	_ = two
	date := func() sym {
		return c.memo("date", func() sym {
			year := cat(d, d, d, d)
			m := func(ms ...string) sym {
				var a [][]sym
				for _, x := range ms {
					a = append(a, lit(x))
				}
				return b.alt("month", a...)
			}
			day28 := b.alt("day", cat(lit("0"), one(byteSym('1', '9'))), cat(one(byteSym('1', '1')), d), cat(lit("2"), one(byteSym('0', '8'))))
			all := m("01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12")
			notFeb := m("01", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12")
			long := m("01", "03", "05", "07", "08", "10", "12")
			md := b.alt("monthday",
				cat(one(all), lit("-"), one(day28)),
				cat(one(notFeb), lit("-"), one(b.alt("d", lit("29"), lit("30")))),
				cat(one(long), lit("-31")))
			// leap years: YY00 with YY divisible by 4, or YY(nonzero multiple of 4)
			mul4 := b.alt("mul4", cat(lit("0"), one(b.class([]cpRange{{'0', '0'}, {'4', '4'}, {'8', '8'}}))),
				cat(one(b.class([]cpRange{{'2', '2'}, {'4', '4'}, {'6', '6'}, {'8', '8'}})), one(b.class([]cpRange{{'0', '0'}, {'4', '4'}, {'8', '8'}}))),
				cat(one(b.class([]cpRange{{'1', '1'}, {'3', '3'}, {'5', '5'}, {'7', '7'}, {'9', '9'}})), one(b.class([]cpRange{{'2', '2'}, {'6', '6'}}))))
			nz4 := b.alt("nz4", cat(lit("0"), one(b.class([]cpRange{{'4', '4'}, {'8', '8'}}))),
				cat(one(b.class([]cpRange{{'2', '2'}, {'4', '4'}, {'6', '6'}, {'8', '8'}})), one(b.class([]cpRange{{'0', '0'}, {'4', '4'}, {'8', '8'}}))),
				cat(one(b.class([]cpRange{{'1', '1'}, {'3', '3'}, {'5', '5'}, {'7', '7'}, {'9', '9'}})), one(b.class([]cpRange{{'2', '2'}, {'6', '6'}}))))
			leap := b.alt("leap", cat(one(mul4), lit("00")), cat(d, d, one(nz4)))
			return b.alt("date", cat(year, lit("-"), one(md)), cat(one(leap), lit("-02-29")))
		})
	}
	tm := func() sym {
		return c.memo("time", func() sym {
			hh := b.alt("hh", cat(one(byteSym('0', '1')), d), cat(lit("2"), one(byteSym('0', '3'))))
			mm := b.alt("mm", cat(one(byteSym('0', '5')), d))
			frac := b.opt(cat(lit("."), b.rep(d, 1, -1)))
			tz := b.alt("tz", lit("Z"), cat(one(b.class([]cpRange{{'+', '+'}, {'-', '-'}})), one(hh), lit(":"), one(mm)))
			return b.alt("time", cat(one(hh), lit(":"), one(mm), lit(":"), one(mm), []sym{frac, tz}))
		})
	}
	switch f {
	case "date":
		return one(date())
	case "time":
		return one(tm())
	case "date-time":
		return cat(one(date()), lit("T"), one(tm()))
	}
	hex := b.class([]cpRange{{'0', '9'}, {'a', 'f'}, {'A', 'F'}})
	h := func(n int) []sym { return b.rep(one(hex), n, n) }
	return cat(h(8), lit("-"), h(4), lit("-"), h(4), lit("-"), h(4), lit("-"), h(12))
}

// pattern: the JSON string body (escaped as JSON) of the strings an
// ECMA-262 regular expression matches somewhere (so unanchored ends allow
// any text).
func (c *schemaCompiler) pattern(p string) ([]sym, error) {
	if len(p) > 4096 {
		return nil, fmt.Errorf("over 4096 bytes")
	}
	if strings.Contains(p, `\S`) || strings.Contains(p, `\b`) || strings.Contains(p, `\B`) {
		return nil, fmt.Errorf(`\S, \b and \B are not supported (their ECMA-262 and RE2 meanings differ)`)
	}
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return nil, err
	}
	re = re.Simplify()
	var parts []*syntax.Regexp
	if re.Op == syntax.OpConcat {
		parts = re.Sub
	} else {
		parts = []*syntax.Regexp{re}
	}
	any := one(c.b.star(one(c.strChar())))
	var pre, post []sym = any, any
	if len(parts) > 0 && parts[0].Op == syntax.OpBeginText {
		pre, parts = nil, parts[1:]
	}
	if n := len(parts); n > 0 && parts[n-1].Op == syntax.OpEndText {
		post, parts = nil, parts[:n-1]
	}
	var body []sym
	for _, s := range parts {
		x, err := c.re(s, 0)
		if err != nil {
			return nil, err
		}
		body = append(body, x...)
	}
	if c.b.err != nil {
		return nil, c.b.err
	}
	return cat(pre, body, post), nil
}

func (c *schemaCompiler) re(r *syntax.Regexp, depth int) ([]sym, error) {
	if depth > 100 {
		return nil, fmt.Errorf("nested deeper than 100")
	}
	b := c.b
	if r.Flags&syntax.FoldCase != 0 && (r.Op == syntax.OpLiteral || r.Op == syntax.OpCharClass) {
		return nil, fmt.Errorf("case-insensitive matching is not supported")
	}
	sub := func(i int) ([]sym, error) { return c.re(r.Sub[i], depth+1) }
	switch r.Op {
	case syntax.OpEmptyMatch:
		return nil, nil
	case syntax.OpLiteral:
		var out []sym
		for _, ch := range r.Rune {
			out = append(out, c.jsonClass([]cpRange{{ch, ch}}))
		}
		return out, nil
	case syntax.OpCharClass:
		var rs []cpRange
		for i := 0; i+1 < len(r.Rune); i += 2 {
			rs = append(rs, cpRange{r.Rune[i], r.Rune[i+1]})
		}
		if len(normalize(rs)) == 0 {
			return nil, fmt.Errorf("empty character class")
		}
		return one(c.jsonClass(rs)), nil
	case syntax.OpAnyCharNotNL: // ECMA-262 '.': not a line terminator
		return one(c.jsonClass(negate(normalize([]cpRange{{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}})))), nil
	case syntax.OpAnyChar:
		return one(c.strChar()), nil
	case syntax.OpCapture:
		return sub(0)
	case syntax.OpConcat:
		var out []sym
		for i := range r.Sub {
			x, err := sub(i)
			if err != nil {
				return nil, err
			}
			out = append(out, x...)
		}
		return out, nil
	case syntax.OpAlternate:
		var alts [][]sym
		for i := range r.Sub {
			x, err := sub(i)
			if err != nil {
				return nil, err
			}
			alts = append(alts, x)
		}
		return one(b.alt("re", alts...)), nil
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		x, err := sub(0)
		if err != nil {
			return nil, err
		}
		switch r.Op {
		case syntax.OpStar:
			return one(b.star(x)), nil
		case syntax.OpPlus:
			return b.rep(x, 1, -1), nil
		}
		return one(b.opt(x)), nil
	case syntax.OpRepeat:
		x, err := sub(0)
		if err != nil {
			return nil, err
		}
		if r.Min > maxRepeat || r.Max > maxRepeat {
			return nil, fmt.Errorf("repetition over %d", maxRepeat)
		}
		return b.rep(x, r.Min, r.Max), nil
	}
	return nil, fmt.Errorf("%s is not supported here (anchors only at the ends, no word boundaries)", r)
}

// jsonClass: one code point of rs as it appears inside a JSON string.
func (c *schemaCompiler) jsonClass(rs []cpRange) sym {
	b := c.b
	rs = normalize(rs)
	key := fmt.Sprint("jc", rs)
	return c.memo(key, func() sym {
		var raw []cpRange
		var alts [][]sym
		for _, r := range rs {
			for _, cut := range []cpRange{{0x20, 0x21}, {0x23, 0x5B}, {0x5D, 0x10FFFF}} {
				lo, hi := max(r.lo, cut.lo), min(r.hi, cut.hi)
				if lo <= hi {
					raw = append(raw, cpRange{lo, hi})
				}
			}
			for ch := r.lo; ch <= r.hi && ch < 0x20; ch++ {
				alts = append(alts, lit(fmt.Sprintf(`\u%04x`, ch)))
			}
			if r.lo <= '"' && '"' <= r.hi {
				alts = append(alts, lit(`\"`))
			}
			if r.lo <= '\\' && '\\' <= r.hi {
				alts = append(alts, lit(`\\`))
			}
		}
		if len(raw) > 0 {
			alts = append(alts, one(b.class(raw)))
		}
		return b.alt("jc", alts...)
	})
}
