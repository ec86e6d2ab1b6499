package jinja

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Error kinds: jinja2's (and Python's) exception names.
const (
	KindSyntax    = "TemplateSyntaxError"
	KindAssertion = "TemplateAssertionError" // an unknown filter or test, found when parsing
	KindTemplate  = "TemplateError"          // raised by the template itself: raise_exception(message)
	KindUndefined = "UndefinedError"
	KindType      = "TypeError"
	KindValue     = "ValueError"
	KindSecurity  = "SecurityError"
	KindRuntime   = "TemplateRuntimeError"
	KindOverflow  = "OverflowError" // range past the sandbox's MAX_RANGE
	KindZeroDiv   = "ZeroDivisionError"
	KindAttribute = "AttributeError"
	KindFilterArg = "FilterArgumentError"
	KindLimit     = "LimitError" // our bounds: steps, call depth, output size
)

// Error is a syntax or runtime error, with the position of the construct at
// fault: Line and Col are 1-based, Col in bytes.
type Error struct {
	Kind      string
	Line, Col int
	Msg       string
	pos       int // byte offset in the normalised source
}

func (e *Error) Error() string {
	return fmt.Sprintf("%d:%d: %s: %s", e.Line, e.Col, e.Kind, e.Msg)
}

func (e *Error) locate(src string) {
	p := min(max(e.pos, 0), len(src))
	e.Line = strings.Count(src[:p], "\n") + 1
	e.Col = p - strings.LastIndexByte(src[:p], '\n')
}

// Options bound and parameterise one render.
type Options struct {
	Now       time.Time // what strftime_now sees; zero: time.Now()
	MaxOutput int       // bytes of output (and of any one string built); 0: DefaultMaxOutput
	MaxSteps  int       // loop iterations plus calls; 0: DefaultMaxSteps
}

// Defaults of Options, generous for chat templates (the corpus's largest
// render takes a few thousand steps and a few tens of KiB).
const (
	DefaultMaxOutput = 4 << 20
	DefaultMaxSteps  = 1_000_000
)

// maxCallDepth bounds macro recursion (jinja2 has Python's recursion limit).
var maxCallDepth = 200

// frame is one scope. A for loop's body gets a frame per iteration whose
// loop variable and single-name target live in fields, so that most
// iterations allocate no map.
type frame struct {
	vars       map[string]any // nil until something is set
	loop       *loopContext   // "loop" in a loop body
	targetName string         // the loop target, when it is one name
	target     any
	parent     *frame
}

func (f *frame) lookup(name string) (any, bool) {
	for ; f != nil; f = f.parent {
		if v, ok := f.vars[name]; ok {
			return v, true
		}
		if f.targetName == name && name != "" {
			return f.target, true
		}
		if f.loop != nil && name == "loop" {
			return f.loop, true
		}
	}
	return nil, false
}

func (f *frame) set(name string, v any) {
	if f.vars == nil {
		f.vars = make(map[string]any, 4)
	}
	f.vars[name] = v
}

func newFrame(parent *frame) *frame { return &frame{parent: parent} }

type ctl int

const (
	ctlNone ctl = iota
	ctlBreak
	ctlContinue
)

// state is one render's: output, counters, clock. The Template is not touched.
type state struct {
	out      *strings.Builder
	maxOut   int
	maxSteps int
	steps    int
	depth    int
	now      time.Time
	pos      int // the construct being evaluated, for errors raised by builtins
}

// Render renders the template with vars as its variables. The values may be
// nil, bool, string, int, int64, float64, json.Number, []any, map[string]any
// (its keys iterate sorted), *Dict and what DecodeJSON returns. Runtime
// errors are *Error values; a template's raise_exception has Kind
// KindTemplate and its message as Msg.
func (t *Template) Render(vars map[string]any, opt Options) (out string, err error) {
	st := &state{out: &strings.Builder{}, maxOut: opt.MaxOutput, maxSteps: opt.MaxSteps, now: opt.Now}
	if st.maxOut <= 0 {
		st.maxOut = DefaultMaxOutput
	}
	if st.maxSteps <= 0 {
		st.maxSteps = DefaultMaxSteps
	}
	if st.now.IsZero() {
		st.now = time.Now()
	}
	top := newFrame(nil)
	for k, v := range vars {
		c, err := fromGo(v, 0)
		if err != nil {
			return "", &Error{Kind: KindType, Line: 1, Col: 1, Msg: fmt.Sprintf("variable %q: %v", k, err)}
		}
		top.set(k, c)
	}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			e.locate(t.src)
			out, err = "", e
		}
	}()
	st.exec(t.body, top)
	return st.out.String(), nil
}

func (st *state) fail(kind, format string, args ...any) {
	panic(&Error{Kind: kind, Msg: fmt.Sprintf(format, args...), pos: st.pos})
}

func (st *state) failAt(pos int, kind, format string, args ...any) {
	panic(&Error{Kind: kind, Msg: fmt.Sprintf(format, args...), pos: pos})
}

func (st *state) step() {
	st.steps++
	if st.steps > st.maxSteps {
		st.fail(KindLimit, "more than %d steps (loop iterations and calls)", st.maxSteps)
	}
}

func (st *state) write(s string) {
	if st.out.Len()+len(s) > st.maxOut {
		st.fail(KindLimit, "output longer than %d bytes", st.maxOut)
	}
	st.out.WriteString(s)
}

// checkLen refuses a string or list about to be built with n bytes or items.
func (st *state) checkLen(n int) {
	if n > st.maxOut {
		st.fail(KindLimit, "value longer than %d bytes or items", st.maxOut)
	}
}

// capture renders body in f into a fresh buffer and returns the text.
func (st *state) capture(body []node, f *frame) string {
	s, _ := st.captureCtl(body, f)
	return s
}

// captureCtl is capture for the bodies of set and filter blocks, which
// jinja2 compiles inline: a break or continue in them leaves the block
// (its text unused) and goes on to the enclosing loop.
func (st *state) captureCtl(body []node, f *frame) (string, ctl) {
	saved := st.out
	st.out = &strings.Builder{}
	defer func() { st.out = saved }()
	c := st.exec(body, f)
	return st.out.String(), c
}

func (st *state) undefinedError(u Undefined) {
	if u.security {
		st.fail(KindSecurity, "%s", u.hint)
	}
	st.fail(KindUndefined, "%s", u.hint)
}

func (st *state) exec(body []node, f *frame) ctl {
	for _, n := range body {
		if c := st.execOne(n, f); c != ctlNone {
			return c
		}
	}
	return ctlNone
}

func (st *state) execOne(n node, f *frame) ctl {
	switch n := n.(type) {
	case *textNode:
		st.pos = n.pos
		st.write(n.text)
	case *outputNode:
		v := st.eval(n.expr, f)
		st.pos = n.pos
		st.write(pyStr(v))
	case *ifNode:
		if truthy(st.eval(n.cond, f)) {
			return st.exec(n.body, f)
		}
		return st.exec(n.else_, f)
	case *forNode:
		return st.execFor(n, f)
	case *setNode:
		st.assign(n.target, st.eval(n.value, f), f)
	case *setBlockNode:
		text, c := st.captureCtl(n.body, newFrame(f))
		if c != ctlNone {
			return c
		}
		st.assign(n.target, st.applyFilters(n.filter, text, f), f)
	case *macroNode:
		f.set(n.name, &macro{name: n.name, params: n.params, defaults: n.defaults, body: n.body, closure: f, catches: n.catches})
	case *callBlockNode:
		caller := &macro{name: "caller", params: n.params, defaults: n.defaults, body: n.body, closure: f, catches: n.catches}
		v := st.evalCall(n.call, f, caller)
		st.pos = n.pos
		st.write(pyStr(v))
	case *filterBlockNode:
		text, c := st.captureCtl(n.body, newFrame(f))
		if c != ctlNone {
			return c
		}
		st.write(pyStr(st.applyFilters(n.filter, text, f)))
	case *withNode:
		inner := newFrame(f)
		vals := make([]any, len(n.values))
		for i, e := range n.values {
			vals[i] = st.eval(e, f)
		}
		for i, t := range n.targets {
			st.assign(t, vals[i], inner)
		}
		return st.exec(n.body, inner)
	case *breakNode:
		return ctlBreak
	case *continueNode:
		return ctlContinue
	default:
		st.failAt(n.position(), KindRuntime, "unknown statement %T", n)
	}
	return ctlNone
}

func (st *state) execFor(n *forNode, f *frame) ctl {
	seq := st.eval(n.iter, f)
	st.pos = n.iter.position()
	st.loop(n, f, seq, 0)
	return ctlNone
}

// loop runs a for loop over seq; depth0 counts the recursion of a
// recursive loop, whose loop(items) renders the body again over items.
func (st *state) loop(n *forNode, f *frame, seq any, depth0 int) {
	items := st.iterate(seq)
	if n.filter != nil {
		var kept []any
		for _, it := range items {
			st.step()
			tf := newFrame(f)
			st.assign(n.target, it, tf)
			if truthy(st.eval(n.filter, tf)) {
				kept = append(kept, it)
			}
		}
		items = kept
	}
	if len(items) == 0 {
		st.exec(n.else_, newFrame(f))
		return
	}
	lc := &loopContext{items: items, depth0: depth0}
	if n.recursive {
		if depth0 >= maxCallDepth {
			st.fail(KindLimit, "recursive loop nested deeper than %d", maxCallDepth)
		}
		lc.recurse = func(seq any) string {
			saved := st.out
			st.out = &strings.Builder{}
			defer func() { st.out = saved }()
			st.loop(n, f, seq, depth0+1)
			return st.out.String()
		}
	}
	for i, it := range items {
		st.pos = n.pos
		st.step()
		lc.i = i
		inner := &frame{parent: f, loop: lc}
		if name, ok := n.target.(*nameNode); ok && name.name != "loop" {
			inner.targetName, inner.target = name.name, it
		} else {
			st.assign(n.target, it, inner)
		}
		if st.exec(n.body, inner) == ctlBreak {
			break
		}
	}
}

func (st *state) assign(target node, v any, f *frame) {
	switch t := target.(type) {
	case *nameNode:
		if f.targetName == t.name { // {% set %} of the loop target inside the body
			f.targetName = ""
		}
		f.set(t.name, v)
	case *tupleNode:
		st.pos = t.pos
		items := st.iterate(v)
		if len(items) != len(t.items) {
			if len(items) < len(t.items) {
				st.fail(KindValue, "not enough values to unpack (expected %d, got %d)", len(t.items), len(items))
			}
			st.fail(KindValue, "too many values to unpack (expected %d)", len(t.items))
		}
		for i, x := range t.items {
			st.assign(x, items[i], f)
		}
	case *nsAttrNode:
		ns, _ := f.lookup(t.ns)
		n, ok := ns.(*Namespace)
		if !ok {
			st.failAt(t.pos, KindRuntime, "cannot assign attribute on non-namespace object")
		}
		n.d.Set(t.attr, v)
	default:
		st.failAt(target.position(), KindRuntime, "cannot assign to %T", target)
	}
}

// iterate is Python's list(iter(v)).
func (st *state) iterate(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case Tuple:
		return x
	case *Dict:
		return x.keys
	case string:
		return chars(x)
	case Markup:
		return chars(string(x))
	case Undefined:
		return nil
	case *loopContext:
		return x.items
	case *dictView:
		return x.items
	case *generator:
		if x.used {
			return nil
		}
		x.used = true
		return x.gen()
	}
	st.fail(KindType, "'%s' object is not iterable", typeName(v))
	return nil
}

func chars(s string) []any {
	l := make([]any, 0, len(s))
	for _, r := range s {
		l = append(l, string(r))
	}
	return l
}

func (st *state) lookup(name string, f *frame) any {
	if v, ok := f.lookup(name); ok {
		return v
	}
	if g, ok := globals[name]; ok {
		return g
	}
	return Undefined{hint: fmt.Sprintf("'%s' is undefined", name)}
}

func (st *state) eval(n node, f *frame) any {
	switch n := n.(type) {
	case *constNode:
		return n.val
	case *nameNode:
		return st.lookup(n.name, f)
	case *listNode:
		l := make([]any, len(n.items))
		for i, e := range n.items {
			l[i] = st.eval(e, f)
		}
		return l
	case *tupleNode:
		l := make(Tuple, len(n.items))
		for i, e := range n.items {
			l[i] = st.eval(e, f)
		}
		return l
	case *dictNode:
		d := NewDict()
		for i, k := range n.keys {
			kv := st.eval(k, f)
			if !d.Set(kv, st.eval(n.vals[i], f)) {
				st.failAt(k.position(), KindType, "unhashable type: '%s'", typeName(kv))
			}
		}
		return d
	case *getattrNode:
		obj := st.eval(n.obj, f)
		st.pos = n.pos
		return st.getattr(obj, n.attr)
	case *getitemNode:
		obj := st.eval(n.obj, f)
		key := st.eval(n.key, f)
		st.pos = n.pos
		return st.getitem(obj, key)
	case *sliceNode:
		return st.evalSlice(n, f)
	case *callNode:
		return st.evalCall(n, f, nil)
	case *filterNode:
		return st.applyFilters([]*filterNode{n}, st.eval(n.arg, f), f)
	case *testNode:
		return st.evalTest(n, f)
	case *unaryNode:
		v := st.eval(n.arg, f)
		st.pos = n.pos
		if n.op == "not" {
			return !truthy(v)
		}
		return st.unary(n.op, v)
	case *binNode:
		a := st.eval(n.left, f)
		switch n.op {
		case "and":
			if !truthy(a) {
				return a
			}
			return st.eval(n.right, f)
		case "or":
			if truthy(a) {
				return a
			}
			return st.eval(n.right, f)
		}
		b := st.eval(n.right, f)
		st.pos = n.pos
		return st.binop(n.op, a, b)
	case *compareNode:
		a := st.eval(n.first, f)
		for i, op := range n.ops {
			b := st.eval(n.rest[i], f)
			st.pos = n.pos
			if !st.compare(op, a, b) {
				return false
			}
			a = b
		}
		return true
	case *condNode:
		if truthy(st.eval(n.cond, f)) {
			return st.eval(n.then, f)
		}
		if n.else_ == nil {
			return Undefined{hint: "the inline if-expression evaluated to false and no else section was defined"}
		}
		return st.eval(n.else_, f)
	}
	st.failAt(n.position(), KindRuntime, "cannot evaluate %T", n)
	return nil
}

func (st *state) evalSlice(n *sliceNode, f *frame) any {
	obj := st.eval(n.obj, f)
	var idx [3]any
	for i, e := range []node{n.start, n.stop, n.step} {
		if e != nil {
			idx[i] = st.eval(e, f)
		}
	}
	st.pos = n.pos
	if u, ok := obj.(Undefined); ok {
		st.undefinedError(u)
	}
	var b [3]*int64
	for i, v := range idx {
		switch x := v.(type) {
		case nil:
		case bool, int64:
			_, iv, _, _ := number(x)
			b[i] = &iv
		default:
			st.fail(KindType, "slice indices must be integers or None")
		}
	}
	switch x := obj.(type) {
	case []any:
		return st.sliceItems(x, b)
	case Tuple:
		return Tuple(st.sliceItems(x, b))
	case string, Markup:
		s, _ := asString(x)
		rs := []rune(s)
		start, stop, step := st.sliceBounds(len(rs), b)
		var out []rune
		for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
			out = append(out, rs[i])
		}
		return sameKind(x, string(out))
	}
	if _, ok := obj.(*Dict); ok {
		st.fail(KindType, "unhashable type: 'slice'")
	}
	st.fail(KindType, "'%s' object is not subscriptable", typeName(obj))
	return nil
}

func (st *state) sliceItems(x []any, b [3]*int64) []any {
	start, stop, step := st.sliceBounds(len(x), b)
	out := []any{}
	for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
		out = append(out, x[i])
	}
	return out
}

// sliceBounds is PySlice_AdjustIndices.
func (st *state) sliceBounds(n int, b [3]*int64) (start, stop, step int) {
	step = 1
	if b[2] != nil {
		if *b[2] == 0 {
			st.fail(KindValue, "slice step cannot be zero")
		}
		step = int(max(min(*b[2], math.MaxInt32), -math.MaxInt32))
	}
	clamp := func(p *int64, def int) int {
		if p == nil {
			return def
		}
		v := int(max(min(*p, math.MaxInt32), math.MinInt32))
		if v < 0 {
			v += n
			if v < 0 {
				if step < 0 {
					return -1
				}
				return 0
			}
		} else if v >= n {
			if step < 0 {
				return n - 1
			}
			return n
		}
		return v
	}
	if step > 0 {
		return clamp(b[0], 0), clamp(b[1], n), step
	}
	return clamp(b[0], n-1), clamp(b[1], -1), step
}

// kwarg is one keyword argument of a call.
type kwarg struct {
	name string
	val  any
}

func (st *state) evalCall(n *callNode, f *frame, caller *macro) any {
	fn := st.eval(n.fn, f)
	args := make([]any, 0, len(n.args))
	for _, a := range n.args {
		args = append(args, st.eval(a, f))
	}
	if n.dynArgs != nil {
		v := st.eval(n.dynArgs, f)
		st.pos = n.dynArgs.position()
		args = append(args, st.iterate(v)...)
	}
	kw := make([]kwarg, 0, len(n.kwNames))
	for i, name := range n.kwNames {
		kw = append(kw, kwarg{name, st.eval(n.kwVals[i], f)})
	}
	if n.dynKwargs != nil {
		v := st.eval(n.dynKwargs, f)
		d, ok := v.(*Dict)
		if !ok {
			st.failAt(n.dynKwargs.position(), KindType, "argument after ** must be a mapping, not %s", typeName(v))
		}
		for i, k := range d.keys {
			ks, ok := k.(string)
			if !ok {
				st.failAt(n.dynKwargs.position(), KindType, "keywords must be strings")
			}
			kw = append(kw, kwarg{ks, d.vals[i]})
		}
	}
	if caller != nil {
		kw = append(kw, kwarg{"caller", caller})
	}
	st.pos = n.pos
	return st.call(fn, args, kw)
}

func (st *state) call(fn any, args []any, kw []kwarg) any {
	st.step()
	switch x := fn.(type) {
	case Undefined:
		st.undefinedError(x)
	case *function:
		return x.fn(st, args, kw)
	case *macro:
		return st.callMacro(x, args, kw)
	case *loopContext:
		if x.recurse == nil {
			st.fail(KindType, "tried to call non recursive loop, maybe you forgot the 'recursive' modifier")
		}
		p := st.bind("loop", args, kw, "iterable")
		return x.recurse(p[0])
	}
	st.fail(KindType, "'%s' object is not callable", typeName(fn))
	return nil
}

// macro is a {% macro %} (or the body of a {% call %} block, as caller).
type macro struct {
	name     string
	params   []string
	defaults []node
	body     []node
	closure  *frame
	catches  catches
}

func (st *state) callMacro(m *macro, args []any, kw []kwarg) any {
	if st.depth >= maxCallDepth {
		st.fail(KindLimit, "macro calls nested deeper than %d", maxCallDepth)
	}
	pos := st.pos
	fr := newFrame(m.closure)
	var varargs []any
	if len(args) > len(m.params) && !m.catches.varargs {
		st.fail(KindType, "macro '%s' takes not more than %d argument(s)", m.name, len(m.params))
	}
	for i, a := range args {
		if i < len(m.params) {
			fr.set(m.params[i], a)
		} else {
			varargs = append(varargs, a)
		}
	}
	extra := NewDict()
	for _, k := range kw {
		if k.name == "caller" && m.catches.caller {
			fr.set("caller", k.val)
			continue
		}
		if i := slices.Index(m.params, k.name); i >= 0 {
			if i < len(args) {
				st.fail(KindType, "macro '%s' got multiple values for argument '%s'", m.name, k.name)
			}
			fr.set(k.name, k.val)
			continue
		}
		if !m.catches.kwargs {
			st.fail(KindType, "macro '%s' takes no keyword argument '%s'", m.name, k.name)
		}
		extra.Set(k.name, k.val)
	}
	fr.set("varargs", Tuple(varargs))
	fr.set("kwargs", extra)
	firstDefault := len(m.params) - len(m.defaults)
	st.depth++
	defer func() { st.depth-- }()
	for i, p := range m.params {
		if _, ok := fr.vars[p]; ok {
			continue
		}
		if i >= firstDefault {
			fr.set(p, st.eval(m.defaults[i-firstDefault], fr))
		} else {
			fr.set(p, Undefined{hint: fmt.Sprintf("parameter '%s' was not provided", p)})
		}
	}
	st.pos = pos
	return st.capture(m.body, fr)
}

// evalArgs evaluates a filter's or test's arguments, the value first.
func (st *state) evalArgs(v any, args []node, kwNames []string, kwVals []node, f *frame) ([]any, []kwarg) {
	vals := make([]any, 0, len(args)+1)
	vals = append(vals, v)
	for _, a := range args {
		vals = append(vals, st.eval(a, f))
	}
	kw := make([]kwarg, len(kwNames))
	for i, name := range kwNames {
		kw[i] = kwarg{name, st.eval(kwVals[i], f)}
	}
	return vals, kw
}

func (st *state) applyFilters(fs []*filterNode, v any, f *frame) any {
	for _, fn := range fs {
		args, kw := st.evalArgs(v, fn.args, fn.kwNames, fn.kwVals, f)
		st.pos = fn.pos
		flt, ok := filters[fn.name]
		if !ok {
			st.fail(KindRuntime, "no filter named '%s'", fn.name)
		}
		st.step()
		v = flt(st, args, kw)
	}
	return v
}

func (st *state) evalTest(n *testNode, f *frame) any {
	args, kw := st.evalArgs(st.eval(n.arg, f), n.args, n.kwNames, n.kwVals, f)
	st.pos = n.pos
	t, ok := tests[n.name]
	if !ok {
		st.fail(KindRuntime, "no test named '%s'", n.name)
	}
	return t(st, args, kw)
}

// objDesc names an object as jinja2's undefined hints do.
func objDesc(v any) string {
	if v == nil {
		return "None"
	}
	return "'" + typeName(v) + " object'"
}

// getattr is the sandbox's getattr: a Python attribute first (methods),
// then the item of that name, else undefined.
func (st *state) getattr(obj any, name string) any {
	if u, ok := obj.(Undefined); ok {
		st.undefinedError(u)
	}
	if v, ok := st.pyAttr(obj, name); ok {
		return v
	}
	if v, ok := item(obj, name); ok {
		return v
	}
	return Undefined{hint: fmt.Sprintf("%s has no attribute '%s'", objDesc(obj), name)}
}

// getitem is the sandbox's getitem: the item first, then for a string key
// the attribute of that name, else undefined.
func (st *state) getitem(obj, key any) any {
	if u, ok := obj.(Undefined); ok {
		st.undefinedError(u)
	}
	if v, ok := item(obj, key); ok {
		return v
	}
	if s, ok := key.(string); ok {
		if v, ok := st.pyAttr(obj, s); ok {
			return v
		}
		return Undefined{hint: fmt.Sprintf("%s has no attribute '%s'", objDesc(obj), s)}
	}
	return Undefined{hint: fmt.Sprintf("%s has no element %s", objDesc(obj), pyRepr(key))}
}

// item is Python's obj[key] where it succeeds.
func item(obj, key any) (any, bool) {
	switch x := obj.(type) {
	case *Dict:
		return x.Get(key)
	case []any:
		return index(x, key)
	case Tuple:
		return index(x, key)
	case string, Markup:
		s, _ := asString(x)
		if _, i, isInt, ok := number(key); ok && isInt {
			rs := []rune(s)
			if i < 0 {
				i += int64(len(rs))
			}
			if i >= 0 && i < int64(len(rs)) {
				return string(rs[i]), true
			}
		}
	}
	return nil, false
}

func index(x []any, key any) (any, bool) {
	if _, i, isInt, ok := number(key); ok && isInt {
		if i < 0 {
			i += int64(len(x))
		}
		if i >= 0 && i < int64(len(x)) {
			return x[i], true
		}
	}
	return nil, false
}

func (st *state) unary(op string, v any) any {
	if u, ok := v.(Undefined); ok {
		st.undefinedError(u)
	}
	f, i, isInt, ok := number(v)
	if !ok {
		st.fail(KindType, "bad operand type for unary %s: '%s'", op, typeName(v))
	}
	if op == "+" {
		if isInt {
			return i
		}
		return f
	}
	if isInt {
		return -i
	}
	return -f
}

func (st *state) compare(op string, a, b any) bool {
	switch op {
	case "==":
		return pyEq(a, b)
	case "!=":
		return !pyEq(a, b)
	case "in":
		return st.contains(b, a)
	case "notin":
		return !st.contains(b, a)
	}
	for _, v := range []any{a, b} {
		if u, ok := v.(Undefined); ok {
			st.undefinedError(u)
		}
	}
	c, err := pyCompare(a, b)
	if err != nil {
		st.fail(KindType, "'%s' not supported between instances of '%s' and '%s'", op, typeName(a), typeName(b))
	}
	switch op {
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}

// contains is Python's x in container.
func (st *state) contains(container, x any) bool {
	switch c := container.(type) {
	case string, Markup:
		s, _ := asString(c)
		sub, ok := asString(x)
		if !ok {
			st.fail(KindType, "'in <string>' requires string as left operand, not %s", typeName(x))
		}
		return strings.Contains(s, sub)
	case []any:
		return slices.ContainsFunc(c, func(e any) bool { return pyEq(e, x) })
	case Tuple:
		return slices.ContainsFunc(c, func(e any) bool { return pyEq(e, x) })
	case *generator:
		return slices.ContainsFunc(st.iterate(c), func(e any) bool { return pyEq(e, x) })
	case *dictView:
		if c.kind == "dict_keys" {
			if _, ok := hashKey(x); !ok {
				st.fail(KindType, "unhashable type: '%s'", typeName(x))
			}
		}
		return slices.ContainsFunc(c.items, func(e any) bool { return pyEq(e, x) })
	case *Dict:
		if _, ok := hashKey(x); !ok {
			st.fail(KindType, "unhashable type: '%s'", typeName(x))
		}
		_, ok := c.Get(x)
		return ok
	case Undefined:
		return false
	}
	st.fail(KindType, "argument of type '%s' is not iterable", typeName(container))
	return false
}

func (st *state) binop(op string, a, b any) any {
	if op == "~" {
		s := pyStr(a) + pyStr(b)
		st.checkLen(len(s))
		return s
	}
	if _, ok := asString(a); ok && op == "%" {
		return st.percentFormat(pyStr(a), b) // str % Undefined is no error in Python
	}
	for _, v := range []any{a, b} {
		if u, ok := v.(Undefined); ok {
			st.undefinedError(u)
		}
	}
	for _, v := range []any{a, b} {
		if _, ok := v.(bigInt); ok {
			st.fail(KindOverflow, "arithmetic on an integer beyond 64 bits (ints are 64-bit here)")
		}
	}
	fa, ia, aInt, aNum := number(a)
	fb, ib, bInt, bNum := number(b)
	if aNum && bNum {
		return st.arith(op, fa, ia, aInt, fb, ib, bInt)
	}
	switch op {
	case "+":
		if sa, ok := asString(a); ok {
			sb, ok := asString(b)
			if !ok {
				st.fail(KindType, "can only concatenate str (not \"%s\") to str", typeName(b))
			}
			st.checkLen(len(sa) + len(sb))
			_, ma := a.(Markup)
			_, mb := b.(Markup)
			switch {
			case ma && !mb:
				return Markup(sa + escapeHTML(sb))
			case mb && !ma:
				return Markup(escapeHTML(sa) + sb)
			case ma && mb:
				return Markup(sa + sb)
			}
			return sa + sb
		}
		switch x := a.(type) {
		case []any:
			if y, ok := b.([]any); ok {
				st.checkLen(len(x) + len(y))
				return append(slices.Clip(x), y...)
			}
			st.fail(KindType, "can only concatenate list (not \"%s\") to list", typeName(b))
		case Tuple:
			if y, ok := b.(Tuple); ok {
				st.checkLen(len(x) + len(y))
				return append(slices.Clip(x), y...)
			}
			st.fail(KindType, "can only concatenate tuple (not \"%s\") to tuple", typeName(b))
		}
	case "*":
		seq, n := a, ib
		if aInt && aNum {
			seq, n = b, ia
		} else if !(bInt && bNum) {
			break
		}
		n = max(n, 0)
		switch x := seq.(type) {
		case string, Markup:
			s, _ := asString(x)
			st.checkLen(len(s) * int(min(n, int64(st.maxOut)+1)))
			r := strings.Repeat(s, int(n))
			if _, ok := x.(Markup); ok {
				return Markup(r)
			}
			return r
		case []any, Tuple:
			items := st.iterate(x)
			st.checkLen(len(items) * int(min(n, int64(st.maxOut)+1)))
			out := make([]any, 0, len(items)*int(n))
			for range n {
				out = append(out, items...)
			}
			if _, ok := x.(Tuple); ok {
				return Tuple(out)
			}
			return out
		}
	}
	st.fail(KindType, "unsupported operand type(s) for %s: '%s' and '%s'", op, typeName(a), typeName(b))
	return nil
}

func (st *state) arith(op string, fa float64, ia int64, aInt bool, fb float64, ib int64, bInt bool) any {
	ints := aInt && bInt
	switch op {
	case "+":
		if ints {
			return ia + ib
		}
		return fa + fb
	case "-":
		if ints {
			return ia - ib
		}
		return fa - fb
	case "*":
		if ints {
			return ia * ib
		}
		return fa * fb
	case "/":
		if fb == 0 {
			st.fail(KindZeroDiv, "division by zero")
		}
		return fa / fb
	case "//":
		if fb == 0 {
			st.fail(KindZeroDiv, "integer division or modulo by zero")
		}
		if ints {
			q := ia / ib
			if (ia%ib != 0) && ((ia < 0) != (ib < 0)) {
				q--
			}
			return q
		}
		d, _ := floatDivmod(fa, fb)
		return d
	case "%":
		if fb == 0 {
			st.fail(KindZeroDiv, "integer division or modulo by zero")
		}
		if ints {
			m := ia % ib
			if m != 0 && (m < 0) != (ib < 0) {
				m += ib
			}
			return m
		}
		_, m := floatDivmod(fa, fb)
		return m
	case "**":
		if fa == 0 && fb < 0 {
			st.fail(KindZeroDiv, "0.0 cannot be raised to a negative power")
		}
		if ints && ib >= 0 {
			switch {
			case ib == 0:
				return int64(1)
			case ia == 0 || ia == 1:
				return ia
			case ia == -1:
				return int64(1 - 2*(ib%2))
			}
			r := int64(1)
			for range ib { // |ia| >= 2: at most 63 rounds before the overflow
				n := r * ia
				if n/ia != r {
					st.fail(KindOverflow, "integer too large (ints are 64-bit here)")
				}
				r = n
			}
			return r
		}
		r := math.Pow(fa, fb)
		if math.IsInf(r, 0) && !math.IsInf(fa, 0) && !math.IsInf(fb, 0) {
			st.fail(KindOverflow, "(34, 'Numerical result out of range')") // Python's float ** overflows loudly
		}
		return r
	}
	st.fail(KindType, "unsupported operand %s", op)
	return nil
}

// floatDivmod is CPython's float divmod (floatobject.c): the quotient from
// (a - fmod(a, b)) / b, so that 1 // 0.1 is 9.0 as in Python.
func floatDivmod(a, b float64) (div, mod float64) {
	mod = math.Mod(a, b)
	div = (a - mod) / b
	if mod != 0 {
		if (b < 0) != (mod < 0) {
			mod += b
			div -= 1
		}
	} else {
		mod = math.Copysign(0, b)
	}
	if div != 0 {
		f := math.Floor(div)
		if div-f > 0.5 {
			f++
		}
		div = f
	} else {
		div = math.Copysign(0, a/b)
	}
	return div, mod
}

func escapeHTML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\"", "&#34;", "'", "&#39;").Replace(s)
}
