package gguf

import (
	"encoding/binary"
	"math"
)

// decoder reads little-endian fields from b, checking every length against
// the bytes left before it slices or allocates.
type decoder struct {
	b   []byte
	off int
}

func (d *decoder) left() uint64 { return uint64(len(d.b) - d.off) }

// need fails unless n more bytes are left; what names the field.
func (d *decoder) need(n uint64, what string) error {
	if n > d.left() {
		return formatErr(int64(d.off), "%s needs %d bytes, %d left in the file", what, n, d.left())
	}
	return nil
}

func (d *decoder) bytes(n int) []byte {
	p := d.b[d.off : d.off+n]
	d.off += n
	return p
}

func (d *decoder) u32(what string) (uint32, error) {
	if err := d.need(4, what); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(d.bytes(4)), nil
}

func (d *decoder) u64(what string) (uint64, error) {
	if err := d.need(8, what); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(d.bytes(8)), nil
}

// str reads a u64 length and that many bytes.
func (d *decoder) str(what string) (string, error) {
	at := d.off
	n, err := d.u64(what + " length")
	if err != nil {
		return "", err
	}
	if n > d.left() {
		return "", formatErr(int64(at), "%s of %d bytes runs past the end of the file (%d bytes left)", what, n, d.left())
	}
	return string(d.bytes(int(n))), nil
}

// maxDepth bounds arrays of arrays. llama.cpp refuses them altogether; they
// are read here up to this depth and never written by krafla.
const maxDepth = 3

// value reads a value of type t.
func (d *decoder) value(t ValueType, depth int) (Value, error) {
	at := int64(d.off)
	switch t {
	case TypeString:
		s, err := d.str("string value")
		return String(s), err
	case TypeArray:
		if depth >= maxDepth {
			return Value{}, formatErr(at, "arrays nested deeper than %d", maxDepth)
		}
		et, err := d.u32("array element type")
		if err != nil {
			return Value{}, err
		}
		e := ValueType(et)
		n, err := d.u64("array length")
		if err != nil {
			return Value{}, err
		}
		// Each element takes at least min bytes: n is bounded by the bytes
		// left before anything of size n is allocated.
		min := uint64(e.size())
		switch e {
		case TypeString:
			min = 8
		case TypeArray:
			min = 12
		}
		if e.size() < 0 {
			return Value{}, formatErr(at, "array element type %d is not a GGUF value type", et)
		}
		if n > d.left()/min {
			return Value{}, formatErr(at, "array of %d %s elements needs at least %d bytes per element, %d bytes left", n, e, min, d.left())
		}
		return d.array(e, int(n), depth)
	}
	sz := t.size()
	if sz <= 0 {
		return Value{}, formatErr(at, "value type %d is not a GGUF value type", uint32(t))
	}
	if err := d.need(uint64(sz), t.String()+" value"); err != nil {
		return Value{}, err
	}
	p := d.bytes(sz)
	le := binary.LittleEndian
	switch t {
	case TypeUint8:
		return Uint8(p[0]), nil
	case TypeInt8:
		return Int8(int8(p[0])), nil
	case TypeBool:
		if p[0] > 1 {
			return Value{}, formatErr(at, "bool value %d is neither 0 nor 1", p[0])
		}
		return Bool(p[0] == 1), nil
	case TypeUint16:
		return Uint16(le.Uint16(p)), nil
	case TypeInt16:
		return Int16(int16(le.Uint16(p))), nil
	case TypeUint32:
		return Uint32(le.Uint32(p)), nil
	case TypeInt32:
		return Int32(int32(le.Uint32(p))), nil
	case TypeFloat32:
		return Float32(math.Float32frombits(le.Uint32(p))), nil
	case TypeUint64:
		return Uint64(le.Uint64(p)), nil
	case TypeInt64:
		return Int64(int64(le.Uint64(p))), nil
	default: // TypeFloat64
		return Float64(math.Float64frombits(le.Uint64(p))), nil
	}
}

// array reads n elements of type e; the caller has bounded n by the bytes left.
func (d *decoder) array(e ValueType, n, depth int) (Value, error) {
	le := binary.LittleEndian
	sz := e.size()
	if sz > 0 {
		p := d.bytes(n * sz)
		var s any
		switch e {
		case TypeUint8:
			s = append([]uint8(nil), p...)
		case TypeInt8:
			v := make([]int8, n)
			for i := range v {
				v[i] = int8(p[i])
			}
			s = v
		case TypeBool:
			v := make([]bool, n)
			for i := range v {
				if p[i] > 1 {
					return Value{}, formatErr(int64(d.off-n+i), "bool element %d is %d, neither 0 nor 1", i, p[i])
				}
				v[i] = p[i] == 1
			}
			s = v
		case TypeUint16:
			v := make([]uint16, n)
			for i := range v {
				v[i] = le.Uint16(p[2*i:])
			}
			s = v
		case TypeInt16:
			v := make([]int16, n)
			for i := range v {
				v[i] = int16(le.Uint16(p[2*i:]))
			}
			s = v
		case TypeUint32:
			v := make([]uint32, n)
			for i := range v {
				v[i] = le.Uint32(p[4*i:])
			}
			s = v
		case TypeInt32:
			v := make([]int32, n)
			for i := range v {
				v[i] = int32(le.Uint32(p[4*i:]))
			}
			s = v
		case TypeFloat32:
			v := make([]float32, n)
			for i := range v {
				v[i] = math.Float32frombits(le.Uint32(p[4*i:]))
			}
			s = v
		case TypeUint64:
			v := make([]uint64, n)
			for i := range v {
				v[i] = le.Uint64(p[8*i:])
			}
			s = v
		case TypeInt64:
			v := make([]int64, n)
			for i := range v {
				v[i] = int64(le.Uint64(p[8*i:]))
			}
			s = v
		case TypeFloat64:
			v := make([]float64, n)
			for i := range v {
				v[i] = math.Float64frombits(le.Uint64(p[8*i:]))
			}
			s = v
		}
		return Value{Type: TypeArray, Elem: e, v: s}, nil
	}
	if e == TypeString {
		v := make([]string, n)
		for i := range v {
			s, err := d.str("string element")
			if err != nil {
				return Value{}, err
			}
			v[i] = s
		}
		return Value{Type: TypeArray, Elem: e, v: v}, nil
	}
	v := make([]Value, n)
	for i := range v {
		x, err := d.value(TypeArray, depth+1)
		if err != nil {
			return Value{}, err
		}
		v[i] = x
	}
	return Value{Type: TypeArray, Elem: TypeArray, v: v}, nil
}
