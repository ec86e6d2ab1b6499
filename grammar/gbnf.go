package grammar

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// CompileGBNF compiles a grammar in llama.cpp's GBNF syntax (rules
// `name ::= ...`, "literals", [classes], [^negated], ., ( ), |, *, +, ?,
// {m}, {m,}, {m,n}, # comments) whose start rule is root. Errors name the
// line and column.
func CompileGBNF(src string) (*Grammar, error) {
	if len(src) > 1<<20 {
		return nil, fmt.Errorf("gbnf: grammar over 1 MiB")
	}
	p := &gbnf{src: src, b: newBuilder(), rules: map[string]int32{}, defined: map[string]bool{}}
	if err := p.parse(); err != nil {
		return nil, err
	}
	root, ok := p.rules["root"]
	if !ok || !p.defined["root"] {
		return nil, fmt.Errorf("gbnf: no rule named root")
	}
	for name := range p.rules {
		if !p.defined[name] {
			return nil, fmt.Errorf("gbnf: rule %s is used but never defined", name)
		}
	}
	return p.b.build(root)
}

type gbnf struct {
	src     string
	pos     int
	b       *builder
	rules   map[string]int32
	defined map[string]bool
	depth   int
}

type gbnfError struct{ msg string }

func (e *gbnfError) Error() string { return e.msg }

func (p *gbnf) fail(format string, args ...any) {
	line := 1 + strings.Count(p.src[:p.pos], "\n")
	col := p.pos - strings.LastIndexByte(p.src[:p.pos], '\n')
	panic(&gbnfError{fmt.Sprintf("gbnf: line %d column %d: %s", line, col, fmt.Sprintf(format, args...))})
}

func (p *gbnf) parse() (err error) {
	defer func() {
		if r := recover(); r != nil {
			ge, ok := r.(*gbnfError)
			if !ok {
				panic(r)
			}
			err = ge
		}
	}()
	for {
		p.space(true)
		if p.pos >= len(p.src) {
			break
		}
		name := p.name()
		p.space(false)
		if !strings.HasPrefix(p.src[p.pos:], "::=") {
			p.fail("expected ::= after rule name %s", name)
		}
		p.pos += 3
		p.space(true)
		if p.defined[name] {
			p.fail("rule %s defined twice", name)
		}
		r := p.rule(name)
		p.defined[name] = true
		p.b.setRule(r, p.alternates(false)...)
		if p.b.err != nil {
			return p.b.err
		}
		if p.pos < len(p.src) && p.src[p.pos] != '\n' && p.src[p.pos] != '\r' {
			p.fail("unexpected %q", p.src[p.pos])
		}
	}
	return nil
}

func (p *gbnf) rule(name string) int32 {
	if r, ok := p.rules[name]; ok {
		return r
	}
	r := p.b.newRule(name)
	p.rules[name] = r
	return r
}

func isNameChar(c byte) bool {
	return c == '-' || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func (p *gbnf) name() string {
	s := p.pos
	for p.pos < len(p.src) && isNameChar(p.src[p.pos]) {
		p.pos++
	}
	if s == p.pos {
		p.fail("expected a rule name")
	}
	return p.src[s:p.pos]
}

// space skips blanks and comments; newlines only when nl.
func (p *gbnf) space(nl bool) {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == ' ' || c == '\t':
			p.pos++
		case c == '#':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		case nl && (c == '\n' || c == '\r'):
			p.pos++
		default:
			return
		}
	}
}

func (p *gbnf) alternates(nested bool) [][]sym {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > 100 {
		p.fail("nested deeper than 100")
	}
	alts := [][]sym{p.sequence(nested)}
	for p.pos < len(p.src) && p.src[p.pos] == '|' {
		p.pos++
		p.space(true)
		alts = append(alts, p.sequence(nested))
	}
	return alts
}

func (p *gbnf) sequence(nested bool) []sym {
	var seq []sym
	var last []sym // the last item, for a repetition suffix
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		var item []sym
		switch {
		case c == '"':
			p.pos++
			for p.pos < len(p.src) && p.src[p.pos] != '"' {
				r := p.char()
				item = append(item, p.b.class([]cpRange{{r, r}}))
			}
			if p.pos >= len(p.src) {
				p.fail("unterminated literal")
			}
			p.pos++
		case c == '[':
			p.pos++
			neg := false
			if p.pos < len(p.src) && p.src[p.pos] == '^' {
				neg, p.pos = true, p.pos+1
			}
			var rs []cpRange
			for p.pos < len(p.src) && p.src[p.pos] != ']' {
				lo := p.char()
				hi := lo
				if p.pos+1 < len(p.src) && p.src[p.pos] == '-' && p.src[p.pos+1] != ']' {
					p.pos++
					hi = p.char()
				}
				if hi < lo {
					p.fail("range %q-%q is reversed", lo, hi)
				}
				rs = append(rs, cpRange{lo, hi})
			}
			if p.pos >= len(p.src) {
				p.fail("unterminated character class")
			}
			p.pos++
			rs = normalize(rs)
			if neg {
				rs = negate(rs)
			}
			if len(rs) == 0 {
				p.fail("empty character class")
			}
			item = one(p.b.class(rs))
		case c == '.':
			p.pos++
			item = one(p.b.class([]cpRange{{0, utf8.MaxRune}}))
		case c == '(':
			p.pos++
			p.space(true)
			alts := p.alternates(true)
			if p.pos >= len(p.src) || p.src[p.pos] != ')' {
				p.fail("expected )")
			}
			p.pos++
			item = one(p.b.alt("group", alts...))
		case isNameChar(c):
			save := p.pos
			name := p.name()
			p.space(false)
			if strings.HasPrefix(p.src[p.pos:], "::=") { // the next rule
				p.pos = save
				return seq
			}
			p.pos = save + len(name)
			item = one(ref(p.rule(name)))
		case c == '*' || c == '+' || c == '?' || c == '{':
			if last == nil {
				p.fail("%q without anything before it", c)
			}
			seq = seq[:len(seq)-len(last)]
			min, max := 0, -1
			switch c {
			case '*':
				p.pos++
			case '+':
				min, p.pos = 1, p.pos+1
			case '?':
				max, p.pos = 1, p.pos+1
			default:
				min, max = p.braces()
			}
			rep := p.b.rep(last, min, max)
			if len(rep) > 1 {
				rep = one(p.b.alt("rep", rep))
			}
			seq = append(seq, rep...)
			last = nil
			p.space(nested)
			continue
		case c == '<':
			p.fail("token references (<...>) are not supported")
		default:
			return seq
		}
		seq = append(seq, item...)
		last = item
		if len(item) != 1 {
			// a literal of several characters repeats as a whole
			last = one(p.b.alt("lit", item))
			seq = append(seq[:len(seq)-len(item)], last...)
		}
		p.space(nested)
	}
	return seq
}

func (p *gbnf) braces() (int, int) {
	p.pos++
	num := func() int {
		s := p.pos
		for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
			p.pos++
		}
		if s == p.pos {
			return -1
		}
		n, err := strconv.Atoi(p.src[s:p.pos])
		if err != nil || n > maxRepeat {
			p.fail("repetition bound over %d", maxRepeat)
		}
		return n
	}
	p.space(false)
	min := num()
	if min < 0 {
		p.fail("expected a number after {")
	}
	max := min
	p.space(false)
	if p.pos < len(p.src) && p.src[p.pos] == ',' {
		p.pos++
		p.space(false)
		max = num()
		p.space(false)
	}
	if p.pos >= len(p.src) || p.src[p.pos] != '}' {
		p.fail("expected }")
	}
	p.pos++
	if max >= 0 && max < min {
		p.fail("{%d,%d}: maximum below minimum", min, max)
	}
	return min, max
}

// char reads one character of a literal or class, with escapes.
func (p *gbnf) char() rune {
	if p.src[p.pos] != '\\' {
		r, n := utf8.DecodeRuneInString(p.src[p.pos:])
		if r == utf8.RuneError && n == 1 {
			p.fail("invalid UTF-8")
		}
		p.pos += n
		return r
	}
	p.pos++
	if p.pos >= len(p.src) {
		p.fail("escape at the end")
	}
	c := p.src[p.pos]
	p.pos++
	hex := func(n int) rune {
		if p.pos+n > len(p.src) {
			p.fail("short \\%c escape", c)
		}
		v, err := strconv.ParseUint(p.src[p.pos:p.pos+n], 16, 32)
		if err != nil || v > utf8.MaxRune {
			p.fail("bad \\%c escape", c)
		}
		p.pos += n
		return rune(v)
	}
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'x':
		return hex(2)
	case 'u':
		return hex(4)
	case 'U':
		return hex(8)
	case '\\', '"', '[', ']', '-', '^', '/':
		return rune(c)
	}
	p.fail("unknown escape \\%c", c)
	return 0
}
