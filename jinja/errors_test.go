package jinja

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
)

// The expectations here are typed by hand from jinja2's documented
// behaviour (the exception each construct raises) and our own bounds.

func TestSyntaxErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		line, col int
		kind      string
	}{
		{"unclosed if", "a\n{% if x %}b", 2, 12, KindSyntax},
		{"unknown tag", "a\n\n  {% frob %}", 3, 3, KindSyntax},
		{"bad expression", "{{ 1 + }}", 1, 8, KindSyntax},
		{"wrong end tag", "{% for x in y %}\n{% endif %}", 2, 1, KindSyntax},
		{"unclosed comment", "x {# y", 1, 3, KindSyntax},
		{"unclosed string", "{{ 'abc }}", 1, 4, KindSyntax},
		{"unbalanced bracket", "{{ (1 ] }}", 1, 7, KindSyntax},
		{"unexpected char", "{{ 1 $ 2 }}", 1, 6, KindSyntax},
		{"include needs a loader", "{% include 'x.jinja' %}", 1, 1, KindSyntax},
		{"unknown filter outside if", "{% for m in ms %}\n{{ m | frob }}{% endfor %}", 2, 8, KindAssertion},
		{"unknown test", "{{ 1 is frob }}", 1, 9, KindAssertion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.src)
			var e *Error
			if !errors.As(err, &e) || e.Kind != tc.kind || e.Line != tc.line || e.Col != tc.col {
				t.Fatalf("got %v, want %s at %d:%d", err, tc.kind, tc.line, tc.col)
			}
		})
	}
}

func TestRuntimeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		vars      map[string]any
		line, col int
		kind, msg string
	}{
		{"raise_exception", "{% if true %}\n  {{ raise_exception('Roles must alternate') }}{% endif %}", nil, 2, 6, KindTemplate, "Roles must alternate"},
		{"attribute of undefined", "x\n{{ a.b.c }}", nil, 2, 5, KindUndefined, "'a' is undefined"},
		{"none is not iterable", "{% for x in n %}{% endfor %}", map[string]any{"n": nil}, 1, 13, KindType, "'NoneType' object is not iterable"},
		{"str plus int", "{{ 'a' + 1 }}", nil, 1, 8, KindType, `can only concatenate str (not "int") to str`},
		{"length of none", "{{ n | length }}", map[string]any{"n": nil}, 1, 8, KindType, "object of type 'NoneType' has no len()"},
		{"items of a string", "{% for k, v in 'ab' | items %}{% endfor %}", nil, 1, 23, KindType, "can only get item pairs from a mapping"},
		{"list.append", "{% set l = [] %}{{ l.append(1) }}", nil, 1, 21, KindSecurity, "access to attribute 'append' of 'list' object is unsafe"},
		{"dict.update", "{{ {}.update({}) }}", nil, 1, 6, KindSecurity, "access to attribute 'update' of 'dict' object is unsafe"},
		{"list.pop", "{{ [1].pop() }}", nil, 1, 7, KindSecurity, "access to attribute 'pop' of 'list' object is unsafe"},
		{"dunder", "{{ ''.__class__.__mro__ }}", nil, 1, 16, KindSecurity, "access to attribute '__class__' of 'str' object is unsafe"},
		{"range past MAX_RANGE", "{{ range(100001) | length }}", nil, 1, 4, KindOverflow, "range too big, the sandbox blocks ranges larger than MAX_RANGE (100000)"},
		{"division by zero", "{{ 1 // 0 }}", nil, 1, 6, KindZeroDiv, "integer division or modulo by zero"},
		{"set attribute of a non-namespace", "{% set d = {} %}{% set d.x = 1 %}", nil, 1, 24, KindRuntime, "cannot assign attribute on non-namespace object"},
		{"filter reached in an if", "{% if true %}{{ 'x' | from_json }}{% endif %}", nil, 1, 23, KindRuntime, "no filter named 'from_json'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tpl, err := Parse(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			_, err = tpl.Render(tc.vars, Options{})
			var e *Error
			if !errors.As(err, &e) || e.Kind != tc.kind || e.Msg != tc.msg || e.Line != tc.line || e.Col != tc.col {
				t.Fatalf("got %v, want %d:%d: %s: %s", err, tc.line, tc.col, tc.kind, tc.msg)
			}
		})
	}
}

func TestErrorString(t *testing.T) {
	_, err := Parse("{{ x")
	if err == nil || err.Error() != "1:5: TemplateSyntaxError: unexpected end of template, expected end of print statement" {
		t.Fatalf("got %v", err)
	}
}

// TestLimits lowers each bound and checks that a template going past it
// stops with KindLimit (or jinja2's own error) instead of running on.
func TestLimits(t *testing.T) {
	render := func(src string, opt Options) error {
		tpl, err := Parse(src)
		if err != nil {
			return err
		}
		_, err = tpl.Render(nil, opt)
		return err
	}
	kind := func(err error) string {
		var e *Error
		if errors.As(err, &e) {
			return e.Kind
		}
		return ""
	}
	for _, tc := range []struct {
		name string
		src  string
		opt  Options
		want string
	}{
		{"steps: nested loops", "{% for a in range(1000) %}{% for b in range(1000) %}{% endfor %}{% endfor %}", Options{MaxSteps: 10_000}, KindLimit},
		{"steps: default bound", "{% for a in range(100000) %}{% for b in range(10) %}{% endfor %}{% endfor %}", Options{}, KindLimit},
		{"steps: macro calls", "{% macro m() %}{% endmacro %}{% for a in range(100) %}{{ m() }}{% endfor %}", Options{MaxSteps: 150}, KindLimit},
		{"output bytes", "{% for a in range(100) %}xxxxxxxxxx{% endfor %}", Options{MaxOutput: 500}, KindLimit},
		{"string doubling", "{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", Options{MaxOutput: 1 << 20}, KindLimit},
		{"string repeat", "{{ 'x' * 100000000 }}", Options{MaxOutput: 1 << 20}, KindLimit},
		{"list doubling", "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}{% endfor %}", Options{MaxOutput: 1 << 20}, KindLimit},
		{"macro recursion", "{% macro r() %}{{ r() }}{% endmacro %}{{ r() }}", Options{}, KindLimit},
		{"range", "{{ range(0, 1000000000) | length }}", Options{}, KindOverflow},
		{"parse depth", strings.Repeat("{{ (", 1) + strings.Repeat("(", 10000) + "1" + strings.Repeat(")", 10001) + " }}", Options{}, KindSyntax},
		{"within bounds", "{% for a in range(10) %}x{% endfor %}", Options{MaxSteps: 11, MaxOutput: 10}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := kind(render(tc.src, tc.opt)); got != tc.want {
				t.Fatalf("got error kind %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("deep values built at run time", func(t *testing.T) {
		// 5000 nested lists: printing, comparing and hashing stop at maxValueDepth
		src := "{% set ns = namespace(l=[], t=()) %}{% for i in range(5000) %}{% set ns.l = [ns.l] %}{% set ns.t = (ns.t,) %}{% endfor %}" +
			"{{ (ns.l == ns.l) }}{{ ns.l < ns.l }}"
		if err := render(src, Options{}); kind(err) != KindType {
			t.Fatalf("got %v, want a TypeError from comparing past the depth bound", err)
		}
		if err := render(src[:strings.Index(src, "{{")]+"{{ {ns.t: 1} }}", Options{}); kind(err) != KindType {
			t.Fatalf("got %v, want unhashable past the depth bound", err)
		}
		if err := render(src[:strings.Index(src, "{{")]+"{{ ns.l | tojson }}", Options{}); kind(err) != KindValue {
			t.Fatalf("got %v, want tojson's depth error", err)
		}
	})
	t.Run("value depth", func(t *testing.T) {
		deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
		if _, err := DecodeJSON([]byte(deep)); err == nil {
			t.Fatal("DecodeJSON accepted 5000 nested arrays")
		}
	})
}

func TestVarsTypes(t *testing.T) {
	tpl, err := Parse("{{ a }} {{ b }} {{ c }} {{ d }} {{ e }} {{ f | tojson }} {{ g }}")
	if err != nil {
		t.Fatal(err)
	}
	ordered := NewDict()
	ordered.Set("z", int64(1))
	ordered.Set("a", 2.0)
	got, err := tpl.Render(map[string]any{
		"a": 3, "b": json.Number("1.0"), "c": []string{"x"}, "d": map[string]any{"z": true, "a": nil},
		"e": ordered, "f": []any{int64(1), 1.5, "é"}, "g": json.Number("7"),
	}, Options{})
	if want := `3 1.0 ['x'] {'a': None, 'z': True} {'z': 1, 'a': 2.0} [1, 1.5, "é"] 7`; err != nil || got != want {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
	if _, err := tpl.Render(map[string]any{"a": struct{}{}}, Options{}); err == nil {
		t.Fatal("a Go struct was accepted as a variable")
	}
}

func TestDecodeJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"b": 1, "a": [1.0, 2e3, -0, null, true, "x"]}`, `{'b': 1, 'a': [1.0, 2000.0, 0, None, True, 'x']}`},
		{`{"k": {"z": {}, "y": []}}`, `{'k': {'z': {}, 'y': []}}`},
		{`[12345678901234567890, -99999999999999999999, 1e400]`, `[12345678901234567890, -99999999999999999999, inf]`},
	} {
		v, err := DecodeJSON([]byte(tc.in))
		if err != nil || pyRepr(v) != tc.want {
			t.Errorf("DecodeJSON(%s) = %s, %v; want %s", tc.in, pyRepr(v), err, tc.want)
		}
	}
	for _, bad := range []string{``, `{`, `{"a": 1} x`, `[1,]`, `{"a" 1}`} {
		if _, err := DecodeJSON([]byte(bad)); err == nil {
			t.Errorf("DecodeJSON(%q) accepted", bad)
		}
	}
}

// TestConcurrentRender renders one parsed template from many goroutines: the
// render state lives apart from the Template (run with -race).
func TestConcurrentRender(t *testing.T) {
	tpl, err := Parse("{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{{ m.content }}{% endfor %}{{ ns.n }}")
	if err != nil {
		t.Fatal(err)
	}
	msgs, _ := DecodeJSON([]byte(`[{"content": "a"}, {"content": "b"}]`))
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if got, err := tpl.Render(map[string]any{"messages": msgs}, Options{}); err != nil || got != "ab2" {
					errs <- got
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for got := range errs {
		t.Fatalf("got %q, want ab2", got)
	}
}

func FuzzRender(f *testing.F) {
	if b, err := os.ReadFile("testdata/features.json"); err == nil {
		var doc struct {
			Cases []struct{ Template string } `json:"cases"`
		}
		if json.Unmarshal(b, &doc) == nil {
			for _, c := range doc.Cases {
				f.Add(c.Template)
			}
		}
	}
	f.Add("{% for m in messages %}{{ m.role }}{% endfor %}")
	msgs, _ := DecodeJSON([]byte(`[{"role": "user", "content": "Hi", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]}]`))
	f.Fuzz(func(t *testing.T, src string) {
		tpl, err := Parse(src)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Line < 1 || e.Col < 1 {
				t.Fatalf("parse error %v is not a located *Error", err)
			}
			return
		}
		out, err := tpl.Render(map[string]any{"messages": msgs, "n": nil, "s": "text"}, Options{MaxOutput: 1 << 16, MaxSteps: 10_000})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Line < 1 || e.Col < 1 {
				t.Fatalf("render error %v is not a located *Error", err)
			}
			return
		}
		if len(out) > 1<<16 {
			t.Fatalf("output of %d bytes passed MaxOutput", len(out))
		}
	})
}
