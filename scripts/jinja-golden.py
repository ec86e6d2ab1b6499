#!/usr/bin/env python3
"""Render jinja/testdata/features.json with Python's jinja2, the way
transformers' apply_chat_template sets it up (chat_template_utils.py), and
write each case's "want" (or "error") back into the file.

    python3 scripts/jinja-golden.py          # rewrite the expectations
    python3 scripts/jinja-golden.py --check  # exit 1 when any differs

Each case is {"name", "template", "vars"}: vars is an object of template
variables (JSON, so key order and 1 vs 1.0 are kept). strftime_now sees
2024-07-26 00:00:00. Needs python3-jinja2 (Debian's package); the file
records the version it was made with.
"""
import datetime
import json
import sys

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

PATH = "jinja/testdata/features.json"
NOW = datetime.datetime(2024, 7, 26)


class AssistantTracker(Extension):
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def render(template, variables):
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[AssistantTracker, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: NOW.strftime(fmt)
    return env.from_string(template).render(**variables)


def main():
    check = "--check" in sys.argv[1:]
    with open(PATH, encoding="utf-8") as f:
        doc = json.load(f)
    changed = 0
    for case in doc["cases"]:
        new = {k: case[k] for k in ("name", "template", "vars") if k in case}
        try:
            new["want"] = render(case["template"], case.get("vars", {}))
        except Exception as e:  # what jinja2 raises is the expectation
            new["error"] = f"{type(e).__name__}: {e}"
        if new != case:
            changed += 1
            if check:
                print(f"{case['name']}: jinja2 gives {new.get('want', new.get('error'))!r}")
        case.clear()
        case.update(new)
    if check:
        sys.exit(1 if changed else 0)
    doc["jinja2"] = jinja2.__version__
    with open(PATH, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"{len(doc['cases'])} cases, {changed} changed (jinja2 {jinja2.__version__})")


if __name__ == "__main__":
    main()
