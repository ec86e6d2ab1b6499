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
			s = decodeSlice(p, 1, func(b []byte) int8 { return int8(b[0]) })
		case TypeBool:
			for i, x := range p {
				if x > 1 {
					return Value{}, formatErr(int64(d.off-n+i), "bool element %d is %d, neither 0 nor 1", i, x)
				}
			}
			s = decodeSlice(p, 1, func(b []byte) bool { return b[0] == 1 })
		case TypeUint16:
			s = decodeSlice(p, 2, le.Uint16)
		case TypeInt16:
			s = decodeSlice(p, 2, func(b []byte) int16 { return int16(le.Uint16(b)) })
		case TypeUint32:
			s = decodeSlice(p, 4, le.Uint32)
		case TypeInt32:
			s = decodeSlice(p, 4, func(b []byte) int32 { return int32(le.Uint32(b)) })
		case TypeFloat32:
			s = decodeSlice(p, 4, func(b []byte) float32 { return math.Float32frombits(le.Uint32(b)) })
		case TypeUint64:
			s = decodeSlice(p, 8, le.Uint64)
		case TypeInt64:
			s = decodeSlice(p, 8, func(b []byte) int64 { return int64(le.Uint64(b)) })
		case TypeFloat64:
			s = decodeSlice(p, 8, func(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) })
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

// decodeSlice decodes len(p)/size elements of size bytes each.
func decodeSlice[T any](p []byte, size int, f func([]byte) T) []T {
	v := make([]T, len(p)/size)
	for i := range v {
		v[i] = f(p[i*size:])
	}
	return v
}
