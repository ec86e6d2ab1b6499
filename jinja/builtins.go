package jinja

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// function is a built-in callable: a global, a filter, a test or a method
// bound to its object.
type function struct {
	name string
	fn   func(st *state, args []any, kw []kwarg) any
}

type missingT struct{}

// missing marks a parameter that the call did not give.
var missing any = missingT{}

// bind matches a call's arguments to parameter names as Python does.
func (st *state) bind(fname string, args []any, kw []kwarg, names ...string) []any {
	out := make([]any, len(names))
	for i := range out {
		out[i] = missing
	}
	if len(args) > len(names) {
		st.fail(KindType, "%s() takes at most %d arguments (%d given)", fname, len(names), len(args))
	}
	copy(out, args)
	for _, k := range kw {
		i := slices.Index(names, k.name)
		if i < 0 {
			st.fail(KindType, "%s() got an unexpected keyword argument '%s'", fname, k.name)
		}
		if out[i] != missing {
			st.fail(KindType, "%s() got multiple values for argument '%s'", fname, k.name)
		}
		out[i] = k.val
	}
	return out
}

func orDefault(v, def any) any {
	if v == missing {
		return def
	}
	return v
}

// generator is what jinja2's map, select, reject, selectattr, rejectattr,
// unique, items, batch and slice filters return: true whatever it holds,
// without len, iterable once, and lazy: the filter's work (and its errors)
// happens when the result is first iterated.
type generator struct {
	name string // the Python function's, for printing
	gen  func() []any
	used bool
}

// lazy makes f a generator filter.
func lazy(name string, f func(*state, []any, []kwarg) []any) func(*state, []any, []kwarg) any {
	return func(st *state, a []any, kw []kwarg) any {
		pos := st.pos
		return &generator{name: name, gen: func() []any {
			saved := st.pos
			st.pos = pos
			defer func() { st.pos = saved }()
			return f(st, a, kw)
		}}
	}
}

func (st *state) intArg(fname string, v any) int64 {
	_, i, isInt, ok := number(v)
	if !ok || !isInt {
		st.fail(KindType, "%s(): '%s' object cannot be interpreted as an integer", fname, typeName(v))
	}
	return i
}

func (st *state) strArg(fname string, v any) string {
	s, ok := asString(v)
	if !ok {
		st.fail(KindType, "%s() argument must be str, not %s", fname, typeName(v))
	}
	return s
}

// softStr is jinja2's soft_str: Markup stays Markup, everything else str().
func softStr(v any) any {
	if m, ok := v.(Markup); ok {
		return m
	}
	return pyStr(v)
}

// sameKind returns s as Markup when like is Markup.
func sameKind(like any, s string) any {
	if _, ok := like.(Markup); ok {
		return Markup(s)
	}
	return s
}

var globals map[string]any

func init() {
	globals = map[string]any{
		"range":           &function{"range", globalRange},
		"namespace":       &function{"namespace", globalNamespace},
		"dict":            &function{"dict", globalDict},
		"joiner":          &function{"joiner", globalJoiner},
		"cycler":          &function{"cycler", globalCycler},
		"raise_exception": &function{"raise_exception", raiseException},
		"strftime_now":    &function{"strftime_now", strftimeNow},
	}
	filters = map[string]func(*state, []any, []kwarg) any{
		"abs":        filterAbs,
		"attr":       filterAttr,
		"batch":      lazy("do_batch", filterBatch),
		"capitalize": strFilter(pyCapitalize),
		"center":     filterCenter,
		"count":      filterLength,
		"d":          filterDefault,
		"default":    filterDefault,
		"dictsort":   filterDictsort,
		"e":          filterEscape,
		"escape":     filterEscape,
		"first":      filterFirst,
		"forceescape": func(st *state, a []any, kw []kwarg) any {
			return Markup(escapeHTML(pyStr(st.bind("forceescape", a, kw, "value")[0])))
		},
		"float":      filterFloat,
		"format":     filterFormat,
		"groupby":    filterGroupby,
		"indent":     filterIndent,
		"int":        filterInt,
		"items":      lazy("do_items", filterItems),
		"join":       filterJoin,
		"last":       filterLast,
		"length":     filterLength,
		"list":       filterList,
		"lower":      strFilter(pyLower),
		"map":        lazy("sync_do_map", filterMap),
		"max":        func(st *state, a []any, kw []kwarg) any { return st.minMax("max", a, kw, 1) },
		"min":        func(st *state, a []any, kw []kwarg) any { return st.minMax("min", a, kw, -1) },
		"reject":     selectFilter("reject", false, true),
		"rejectattr": selectFilter("rejectattr", true, true),
		"replace":    filterReplace,
		"reverse":    filterReverse,
		"round":      filterRound,
		"safe":       func(st *state, a []any, kw []kwarg) any { return Markup(pyStr(st.bind("safe", a, kw, "value")[0])) },
		"select":     selectFilter("select", false, false),
		"selectattr": selectFilter("selectattr", true, false),
		"slice":      lazy("do_slice", filterSlice),
		"sort":       filterSort,
		"string":     func(st *state, a []any, kw []kwarg) any { return softStr(st.bind("string", a, kw, "value")[0]) },
		"sum":        filterSum,
		"title":      strFilter(jinjaTitle),
		"tojson":     filterToJSON,
		"trim":       filterTrim,
		"truncate":   filterTruncate,
		"unique":     lazy("sync_do_unique", filterUnique),
		"upper":      strFilter(pyUpper),
		"wordcount":  filterWordcount,
	}
	tests = map[string]func(*state, []any, []kwarg) any{
		"boolean":     test1(func(v any) bool { _, ok := v.(bool); return ok }),
		"callable":    test1(isCallable),
		"defined":     test1(func(v any) bool { _, ok := v.(Undefined); return !ok }),
		"undefined":   test1(func(v any) bool { _, ok := v.(Undefined); return ok }),
		"none":        test1(func(v any) bool { return v == nil }),
		"string":      test1(isString),
		"mapping":     test1(func(v any) bool { _, ok := v.(*Dict); return ok }),
		"number":      test1(func(v any) bool { _, _, _, ok := number(v); _, big := v.(bigInt); return ok || big }),
		"integer":     test1(func(v any) bool { _, ok := v.(int64); _, big := v.(bigInt); return ok || big }),
		"float":       test1(func(v any) bool { _, ok := v.(float64); return ok }),
		"true":        test1(func(v any) bool { return v == true }),
		"false":       test1(func(v any) bool { return v == false }),
		"iterable":    test1(isIterable),
		"sequence":    test1(isSequence),
		"escaped":     test1(func(v any) bool { _, ok := v.(Markup); return ok }),
		"lower":       test1(func(v any) bool { return isLowerPy(pyStr(v)) }),
		"upper":       test1(func(v any) bool { return isUpperPy(pyStr(v)) }),
		"odd":         testMod(int64(2), int64(1)),
		"even":        testMod(int64(2), int64(0)),
		"divisibleby": testDivisible,
		"eq":          testCmp("=="),
		"equalto":     testCmp("=="),
		"==":          testCmp("=="),
		"ne":          testCmp("!="),
		"!=":          testCmp("!="),
		"lt":          testCmp("<"),
		"lessthan":    testCmp("<"),
		"<":           testCmp("<"),
		"le":          testCmp("<="),
		"<=":          testCmp("<="),
		"gt":          testCmp(">"),
		"greaterthan": testCmp(">"),
		">":           testCmp(">"),
		"ge":          testCmp(">="),
		">=":          testCmp(">="),
		"in":          testIn,
		"sameas":      testSameas,
		"filter":      test1str(func(s string) bool { _, ok := filters[s]; return ok }),
		"test":        test1str(func(s string) bool { _, ok := tests[s]; return ok }),
	}
}

var (
	filters map[string]func(*state, []any, []kwarg) any
	tests   map[string]func(*state, []any, []kwarg) any
)

// Globals.

// maxRange is jinja2's sandbox MAX_RANGE.
const maxRange = 100000

func globalRange(st *state, args []any, kw []kwarg) any {
	if len(kw) > 0 {
		st.fail(KindType, "range() takes no keyword arguments")
	}
	var start, stop, step int64 = 0, 0, 1
	switch len(args) {
	case 1:
		stop = st.intArg("range", args[0])
	case 2, 3:
		start, stop = st.intArg("range", args[0]), st.intArg("range", args[1])
		if len(args) == 3 {
			step = st.intArg("range", args[2])
		}
	default:
		st.fail(KindType, "range expected 1 to 3 arguments, got %d", len(args))
	}
	if step == 0 {
		st.fail(KindValue, "range() arg 3 must not be zero")
	}
	n := int64(0)
	if step > 0 && stop > start {
		n = (stop - start + step - 1) / step
	} else if step < 0 && stop < start {
		n = (start - stop - step - 1) / -step
	}
	if n > maxRange {
		st.fail(KindOverflow, "range too big, the sandbox blocks ranges larger than MAX_RANGE (%d)", maxRange)
	}
	out := make([]any, n)
	for i := range out {
		out[i] = start + int64(i)*step
	}
	return out
}

func dictFromArgs(st *state, fname string, args []any, kw []kwarg) *Dict {
	d := NewDict()
	if len(args) > 1 {
		st.fail(KindType, "%s expected at most 1 argument, got %d", fname, len(args))
	}
	if len(args) == 1 {
		switch src := args[0].(type) {
		case *Dict:
			d = src.copy()
		default:
			for _, it := range st.iterate(src) {
				pair := st.iterate(it)
				if len(pair) != 2 {
					st.fail(KindValue, "dictionary update sequence element has length %d; 2 is required", len(pair))
				}
				if !d.Set(pair[0], pair[1]) {
					st.fail(KindType, "unhashable type: '%s'", typeName(pair[0]))
				}
			}
		}
	}
	for _, k := range kw {
		d.Set(k.name, k.val)
	}
	return d
}

func globalNamespace(st *state, args []any, kw []kwarg) any {
	return &Namespace{d: dictFromArgs(st, "namespace", args, kw)}
}

func globalDict(st *state, args []any, kw []kwarg) any { return dictFromArgs(st, "dict", args, kw) }

func globalJoiner(st *state, args []any, kw []kwarg) any {
	sep := pyStr(orDefault(st.bind("joiner", args, kw, "sep")[0], ", "))
	used := false
	return &function{"joiner", func(st *state, args []any, kw []kwarg) any {
		if !used {
			used = true
			return ""
		}
		return sep
	}}
}

func globalCycler(st *state, args []any, kw []kwarg) any {
	if len(args) == 0 {
		st.fail(KindRuntime, "at least one item has to be provided")
	}
	return &cycler{items: slices.Clone(args)}
}

// cycler is jinja2's Cycler: next() returns the items in turn, current the
// one next() returns next, reset() starts over.
type cycler struct {
	items []any
	pos   int
}

func (c *cycler) attr(name string) (any, bool) {
	switch name {
	case "next":
		return &function{"next", func(st *state, _ []any, _ []kwarg) any {
			v := c.items[c.pos]
			c.pos = (c.pos + 1) % len(c.items)
			return v
		}}, true
	case "reset":
		return &function{"reset", func(st *state, _ []any, _ []kwarg) any { c.pos = 0; return nil }}, true
	case "current":
		return c.items[c.pos], true
	case "items":
		return Tuple(slices.Clone(c.items)), true // Cycler(*items) keeps a tuple
	case "pos":
		return int64(c.pos), true
	}
	return nil, false
}

// Tests.

func test1(f func(any) bool) func(*state, []any, []kwarg) any {
	return func(st *state, a []any, kw []kwarg) any { return f(a[0]) }
}

func test1str(f func(string) bool) func(*state, []any, []kwarg) any {
	return func(st *state, a []any, kw []kwarg) any { s, ok := asString(a[0]); return ok && f(s) }
}

// testMod is value % m == r (odd, even), with Python's % and its errors.
func testMod(m, r any) func(*state, []any, []kwarg) any {
	return func(st *state, a []any, kw []kwarg) any { return pyEq(st.binop("%", a[0], m), r) }
}

func testDivisible(st *state, a []any, kw []kwarg) any {
	p := st.bind("divisibleby", a, kw, "value", "num")
	return pyEq(st.binop("%", p[0], p[1]), int64(0))
}

func testCmp(op string) func(*state, []any, []kwarg) any {
	return func(st *state, a []any, kw []kwarg) any {
		p := st.bind(op, a, kw, "value", "other")
		return st.compare(op, p[0], orDefault(p[1], nil))
	}
}

func testIn(st *state, a []any, kw []kwarg) any {
	p := st.bind("in", a, kw, "value", "seq")
	return st.contains(p[1], p[0])
}

func testSameas(st *state, a []any, kw []kwarg) any {
	p := st.bind("sameas", a, kw, "value", "other")
	switch x := p[0].(type) {
	case nil, bool:
		return p[0] == p[1]
	case []any:
		y, ok := p[1].([]any)
		return ok && len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
	case *Dict, *Namespace, *function, *macro:
		return p[0] == p[1]
	}
	return pyEq(p[0], p[1]) && typeName(p[0]) == typeName(p[1])
}

// isCallable is Python's callable(): Undefined and the loop object have __call__ too.
func isCallable(v any) bool {
	switch v.(type) {
	case *function, *macro, Undefined, *loopContext:
		return true
	}
	return false
}

func isIterable(v any) bool {
	switch v.(type) {
	case string, Markup, []any, Tuple, *Dict, Undefined, *generator, *loopContext, *dictView:
		return true
	}
	return false
}

func isSequence(v any) bool {
	switch v.(type) {
	case string, Markup, []any, Tuple, *Dict, Undefined:
		return true
	}
	return false
}

func isLowerPy(s string) bool { return allCased(s, unicode.IsLower) }
func isUpperPy(s string) bool { return allCased(s, unicode.IsUpper) }

// allCased is str.islower/isupper: some cased character, and every cased one is.
func allCased(s string, is func(rune) bool) bool {
	cased := false
	for _, r := range s {
		if isCased(r) {
			if !is(r) {
				return false
			}
			cased = true
		}
	}
	return cased
}

func (st *state) callTest(name string, args []any, kw []kwarg) bool {
	t, ok := tests[name]
	if !ok {
		st.fail(KindRuntime, "no test named '%s'", name)
	}
	return truthy(t(st, args, kw))
}

// Filters.

func strFilter(f func(string) string) func(*state, []any, []kwarg) any {
	return func(st *state, a []any, kw []kwarg) any {
		v := softStr(st.bind("filter", a, kw, "value")[0])
		s, _ := asString(v)
		return sameKind(v, f(s))
	}
}

func filterAbs(st *state, a []any, kw []kwarg) any {
	v := st.bind("abs", a, kw, "value")[0]
	f, i, isInt, ok := number(v)
	if !ok {
		st.fail(KindType, "bad operand type for abs(): '%s'", typeName(v))
	}
	if isInt {
		if i < 0 {
			return -i
		}
		return i
	}
	return math.Abs(f)
}

func filterAttr(st *state, a []any, kw []kwarg) any {
	p := st.bind("attr", a, kw, "obj", "name")
	name := st.strArg("attr", p[1])
	if u, ok := p[0].(Undefined); ok {
		st.undefinedError(u)
	}
	if v, ok := st.pyAttr(p[0], name); ok {
		return v
	}
	return Undefined{hint: fmt.Sprintf("%s has no attribute '%s'", objDesc(p[0]), name)}
}

func filterBatch(st *state, a []any, kw []kwarg) []any {
	p := st.bind("batch", a, kw, "value", "linecount", "fill_with")
	n := int(st.intArg("batch", p[1]))
	if n <= 0 {
		st.fail(KindValue, "batch size must be positive")
	}
	var out []any
	var cur []any
	for _, it := range st.iterate(p[0]) {
		if len(cur) == n {
			out = append(out, cur)
			cur = nil
		}
		cur = append(cur, it)
	}
	if len(cur) > 0 {
		if fill := orDefault(p[2], nil); fill != nil {
			for len(cur) < n {
				cur = append(cur, fill)
			}
		}
		out = append(out, cur)
	}
	return out
}

func filterCenter(st *state, a []any, kw []kwarg) any {
	p := st.bind("center", a, kw, "value", "width")
	s, _ := asString(softStr(p[0]))
	w := st.intArg("center", orDefault(p[1], int64(80)))
	st.checkLen(int(min(w, int64(st.maxOut)+1)))
	return pyCenter(s, int(w), " ")
}

func filterDefault(st *state, a []any, kw []kwarg) any {
	p := st.bind("default", a, kw, "value", "default_value", "boolean")
	_, undef := p[0].(Undefined)
	if undef || truthy(orDefault(p[2], false)) && !truthy(p[0]) {
		return orDefault(p[1], "")
	}
	return p[0]
}

func filterDictsort(st *state, a []any, kw []kwarg) any {
	p := st.bind("dictsort", a, kw, "value", "case_sensitive", "by", "reverse")
	d, ok := p[0].(*Dict)
	if u, isU := p[0].(Undefined); isU {
		st.undefinedError(u)
	}
	if !ok {
		st.fail(KindAttribute, "'%s' object has no attribute 'items'", typeName(p[0]))
	}
	cs := truthy(orDefault(p[1], false))
	pos := 0
	switch orDefault(p[2], "key") {
	case "key":
	case "value":
		pos = 1
	default:
		st.fail(KindRuntime, "you can only sort by either \"key\" or \"value\"")
	}
	items := make([]any, d.Len())
	for i, k := range d.keys {
		items[i] = Tuple{k, d.vals[i]}
	}
	st.sortValues(items, func(v any) any { return caseKey(v.(Tuple)[pos], cs) }, truthy(orDefault(p[3], false)))
	return items
}

func caseKey(v any, caseSensitive bool) any {
	if s, ok := asString(v); ok && !caseSensitive {
		return pyLower(s)
	}
	return v
}

// compareKeys is Python's < for sorting keys: an Undefined operand raises
// UndefinedError (its __lt__ does), other mismatches TypeError.
func (st *state) compareKeys(a, b any) int {
	c, err := pyCompare(a, b)
	if err != nil {
		for _, v := range []any{a, b} {
			if u, ok := firstUndefined(v); ok {
				st.undefinedError(u)
			}
		}
		st.fail(KindType, "'<' not supported between instances of '%s' and '%s'", typeName(a), typeName(b))
	}
	return c
}

// firstUndefined finds the Undefined a comparison of v fails on (v itself,
// or inside a key list).
func firstUndefined(v any) (Undefined, bool) {
	switch x := v.(type) {
	case Undefined:
		return x, true
	case []any:
		for _, e := range x {
			if u, ok := firstUndefined(e); ok {
				return u, true
			}
		}
	}
	return Undefined{}, false
}

// sortValues is Python's stable sorted(items, key=key, reverse=rev).
func (st *state) sortValues(items []any, key func(any) any, rev bool) {
	keys := make([]any, len(items))
	for i, it := range items {
		keys[i] = key(it)
	}
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(x, y int) int {
		c := st.compareKeys(keys[x], keys[y])
		if rev {
			return -c
		}
		return c
	})
	sorted := make([]any, len(items))
	for i, j := range idx {
		sorted[i] = items[j]
	}
	copy(items, sorted)
}

func filterEscape(st *state, a []any, kw []kwarg) any {
	v := st.bind("escape", a, kw, "value")[0]
	if m, ok := v.(Markup); ok {
		return m
	}
	return Markup(escapeHTML(pyStr(v)))
}

func filterFirst(st *state, a []any, kw []kwarg) any {
	items := st.iterate(st.bind("first", a, kw, "seq")[0])
	if len(items) == 0 {
		return Undefined{hint: "no first item, sequence was empty"}
	}
	return items[0]
}

func filterLast(st *state, a []any, kw []kwarg) any {
	v := st.bind("last", a, kw, "seq")[0]
	if _, ok := v.(*generator); ok {
		st.fail(KindType, "'generator' object is not reversible")
	}
	items := st.iterate(v)
	if len(items) == 0 {
		return Undefined{hint: "no last item, sequence was empty"}
	}
	return items[len(items)-1]
}

func filterFloat(st *state, a []any, kw []kwarg) any {
	p := st.bind("float", a, kw, "value", "default")
	if u, ok := p[0].(Undefined); ok { // Undefined.__float__ raises
		st.undefinedError(u)
	}
	if f, ok := pyFloat(p[0]); ok {
		return f
	}
	return orDefault(p[1], 0.0)
}

// pyFloat is Python's float(v) where it succeeds.
func pyFloat(v any) (float64, bool) {
	if f, _, _, ok := number(v); ok {
		return f, true
	}
	s, ok := asString(v)
	if !ok {
		return 0, false
	}
	s = strings.ReplaceAll(strings.TrimFunc(s, isPySpace), "_", "")
	switch strings.ToLower(strings.TrimLeft(s, "+-")) {
	case "inf", "infinity", "nan":
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	}
	if strings.ContainsAny(s, "xXpP") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

func filterInt(st *state, a []any, kw []kwarg) any {
	p := st.bind("int", a, kw, "value", "default", "base")
	if u, ok := p[0].(Undefined); ok { // Undefined.__int__ raises
		st.undefinedError(u)
	}
	def := orDefault(p[1], int64(0))
	base := st.intArg("int", orDefault(p[2], int64(10)))
	if s, ok := asString(p[0]); ok {
		t := strings.ReplaceAll(strings.TrimFunc(s, isPySpace), "_", "")
		if base == 16 || base == 8 || base == 2 {
			t = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(strings.ToLower(t), "0x"), "0o"), "0b")
		}
		if i, err := strconv.ParseInt(t, int(base), 64); err == nil {
			return i
		}
		if f, ok := pyFloat(s); ok && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return int64(f)
		}
		return def
	}
	if f, i, isInt, ok := number(p[0]); ok {
		if isInt {
			return i
		}
		if !math.IsInf(f, 0) && !math.IsNaN(f) {
			return int64(f)
		}
	}
	return def
}

func filterItems(st *state, a []any, kw []kwarg) []any {
	v := st.bind("items", a, kw, "value")[0]
	switch d := v.(type) {
	case Undefined:
		return nil
	case *Dict:
		items := make([]any, d.Len())
		for i, k := range d.keys {
			items[i] = Tuple{k, d.vals[i]}
		}
		return items
	}
	st.fail(KindType, "can only get item pairs from a mapping")
	return nil
}

func filterJoin(st *state, a []any, kw []kwarg) any {
	p := st.bind("join", a, kw, "value", "d", "attribute")
	items := st.iterate(p[0])
	if p[2] != missing && p[2] != nil {
		get := st.attrGetter(p[2], nil)
		items = slices.Clone(items)
		for i, it := range items {
			items[i] = get(it)
		}
	}
	sep := pyStr(orDefault(p[1], ""))
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(pyStr(it))
		st.checkLen(b.Len())
	}
	return b.String()
}

func filterLength(st *state, a []any, kw []kwarg) any {
	v := st.bind("length", a, kw, "obj")[0]
	switch x := v.(type) {
	case string:
		return int64(utf8.RuneCountInString(x))
	case Markup:
		return int64(utf8.RuneCountInString(string(x)))
	case []any:
		return int64(len(x))
	case Tuple:
		return int64(len(x))
	case *Dict:
		return int64(x.Len())
	case Undefined:
		return int64(0)
	case *loopContext:
		return int64(len(x.items))
	case *dictView:
		return int64(len(x.items))
	}
	st.fail(KindType, "object of type '%s' has no len()", typeName(v))
	return nil
}

func filterList(st *state, a []any, kw []kwarg) any {
	return slices.Clone(st.iterate(st.bind("list", a, kw, "value")[0]))
}

// attrGetter is jinja2's make_attrgetter: a dotted path, integer parts as
// indexes, each step through the sandbox's getitem.
func (st *state) attrGetter(attr any, def any) func(any) any {
	var parts []any
	if s, ok := attr.(string); ok {
		for _, p := range strings.Split(s, ".") {
			if i, err := strconv.ParseInt(p, 10, 64); err == nil && p != "" && strings.Trim(p, "0123456789") == "" {
				parts = append(parts, i)
			} else {
				parts = append(parts, p)
			}
		}
	} else {
		parts = []any{attr}
	}
	return func(v any) any {
		for _, p := range parts {
			v = st.getitem(v, p)
			if _, u := v.(Undefined); u && def != nil {
				v = def
			}
		}
		return v
	}
}

func filterMap(st *state, a []any, kw []kwarg) []any {
	seq := a[0]
	args := a[1:]
	var fn func(any) any
	if len(args) == 0 {
		var attr, def any = missing, nil
		for _, k := range kw {
			switch k.name {
			case "attribute":
				attr = k.val
			case "default":
				def = k.val
			default:
				st.fail(KindRuntime, "unexpected keyword argument '%s'", k.name)
			}
		}
		if attr == missing {
			st.fail(KindRuntime, "map requires a filter argument")
		}
		fn = st.attrGetter(attr, def)
	} else {
		name := st.strArg("map", args[0])
		flt, ok := filters[name]
		if !ok {
			st.fail(KindRuntime, "no filter named '%s'", name)
		}
		rest := args[1:]
		pos := st.pos
		fn = func(v any) any {
			st.pos = pos
			return flt(st, append([]any{v}, rest...), kw)
		}
	}
	if !truthy(seq) {
		return nil
	}
	var out []any
	for _, it := range st.iterate(seq) {
		st.step()
		out = append(out, fn(it))
	}
	return out
}

func (st *state) minMax(fname string, a []any, kw []kwarg, sign int) any {
	p := st.bind(fname, a, kw, "value", "case_sensitive", "attribute")
	items := st.iterate(p[0])
	if len(items) == 0 {
		return Undefined{hint: "no aggregated item, sequence was empty"}
	}
	cs := truthy(orDefault(p[1], false))
	key := func(v any) any { return caseKey(v, cs) }
	if p[2] != missing && p[2] != nil {
		get := st.attrGetter(p[2], nil)
		key = func(v any) any { return caseKey(get(v), cs) }
	}
	best, bestKey := items[0], key(items[0])
	for _, it := range items[1:] {
		k := key(it)
		if c := st.compareKeys(k, bestKey); c*sign > 0 {
			best, bestKey = it, k
		}
	}
	return best
}

func selectFilter(fname string, attr, reject bool) func(*state, []any, []kwarg) any {
	return lazy("select_or_reject", func(st *state, a []any, kw []kwarg) []any {
		seq, args := a[0], a[1:]
		trans := func(v any) any { return v }
		if attr {
			if len(args) == 0 {
				st.fail(KindRuntime, "missing parameter for attribute name")
			}
			trans = st.attrGetter(args[0], nil)
			args = args[1:]
		}
		test := func(v any) bool { return truthy(v) }
		if len(args) > 0 {
			name := st.strArg(fname, args[0])
			rest := args[1:]
			pos := st.pos
			test = func(v any) bool { st.pos = pos; return st.callTest(name, append([]any{v}, rest...), kw) }
		}
		if !truthy(seq) {
			return nil
		}
		var out []any
		for _, it := range st.iterate(seq) {
			st.step()
			if test(trans(it)) != reject {
				out = append(out, it)
			}
		}
		return out
	})
}

func filterReplace(st *state, a []any, kw []kwarg) any {
	p := st.bind("replace", a, kw, "s", "old", "new", "count")
	s, old, nw := pyStr(p[0]), pyStr(p[1]), pyStr(p[2])
	n := -1
	if c := orDefault(p[3], nil); c != nil {
		n = int(st.intArg("replace", c))
	}
	return st.pyReplace(s, old, nw, n)
}

// pyReplace is Python's str.replace (an empty old inserts between characters).
func (st *state) pyReplace(s, old, nw string, n int) string {
	if old != "" {
		cnt := strings.Count(s, old)
		if n >= 0 {
			cnt = min(cnt, n)
		}
		st.checkLen(len(s) + cnt*(len(nw)-len(old)))
		return strings.Replace(s, old, nw, n)
	}
	st.checkLen(len(s) + (utf8.RuneCountInString(s)+1)*len(nw))
	var b strings.Builder
	k := 0
	for _, r := range s {
		if n < 0 || k < n {
			b.WriteString(nw)
			k++
		}
		b.WriteRune(r)
	}
	if n < 0 || k < n {
		b.WriteString(nw)
	}
	return b.String()
}

func filterReverse(st *state, a []any, kw []kwarg) any {
	v := st.bind("reverse", a, kw, "value")[0]
	if s, ok := asString(v); ok {
		rs := []rune(s)
		slices.Reverse(rs)
		return sameKind(v, string(rs))
	}
	if !isIterable(v) {
		st.fail(KindFilterArg, "argument must be iterable")
	}
	_, isGen := v.(*generator)
	items := slices.Clone(st.iterate(v))
	slices.Reverse(items)
	if isGen { // reversed() refuses a generator; jinja2 then reverses a list of it
		return items
	}
	return &generator{name: "reversed", gen: func() []any { return items }} // Python's reverse iterator
}

func filterRound(st *state, a []any, kw []kwarg) any {
	p := st.bind("round", a, kw, "value", "precision", "method")
	prec64 := st.intArg("round", orDefault(p[1], int64(0)))
	prec := int(max(min(prec64, 400), -400)) // float64 has no digits past these
	f, _, _, ok := number(p[0])
	if u, isU := p[0].(Undefined); isU && orDefault(p[2], "common") != "common" {
		st.undefinedError(u) // ceil and floor multiply it first
	}
	if !ok {
		st.fail(KindType, "type %s doesn't define __round__ method", typeName(p[0]))
	}
	scale := math.Pow(10, float64(prec))
	method := orDefault(p[2], "common")
	if _, i, isInt, _ := number(p[0]); isInt && method == "common" {
		// Python's round(int, n) stays an int
		if prec >= 0 {
			return i
		}
		return int64(math.RoundToEven(float64(i)*scale) / scale)
	}
	switch method {
	case "common":
		r, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'f', max(prec, 0), 64), 64)
		if prec < 0 {
			r = math.RoundToEven(f*scale) / scale
		}
		return r
	case "ceil":
		return math.Ceil(f*scale) / scale
	case "floor":
		return math.Floor(f*scale) / scale
	}
	st.fail(KindRuntime, "method must be common, ceil or floor")
	return nil
}

func filterSlice(st *state, a []any, kw []kwarg) []any {
	p := st.bind("slice", a, kw, "value", "slices", "fill_with")
	seq := st.iterate(p[0])
	n := int(st.intArg("slice", p[1]))
	if n <= 0 {
		st.fail(KindZeroDiv, "integer division or modulo by zero")
	}
	fill := orDefault(p[2], nil)
	n = min(n, st.maxOut)
	per, extra := len(seq)/n, len(seq)%n
	var out []any
	offset := 0
	for i := range n {
		start := offset + i*per
		if i < extra {
			offset++
		}
		part := slices.Clone(seq[start : offset+(i+1)*per])
		if fill != nil && i >= extra {
			part = append(part, fill)
		}
		out = append(out, part)
	}
	return out
}

func filterTruncate(st *state, a []any, kw []kwarg) any {
	p := st.bind("truncate", a, kw, "s", "length", "killwords", "end", "leeway")
	length := int(st.intArg("truncate", orDefault(p[1], int64(255))))
	end := pyStr(orDefault(p[3], "..."))
	lw := orDefault(p[4], nil)
	if lw == nil {
		lw = int64(5) // jinja2's truncate.leeway policy
	}
	leeway := int(st.intArg("truncate", lw))
	endLen := utf8.RuneCountInString(end)
	if length < endLen || leeway < 0 {
		st.fail("AssertionError", "expected length >= %d and leeway >= 0", endLen)
	}
	if !isString(p[0]) {
		// jinja2 measures and slices the value itself: a short list comes back
		// as it is, a long one fails on the str method it then calls
		if n := filterLength(st, []any{p[0]}, nil).(int64); n <= int64(length+leeway) {
			return p[0]
		}
		st.fail(KindAttribute, "'%s' object has no attribute 'rsplit'", typeName(p[0]))
	}
	s := []rune(pyStr(p[0]))
	if len(s) <= length+leeway {
		return sameKind(p[0], string(s))
	}
	head := string(s[:length-endLen])
	if truthy(orDefault(p[2], false)) {
		return head + end
	}
	if i := strings.LastIndex(head, " "); i >= 0 {
		head = head[:i]
	}
	return head + end
}

func filterSort(st *state, a []any, kw []kwarg) any {
	p := st.bind("sort", a, kw, "value", "reverse", "case_sensitive", "attribute")
	items := slices.Clone(st.iterate(p[0]))
	cs := truthy(orDefault(p[2], false))
	key := func(v any) any { return caseKey(v, cs) }
	if p[3] != missing && p[3] != nil {
		// jinja2's make_multi_attrgetter: "a,b" sorts by a then b, the key a list
		var gets []func(any) any
		if s, ok := p[3].(string); ok {
			for _, part := range strings.Split(s, ",") {
				gets = append(gets, st.attrGetter(part, nil))
			}
		} else {
			gets = append(gets, st.attrGetter(p[3], nil))
		}
		key = func(v any) any {
			k := make([]any, len(gets))
			for i, g := range gets {
				k[i] = caseKey(g(v), cs)
			}
			return k
		}
	}
	st.sortValues(items, key, truthy(orDefault(p[1], false)))
	return items
}

func filterSum(st *state, a []any, kw []kwarg) any {
	p := st.bind("sum", a, kw, "iterable", "attribute", "start")
	items := st.iterate(p[0])
	var total any = orDefault(p[2], int64(0))
	get := func(v any) any { return v }
	if p[1] != missing && p[1] != nil {
		get = st.attrGetter(p[1], nil)
	}
	for _, it := range items {
		total = st.binop("+", total, get(it))
	}
	return total
}

func filterTrim(st *state, a []any, kw []kwarg) any {
	p := st.bind("trim", a, kw, "value", "chars")
	v := softStr(p[0])
	s, _ := asString(v)
	return sameKind(v, pyStrip(s, orDefault(p[1], nil), true, true))
}

func filterUnique(st *state, a []any, kw []kwarg) []any {
	p := st.bind("unique", a, kw, "value", "case_sensitive", "attribute")
	cs := truthy(orDefault(p[1], false))
	key := func(v any) any { return caseKey(v, cs) }
	if p[2] != missing && p[2] != nil {
		get := st.attrGetter(p[2], nil)
		key = func(v any) any { return caseKey(get(v), cs) }
	}
	seen := NewDict()
	var out []any
	for _, it := range st.iterate(p[0]) {
		k := key(it)
		if _, ok := seen.Get(k); ok {
			continue
		}
		if !seen.Set(k, true) {
			st.fail(KindType, "unhashable type: '%s'", typeName(k))
		}
		out = append(out, it)
	}
	return out
}

func filterWordcount(st *state, a []any, kw []kwarg) any {
	s := pyStr(st.bind("wordcount", a, kw, "s")[0])
	n, in := 0, false
	for _, r := range s {
		w := unicode.IsLetter(r) || unicode.IsNumber(r) || r == '_' // Python's \w: str.isalnum() or "_"
		if w && !in {
			n++
		}
		in = w
	}
	return int64(n)
}

// filterGroupby is groupby(value, attribute, default=None, case_sensitive=False):
// (grouper, list) pairs sorted by the attribute; a pair answers .grouper and .list.
func filterGroupby(st *state, a []any, kw []kwarg) any {
	p := st.bind("groupby", a, kw, "value", "attribute", "default", "case_sensitive")
	get := st.attrGetter(p[1], orDefault(p[2], nil))
	cs := truthy(orDefault(p[3], false))
	items := slices.Clone(st.iterate(p[0]))
	key := func(v any) any { return caseKey(get(v), cs) }
	st.sortValues(items, key, false)
	var out []any
	for i := 0; i < len(items); {
		k := key(items[i])
		j := i + 1
		for j < len(items) && pyEq(key(items[j]), k) {
			j++
		}
		out = append(out, Tuple{get(items[i]), slices.Clone(items[i:j])})
		i = j
	}
	return out
}

func filterIndent(st *state, a []any, kw []kwarg) any {
	p := st.bind("indent", a, kw, "s", "width", "first", "blank")
	s, ok := asString(p[0])
	if u, isU := p[0].(Undefined); isU {
		st.undefinedError(u)
	}
	if _, isList := p[0].([]any); isList { // list += "\n" extends it; then no splitlines
		st.fail(KindAttribute, "'list' object has no attribute 'splitlines'")
	}
	if !ok {
		st.fail(KindType, "unsupported operand type(s) for +=: '%s' and 'str'", typeName(p[0]))
	}
	ind := ""
	switch w := orDefault(p[1], int64(4)).(type) {
	case string:
		ind = w
	default:
		n := max(st.intArg("indent", w), 0)
		st.checkLen(int(min(n, int64(st.maxOut)+1)))
		ind = strings.Repeat(" ", int(n))
	}
	lines := splitLines(s+"\n", false)
	var rv string
	if truthy(orDefault(p[3], false)) {
		rv = strings.Join(lines, "\n"+ind)
	} else {
		rv = lines[0]
		if len(lines) > 1 {
			rest := make([]string, len(lines)-1)
			for i, l := range lines[1:] {
				if l != "" {
					l = ind + l
				}
				rest[i] = l
			}
			rv += "\n" + strings.Join(rest, "\n")
		}
	}
	if truthy(orDefault(p[2], false)) {
		rv = ind + rv
	}
	st.checkLen(len(rv))
	return sameKind(p[0], rv)
}

func filterFormat(st *state, a []any, kw []kwarg) any {
	s, _ := asString(softStr(a[0]))
	if len(a) > 1 && len(kw) > 0 {
		st.fail(KindRuntime, "can't handle positional and keyword arguments at the same time")
	}
	if len(kw) > 0 {
		d := NewDict()
		for _, k := range kw {
			d.Set(k.name, k.val)
		}
		return st.percentFormat(s, d)
	}
	return st.percentFormat(s, Tuple(a[1:]))
}

// Python str helpers.

// pyStrip is str.strip/lstrip/rstrip: chars nil strips whitespace.
func pyStrip(s string, chars any, left, right bool) string {
	cut := isPySpace
	if c, ok := asString(chars); ok {
		cut = func(r rune) bool { return strings.ContainsRune(c, r) }
	}
	if left {
		s = strings.TrimLeftFunc(s, cut)
	}
	if right {
		s = strings.TrimRightFunc(s, cut)
	}
	return s
}

// Python's case mappings are the full ones (ß upper-cases to SS), with
// Final_Sigma in lower(); Go's unicode package has the simple ones, which
// specialcase.go completes.

func upperRune(b *strings.Builder, r rune) {
	if s, ok := specialUpper[r]; ok {
		b.WriteString(s)
	} else {
		b.WriteRune(unicode.ToUpper(r))
	}
}

func titleRune(b *strings.Builder, r rune) {
	if s, ok := specialTitle[r]; ok {
		b.WriteString(s)
	} else {
		b.WriteRune(unicode.ToTitle(r))
	}
}

func isCased(r rune) bool { return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) }

// isCaseIgnorable approximates Unicode's Case_Ignorable (Mn, Me, Cf, Lm, Sk
// and the word-internal punctuation), for Final_Sigma.
func isCaseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '^', '`', 0xad, 0xb7, 0x2018, 0x2019, 0x2024, 0x2027:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

func pyUpper(s string) string {
	var b strings.Builder
	for _, r := range s {
		upperRune(&b, r)
	}
	return b.String()
}

func pyLower(s string) string {
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		switch {
		case r == 0x3a3 && finalSigma(rs, i):
			b.WriteRune(0x3c2)
		case specialLower[r] != "":
			b.WriteString(specialLower[r])
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// pyCasefold is str.casefold: lower(), then the folds that differ from it (ß -> ss).
func pyCasefold(s string) string {
	var b strings.Builder
	for _, r := range pyLower(s) {
		if f, ok := specialFold[r]; ok {
			b.WriteString(f)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// pySwapcase is str.swapcase: upper-case to lower, lower-case to upper
// (fully: ß becomes SS), title-case and uncased characters unchanged.
func pySwapcase(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case unicode.IsUpper(r):
			b.WriteString(pyLower(string(r)))
		case unicode.IsLower(r):
			upperRune(&b, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// finalSigma: a cased letter before (case-ignorables skipped), none after.
func finalSigma(rs []rune, i int) bool {
	j := i - 1
	for j >= 0 && isCaseIgnorable(rs[j]) {
		j--
	}
	if j < 0 || !isCased(rs[j]) {
		return false
	}
	j = i + 1
	for j < len(rs) && isCaseIgnorable(rs[j]) {
		j++
	}
	return j == len(rs) || !isCased(rs[j])
}

// pyCapitalize is str.capitalize: the first character title-cased, the rest lower-cased.
func pyCapitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	var b strings.Builder
	titleRune(&b, r)
	return b.String() + pyLower(s[n:])
}

// pyTitle is str.title: a cased character after an uncased one is title-cased, others lower-cased.
func pyTitle(s string) string {
	var b strings.Builder
	prevCased := false
	for _, r := range s {
		if prevCased {
			b.WriteString(pyLower(string(r)))
		} else {
			titleRune(&b, r)
		}
		prevCased = isCased(r)
	}
	return b.String()
}

// jinjaTitle is the title filter: words start after "-", whitespace or an opening bracket.
func jinjaTitle(s string) string {
	var b strings.Builder
	start := true
	for _, r := range s {
		if r == '-' || r == '(' || r == '{' || r == '[' || r == '<' || isPySpace(r) {
			b.WriteRune(r)
			start = true
			continue
		}
		if start {
			upperRune(&b, r)
		} else {
			b.WriteString(pyLower(string(r)))
		}
		start = false
	}
	return b.String()
}

func pyCenter(s string, w int, fill string) string {
	n := utf8.RuneCountInString(s)
	if w <= n {
		return s
	}
	pad := w - n
	left := pad/2 + (pad & w & 1)
	return strings.Repeat(fill, left) + s + strings.Repeat(fill, pad-left)
}

// splitLines is str.splitlines.
func splitLines(s string, keepEnds bool) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			end := i + n
			if r == '\r' && end < len(s) && s[end] == '\n' {
				end++
			}
			if keepEnds {
				out = append(out, s[start:end])
			} else {
				out = append(out, s[start:i])
			}
			start = end
			i = end
			continue
		}
		i += n
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// pySplit is str.split (rsplit when fromRight): sep nil splits on runs of whitespace.
func (st *state) pySplit(s string, sep any, maxsplit int, fromRight bool) []any {
	var parts []string
	if sep == nil {
		fields := strings.FieldsFunc(s, isPySpace)
		if maxsplit < 0 || maxsplit >= len(fields)-1 {
			parts = fields
		} else if !fromRight {
			// the first maxsplit words, then the rest with its leading space trimmed
			rest := lstripSpace(s)
			for range maxsplit {
				i := strings.IndexFunc(rest, isPySpace)
				parts = append(parts, rest[:i])
				rest = lstripSpace(rest[i:])
			}
			parts = append(parts, rest)
		} else {
			rest := rstripSpace(s)
			var rev []string
			for range maxsplit {
				i := strings.LastIndexFunc(rest, isPySpace)
				_, n := utf8.DecodeRuneInString(rest[i:])
				rev = append(rev, rest[i+n:])
				rest = rstripSpace(rest[:i])
			}
			rev = append(rev, rest)
			slices.Reverse(rev)
			parts = rev
		}
	} else {
		sp, _ := asString(sep)
		if sp == "" {
			st.fail(KindValue, "empty separator")
		}
		if maxsplit < 0 || !fromRight {
			parts = strings.SplitN(s, sp, maxsplit+1)
			if maxsplit < 0 {
				parts = strings.Split(s, sp)
			}
		} else {
			var rev []string
			rest := s
			for range maxsplit {
				i := strings.LastIndex(rest, sp)
				if i < 0 {
					break
				}
				rev = append(rev, rest[i+len(sp):])
				rest = rest[:i]
			}
			rev = append(rev, rest)
			slices.Reverse(rev)
			parts = rev
		}
	}
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out
}
