package jinja

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// TestFeatures renders testdata/features.json: per-feature templates whose
// expected output (or error) Python's jinja2 rendered with transformers'
// settings, through scripts/jinja-golden.py (the file records the jinja2
// version). A case where jinja2 raised must fail here too, with the same
// exception name.
func TestFeatures(t *testing.T) {
	b, err := os.ReadFile("testdata/features.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct {
			Name     string          `json:"name"`
			Template string          `json:"template"`
			Vars     json.RawMessage `json:"vars"`
			Want     *string         `json:"want"`
			Error    *string         `json:"error"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range doc.Cases {
		t.Run(c.Name, func(t *testing.T) {
			got, err := renderJSON(c.Template, c.Vars)
			switch {
			case c.Error != nil && err == nil:
				t.Fatalf("rendered %q, want jinja2's %s", got, *c.Error)
			case c.Error != nil:
				kind, msg, _ := strings.Cut(*c.Error, ": ")
				e, ok := err.(*Error)
				if !ok || e.Kind != kind || kind == KindTemplate && e.Msg != msg {
					t.Fatalf("got error %v, want %s", err, *c.Error)
				}
			case err != nil:
				t.Fatalf("error %v, want %q", err, *c.Want)
			case got != *c.Want:
				t.Fatalf("got  %q\nwant %q", got, *c.Want)
			}
		})
	}
}

// renderJSON parses src and renders it with a JSON object of variables at
// the date scripts/jinja-golden.py uses.
func renderJSON(src string, vars json.RawMessage) (string, error) {
	tpl, err := Parse(src)
	if err != nil {
		return "", err
	}
	m := map[string]any{}
	if len(vars) > 0 {
		v, err := DecodeJSON(vars)
		if err != nil {
			return "", err
		}
		d := v.(*Dict)
		for i, k := range d.Keys() {
			m[k.(string)] = d.vals[i]
		}
	}
	return tpl.Render(m, Options{Now: time.Date(2024, 7, 26, 0, 0, 0, 0, time.UTC)})
}
