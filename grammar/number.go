package grammar

import (
	"fmt"
	"regexp/syntax"
	"strconv"
	"strings"
)

const (
	maxBoundInt  = 1_000_000_000_000_000 // 1e15: bounds beyond ±1e15 are refused
	maxBoundFrac = 40                    // digits after the point in a bound
)

// dec is an exact decimal ±ip.fp: fp holds the digits after the point,
// without trailing zeros; zero is never negative.
type dec struct {
	neg bool
	ip  int64
	fp  string
}

// parseDec reads a JSON number exactly (no float rounding: 0.1 is 0.1).
func parseDec(num string) (dec, error) {
	s := num
	var d dec
	if strings.HasPrefix(s, "-") {
		d.neg, s = true, s[1:]
	}
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e > 64 || e < -64 {
			return dec{}, fmt.Errorf("exponent out of range")
		}
		mant, exp = s[:i], e
	}
	ip, fp, _ := strings.Cut(mant, ".")
	digits := ip + fp
	point := len(ip) + exp // the point sits after digits[:point]
	if point < 0 {
		digits, point = strings.Repeat("0", -point)+digits, 0
	}
	if point > len(digits) {
		digits += strings.Repeat("0", point-len(digits))
	}
	is, fs := strings.TrimLeft(digits[:point], "0"), strings.TrimRight(digits[point:], "0")
	if len(is) > 16 {
		return dec{}, fmt.Errorf("bounds beyond ±1e15 are not supported")
	}
	if len(fs) > maxBoundFrac {
		return dec{}, fmt.Errorf("bounds with more than %d digits after the point are not supported", maxBoundFrac)
	}
	if is != "" {
		v, err := strconv.ParseInt(is, 10, 64)
		if err != nil || v > maxBoundInt {
			return dec{}, fmt.Errorf("bounds beyond ±1e15 are not supported")
		}
		d.ip = v
	}
	d.fp = fs
	if d.ip == 0 && d.fp == "" {
		d.neg = false
	}
	return d, nil
}

func (d dec) negate() dec {
	if d.ip != 0 || d.fp != "" {
		d.neg = !d.neg
	}
	return d
}

// cmpDec compares a and b: -1, 0 or 1.
func cmpDec(a, b dec) int {
	if a.neg != b.neg {
		if a.neg {
			return -1
		}
		return 1
	}
	sign := 1
	if a.neg {
		sign = -1
	}
	switch {
	case a.ip < b.ip:
		return -sign
	case a.ip > b.ip:
		return sign
	}
	n := max(len(a.fp), len(b.fp))
	af := a.fp + strings.Repeat("0", n-len(a.fp))
	bf := b.fp + strings.Repeat("0", n-len(b.fp))
	return sign * strings.Compare(af, bf)
}

// floor and ceil of d, as integers.
func (d dec) floor() int64 {
	if d.neg {
		if d.fp != "" {
			return -d.ip - 1
		}
		return -d.ip
	}
	return d.ip
}

func (d dec) ceil() int64 {
	if d.neg {
		return -d.ip
	}
	if d.fp != "" {
		return d.ip + 1
	}
	return d.ip
}

type bound struct {
	set bool
	v   dec
	ex  bool
}

// bounds reads minimum/maximum/exclusive* exactly (the tighter of minimum
// and exclusiveMinimum, and of maximum and exclusiveMaximum).
func (c *schemaCompiler) bounds(s *jv, path string) (lo, hi bound, ok bool) {
	read := func(kw string) (bound, bool) {
		v := s.get(kw)
		if v == nil {
			return bound{}, true
		}
		if v.kind != 'n' {
			c.fail(path, kw, "must be a number")
			return bound{}, false
		}
		d, err := parseDec(string(v.num))
		if err != nil {
			c.fail(path, kw, "%v", err)
			return bound{}, false
		}
		return bound{true, d, strings.HasPrefix(kw, "exclusive")}, true
	}
	mn, ok1 := read("minimum")
	emn, ok2 := read("exclusiveMinimum")
	mx, ok3 := read("maximum")
	emx, ok4 := read("exclusiveMaximum")
	if !(ok1 && ok2 && ok3 && ok4) {
		return lo, hi, false
	}
	lo, hi = mn, mx
	if emn.set && (!lo.set || cmpDec(emn.v, lo.v) >= 0) {
		lo = emn
	}
	if emx.set && (!hi.set || cmpDec(emx.v, hi.v) <= 0) {
		hi = emx
	}
	return lo, hi, true
}

// intBounds: the integers between lo and hi, as inclusive bounds.
func intBounds(lo, hi bound) (l, h int64) {
	if lo.set {
		if l = lo.v.ceil(); lo.ex && lo.v.fp == "" {
			l++
		}
	}
	if hi.set {
		if h = hi.v.floor(); hi.ex && hi.v.fp == "" {
			h--
		}
	}
	return l, h
}

// num: integers or numbers between the bounds. Bounded numbers are written
// without exponent (a plain decimal: -?int(.digits)?), which makes the
// range exact: every such text whose value lies between the bounds, and no
// other.
func (c *schemaCompiler) num(s *jv, path string, integer bool) []sym {
	lo, hi, ok := c.bounds(s, path)
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
		il, ih := intBounds(lo, hi)
		if !hi.set || ih >= 0 {
			a := int64(0)
			if lo.set && il > 0 {
				a = il
			}
			h := int64(-1)
			if hi.set {
				h = ih
			}
			if h < 0 || a <= h {
				alts = append(alts, one(c.nat(a, h)))
			}
		}
		if !lo.set || il < 0 {
			a := int64(1)
			if hi.set && ih < 0 {
				a = -ih
			}
			h := int64(-1)
			if lo.set {
				h = -il
			}
			if h < 0 || a <= h {
				alts = append(alts, cat(lit("-"), one(c.nat(a, h))))
			}
		}
	} else {
		if !hi.set || !hi.v.neg { // x ≥ 0
			l := bound{set: true}
			if lo.set && !lo.v.neg {
				l = lo
			}
			if a := c.decRange(l, hi); a != nil {
				alts = append(alts, a)
			}
		}
		if !lo.set || lo.v.neg { // x < 0: -y with y > 0
			l := bound{set: true, ex: true}
			if hi.set && hi.v.neg {
				l = bound{true, hi.v.negate(), hi.ex}
			}
			h := bound{}
			if lo.set {
				h = bound{true, lo.v.negate(), lo.ex}
			}
			if a := c.decRange(l, h); a != nil {
				alts = append(alts, cat(lit("-"), a))
			}
		}
	}
	if len(alts) == 0 {
		return c.fail(path, "minimum", "no value lies between the bounds")
	}
	return one(c.b.alt("range", alts...))
}

// decRange: plain decimals (int(.digits)?, no exponent) of the values x
// with lo ≤ x ≤ hi (< where exclusive; hi may be unset); 0 ≤ lo; nil when
// there is none.
func (c *schemaCompiler) decRange(lo, hi bound) []sym {
	b := c.b
	anyFrac := func() [][]sym { return [][]sym{nil, cat(lit("."), b.rep(one(c.digit()), 1, -1))} }
	var alts [][]sym
	add := func(ip [2]int64, fr [][]sym) {
		for _, f := range fr {
			alts = append(alts, cat(one(c.nat(ip[0], ip[1])), f))
		}
	}
	li := lo.v.ip
	loF := fbound{on: lo.v.fp != "" || lo.ex, s: lo.v.fp, ex: lo.ex}
	if !hi.set {
		add([2]int64{li, li}, c.fracSuffix(loF, fbound{}))
		add([2]int64{li + 1, -1}, anyFrac())
	} else {
		hiI := hi.v.ip
		hiF := fbound{on: true, s: hi.v.fp, ex: hi.ex}
		switch {
		case li > hiI:
		case li == hiI:
			add([2]int64{li, li}, c.fracSuffix(loF, hiF))
		default:
			add([2]int64{li, li}, c.fracSuffix(loF, fbound{}))
			if li+1 <= hiI-1 {
				add([2]int64{li + 1, hiI - 1}, anyFrac())
			}
			add([2]int64{hiI, hiI}, c.fracSuffix(fbound{}, hiF))
		}
	}
	if len(alts) == 0 {
		return nil
	}
	return one(b.alt("decimal", alts...))
}

// fbound bounds the fraction digits T of a decimal (the value 0.T) by 0.s:
// on false: no bound.
type fbound struct {
	on bool
	s  string
	ex bool
}

// fracSuffix: the alternatives for what follows the integer part, nothing
// (the value 0) or "." and digits, with 0.T between lo and hi.
func (c *schemaCompiler) fracSuffix(lo, hi fbound) [][]sym {
	lo, hi, ok := normFrac(lo, hi)
	if !ok {
		return nil
	}
	var out [][]sym
	if !lo.on {
		out = append(out, nil)
	}
	if t, ok := c.frac1(lo, hi); ok {
		out = append(out, cat(lit("."), one(t)))
	}
	return out
}

// normFrac: a lower bound 0 inclusive is no bound; ok false when no digit
// string (empty included) satisfies the bounds' ends (below 0).
func normFrac(lo, hi fbound) (fbound, fbound, bool) {
	if lo.on && lo.s == "" && !lo.ex {
		lo = fbound{}
	}
	if hi.on && hi.s == "" && hi.ex {
		return lo, hi, false
	}
	return lo, hi, true
}

// fracT: digit strings T (the empty one included) with 0.T between the
// bounds.
func (c *schemaCompiler) fracT(lo, hi fbound) (sym, bool) {
	t, ok := c.frac1(lo, hi)
	if lo.on { // 0 is below the lower bound
		return t, ok
	}
	if !ok {
		return c.b.alt("frac", nil), true
	}
	return c.b.opt(one(t)), true
}

// frac1: non-empty digit strings T with 0.T between the (normalized)
// bounds. Each digit either leaves a bound behind or consumes one of its
// digits, so the recursion ends; the four states where neither has digits
// left are written out.
func (c *schemaCompiler) frac1(lo, hi fbound) (sym, bool) {
	key := fmt.Sprint("frac", lo, hi)
	if s, ok := c.cache[key]; ok {
		return s, s != (sym{kind: kEnd})
	}
	b := c.b
	d := one(c.digit())
	loZ := lo.on && lo.s == "" // then exclusive: T > 0
	hiZ := hi.on && hi.s == "" // then inclusive: T = 0
	var s sym
	ok := true
	switch {
	case !lo.on && !hi.on:
		s = b.alt("digits", b.rep(d, 1, -1))
	case loZ && !hi.on:
		s = b.alt("nonzero", cat(one(b.star(d)), one(byteSym('1', '9')), one(b.star(d))))
	case !lo.on && hiZ:
		s = b.alt("zeros", b.rep(lit("0"), 1, -1))
	case loZ && hiZ:
		ok = false
	default:
		var alts [][]sym
		for dg := byte('0'); dg <= '9'; {
			l, h, good := fracStep(lo, hi, dg)
			end := dg + 1
			for end <= '9' {
				l2, h2, good2 := fracStep(lo, hi, end)
				if good2 != good || l2 != l || h2 != h {
					break
				}
				end++
			}
			if good {
				if t, ok := c.fracT(l, h); ok {
					alts = append(alts, cat(one(byteSym(dg, end-1)), one(t)))
				}
			}
			dg = end
		}
		if len(alts) == 0 {
			ok = false
		} else {
			s = b.alt("frac", alts...)
		}
	}
	if !ok {
		s = sym{kind: kEnd}
	}
	c.cache[key] = s
	return s, ok
}

// fracStep: the bounds on T' after T = dg T'; good false when none fits.
func fracStep(lo, hi fbound, dg byte) (fbound, fbound, bool) {
	switch {
	case !lo.on:
	case lo.s == "": // T > 0
		if dg > '0' {
			lo = fbound{}
		}
	case dg > lo.s[0]:
		lo = fbound{}
	case dg == lo.s[0]:
		lo.s = lo.s[1:]
	default:
		return lo, hi, false
	}
	switch {
	case !hi.on:
	case hi.s == "": // T = 0
		if dg != '0' {
			return lo, hi, false
		}
	case dg < hi.s[0]:
		hi = fbound{}
	case dg == hi.s[0]:
		hi.s = hi.s[1:]
	default:
		return lo, hi, false
	}
	return normFrac(lo, hi)
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

// format: the string bodies of date, time, date-time, uuid, ipv4 (as ajv-formats
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
	if f == "ipv4" { // four of 0-255 without leading zeros, as ajv-formats' ipv4
		octet := c.memo("octet", func() sym {
			return b.alt("octet", d, cat(one(byteSym('1', '9')), d), cat(lit("1"), d, d),
				cat(lit("2"), one(byteSym('0', '4')), d), cat(lit("25"), one(byteSym('0', '5'))))
		})
		return cat(one(octet), lit("."), one(octet), lit("."), one(octet), lit("."), one(octet))
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
	if strings.Contains(p, `\b`) || strings.Contains(p, `\B`) {
		return nil, fmt.Errorf(`\b and \B are not supported (their ECMA-262 and RE2 meanings differ)`)
	}
	p, err := ecmaSpaces(p)
	if err != nil {
		return nil, err
	}
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return nil, err
	}
	re = re.Simplify()
	any := one(c.b.star(one(c.strChar())))
	var alts [][]sym
	for _, a := range anchorSplit(re, 0) {
		var pre, post []sym = any, any
		if a.start {
			pre = nil
		}
		if a.end {
			post = nil
		}
		var body []sym
		for _, s := range a.body {
			x, err := c.re(s, 0)
			if err != nil {
				return nil, err
			}
			body = append(body, x...)
		}
		alts = append(alts, cat(pre, body, post))
	}
	if c.b.err != nil {
		return nil, c.b.err
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return one(c.b.alt("pattern", alts...)), nil
}

// ecmaSpace is ECMA-262's \s (WhiteSpace and LineTerminator: tab, LF, VT,
// FF, CR, space, U+00A0, U+FEFF, the Zs separators, U+2028, U+2029), as
// the inside of an RE2 class; RE2's \s is only [\t\n\f\r ].
const ecmaSpace = `\x{9}-\x{D}\x{20}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}`

// ecmaSpaces rewrites \s and \S in an ECMA-262 pattern into RE2 classes of
// ECMA-262's white space, so that RE2 reads them as JSON Schema means them.
// \S inside a class (a complement within a union) is refused.
func ecmaSpaces(p string) (string, error) {
	var out strings.Builder
	class := false // inside [...]
	for i := 0; i < len(p); i++ {
		ch := p[i]
		switch {
		case ch == '\\' && i+1 < len(p):
			i++
			switch e := p[i]; {
			case e == 's' && class:
				out.WriteString(ecmaSpace)
			case e == 's':
				out.WriteString("[" + ecmaSpace + "]")
			case e == 'S' && class:
				return "", fmt.Errorf(`\S inside a character class is not supported`)
			case e == 'S':
				out.WriteString("[^" + ecmaSpace + "]")
			default:
				out.WriteByte(ch)
				out.WriteByte(e)
			}
			continue
		case ch == '[' && !class:
			class = true
			out.WriteByte(ch)
			// RE2 reads a ']' first in the class (after '^') as a literal.
			if i+1 < len(p) && p[i+1] == '^' {
				i++
				out.WriteByte('^')
			}
			if i+1 < len(p) && p[i+1] == ']' {
				i++
				out.WriteByte(']')
			}
			continue
		case ch == ']' && class:
			class = false
		}
		out.WriteByte(ch)
	}
	return out.String(), nil
}

// anchored is one alternative of a pattern: its body, anchored at the
// start and/or end of the string or not.
type anchored struct {
	start, end bool
	body       []*syntax.Regexp
}

// anchorSplit lifts ^ and $ (\A, \z) out of a pattern: at its ends, at the
// ends of top-level alternatives and groups (^a$|^b$, (^a), ^(a$|b$)).
// Anchors elsewhere stay in the body, where re refuses them.
func anchorSplit(r *syntax.Regexp, depth int) []anchored {
	if depth > 100 {
		return []anchored{{body: []*syntax.Regexp{r}}}
	}
	switch r.Op {
	case syntax.OpBeginText:
		return []anchored{{start: true}}
	case syntax.OpEndText:
		return []anchored{{end: true}}
	case syntax.OpCapture:
		return anchorSplit(r.Sub[0], depth+1)
	case syntax.OpAlternate:
		var out []anchored
		for _, s := range r.Sub {
			out = append(out, anchorSplit(s, depth+1)...)
		}
		return out
	case syntax.OpConcat:
		items := r.Sub
		var start, end bool
		for len(items) > 0 && items[0].Op == syntax.OpBeginText {
			start, items = true, items[1:]
		}
		for n := len(items); n > 0 && items[n-1].Op == syntax.OpEndText; n = len(items) {
			end, items = true, items[:n-1]
		}
		if len(items) == 1 && (items[0].Op == syntax.OpCapture || items[0].Op == syntax.OpAlternate) {
			var out []anchored
			for _, a := range anchorSplit(items[0], depth+1) {
				out = append(out, anchored{start || a.start, end || a.end, a.body})
			}
			return out
		}
		return []anchored{{start, end, items}}
	}
	return []anchored{{body: []*syntax.Regexp{r}}}
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
