package grammar

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// jv is a JSON value that keeps the order of object members.
type jv struct {
	kind byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	keys []string
	vals []*jv
	str  string
	num  json.Number
	b    bool
	raw  []byte // the canonical compact text
}

func (v *jv) get(k string) *jv {
	for i, kk := range v.keys {
		if kk == k {
			return v.vals[i]
		}
	}
	return nil
}

const maxJSONDepth = 128

func parseJSON(b []byte) (*jv, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := decodeJV(d, 0)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("json: trailing data after the value")
	}
	return v, nil
}

func decodeJV(d *json.Decoder, depth int) (*jv, error) {
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("json: nested deeper than %d", maxJSONDepth)
	}
	t, err := d.Token()
	if err != nil {
		return nil, fmt.Errorf("json: %v", err)
	}
	v := &jv{}
	switch x := t.(type) {
	case json.Delim:
		if x == '{' {
			v.kind = 'o'
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, fmt.Errorf("json: %v", err)
				}
				k, _ := kt.(string)
				e, err := decodeJV(d, depth+1)
				if err != nil {
					return nil, err
				}
				v.keys, v.vals = append(v.keys, k), append(v.vals, e)
			}
		} else {
			v.kind = 'a'
			for d.More() {
				e, err := decodeJV(d, depth+1)
				if err != nil {
					return nil, err
				}
				v.vals = append(v.vals, e)
			}
		}
		if _, err := d.Token(); err != nil {
			return nil, fmt.Errorf("json: %v", err)
		}
	case string:
		v.kind, v.str = 's', x
	case json.Number:
		v.kind, v.num = 'n', x
	case bool:
		v.kind, v.b = 'b', x
	case nil:
		v.kind = 'z'
	}
	v.raw = v.encode(nil)
	return v, nil
}

func (v *jv) encode(dst []byte) []byte {
	switch v.kind {
	case 'o':
		dst = append(dst, '{')
		for i, k := range v.keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, k)
			dst = append(dst, ':')
			dst = v.vals[i].encode(dst)
		}
		return append(dst, '}')
	case 'a':
		dst = append(dst, '[')
		for i, e := range v.vals {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = e.encode(dst)
		}
		return append(dst, ']')
	case 's':
		return appendJSONString(dst, v.str)
	case 'n':
		return append(dst, v.num...)
	case 'b':
		return strconv.AppendBool(dst, v.b)
	}
	return append(dst, "null"...)
}

func appendJSONString(dst []byte, s string) []byte {
	var sb strings.Builder
	e := json.NewEncoder(&sb)
	e.SetEscapeHTML(false)
	e.Encode(s)
	return append(dst, strings.TrimSuffix(sb.String(), "\n")...)
}

// typeName is the JSON Schema type of a value (integers are "integer").
func (v *jv) typeName() string {
	switch v.kind {
	case 'o':
		return "object"
	case 'a':
		return "array"
	case 's':
		return "string"
	case 'n':
		if f, err := strconv.ParseFloat(string(v.num), 64); err == nil && f == float64(int64(f)) {
			return "integer"
		}
		return "number"
	case 'b':
		return "boolean"
	}
	return "null"
}
