// Package jinja renders chat templates exactly as Hugging Face transformers'
// apply_chat_template does: jinja2's ImmutableSandboxedEnvironment with
// trim_blocks, lstrip_blocks and the loop controls extension, transformers'
// tojson, raise_exception, strftime_now and {% generation %}, and Python's
// semantics for the values (dicts keep insertion order, None and True print
// as Python prints them, str() and repr() differ, 1 and 1.0 are different
// values that compare equal).
//
// It is a focused interpreter written for that job, as llama.cpp's minja is:
// the Go candidate, github.com/nikolalohinski/gonja/v2 (v2.9.1), renders 644
// of the 1,250 reference cases of ../shared/chat-templates (315 do not parse,
// and it prints None as "" and sorts Go map keys). This package renders all
// of them, and the feature cases of testdata/features.json, byte for byte.
//
// There is no loader, so include, import and extends do not exist, and
// nothing reaches files, the network or Go values by reflection. The sandbox
// refuses what jinja2's immutable sandbox refuses: the methods that change a
// list or dict (list.append, dict.update, and list.pop as jinja2 3.1.5 and
// later refuse it), attributes starting with "__", range past 100,000 items.
// Every render is bounded in steps (loop iterations and calls), macro depth
// and output bytes (Options), and every string or list it builds is bounded
// by the same byte count.
//
// Where this package knowingly differs from Python: ints are 64-bit (a
// literal beyond that is a syntax error; a JSON integer beyond it prints and
// serialises exactly but refuses arithmetic); a 2-tuple answers groupby's
// .grouper and .list; printed objects have no address ("<generator object
// select_or_reject>"); jinja2's constant folding, which turns a slice of a
// literal non-sequence ({{ 1[1:] }}) into Undefined, is not imitated (it is
// a TypeError, as jinja2 gives for a variable), nor the way it writes a
// folded negative literal into Python source, so that there -2 ** x means
// -(2 ** x) when x is not a constant (here it is (-2) ** x); the filters wordwrap,
// striptags, urlize, urlencode, xmlattr, pprint, filesizeformat and random,
// and the autoescape and i18n tags, are not there.
//
// A Template is immutable once parsed; Render keeps its state apart, so one
// template may be rendered from many goroutines at once.
//
// Errors are *Error values with jinja2's exception name as Kind and the line
// and column (1-based, the column in bytes, after newline normalisation) of
// the construct at fault.
package jinja
