package chat

import (
	"encoding/json"
	"time"

	"github.com/krafla/krafla/jinja"
)

// renderer is a compiled template; the Go ChatML renderer of the tests is
// the other one.
type renderer interface {
	render(vars map[string]any, now time.Time) (string, error)
}

type jinjaTemplate struct{ t *jinja.Template }

func (j jinjaTemplate) render(vars map[string]any, now time.Time) (string, error) {
	return j.t.Render(vars, jinja.Options{Now: now})
}

func compile(src string) (renderer, error) {
	t, err := jinja.Parse(src)
	if err != nil {
		return nil, err
	}
	return jinjaTemplate{t}, nil
}

// jsonValue gives v as the template sees JSON: objects keep their key order.
func jsonValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jinja.DecodeJSON(b)
}
