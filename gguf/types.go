package gguf

import "fmt"

// Type is a ggml tensor type (ggml.h's enum ggml_type), as GGUF stores it.
type Type uint32

// The ggml types this package knows. Numbers that ggml removed (4, 5, 31-33,
// 36-38) are known by name and refused.
const (
	F32     Type = 0
	F16     Type = 1
	Q4_0    Type = 2
	Q4_1    Type = 3
	Q5_0    Type = 6
	Q5_1    Type = 7
	Q8_0    Type = 8
	Q8_1    Type = 9
	Q2_K    Type = 10
	Q3_K    Type = 11
	Q4_K    Type = 12
	Q5_K    Type = 13
	Q6_K    Type = 14
	Q8_K    Type = 15
	IQ2_XXS Type = 16
	IQ2_XS  Type = 17
	IQ3_XXS Type = 18
	IQ1_S   Type = 19
	IQ4_NL  Type = 20
	IQ3_S   Type = 21
	IQ2_S   Type = 22
	IQ4_XS  Type = 23
	I8      Type = 24
	I16     Type = 25
	I32     Type = 26
	I64     Type = 27
	F64     Type = 28
	IQ1_M   Type = 29
	BF16    Type = 30
	TQ1_0   Type = 34
	TQ2_0   Type = 35
	MXFP4   Type = 39
)

// typeInfo is one row of the type table: elements per block and bytes per
// block (ggml's blck_size and type_size). block 0 marks a number ggml removed.
type typeInfo struct {
	name  string
	block uint64
	bytes uint64
}

// types is ggml's type_traits table (ggml/src/ggml.c), sizes from the block
// structs of ggml-common.h.
var types = map[Type]typeInfo{
	F32: {"F32", 1, 4}, F16: {"F16", 1, 2},
	Q4_0: {"Q4_0", 32, 18}, Q4_1: {"Q4_1", 32, 20},
	4: {"Q4_2", 0, 0}, 5: {"Q4_3", 0, 0},
	Q5_0: {"Q5_0", 32, 22}, Q5_1: {"Q5_1", 32, 24},
	Q8_0: {"Q8_0", 32, 34}, Q8_1: {"Q8_1", 32, 36},
	Q2_K: {"Q2_K", 256, 84}, Q3_K: {"Q3_K", 256, 110}, Q4_K: {"Q4_K", 256, 144},
	Q5_K: {"Q5_K", 256, 176}, Q6_K: {"Q6_K", 256, 210}, Q8_K: {"Q8_K", 256, 292},
	IQ2_XXS: {"IQ2_XXS", 256, 66}, IQ2_XS: {"IQ2_XS", 256, 74}, IQ3_XXS: {"IQ3_XXS", 256, 98},
	IQ1_S: {"IQ1_S", 256, 50}, IQ4_NL: {"IQ4_NL", 32, 18}, IQ3_S: {"IQ3_S", 256, 110},
	IQ2_S: {"IQ2_S", 256, 82}, IQ4_XS: {"IQ4_XS", 256, 136},
	I8: {"I8", 1, 1}, I16: {"I16", 1, 2}, I32: {"I32", 1, 4}, I64: {"I64", 1, 8},
	F64: {"F64", 1, 8}, IQ1_M: {"IQ1_M", 256, 56}, BF16: {"BF16", 1, 2},
	31: {"Q4_0_4_4", 0, 0}, 32: {"Q4_0_4_8", 0, 0}, 33: {"Q4_0_8_8", 0, 0},
	TQ1_0: {"TQ1_0", 256, 54}, TQ2_0: {"TQ2_0", 256, 66},
	36: {"IQ4_NL_4_4", 0, 0}, 37: {"IQ4_NL_4_8", 0, 0}, 38: {"IQ4_NL_8_8", 0, 0},
	MXFP4: {"MXFP4", 32, 17},
}

// String returns ggml's name of the type ("Q4_K"), or "type(N)".
func (t Type) String() string {
	if ti, ok := types[t]; ok {
		return ti.name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// Known reports whether ggml defines t and files may still hold it.
func (t Type) Known() bool { return types[t].block != 0 }

// BlockSize returns the elements per block (1 for plain types), 0 if unknown.
func (t Type) BlockSize() int { return int(types[t].block) }

// BlockBytes returns the bytes per block, 0 if unknown.
func (t Type) BlockBytes() int { return int(types[t].bytes) }

// ValueType is the type of a metadata value (gguf.h's enum gguf_type).
type ValueType uint32

// The metadata value types.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var valueTypeNames = [...]string{"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64"}

// String names the type as gguf-dump does ("u32", "string", "array").
func (t ValueType) String() string {
	if int(t) < len(valueTypeNames) {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("value_type(%d)", uint32(t))
}

// size returns the encoded size of a fixed-size value type, 0 for strings
// and arrays, and -1 for an unknown type.
func (t ValueType) size() int {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	case TypeString, TypeArray:
		return 0
	}
	return -1
}
