package gguf

import (
	"fmt"
	"math"
)

// Value is one metadata value. Scalars keep their type in Type; arrays keep
// the elements' type in Elem and the elements as a typed Go slice ([]uint8,
// []int8, []uint16, []int16, []uint32, []int32, []float32, []bool, []string,
// []uint64, []int64, []float64, or []Value for arrays of arrays).
type Value struct {
	Type ValueType
	Elem ValueType // TypeArray only
	v    any       // scalars: uint64, int64, float64, bool or string; arrays: the slice
}

// Constructors for the values the writer is given.

func Uint8(x uint8) Value     { return Value{Type: TypeUint8, v: uint64(x)} }
func Int8(x int8) Value       { return Value{Type: TypeInt8, v: int64(x)} }
func Uint16(x uint16) Value   { return Value{Type: TypeUint16, v: uint64(x)} }
func Int16(x int16) Value     { return Value{Type: TypeInt16, v: int64(x)} }
func Uint32(x uint32) Value   { return Value{Type: TypeUint32, v: uint64(x)} }
func Int32(x int32) Value     { return Value{Type: TypeInt32, v: int64(x)} }
func Uint64(x uint64) Value   { return Value{Type: TypeUint64, v: x} }
func Int64(x int64) Value     { return Value{Type: TypeInt64, v: x} }
func Float32(x float32) Value { return Value{Type: TypeFloat32, v: float64(x)} }
func Float64(x float64) Value { return Value{Type: TypeFloat64, v: x} }
func Bool(x bool) Value       { return Value{Type: TypeBool, v: x} }
func String(s string) Value   { return Value{Type: TypeString, v: s} }

// Array makes an array value from a typed slice (see Value); it panics on a
// slice type that has no GGUF element type, which is a programming error.
func Array(elems any) Value {
	var e ValueType
	switch s := elems.(type) {
	case []uint8:
		e = TypeUint8
	case []int8:
		e = TypeInt8
	case []uint16:
		e = TypeUint16
	case []int16:
		e = TypeInt16
	case []uint32:
		e = TypeUint32
	case []int32:
		e = TypeInt32
	case []float32:
		e = TypeFloat32
	case []bool:
		e = TypeBool
	case []string:
		e = TypeString
	case []uint64:
		e = TypeUint64
	case []int64:
		e = TypeInt64
	case []float64:
		e = TypeFloat64
	case []Value:
		e = TypeArray
		for _, x := range s {
			if x.Type != TypeArray {
				panic("gguf: Array of []Value holds a non-array value")
			}
		}
	default:
		panic(fmt.Sprintf("gguf: Array of %T", elems))
	}
	return Value{Type: TypeArray, Elem: e, v: elems}
}

// Uint returns an integer value that is not negative, of any integer type.
func (v Value) Uint() (uint64, bool) {
	switch x := v.v.(type) {
	case uint64:
		return x, v.Type != TypeArray
	case int64:
		return uint64(x), x >= 0
	}
	return 0, false
}

// Int returns an integer value of any integer type that fits an int64.
func (v Value) Int() (int64, bool) {
	switch x := v.v.(type) {
	case uint64:
		return int64(x), x <= math.MaxInt64
	case int64:
		return x, true
	}
	return 0, false
}

// Float returns a float32 or float64 value.
func (v Value) Float() (float64, bool) {
	x, ok := v.v.(float64)
	return x, ok
}

// Bool returns a bool value.
func (v Value) Bool() (bool, bool) {
	x, ok := v.v.(bool)
	return x, ok
}

// Str returns a string value, byte for byte.
func (v Value) Str() (string, bool) {
	x, ok := v.v.(string)
	return x, ok
}

// Len returns an array's length, 0 for a scalar.
func (v Value) Len() int {
	switch s := v.v.(type) {
	case []uint8:
		return len(s)
	case []int8:
		return len(s)
	case []uint16:
		return len(s)
	case []int16:
		return len(s)
	case []uint32:
		return len(s)
	case []int32:
		return len(s)
	case []float32:
		return len(s)
	case []bool:
		return len(s)
	case []string:
		return len(s)
	case []uint64:
		return len(s)
	case []int64:
		return len(s)
	case []float64:
		return len(s)
	case []Value:
		return len(s)
	}
	return 0
}

// Strings returns an array of strings (not a copy).
func (v Value) Strings() ([]string, bool) {
	x, ok := v.v.([]string)
	return x, ok
}

// Float32s returns an array of f32 (not a copy).
func (v Value) Float32s() ([]float32, bool) {
	x, ok := v.v.([]float32)
	return x, ok
}

// Ints returns an array of any integer type as int64s (a copy); false when
// an element does not fit.
func (v Value) Ints() ([]int64, bool) {
	n := v.Len()
	out := make([]int64, n)
	for i := range out {
		x, ok := v.Index(i).Int()
		if !ok {
			return nil, false
		}
		out[i] = x
	}
	return out, v.Type == TypeArray && v.Elem != TypeString && v.Elem != TypeArray &&
		v.Elem != TypeBool && v.Elem != TypeFloat32 && v.Elem != TypeFloat64
}

// Index returns element i of an array as a Value (the zero Value when out of
// range or not an array).
func (v Value) Index(i int) Value {
	if i < 0 || i >= v.Len() {
		return Value{}
	}
	switch s := v.v.(type) {
	case []uint8:
		return Uint8(s[i])
	case []int8:
		return Int8(s[i])
	case []uint16:
		return Uint16(s[i])
	case []int16:
		return Int16(s[i])
	case []uint32:
		return Uint32(s[i])
	case []int32:
		return Int32(s[i])
	case []float32:
		return Float32(s[i])
	case []bool:
		return Bool(s[i])
	case []string:
		return String(s[i])
	case []uint64:
		return Uint64(s[i])
	case []int64:
		return Int64(s[i])
	case []float64:
		return Float64(s[i])
	case []Value:
		return s[i]
	}
	return Value{}
}

// Interface returns the value as a Go value for printing: uint64, int64,
// float64, bool or string for a scalar, the typed slice for an array.
func (v Value) Interface() any { return v.v }

// String formats the value for people, arrays in full.
func (v Value) String() string {
	if v.Type == TypeString {
		return fmt.Sprintf("%q", v.v)
	}
	return fmt.Sprint(v.v)
}
