package jinja

import (
	"fmt"
	"strings"
	"testing"
)

// dump prints a parsed body back canonically: every expression fully
// parenthesised in prefix form, so a test shows how the parser grouped it.
func dump(body []node) string {
	var b strings.Builder
	for _, n := range body {
		dumpNode(&b, n)
	}
	return b.String()
}

func dumpList(b *strings.Builder, ns []node) {
	for _, n := range ns {
		b.WriteByte(' ')
		dumpNode(b, n)
	}
}

func dumpNode(b *strings.Builder, n node) {
	switch n := n.(type) {
	case *textNode:
		fmt.Fprintf(b, "%q", n.text)
	case *outputNode:
		b.WriteString("{{")
		dumpNode(b, n.expr)
		b.WriteString("}}")
	case *ifNode:
		b.WriteString("(if ")
		dumpNode(b, n.cond)
		fmt.Fprintf(b, " [%s] [%s])", dump(n.body), dump(n.else_))
	case *forNode:
		b.WriteString("(for ")
		dumpNode(b, n.target)
		b.WriteByte(' ')
		dumpNode(b, n.iter)
		if n.filter != nil {
			b.WriteString(" if ")
			dumpNode(b, n.filter)
		}
		fmt.Fprintf(b, " [%s] [%s])", dump(n.body), dump(n.else_))
	case *setNode:
		b.WriteString("(set ")
		dumpNode(b, n.target)
		b.WriteByte(' ')
		dumpNode(b, n.value)
		b.WriteByte(')')
	case *macroNode:
		fmt.Fprintf(b, "(macro %s %v [%s])", n.name, n.params, dump(n.body))
	case *constNode:
		b.WriteString(pyRepr(n.val))
	case *nameNode:
		b.WriteString(n.name)
	case *nsAttrNode:
		fmt.Fprintf(b, "%s.%s", n.ns, n.attr)
	case *listNode:
		b.WriteString("(list")
		dumpList(b, n.items)
		b.WriteByte(')')
	case *tupleNode:
		b.WriteString("(tuple")
		dumpList(b, n.items)
		b.WriteByte(')')
	case *getattrNode:
		b.WriteString("(. ")
		dumpNode(b, n.obj)
		b.WriteString(" " + n.attr + ")")
	case *getitemNode:
		b.WriteString("([] ")
		dumpNode(b, n.obj)
		b.WriteByte(' ')
		dumpNode(b, n.key)
		b.WriteByte(')')
	case *sliceNode:
		b.WriteString("([:] ")
		dumpNode(b, n.obj)
		for _, p := range []node{n.start, n.stop, n.step} {
			b.WriteByte(' ')
			if p == nil {
				b.WriteByte('_')
			} else {
				dumpNode(b, p)
			}
		}
		b.WriteByte(')')
	case *callNode:
		b.WriteString("(call ")
		dumpNode(b, n.fn)
		dumpList(b, n.args)
		for i, k := range n.kwNames {
			b.WriteString(" " + k + "=")
			dumpNode(b, n.kwVals[i])
		}
		b.WriteByte(')')
	case *filterNode:
		b.WriteString("(|" + n.name + " ")
		dumpNode(b, n.arg)
		dumpList(b, n.args)
		b.WriteByte(')')
	case *testNode:
		b.WriteString("(is " + n.name + " ")
		dumpNode(b, n.arg)
		dumpList(b, n.args)
		b.WriteByte(')')
	case *unaryNode:
		b.WriteString("(" + n.op + " ")
		dumpNode(b, n.arg)
		b.WriteByte(')')
	case *binNode:
		b.WriteString("(" + n.op + " ")
		dumpNode(b, n.left)
		b.WriteByte(' ')
		dumpNode(b, n.right)
		b.WriteByte(')')
	case *compareNode:
		b.WriteString("(cmp ")
		dumpNode(b, n.first)
		for i, op := range n.ops {
			b.WriteString(" " + op + " ")
			dumpNode(b, n.rest[i])
		}
		b.WriteByte(')')
	case *condNode:
		b.WriteString("(?: ")
		dumpNode(b, n.cond)
		b.WriteByte(' ')
		dumpNode(b, n.then)
		b.WriteByte(' ')
		if n.else_ == nil {
			b.WriteByte('_')
		} else {
			dumpNode(b, n.else_)
		}
		b.WriteByte(')')
	default:
		fmt.Fprintf(b, "<%T>", n)
	}
}

// TestParse checks the grouping of jinja2's grammar (parser.py): each want
// is typed by hand from its precedence rules.
func TestParse(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"{{ 1 + 2 * 3 }}", "{{(+ 1 (* 2 3))}}"},
		{"{{ 2 ** 3 ** 2 }}", "{{(** (** 2 3) 2)}}"},
		{"{{ -2 ** 2 }}", "{{(** (- 2) 2)}}"},
		{"{{ -x | abs }}", "{{(|abs (- x))}}"},
		{"{{ 'a' ~ b | upper }}", "{{(~ 'a' (|upper b))}}"},
		{"{{ a + b ~ c * d }}", "{{(+ a (~ b (* c d)))}}"},
		{"{{ not a == b }}", "{{(not (cmp a == b))}}"},
		{"{{ a or b and not c }}", "{{(or a (and b (not c)))}}"},
		{"{{ a < b < c }}", "{{(cmp a < b < c)}}"},
		{"{{ x not in y }}", "{{(cmp x notin y)}}"},
		{"{{ x is not none and y }}", "{{(and (not (is none x)) y)}}"},
		{"{{ x is divisibleby 3 }}", "{{(is divisibleby x 3)}}"},
		{"{{ x is defined or y }}", "{{(or (is defined x) y)}}"},
		{"{{ a if b else c if d }}", "{{(?: b a (?: d c _))}}"},
		{"{{ m.a[0].b(1, k=2) }}", "{{(call (. ([] (. m a) 0) b) 1 k=2)}}"},
		{"{{ l[1:] }}{{ l[::-1] }}{{ l[:n] }}", "{{([:] l 1 _ _)}}{{([:] l _ _ (- 1))}}{{([:] l _ n _)}}"},
		{"{{ l.0.1 }}", "{{([] ([] l 0) 1)}}"},
		{"{{ x | join(1) | upper }}", "{{(|upper (|join x 1))}}"},
		{"{{ x | length > 0 }}", "{{(cmp (|length x) > 0)}}"},
		{"{{ (1, 2) }}{{ (1,) }}{{ () }}{{ [1, 2,] }}", "{{(tuple 1 2)}}{{(tuple 1)}}{{(tuple)}}{{(list 1 2)}}"},
		{"{{ 'a' 'b' }}", "{{'ab'}}"},
		{"{{ 0x1F }}{{ 1_000 }}{{ 1e3 }}{{ 0.5 }}", "{{31}}{{1000}}{{1000.0}}{{0.5}}"},
		{"{% for k, v in d.items() if k %}{{ k }}{% endfor %}", "(for (tuple k v) (call (. d items)) if k [{{k}}] [])"},
		{"{% set ns.x = 1 %}{% set a, b = 1, 2 %}", "(set ns.x 1)(set (tuple a b) (tuple 1 2))"},
		{"{% if a %}x{% elif b %}y{% else %}z{% endif %}", "(if a [\"x\"] [(if b [\"y\"] [\"z\"])])"},
		{"{% macro m(a, b=1) %}{{ a }}{% endmacro %}", "(macro m [a b] [{{a}}])"},
	} {
		tpl, err := Parse(tc.src)
		got := ""
		if err == nil {
			got = dump(tpl.body)
		}
		if got != tc.want {
			t.Errorf("Parse(%q) = %s (%v), want %s", tc.src, got, err, tc.want)
		}
	}
}
