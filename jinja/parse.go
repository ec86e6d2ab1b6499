package jinja

import (
	"slices"
	"strconv"
	"strings"
)

// The parser is recursive descent over jinja2's grammar (parser.py); each
// function's comment gives its rule.

// maxParseDepth bounds the nesting of expressions and blocks, so a hostile
// template cannot exhaust the stack. A variable so tests can lower it.
var maxParseDepth = 200

type parser struct {
	lex   *lexer
	cur   token
	ahead []token
	depth int
	refs  *catches // the macro body being parsed
	// jinja2 refuses an unknown filter or test when compiling, unless it sits
	// directly in an if statement or a conditional expression: then only
	// reaching it is an error. soft is true there; unknown holds those seen
	// outside, which an enclosing conditional expression may still forgive.
	soft    bool
	unknown []token
}

// Template is a parsed template. It is never modified after Parse.
type Template struct {
	src  string // normalised source, for line and column of errors
	body []node
}

// Parse parses a template source. Syntax errors are *Error values with Kind
// KindSyntax.
func Parse(src string) (t *Template, err error) {
	src = normalizeNewlines(src)
	p := &parser{lex: newLexer(src)}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			e.locate(src)
			t, err = nil, e
		}
	}()
	p.advance()
	body := p.subparse(nil)
	if p.cur.kind != tEOF {
		p.fail(p.cur.pos, "unexpected "+p.describe(p.cur))
	}
	if len(p.unknown) > 0 {
		u := p.unknown[0]
		panic(&Error{Kind: KindAssertion, Msg: u.val, pos: u.pos})
	}
	return &Template{src: src, body: body}, nil
}

func (p *parser) advance() {
	if len(p.ahead) > 0 {
		p.cur = p.ahead[0]
		p.ahead = p.ahead[1:]
	} else {
		p.cur = p.lex.next()
	}
	if p.cur.kind == tEOF && p.lex.err != nil {
		panic(p.lex.err)
	}
}

func (p *parser) look() token {
	if len(p.ahead) == 0 {
		t := p.lex.next()
		if t.kind == tEOF && p.lex.err != nil {
			panic(p.lex.err)
		}
		p.ahead = append(p.ahead, t)
	}
	return p.ahead[0]
}

func (p *parser) fail(pos int, msg string) {
	panic(&Error{Kind: KindSyntax, Msg: msg, pos: pos})
}

func (p *parser) describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of template"
	case tText:
		return "template data"
	case tBlockBegin:
		return "'{%'"
	case tBlockEnd:
		return "end of statement block"
	case tVarBegin:
		return "'{{'"
	case tVarEnd:
		return "end of print statement"
	case tName:
		return "'" + t.val + "'"
	case tString:
		return "string"
	case tInt, tFloat:
		return "number"
	}
	return "'" + t.val + "'"
}

func (p *parser) isOp(op string) bool     { return p.cur.kind == tOp && p.cur.val == op }
func (p *parser) isName(name string) bool { return p.cur.kind == tName && p.cur.val == name }

func (p *parser) skipOp(op string) bool {
	if p.isOp(op) {
		p.advance()
		return true
	}
	return false
}

func (p *parser) skipName(name string) bool {
	if p.isName(name) {
		p.advance()
		return true
	}
	return false
}

func (p *parser) expectOp(op string) {
	if !p.skipOp(op) {
		p.fail(p.cur.pos, "expected '"+op+"', got "+p.describe(p.cur))
	}
}

func (p *parser) expectName() token {
	if p.cur.kind != tName {
		p.fail(p.cur.pos, "expected a name, got "+p.describe(p.cur))
	}
	t := p.cur
	p.advance()
	return t
}

func (p *parser) expectKind(k tokKind, what string) {
	if p.cur.kind != k {
		p.fail(p.cur.pos, "expected "+what+", got "+p.describe(p.cur))
	}
	p.advance()
}

func (p *parser) enter() {
	p.depth++
	if p.depth > maxParseDepth {
		p.fail(p.cur.pos, "template nested too deeply")
	}
}

func (p *parser) leave() { p.depth-- }

// subparse: (text | "{{" tuple "}}" | "{%" statement "%}")* up to a block
// whose first name is one of ends (left current: the name token) or the end.
func (p *parser) subparse(ends []string) []node {
	p.enter()
	defer p.leave()
	var body []node
	for {
		switch p.cur.kind {
		case tEOF:
			if ends != nil {
				p.fail(p.cur.pos, "unexpected end of template, expected '"+strings.Join(ends, "' or '")+"'")
			}
			return body
		case tText:
			body = append(body, &textNode{base{p.cur.pos}, p.cur.val})
			p.advance()
		case tVarBegin:
			pos := p.cur.pos
			p.advance()
			e := p.parseTuple(true, false)
			p.expectKind(tVarEnd, "end of print statement")
			body = append(body, &outputNode{base{pos}, e})
		case tBlockBegin:
			pos := p.cur.pos
			p.advance()
			if p.cur.kind == tName {
				for _, e := range ends {
					if p.cur.val == e {
						return body
					}
				}
				switch name := p.cur.val; {
				case strings.HasPrefix(name, "end") || name == "else" || name == "elif":
					if ends == nil {
						p.fail(pos, "unexpected '"+name+"': no block is open")
					}
					p.fail(pos, "unexpected '"+name+"', expected '"+strings.Join(ends, "' or '")+"'")
				}
			}
			body = append(body, p.parseStatement(pos))
		default:
			p.fail(p.cur.pos, "unexpected "+p.describe(p.cur))
		}
	}
}

// statements parses a body up to one of ends and returns it with the name
// that ended it; that name is consumed, and with drop the block end too.
func (p *parser) statements(ends []string, drop bool) ([]node, string) {
	body := p.subparse(ends)
	end := p.cur.val
	p.advance()
	if drop {
		p.expectKind(tBlockEnd, "end of statement block")
	}
	return body, end
}

func (p *parser) blockEnd() { p.expectKind(tBlockEnd, "end of statement block") }

// hard parses a body in a new frame of jinja2's compiler (a loop, macro or
// block body), where unknown filters are compile errors again.
func (p *parser) hard(f func()) {
	saved := p.soft
	p.soft = false
	f()
	p.soft = saved
}

func (p *parser) checkKnown(t token, name string, known bool, what string) {
	if !known && !p.soft {
		p.unknown = append(p.unknown, token{val: "no " + what + " named '" + name + "'", pos: t.pos})
	}
}

func (p *parser) parseStatement(pos int) node {
	if p.cur.kind != tName {
		p.fail(p.cur.pos, "tag name expected")
	}
	name := p.cur.val
	p.advance()
	switch name {
	case "if":
		return p.parseIf(pos)
	case "for":
		return p.parseFor(pos)
	case "set":
		return p.parseSet(pos)
	case "macro":
		return p.parseMacro(pos)
	case "call":
		return p.parseCallBlock(pos)
	case "filter":
		var f []*filterNode
		var body []node
		p.hard(func() {
			f = p.parseFilterChain(nil)
			p.blockEnd()
			body, _ = p.statements([]string{"endfilter"}, true)
		})
		return &filterBlockNode{base{pos}, f, body}
	case "with":
		return p.parseWith(pos)
	case "generation": // transformers' AssistantTracker: the body, unchanged
		p.blockEnd()
		body, _ := p.statements([]string{"endgeneration"}, true)
		return &ifNode{base: base{pos}, cond: &constNode{base{pos}, true}, body: body}
	case "break":
		p.blockEnd()
		return &breakNode{base{pos}}
	case "continue":
		p.blockEnd()
		return &continueNode{base{pos}}
	case "include", "import", "from", "extends", "block":
		p.fail(pos, "'"+name+"' needs a template loader, which the sandbox does not have")
	}
	p.fail(pos, "encountered unknown tag '"+name+"'")
	return nil
}

// if: "if" expr body ("elif" expr body)* ["else" body] "endif"
func (p *parser) parseIf(pos int) node {
	saved := p.soft
	p.soft = true
	defer func() { p.soft = saved }()
	n := &ifNode{base: base{pos}, cond: p.parseExpr(true)}
	p.blockEnd()
	body, end := p.statements([]string{"elif", "else", "endif"}, false)
	n.body = body
	switch end {
	case "elif":
		epos := p.cur.pos
		n.else_ = []node{p.parseIf(epos)}
	case "else":
		p.blockEnd()
		n.else_, _ = p.statements([]string{"endif"}, true)
	default:
		p.blockEnd()
	}
	return n
}

// for: "for" target "in" tuple(no condexpr) ["if" expr] ["recursive"] body ["else" body] "endfor"
func (p *parser) parseFor(pos int) node {
	n := &forNode{base: base{pos}}
	saved := p.soft
	p.soft = false
	defer func() { p.soft = saved }()
	n.target = p.parseAssignTarget(false, []string{"in"})
	if !p.skipName("in") {
		p.fail(p.cur.pos, "expected 'in', got "+p.describe(p.cur))
	}
	n.iter = p.parseTuple(false, false, "recursive")
	if p.skipName("if") {
		n.filter = p.parseExpr(true)
	}
	n.recursive = p.skipName("recursive")
	p.blockEnd()
	p.hard(func() {
		body, end := p.statements([]string{"endfor", "else"}, false)
		n.body = body
		p.blockEnd()
		if end == "else" {
			n.else_, _ = p.statements([]string{"endfor"}, true)
		}
	})
	return n
}

// set: "set" target "=" tuple | "set" target filters* body "endset"
func (p *parser) parseSet(pos int) node {
	target := p.parseAssignTarget(true, nil)
	if p.skipOp("=") {
		v := p.parseTuple(true, false)
		p.blockEnd()
		return &setNode{base{pos}, target, v}
	}
	var f []*filterNode
	if p.isOp("|") {
		p.advance()
		f = p.parseFilterChain(nil)
	}
	p.blockEnd()
	var body []node
	p.hard(func() { body, _ = p.statements([]string{"endset"}, true) })
	return &setBlockNode{base{pos}, target, f, body}
}

// assign target: name ["." name] (namespace attribute) | name ("," name)*
func (p *parser) parseAssignTarget(withNamespace bool, extraEnd []string) node {
	if withNamespace && p.cur.kind == tName && p.look().kind == tOp && p.look().val == "." {
		ns := p.expectName()
		p.advance()
		attr := p.expectName()
		return &nsAttrNode{base{ns.pos}, ns.val, attr.val}
	}
	pos := p.cur.pos
	var items []node
	comma := false
	for {
		t := p.expectName()
		switch t.val {
		case "true", "false", "none", "True", "False", "None":
			p.fail(t.pos, "cannot assign to '"+t.val+"'")
		}
		items = append(items, &nameNode{base{t.pos}, t.val})
		if !p.skipOp(",") {
			break
		}
		comma = true
		if p.cur.kind != tName || p.endOfTuple(extraEnd) {
			break
		}
	}
	if !comma {
		return items[0]
	}
	return &tupleNode{base{pos}, items}
}

func (p *parser) endOfTuple(extra []string) bool {
	switch p.cur.kind {
	case tVarEnd, tBlockEnd, tEOF:
		return true
	case tOp:
		return p.cur.val == ")"
	case tName:
		for _, e := range extra {
			if p.cur.val == e {
				return true
			}
		}
	}
	return false
}

// macro: "macro" name "(" [param ["=" expr] ("," param ["=" expr])*] ")" body "endmacro"
func (p *parser) parseMacro(pos int) node {
	name := p.expectName().val
	n := &macroNode{base: base{pos}, name: name}
	p.macroBody(&n.catches, func() {
		n.params, n.defaults = p.parseSignature()
		p.blockEnd()
		n.body, _ = p.statements([]string{"endmacro"}, true)
	})
	return n
}

// macroBody parses a macro's signature and body, recording which special
// names it reads.
func (p *parser) macroBody(c *catches, f func()) {
	saved := p.refs
	p.refs = c
	p.hard(f)
	p.refs = saved
}

func (p *parser) parseSignature() ([]string, []node) {
	var params []string
	var defaults []node
	p.expectOp("(")
	p.commaList(")", func() {
		t := p.expectName()
		params = append(params, t.val)
		if p.skipOp("=") {
			defaults = append(defaults, p.parseExpr(true))
		} else if len(defaults) > 0 {
			p.fail(t.pos, "non-default argument follows default argument")
		}
	})
	return params, defaults
}

// call block: "call" ["(" params ")"] call_expr body "endcall"
func (p *parser) parseCallBlock(pos int) node {
	n := &callBlockNode{base: base{pos}}
	p.macroBody(&n.catches, func() {
		if p.isOp("(") {
			n.params, n.defaults = p.parseSignature()
		}
	})
	e := p.parseExpr(true)
	c, ok := e.(*callNode)
	if !ok {
		p.fail(pos, "expected call")
	}
	n.call = c
	p.blockEnd()
	p.macroBody(&n.catches, func() { n.body, _ = p.statements([]string{"endcall"}, true) })
	return n
}

// with: "with" [target "=" expr ("," target "=" expr)*] body "endwith"
func (p *parser) parseWith(pos int) node {
	n := &withNode{base: base{pos}}
	for p.cur.kind != tBlockEnd {
		if len(n.targets) > 0 {
			p.expectOp(",")
		}
		n.targets = append(n.targets, p.parseAssignTarget(false, nil))
		p.expectOp("=")
		n.values = append(n.values, p.parseExpr(true))
	}
	p.blockEnd()
	p.hard(func() { n.body, _ = p.statements([]string{"endwith"}, true) })
	return n
}

// tuple: expr ("," expr)* [","]; a single expression without comma is itself.
func (p *parser) parseTuple(condexpr, explicitParens bool, extraEnd ...string) node {
	pos := p.cur.pos
	var items []node
	comma := false
	for {
		if len(items) > 0 {
			if !p.skipOp(",") {
				break
			}
			comma = true
		}
		if p.endOfTuple(extraEnd) {
			break
		}
		items = append(items, p.parseExpr(condexpr))
	}
	if !comma {
		if len(items) == 1 {
			return items[0]
		}
		if !explicitParens {
			p.fail(p.cur.pos, "expected an expression, got "+p.describe(p.cur))
		}
	}
	return &tupleNode{base{pos}, items}
}

// expression: or_expr ["if" or_expr ["else" expression]]
func (p *parser) parseExpr(condexpr bool) node {
	p.enter()
	defer p.leave()
	if !condexpr {
		return p.parseOr()
	}
	pos := p.cur.pos
	mark := len(p.unknown)
	e := p.parseOr()
	for p.isName("if") {
		p.unknown = p.unknown[:mark] // the whole conditional expression is soft
		saved := p.soft
		p.soft = true
		p.advance()
		cond := p.parseOr()
		var els node
		if p.skipName("else") {
			els = p.parseExpr(true)
		}
		p.soft = saved
		e = &condNode{base{pos}, cond, e, els}
	}
	return e
}

// binary: next (op next)*, left-associative; ops are operator tokens, or
// the names "and" and "or".
func (p *parser) binary(next func() node, ops ...string) node {
	e := next()
	for (p.cur.kind == tOp || p.cur.kind == tName) && slices.Contains(ops, p.cur.val) {
		t := p.cur
		p.advance()
		e = &binNode{base{t.pos}, t.val, e, next()}
	}
	return e
}

func (p *parser) parseOr() node  { return p.binary(p.parseAnd, "or") }
func (p *parser) parseAnd() node { return p.binary(p.parseNot, "and") }

func (p *parser) parseNot() node {
	if p.isName("not") {
		pos := p.cur.pos
		p.advance()
		p.enter()
		defer p.leave()
		return &unaryNode{base{pos}, "not", p.parseNot()}
	}
	return p.parseCompare()
}

// compare: math1 (("==" | "!=" | "<" | "<=" | ">" | ">=" | "in" | "not" "in") math1)*
func (p *parser) parseCompare() node {
	pos := p.cur.pos
	first := p.parseMath1()
	var ops []string
	var rest []node
	for {
		switch {
		case p.cur.kind == tOp && (p.cur.val == "==" || p.cur.val == "!=" || p.cur.val == "<" || p.cur.val == "<=" || p.cur.val == ">" || p.cur.val == ">="):
			ops = append(ops, p.cur.val)
			p.advance()
		case p.isName("in"):
			ops = append(ops, "in")
			p.advance()
		case p.isName("not") && p.look().kind == tName && p.look().val == "in":
			ops = append(ops, "notin")
			p.advance()
			p.advance()
		default:
			if ops == nil {
				return first
			}
			return &compareNode{base{pos}, first, ops, rest}
		}
		rest = append(rest, p.parseMath1())
	}
}

// math1: concat (("+" | "-") concat)*
func (p *parser) parseMath1() node { return p.binary(p.parseConcat, "+", "-") }

// concat: math2 ("~" math2)*
func (p *parser) parseConcat() node { return p.binary(p.parseMath2, "~") }

// math2: pow (("*" | "/" | "//" | "%") pow)*
func (p *parser) parseMath2() node { return p.binary(p.parsePow, "*", "/", "//", "%") }

// pow: unary ("**" unary)*
func (p *parser) parsePow() node { return p.binary(func() node { return p.parseUnary(true) }, "**") }

// unary: ("-" | "+") unary(no filters) | primary postfix; then filters and tests
func (p *parser) parseUnary(withFilter bool) node {
	p.enter()
	defer p.leave()
	var e node
	if p.isOp("-") || p.isOp("+") {
		t := p.cur
		p.advance()
		e = &unaryNode{base{t.pos}, t.val, p.parseUnary(false)}
	} else {
		e = p.parsePostfix(p.parsePrimary())
	}
	if withFilter {
		e = p.parseFilterExpr(e)
	}
	return e
}

// primary: name | string+ | number | "(" tuple ")" | list | dict
func (p *parser) parsePrimary() node {
	t := p.cur
	switch t.kind {
	case tName:
		p.advance()
		switch t.val {
		case "true", "True":
			return &constNode{base{t.pos}, true}
		case "false", "False":
			return &constNode{base{t.pos}, false}
		case "none", "None":
			return &constNode{base{t.pos}, nil}
		}
		if p.refs != nil {
			switch t.val {
			case "varargs":
				p.refs.varargs = true
			case "kwargs":
				p.refs.kwargs = true
			case "caller":
				p.refs.caller = true
			}
		}
		return &nameNode{base{t.pos}, t.val}
	case tString:
		s := t.val
		p.advance()
		for p.cur.kind == tString { // adjacent literals concatenate
			s += p.cur.val
			p.advance()
		}
		return &constNode{base{t.pos}, s}
	case tInt:
		p.advance()
		v, err := strconv.ParseInt(t.val, 0, 64) // the lexer took 0b, 0o, 0x or decimal digits
		if err != nil {
			p.fail(t.pos, "integer literal out of range (ints are 64-bit here)")
		}
		return &constNode{base{t.pos}, v}
	case tFloat:
		p.advance()
		v, err := strconv.ParseFloat(t.val, 64)
		if err != nil {
			p.fail(t.pos, "invalid float literal")
		}
		return &constNode{base{t.pos}, v}
	case tOp:
		switch t.val {
		case "(":
			p.advance()
			e := p.parseTuple(true, true)
			p.expectOp(")")
			return e
		case "[":
			p.advance()
			n := &listNode{base: base{t.pos}}
			p.commaList("]", func() { n.items = append(n.items, p.parseExpr(true)) })
			return n
		case "{":
			p.advance()
			n := &dictNode{base: base{t.pos}}
			p.commaList("}", func() {
				n.keys = append(n.keys, p.parseExpr(true))
				p.expectOp(":")
				n.vals = append(n.vals, p.parseExpr(true))
			})
			return n
		}
	}
	p.fail(t.pos, "unexpected "+p.describe(t))
	return nil
}

// commaList parses item ("," item)* [","] up to closer, which it consumes.
func (p *parser) commaList(closer string, item func()) {
	for n := 0; !p.isOp(closer); n++ {
		if n > 0 {
			p.expectOp(",")
			if p.isOp(closer) {
				break
			}
		}
		item()
	}
	p.advance()
}

// postfix: ("." name | "." integer | "[" subscript "]" | "(" args ")")*
func (p *parser) parsePostfix(e node) node {
	for {
		switch {
		case p.isOp("."):
			t := p.cur
			p.advance()
			switch p.cur.kind {
			case tName:
				e = &getattrNode{base{t.pos}, e, p.cur.val}
			case tInt:
				v, _ := strconv.ParseInt(p.cur.val, 10, 64)
				e = &getitemNode{base{t.pos}, e, &constNode{base{p.cur.pos}, v}}
			default:
				p.fail(p.cur.pos, "expected name or number")
			}
			p.advance()
		case p.isOp("["):
			e = p.parseSubscript(e)
		case p.isOp("("):
			e = p.parseCall(e)
		default:
			return e
		}
	}
}

// subscript: "[" subscribed ("," subscribed)* "]", several (or none) making a
// tuple key; subscribed: expr | [expr] ":" [expr] [":" [expr]]
func (p *parser) parseSubscript(obj node) node {
	pos := p.cur.pos
	p.advance()
	if p.isOp("]") {
		p.advance()
		return &getitemNode{base{pos}, obj, &tupleNode{base{pos}, nil}}
	}
	first := p.parseSubscribed(obj, pos)
	if !p.isOp(",") {
		p.expectOp("]")
		return first
	}
	g, ok := first.(*getitemNode)
	if !ok {
		p.fail(pos, "slices inside a tuple subscript are not supported")
	}
	items := []node{g.key}
	for p.skipOp(",") && !p.isOp("]") {
		items = append(items, p.parseExpr(true))
	}
	p.expectOp("]")
	return &getitemNode{base{pos}, obj, &tupleNode{base{g.key.position()}, items}}
}

// parseSubscribed parses one subscript up to "," or "]", which it leaves.
func (p *parser) parseSubscribed(obj node, pos int) node {
	var parts [3]node
	n, slice := 0, false
	for {
		if p.isOp(":") {
			slice = true
			n++
			if n > 2 {
				p.fail(p.cur.pos, "expected ']'")
			}
			p.advance()
			continue
		}
		if p.isOp("]") || p.isOp(",") {
			break
		}
		if parts[n] != nil {
			p.fail(p.cur.pos, "expected ']'")
		}
		parts[n] = p.parseExpr(true)
	}
	if !slice {
		if parts[0] == nil {
			p.fail(pos, "expected an index")
		}
		return &getitemNode{base{pos}, obj, parts[0]}
	}
	return &sliceNode{base{pos}, obj, parts[0], parts[1], parts[2]}
}

// call args: "(" [arg ("," arg)*] [","] ")", arg: expr | name "=" expr | "*" expr | "**" expr
func (p *parser) parseCallArgs() (args []node, kwNames []string, kwVals []node, dynArgs, dynKwargs node) {
	p.expectOp("(")
	for !p.isOp(")") {
		if len(args)+len(kwNames) > 0 || dynArgs != nil || dynKwargs != nil {
			p.expectOp(",")
			if p.isOp(")") {
				break
			}
		}
		switch {
		case p.isOp("*"):
			p.advance()
			dynArgs = p.parseExpr(true)
		case p.isOp("**"):
			p.advance()
			dynKwargs = p.parseExpr(true)
		case p.cur.kind == tName && p.look().kind == tOp && p.look().val == "=":
			kwNames = append(kwNames, p.cur.val)
			p.advance()
			p.advance()
			kwVals = append(kwVals, p.parseExpr(true))
		default:
			if len(kwNames) > 0 || dynKwargs != nil {
				p.fail(p.cur.pos, "positional argument follows keyword argument")
			}
			args = append(args, p.parseExpr(true))
		}
	}
	p.advance()
	return
}

func (p *parser) parseCall(fn node) node {
	pos := fn.position() // errors point at the callee: "raise_exception(...)"
	args, kn, kv, da, dk := p.parseCallArgs()
	return &callNode{base{pos}, fn, args, kn, kv, da, dk}
}

// filter expression: (filter | test | call)*
func (p *parser) parseFilterExpr(e node) node {
	for {
		switch {
		case p.isOp("|"):
			p.advance()
			fs := p.parseFilterChain(e)
			e = fs[len(fs)-1]
		case p.isName("is"):
			e = p.parseTest(e)
		case p.isOp("("):
			e = p.parseCall(e)
		default:
			return e
		}
	}
}

// filter chain: name ["(" args ")"] ("|" name ["(" args ")"])*; the first
// filter applies to arg, each next one to the one before.
func (p *parser) parseFilterChain(arg node) []*filterNode {
	var fs []*filterNode
	for {
		t := p.expectName()
		name := t.val
		for p.isOp(".") {
			p.advance()
			name += "." + p.expectName().val
		}
		_, known := filters[name]
		p.checkKnown(t, name, known, "filter")
		f := &filterNode{base: base{t.pos}, arg: arg, name: name}
		if p.isOp("(") {
			var da, dk node
			f.args, f.kwNames, f.kwVals, da, dk = p.parseCallArgs()
			if da != nil || dk != nil {
				p.fail(t.pos, "*args and **kwargs in filter calls are not supported")
			}
		}
		fs = append(fs, f)
		arg = f
		if !p.isOp("|") {
			return fs
		}
		p.advance()
	}
}

// test: "is" ["not"] name [ "(" args ")" | primary postfix ]
func (p *parser) parseTest(e node) node {
	pos := p.cur.pos
	p.advance()
	negated := p.skipName("not")
	nt := p.cur
	name := p.expectName().val
	for p.isOp(".") {
		p.advance()
		name += "." + p.expectName().val
	}
	_, known := tests[name]
	p.checkKnown(nt, name, known, "test")
	n := &testNode{base: base{pos}, arg: e, name: name}
	switch {
	case p.isOp("("):
		var da, dk node
		n.args, n.kwNames, n.kwVals, da, dk = p.parseCallArgs()
		if da != nil || dk != nil {
			p.fail(pos, "*args and **kwargs in tests are not supported")
		}
	case p.cur.kind == tString || p.cur.kind == tInt || p.cur.kind == tFloat ||
		p.cur.kind == tName && p.cur.val != "else" && p.cur.val != "or" && p.cur.val != "and" ||
		p.isOp("[") || p.isOp("{"):
		if p.isName("is") {
			p.fail(p.cur.pos, "you cannot chain multiple tests with is")
		}
		n.args = []node{p.parsePostfix(p.parsePrimary())}
	}
	if negated {
		return &unaryNode{base{pos}, "not", n}
	}
	return n
}
