#!/usr/bin/env python3
"""Write random chat-template-like cases rendered by Python's jinja2 (with
transformers' settings, as scripts/jinja-golden.py sets them up), for the
differential test of package jinja:

    python3 scripts/jinja-random.py expr SEED N > /tmp/expr.jsonl
    python3 scripts/jinja-random.py template SEED N > /tmp/tpl.jsonl
    JINJA_RANDOM_CASES=/tmp/expr.jsonl go test ./jinja -run TestRandomCases

"expr" makes one {{ expression }} per case from literals, variables, every
operator, 50 filters, 21 tests and 28 methods; "template" makes loops over a
conversation with if/else, set, set blocks, filter and call blocks, macros
with varargs and kwargs, loop.cycle/changed/previtem, break/continue and
comments, with every whitespace-control form between random whitespace. Each line is a
features.json case: {"name", "template", "vars", "want" | "error"}.
"""
import importlib.util
import json
import os
import random
import sys
import warnings

spec = importlib.util.spec_from_file_location("golden", os.path.join(os.path.dirname(__file__), "jinja-golden.py"))
golden = importlib.util.module_from_spec(spec)
spec.loader.exec_module(golden)
warnings.simplefilter("ignore")  # Python warns about the code jinja2 generates for 1[0]

EXPR_VARS = {"s": "Hello World", "e": "", "u": "Ísland ß ǅ", "n": 3, "f": 2.5, "z": 0, "neg": -7, "b": True,
             "no": None, "l": [3, 1, 2], "ls": ["b", "A", "c"],
             "ld": [{"k": "x", "v": 1}, {"k": "y", "v": 2.0}, {"k": "x", "v": None}],
             "d": {"b": 1, "a": [1, 2], "c": {"x": "y"}}, "m": {"role": "user", "content": "hi", "items": 5}}
LITERALS = ["1", "0", "-2", "2.5", "1e3", "'a'", "'x y'", "''", "none", "true", "false", "[1, 'a']", "[]",
            "{'k': 1}", "(1, 2)", "'%s-%d'", "' pad '", "'{:>6}|{!r}'", "'%05.1f'", "'ǅx Σ'", "0.1", "'a\\tb'"]
FILTERS = ["length", "string", "upper", "lower", "title", "capitalize", "trim", "first", "last", "list", "sort",
           "unique", "reverse", "int", "float", "abs", "round", "tojson", "safe", "e", "count", "join(', ')", "join",
           "default('D')", "default('D', true)", "replace('l', 'L')", "map('string')", "map(attribute='k')",
           "selectattr('k', 'equalto', 'x')", "rejectattr('v')", "select", "reject", "sum", "min", "max",
           "dictsort", "items", "indent(2)", "center(9)", "truncate(5, leeway=0)", "batch(2)", "wordcount",
           "string | length", "tojson(indent=1)", "sort(reverse=true)", "first | string", "list | length",
           "indent(2, true)", "dictsort(by='value')", "sort(attribute='k')", "unique(attribute='k')",
           "min(attribute='v')", "groupby('k') | list", "slice(2) | list", "selectattr('v', 'none') | list",
           "tojson(sort_keys=true)", "tojson(separators=(',', ':'))", "format(1)", "round(1, 'floor')"]
TESTS = ["defined", "undefined", "none", "string", "number", "integer", "float", "mapping", "iterable", "sequence",
         "boolean", "true", "false", "odd", "even", "divisibleby 2", "eq 1", "in [1, 'a']", "lower", "upper",
         "callable"]
METHODS = ["upper()", "lower()", "strip()", "split()", "split(' ')", "startswith('H')", "endswith('d')",
           "replace('o', '0')", "title()", "find('o')", "count('l')", "items()", "keys()", "values()", "get('a')",
           "get('q', 0)", "index(1)", "isdigit()", "format(1, 2)", "join(['a', 'b'])", "splitlines()",
           "lstrip('H')", "rsplit(' ', 1)", "partition(' ')", "capitalize()", "zfill(5)", "copy()", "append(1)",
           "swapcase()", "casefold()", "rjust(8, '*')", "center(7)", "expandtabs(4)", "split(',')", "removeprefix('He')",
           "rstrip('d')", "istitle()", "isalnum()", "count('')", "rindex('o')", "ljust(3)", "endswith(('x', 'd'))"]
BINARY = ["+", "-", "*", "/", "//", "%", "**", "~", "==", "!=", "<", ">=", "in", "not in", "and", "or"]


def atom(d):
    r = random.random()
    if r < 0.35:
        return random.choice(LITERALS)
    if r < 0.75:
        return random.choice(list(EXPR_VARS) + ["undef"])
    return "(" + expr(d + 1) + ")"


def expr(d=0):
    if d > 2:
        return atom(d)
    r, e = random.random(), atom(d)
    if r < 0.2:
        return e + " | " + random.choice(FILTERS)
    if r < 0.35:
        return e + " is " + random.choice(["", "not "]) + random.choice(TESTS)
    if r < 0.5:
        return e + "." + random.choice(METHODS)
    if r < 0.6:
        return e + random.choice(["[0]", "[-1]", "[1:]", "[::-1]", "['k']", "['a']", ".content", ".items", "[:2]"])
    if r < 0.85:
        return e + " " + random.choice(BINARY) + " " + expr(d + 1)
    if r < 0.9:
        return "not " + e
    if r < 0.95:
        return e + " if " + expr(d + 1) + " else " + atom(d)
    return "-" + e


TPL_VARS = {"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "U1"},
                         {"role": "assistant", "content": "A1",
                          "tool_calls": [{"function": {"name": "f", "arguments": {"x": 1}}}]},
                         {"role": "user", "content": "U2"}],
            "add_generation_prompt": True, "bos_token": "<s>", "n": 2,
            "tools": [{"type": "function", "function": {"name": "f", "description": "d", "parameters": {
                "type": "object", "properties": {"x": {"type": "integer"}}}}}]}
WS = ["", " ", "\n", "  ", "\n  ", "\t", " \n", "\n\n", "\n    "]
TPL_EXPRS = ["m.role", "m.content", "loop.index", "n", "m.content | trim", "m['role'] | upper", "bos_token",
             "loop.first", "m.tool_calls | length if m.tool_calls else 0", "ns.c", "tools | tojson",
             "(m.tool_calls or []) | map(attribute='function.name') | join(',')", "m.content ~ '!'"]
CONDS = ["m.role == 'user'", "loop.last", "not loop.first", "m.tool_calls is defined", "add_generation_prompt",
         "m.role in ['system', 'assistant']", "ns.c > 1", "n is even"]


def tag(stmt):
    return random.choice(["{%", "{%-", "{%+"]) + " " + stmt + " " + random.choice(["%}", "-%}", "+%}"])


def ws():
    return random.choice(WS)


def out(e):
    return random.choice(["{{", "{{-"]) + " " + e + " " + random.choice(["}}", "-}}"])


def body(d):
    parts = []
    for _ in range(random.randint(1, 3)):
        r = random.random()
        if r < 0.35 or d > 2:
            parts.append(ws() + out(random.choice(TPL_EXPRS)) + ws() + random.choice(["", "x", "[", "]", "|"]))
        elif r < 0.55:
            els = tag("else") + body(d + 1) if random.random() < 0.4 else ""
            parts.append(ws() + tag("if " + random.choice(CONDS)) + body(d + 1) + ws() + els + ws() + tag("endif"))
        elif r < 0.7:
            parts.append(ws() + tag("set ns.c = ns.c + 1"))
        elif r < 0.8:
            parts.append(ws() + "{#" + random.choice(["", "-"]) + " c " + random.choice(["", "-"]) + "#}" + ws())
        elif r < 0.85:
            parts.append(ws() + tag("if loop.index > 2") + tag(random.choice(["break", "continue"])) + tag("endif"))
        elif r < 0.88:
            parts.append(ws() + tag("set blk " + random.choice(["", "| trim", "| upper | trim"])) + body(d + 1)
                         + ws() + tag("endset") + out("'[' ~ blk ~ ']'"))
        elif r < 0.91:
            parts.append(ws() + tag("filter " + random.choice(["trim", "upper", "indent(2)", "replace('U', 'u')"]))
                         + body(d + 1) + ws() + tag("endfilter"))
        elif r < 0.94:
            parts.append(ws() + tag("call(x) wrap(m.role)") + ws() + out("x ~ '/' ~ loop.index") + ws() + tag("endcall"))
        elif r < 0.95:
            inner = random.choice(["'ab'", "[]", "m.content", "messages[:loop.index]", "range(n)"])
            cond = random.choice(["", " if x != 'a'", " if loop is defined"])
            parts.append(ws() + tag("for x in " + inner + cond) + ws() + out(random.choice(["x", "loop.index ~ x", "loop.length"]))
                         + ws() + (tag("else") + "E" if random.random() < 0.5 else "") + ws() + tag("endfor"))
        elif r < 0.96:
            parts.append(ws() + tag("with q = m.role ~ '!'") + ws() + out("q") + ws() + tag("endwith"))
        elif r < 0.97:
            parts.append(ws() + out(random.choice(["loop.cycle('a', 'b')", "loop.changed(m.role)", "loop.previtem.role if loop.previtem",
                                                   "loop.revindex", "emit(m.role, 1, k='v')"])))
        else:
            parts.append(ws() + tag("for k, v in (m.tool_calls[0].function.arguments if m.tool_calls else {}) | items")
                         + ws() + out("k ~ '=' ~ v") + ws() + tag("endfor"))
    return "".join(parts)


def template():
    t = (tag("macro wrap(r)") + ws() + out("'<' ~ caller(r) ~ '>'") + ws() + tag("endmacro") + ws()
         + tag("macro emit(a)") + out("a ~ varargs|string ~ kwargs|string") + tag("endmacro") + ws()
         + tag("set ns = namespace(c=0)") + ws() + tag("for m in messages") + body(0) + ws() + tag("endfor") + ws())
    if random.random() < 0.3:
        t += tag("macro mm(a, b='B')") + ws() + out("a ~ b") + ws() + tag("endmacro") + out("mm(1)")
    return t + random.choice(["", "\n", "\n\n"])


def main():
    kind, seed, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    random.seed(seed)
    for i in range(n):
        if kind == "expr":
            t, variables = "{{ " + expr() + " }}", EXPR_VARS
        else:
            t, variables = template(), TPL_VARS
        case = {"name": f"{kind}-{seed}-{i}", "template": t, "vars": variables}
        try:
            case["want"] = golden.render(t, variables)
        except Exception as e:  # what jinja2 raises is the expectation
            case["error"] = f"{type(e).__name__}: {e}"
        print(json.dumps(case, ensure_ascii=False))


if __name__ == "__main__":
    main()
