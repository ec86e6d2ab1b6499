package convert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
)

// config is a parsed config.json. Keys are looked up in text_config first
// (composite vision+text models keep the text model there), then at the top.
type config struct {
	path string
	top  map[string]any
	text map[string]any // nil when the config is not composite
}

func readConfig(path string) (*config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	return parseConfig(b, path)
}

func parseConfig(b []byte, path string) (*config, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	c := &config{path: path}
	if err := dec.Decode(&c.top); err != nil {
		return nil, fmt.Errorf("convert: %s: invalid JSON: %v", path, err)
	}
	if c.top == nil {
		return nil, fmt.Errorf("convert: %s: not a JSON object", path)
	}
	if tc, ok := c.top["text_config"]; ok && tc != nil {
		m, ok := tc.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("convert: %s: text_config is not an object", path)
		}
		c.text = m
	}
	return c, nil
}

// raw returns the value of key and whether it is present (null counts as
// present, with a nil value).
func (c *config) raw(key string) (any, bool) {
	if c.text != nil {
		if v, ok := c.text[key]; ok {
			return v, true
		}
	}
	v, ok := c.top[key]
	return v, ok
}

// topFirst is raw with the top-level config consulted first.
func (c *config) topFirst(key string) (any, bool) {
	if v, ok := c.top[key]; ok {
		return v, true
	}
	if c.text != nil {
		v, ok := c.text[key]
		return v, ok
	}
	return nil, false
}

func (c *config) errf(key, format string, args ...any) error {
	return fmt.Errorf("convert: %s: %s: "+format, append([]any{c.path, key}, args...)...)
}

// num converts a JSON value to float64.
func num(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	case int:
		return float64(x), true
	}
	return 0, false
}

// intKey reads a non-negative integer; absent or null gives def.
func (c *config) intKey(key string, def int) (int, error) {
	v, ok := c.raw(key)
	if !ok || v == nil {
		return def, nil
	}
	return c.intVal(key, v)
}

func (c *config) intVal(key string, v any) (int, error) {
	f, ok := num(v)
	if !ok || f != math.Trunc(f) || f < 0 || f > 1<<31 {
		return 0, c.errf(key, "%v is not a non-negative integer", v)
	}
	return int(f), nil
}

// floatKey reads a finite number; absent or null gives def.
func (c *config) floatKey(key string, def float64) (float64, error) {
	v, ok := c.raw(key)
	if !ok || v == nil {
		return def, nil
	}
	f, ok := num(v)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, c.errf(key, "%v is not a number", v)
	}
	return f, nil
}

// boolKey reads a boolean; absent or null gives def.
func (c *config) boolKey(key string, def bool) (bool, error) {
	v, ok := c.raw(key)
	if !ok || v == nil {
		return def, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, c.errf(key, "%v is not a boolean", v)
	}
	return b, nil
}

// strKey reads a string; absent or null gives def.
func (c *config) strKey(key, def string) (string, error) {
	v, ok := c.raw(key)
	if !ok || v == nil {
		return def, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", c.errf(key, "%v is not a string", v)
	}
	return s, nil
}

// strList reads a list of strings; absent or null gives nil.
func (c *config) strList(key string) ([]string, error) {
	v, ok := c.raw(key)
	if !ok || v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, c.errf(key, "not a list")
	}
	out := make([]string, len(l))
	for i, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, c.errf(key, "element %d (%v) is not a string", i, e)
		}
		out[i] = s
	}
	return out, nil
}

// dict reads an object; absent or null gives nil.
func (c *config) dict(key string) (map[string]any, error) {
	v, ok := c.raw(key)
	if !ok || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, c.errf(key, "not an object")
	}
	return m, nil
}
