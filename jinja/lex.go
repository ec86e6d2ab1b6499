package jinja

import (
	"strings"
	"unicode/utf8"
)

// The lexer follows jinja2's (lexer.py) rule for rule, run as state functions
// inside next, one token at a time (text/template/parse/lex.go without the
// goroutine). Whitespace control happens here, so the parser never sees it:
//   - "{%-", "{{-", "{#-" strip all whitespace before the tag, and "-%}",
//     "-}}", "-#}" all whitespace after it;
//   - trim_blocks: one newline right after "%}" or "#}" is dropped;
//   - lstrip_blocks: spaces and tabs from the start of a line up to "{%" or
//     "{#" are dropped;
//   - "+" after "{%" or before "%}" turns the last two off for that tag.

type tokKind int

const (
	tEOF tokKind = iota
	tText
	tBlockBegin // {%
	tBlockEnd   // %}
	tVarBegin   // {{
	tVarEnd     // }}
	tName
	tString
	tInt
	tFloat
	tOp
)

type token struct {
	kind tokKind
	val  string // text, name, decoded string, number literal, operator
	pos  int
}

type stateFn func(*lexer) stateFn

type lexer struct {
	src          string
	pos          int
	state        stateFn
	toks         []token // tokens produced, not yet taken
	err          *Error
	inVar        bool   // inside {{ }} rather than {% %}
	stack        []byte // open brackets: end tags only count when it is empty
	lineStarting bool   // the last token ended a line (jinja2's line_starting)
	last         token  // the last token emitted
}

func newLexer(src string) *lexer {
	return &lexer{src: src, state: lexText, lineStarting: true}
}

// next returns the next token; after an error or the end, tEOF for ever.
func (l *lexer) next() token {
	for len(l.toks) == 0 {
		if l.state == nil {
			return token{kind: tEOF, pos: len(l.src)}
		}
		l.state = l.state(l)
	}
	t := l.toks[0]
	l.toks = l.toks[1:]
	return t
}

func (l *lexer) emit(k tokKind, val string, pos int) {
	l.toks = append(l.toks, token{k, val, pos})
	l.last = token{k, val, pos}
}

func (l *lexer) fail(pos int, msg string) stateFn {
	if l.err == nil {
		l.err = &Error{Kind: KindSyntax, Msg: msg, pos: pos}
	}
	return nil
}

// lexText scans template data up to the next tag.
func lexText(l *lexer) stateFn {
	start := l.pos
	i := start
	for {
		j := strings.IndexByte(l.src[i:], '{')
		if j < 0 || i+j+1 >= len(l.src) {
			if start < len(l.src) {
				l.emit(tText, l.src[start:], start)
			}
			l.pos = len(l.src)
			l.emit(tEOF, "", len(l.src))
			return nil
		}
		i += j
		c := l.src[i+1]
		if c != '{' && c != '%' && c != '#' {
			i++
			continue
		}
		sign := byte(0)
		if i+2 < len(l.src) && (l.src[i+2] == '-' || l.src[i+2] == '+') {
			sign = l.src[i+2]
		}
		if c == '%' {
			if end, ok := rawBegin(l.src, i); ok {
				return l.lexRaw(start, i, end)
			}
		}
		if c == '{' {
			l.emitText(l.src[start:i], start, sign|0x80)
		} else {
			l.emitText(l.src[start:i], start, sign)
		}
		tagPos := i
		l.pos = i + 2
		if sign != 0 {
			l.pos++
		}
		switch c {
		case '#':
			return lexComment(l, tagPos)
		case '%':
			l.emit(tBlockBegin, "", tagPos)
			l.inVar = false
		default:
			l.emit(tVarBegin, "", tagPos)
			l.inVar = true
		}
		l.stack = l.stack[:0]
		return lexInside
	}
}

// emitText emits the text before a tag with the tag's whitespace control:
// sign is the byte after "{%", "{#" or "{{" ('-', '+' or 0), with 0x80 set
// for "{{", which lstrip_blocks leaves alone.
func (l *lexer) emitText(text string, start int, sign byte) {
	switch {
	case sign&0x7f == '-':
		text = rstripSpace(text)
	case sign&0x7f != '+' && sign&0x80 == 0:
		// lstrip_blocks: only spaces and tabs between the line start and the tag.
		lpos := strings.LastIndexByte(text, '\n') + 1
		if (lpos > 0 || l.lineStarting) && strings.Trim(text[lpos:], " \t") == "" {
			text = text[:lpos]
		}
	}
	if text != "" {
		l.emit(tText, text, start)
	}
}

// rawBegin matches "{%" ["-"|"+"] ws "raw" ws ("-%}" ws* | "%}") at i and
// returns where it ends.
func rawBegin(src string, i int) (int, bool) {
	j := i + 2
	if j < len(src) && (src[j] == '-' || src[j] == '+') {
		j++
	}
	j += len(src[j:]) - len(lstripSpace(src[j:]))
	if !strings.HasPrefix(src[j:], "raw") || j+3 < len(src) && isNameByte(src[j+3]) {
		return 0, false
	}
	j += 3
	j += len(src[j:]) - len(lstripSpace(src[j:]))
	switch {
	case strings.HasPrefix(src[j:], "-%}"):
		j += 3
		return j + len(src[j:]) - len(lstripSpace(src[j:])), true
	case strings.HasPrefix(src[j:], "%}"):
		return j + 2, true
	}
	return 0, false
}

// lexRaw emits the text before a raw block (tag at i, its end at end) and
// the block's content as text, up to {% endraw %}, whose whitespace control
// applies as any tag's does.
func (l *lexer) lexRaw(start, i, end int) stateFn {
	l.emitText(l.src[start:i], start, l.src[i+2])
	for k := end; ; {
		j := strings.Index(l.src[k:], "{%")
		if j < 0 {
			return l.fail(i, "missing end of raw directive")
		}
		k += j
		p := k + 2
		sign := byte(0)
		if p < len(l.src) && (l.src[p] == '-' || l.src[p] == '+') {
			sign = l.src[p]
			p++
		}
		p += len(l.src[p:]) - len(lstripSpace(l.src[p:]))
		if !strings.HasPrefix(l.src[p:], "endraw") {
			k += 2
			continue
		}
		p += 6
		p += len(l.src[p:]) - len(lstripSpace(l.src[p:]))
		minus := strings.HasPrefix(l.src[p:], "-%}")
		plus := strings.HasPrefix(l.src[p:], "+%}")
		if !minus && !plus && !strings.HasPrefix(l.src[p:], "%}") {
			k += 2
			continue
		}
		l.lineStarting = false
		l.emitText(l.src[end:k], end, sign)
		l.pos = p + 2
		if minus || plus {
			l.pos++
		}
		l.inVar = false
		l.afterEnd(minus, plus)
		return lexText
	}
}

func lexComment(l *lexer, tagPos int) stateFn {
	j := strings.Index(l.src[l.pos:], "#}")
	if j < 0 {
		return l.fail(tagPos, "missing end of comment tag")
	}
	end := l.pos + j
	l.pos = end + 2
	l.inVar = false
	l.afterEnd(end > tagPos+2 && l.src[end-1] == '-', end > tagPos+2 && l.src[end-1] == '+')
	return lexText
}

// afterEnd applies the whitespace control of an end tag ("-" strips all
// whitespace after it, otherwise trim_blocks drops one newline) and records
// whether the match ended a line.
func (l *lexer) afterEnd(minus, plus bool) {
	switch {
	case minus:
		rest := l.src[l.pos:]
		l.pos += len(rest) - len(lstripSpace(rest))
	case !plus && !l.inVar: // trim_blocks is for blocks and comments only
		if l.pos < len(l.src) && l.src[l.pos] == '\n' {
			l.pos++
		}
	}
	l.lineStarting = l.pos > 0 && l.src[l.pos-1] == '\n'
}

var operators = []string{"//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[", "]", "(", ")", "{", "}", ">", "<", "=", ".", ":", "|", ",", ";"}

// lexInside scans the tokens of a {% %} or {{ }} tag.
func lexInside(l *lexer) stateFn {
	for l.pos < len(l.src) {
		s := l.src[l.pos:]
		if len(l.stack) == 0 {
			endTag := "%}"
			kind := tBlockEnd
			if l.inVar {
				endTag, kind = "}}", tVarEnd
			}
			minus := strings.HasPrefix(s, "-"+endTag)
			plus := !l.inVar && strings.HasPrefix(s, "+"+endTag)
			if minus || plus || strings.HasPrefix(s, endTag) {
				p := l.pos
				l.pos += len(endTag)
				if minus || plus {
					l.pos++
				}
				l.emit(kind, "", p)
				l.afterEnd(minus, plus)
				return lexText
			}
		}
		c := s[0]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			l.pos++
			l.lineStarting = c == '\n'
			continue
		case c >= 0x80:
			r, n := utf8.DecodeRuneInString(s)
			if isPySpace(r) {
				l.pos += n
				continue
			}
			return l.fail(l.pos, "unexpected char "+quoteRune(r))
		case c == '\'' || c == '"':
			return lexString
		case c >= '0' && c <= '9':
			return lexNumber
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			n := 1
			for n < len(s) && isNameByte(s[n]) {
				n++
			}
			l.emit(tName, s[:n], l.pos)
			l.pos += n
			l.lineStarting = false
			continue
		}
		op := ""
		for _, o := range operators {
			if strings.HasPrefix(s, o) {
				op = o
				break
			}
		}
		if op == "" {
			r, _ := utf8.DecodeRuneInString(s)
			return l.fail(l.pos, "unexpected char "+quoteRune(r))
		}
		switch op {
		case "(", "[", "{":
			l.stack = append(l.stack, op[0])
		case ")", "]", "}":
			want := map[string]byte{")": '(', "]": '[', "}": '{'}[op]
			if len(l.stack) == 0 {
				return l.fail(l.pos, "unexpected '"+op+"'")
			}
			if l.stack[len(l.stack)-1] != want {
				return l.fail(l.pos, "unexpected '"+op+"', expected '"+string(closer(l.stack[len(l.stack)-1]))+"'")
			}
			l.stack = l.stack[:len(l.stack)-1]
		}
		l.emit(tOp, op, l.pos)
		l.pos += len(op)
		l.lineStarting = false
	}
	if l.inVar {
		return l.fail(l.pos, "unexpected end of template, expected end of print statement")
	}
	return l.fail(l.pos, "unexpected end of template, expected end of statement block")
}

func closer(b byte) byte {
	switch b {
	case '(':
		return ')'
	case '[':
		return ']'
	}
	return '}'
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func lexNumber(l *lexer) stateFn {
	s := l.src[l.pos:]
	digits := func(i int) int { // (\d+_)*\d+ from i; returns the end, or i when none
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
			if j < len(s)-1 && s[j] == '_' && s[j+1] >= '0' && s[j+1] <= '9' {
				j++
			}
		}
		return j
	}
	// float: (\d+_)*\d+ ((\.(\d+_)*\d+)? e[+-]? (\d+_)*\d+ | \.(\d+_)*\d+), never
	// right after a dot (foo.0.1 is two attribute steps)
	end, kind := 0, tInt
	if !(l.last.kind == tOp && l.last.val == ".") {
		m := digits(0)
		frac := m
		if m < len(s)-1 && s[m] == '.' && s[m+1] >= '0' && s[m+1] <= '9' {
			frac = digits(m + 1)
		}
		exp := frac
		if frac < len(s) && (s[frac] == 'e' || s[frac] == 'E') {
			j := frac + 1
			if j < len(s) && (s[j] == '+' || s[j] == '-') {
				j++
			}
			if k := digits(j); k > j {
				exp = k
			}
		}
		if exp > m {
			end, kind = exp, tFloat
		}
	}
	if kind == tInt {
		// integer: 0b.., 0o.., 0x.. (case-insensitive), [1-9](_?\d)* or 0(_?0)*
		end = intLiteral(s)
	}
	l.emit(kind, strings.ReplaceAll(s[:end], "_", ""), l.pos)
	l.pos += end
	l.lineStarting = false
	return lexInside
}

func intLiteral(s string) int {
	if len(s) > 2 && s[0] == '0' {
		var ok func(byte) bool
		switch s[1] | 0x20 {
		case 'b':
			ok = func(c byte) bool { return c == '0' || c == '1' }
		case 'o':
			ok = func(c byte) bool { return c >= '0' && c <= '7' }
		case 'x':
			ok = func(c byte) bool { return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f' }
		}
		if ok != nil {
			j := 2
			for j < len(s) && (ok(s[j]) || s[j] == '_' && j+1 < len(s) && ok(s[j+1])) {
				j++
			}
			if j > 2 {
				return j
			}
		}
	}
	want := func(c byte) bool { return c >= '0' && c <= '9' }
	if s[0] == '0' {
		want = func(c byte) bool { return c == '0' }
	}
	j := 1
	for j < len(s) && (want(s[j]) || s[j] == '_' && j+1 < len(s) && want(s[j+1])) {
		j++
	}
	return j
}

func lexString(l *lexer) stateFn {
	s := l.src[l.pos:]
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			l.emit(tString, b.String(), l.pos)
			l.pos += i + 1
			l.lineStarting = false
			return lexInside
		case c == '\\' && i+1 < len(s):
			n := unescape(&b, s[i+1:])
			i += n
		default:
			b.WriteByte(c)
		}
	}
	return l.fail(l.pos, "unexpected end of string")
}

// unescape decodes one escape sequence of Python's unicode-escape codec (s
// starts after the backslash) and returns the bytes it used. Unknown escapes
// stay as written, backslash included, as Python leaves them.
func unescape(b *strings.Builder, s string) int {
	c := s[0]
	simple := map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', '\\': '\\', '\'': '\'', '"': '"', 'a': 7, 'b': 8, 'f': 12, 'v': 11, '\n': 0}
	if r, ok := simple[c]; ok {
		if c != '\n' { // a backslash before a newline joins the lines
			b.WriteByte(r)
		}
		return 1
	}
	hex := func(n int) int {
		if len(s) < 1+n {
			return -1
		}
		v := 0
		for _, h := range s[1 : 1+n] {
			d := strings.IndexRune("0123456789abcdef", toLowerASCII(h))
			if d < 0 {
				return -1
			}
			v = v*16 + d
		}
		return v
	}
	switch c {
	case 'x', 'u', 'U':
		n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
		if v := hex(n); v >= 0 && v <= utf8.MaxRune {
			b.WriteRune(rune(v))
			return 1 + n
		}
	case '0', '1', '2', '3', '4', '5', '6', '7':
		v, n := 0, 0
		for n < 3 && n < len(s) && s[n] >= '0' && s[n] <= '7' {
			v = v*8 + int(s[n]-'0')
			n++
		}
		b.WriteRune(rune(v))
		return n
	}
	b.WriteByte('\\')
	return 0
}

func toLowerASCII(r rune) rune {
	if r >= 'A' && r <= 'Z' {
		return r + 32
	}
	return r
}

func quoteRune(r rune) string { return "'" + string(r) + "'" }

// normalizeNewlines turns \r\n and \r into \n and drops one trailing newline,
// as jinja2 does before lexing (keep_trailing_newline is off).
func normalizeNewlines(src string) string {
	if strings.IndexByte(src, '\r') >= 0 {
		src = strings.ReplaceAll(src, "\r\n", "\n")
		src = strings.ReplaceAll(src, "\r", "\n")
	}
	return strings.TrimSuffix(src, "\n")
}
