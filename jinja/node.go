package jinja

// Every node records pos, the byte offset in the normalised source of the
// construct it comes from; line and column are worked out only for errors.

type node interface{ position() int }

type base struct{ pos int }

func (b base) position() int { return b.pos }

// Statements.

type (
	textNode struct {
		base
		text string
	}
	outputNode struct {
		base
		expr node
	}
	ifNode struct {
		base
		cond        node
		body, else_ []node
	}
	forNode struct {
		base
		target      node // nameNode or tupleNode of nameNodes
		iter        node
		filter      node // nil when absent
		body, else_ []node
		recursive   bool
	}
	setNode struct {
		base
		target node // nameNode, tupleNode or nsAttrNode
		value  node
	}
	setBlockNode struct {
		base
		target node
		filter []*filterNode // applied in order to the rendered body; may be empty
		body   []node
	}
	macroNode struct {
		base
		name     string
		params   []string
		defaults []node // aligned to the end of params, as Python's
		body     []node
		catches  catches
	}
	callBlockNode struct {
		base
		call     *callNode
		params   []string
		defaults []node
		body     []node
		catches  catches
	}
	filterBlockNode struct {
		base
		filter []*filterNode
		body   []node
	}
	withNode struct {
		base
		targets []node
		values  []node
		body    []node
	}
	breakNode    struct{ base }
	continueNode struct{ base }
)

// catches records which of the names varargs, kwargs and caller a macro's
// body reads: only then does it take extra positional arguments, extra
// keyword arguments or a call block (jinja2's find_undeclared).
type catches struct{ varargs, kwargs, caller bool }

// Expressions.

type (
	constNode struct {
		base
		val any
	}
	nameNode struct {
		base
		name string
	}
	nsAttrNode struct {
		base
		ns, attr string
	} // the target of {% set ns.attr = ... %}
	listNode struct {
		base
		items []node
	}
	tupleNode struct {
		base
		items []node
	}
	dictNode struct {
		base
		keys, vals []node
	}
	getattrNode struct {
		base
		obj  node
		attr string
	}
	getitemNode struct {
		base
		obj, key node
	}
	sliceNode struct {
		base
		obj               node
		start, stop, step node // each may be nil
	}
	callNode struct {
		base
		fn        node
		args      []node
		kwNames   []string
		kwVals    []node
		dynArgs   node
		dynKwargs node
	}
	filterNode struct {
		base
		arg     node // nil inside filter blocks and set blocks
		name    string
		args    []node
		kwNames []string
		kwVals  []node
	}
	testNode struct {
		base
		arg     node
		name    string
		args    []node
		kwNames []string
		kwVals  []node
	}
	unaryNode struct {
		base
		op  string // "not", "-", "+"
		arg node
	}
	binNode struct {
		base
		op          string // "+", "-", "*", "/", "//", "%", "**", "~", "and", "or"
		left, right node
	}
	compareNode struct {
		base
		first node
		ops   []string // "==", "!=", "<", "<=", ">", ">=", "in", "notin"
		rest  []node
	}
	condNode struct {
		base
		cond, then, else_ node // else_ nil: undefined
	}
)
