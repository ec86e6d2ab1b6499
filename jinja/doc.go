// Package jinja renders chat templates exactly as Hugging Face transformers'
// apply_chat_template does: jinja2's ImmutableSandboxedEnvironment with
// trim_blocks, lstrip_blocks and the loop controls extension, transformers'
// tojson, raise_exception and strftime_now, and Python's semantics for the
// values (dicts keep insertion order, None and True print as Python prints
// them, str() and repr() differ).
//
// It is a focused interpreter written for that job (as llama.cpp's minja is),
// not a general Jinja: there is no loader, so include, import and extends do
// not exist, and nothing reaches files, the network or Go values by
// reflection. The sandbox refuses what jinja2's immutable sandbox refuses
// (list.append, dict.update, attributes starting with "_", range past 100000
// items), and every render is bounded in steps (loop iterations and calls),
// call depth and output bytes.
//
// A Template is immutable once parsed; Render keeps its state apart, so one
// template may be rendered from many goroutines at once.
//
// Errors are *Error values carrying the line and column (1-based, in bytes of
// the source after newline normalisation) of the construct at fault.
package jinja
