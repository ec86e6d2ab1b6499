package jinja

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/krafla/krafla/internal/testenv"
)

// corpusCase is one line of ../shared/chat-templates/cases.jsonl: the text
// Python's jinja2 3.1.2 renders with transformers' settings (its README says
// how the file was made), or the error it raised.
type corpusCase struct {
	Template string          `json:"template"`
	Date     string          `json:"date"`
	Vars     json.RawMessage `json:"vars"`
	Output   *string         `json:"output"`
	Error    *string         `json:"error"`
}

func loadCorpus(t testing.TB) (string, []corpusCase) {
	dir := testenv.Shared(t, "chat-templates")
	f, err := os.Open(filepath.Join(dir, "cases.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []corpusCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var c corpusCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("cases.jsonl line %d: %v", len(cases)+1, err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return dir, cases
}

// renderCase renders one corpus case the way krafla template does.
func renderCase(dir string, c corpusCase, parsed map[string]*Template) (string, error) {
	tpl, ok := parsed[c.Template]
	if !ok {
		src, err := os.ReadFile(filepath.Join(dir, "templates", c.Template))
		if err != nil {
			return "", err
		}
		tpl, err = Parse(string(src))
		if err != nil {
			return "", err
		}
		parsed[c.Template] = tpl
	}
	v, err := DecodeJSON(c.Vars)
	if err != nil {
		return "", err
	}
	d, ok := v.(*Dict)
	if !ok {
		return "", fmt.Errorf("vars is not an object")
	}
	vars := map[string]any{}
	for i, k := range d.Keys() {
		vars[k.(string)] = d.vals[i]
	}
	now, err := time.Parse("2006-01-02", c.Date)
	if err != nil {
		return "", err
	}
	return tpl.Render(vars, Options{Now: now})
}

func TestCorpus(t *testing.T) {
	dir, cases := loadCorpus(t)
	parsed := map[string]*Template{}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%04d_%s", i+1, strings.TrimSuffix(c.Template, ".jinja")), func(t *testing.T) {
			got, err := renderCase(dir, c, parsed)
			switch {
			case c.Error != nil && err == nil:
				t.Fatalf("rendered, want jinja2's error %s", *c.Error)
			case c.Error != nil:
				if msg, ok := strings.CutPrefix(*c.Error, "TemplateError: "); ok {
					if e, isE := err.(*Error); !isE || e.Kind != KindTemplate || e.Msg != msg {
						t.Fatalf("got error %v, want raise_exception(%q)", err, msg)
					}
				}
			case err != nil:
				t.Fatalf("error %v, want output %q", err, *c.Output)
			case got != *c.Output:
				t.Fatalf("output differs at byte %d:\ngot  %q\nwant %q", diffAt(got, *c.Output), got, *c.Output)
			}
		})
	}
}

func diffAt(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// BenchmarkCorpus renders every corpus case once per iteration (templates
// parsed beforehand, variables decoded each time as a caller would).
func BenchmarkCorpus(b *testing.B) {
	dir, cases := loadCorpus(b)
	parsed := map[string]*Template{}
	for _, c := range cases {
		renderCase(dir, c, parsed)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range cases {
			renderCase(dir, c, parsed)
		}
	}
}

// BenchmarkParse parses every corpus template once per iteration.
func BenchmarkParse(b *testing.B) {
	dir := testenv.Shared(b, "chat-templates")
	var srcs []string
	for _, name := range testenv.DirNames(b, filepath.Join(dir, "templates")) {
		src, err := os.ReadFile(filepath.Join(dir, "templates", name))
		if err != nil {
			b.Fatal(err)
		}
		srcs = append(srcs, string(src))
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range srcs {
			if _, err := Parse(s); err != nil {
				b.Fatal(err)
			}
		}
	}
}
