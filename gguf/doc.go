// Package gguf reads, validates and writes GGUF files (ggml's model format,
// versions 2 and 3), the files of llama.cpp, ollama and the Hub's -GGUF
// repositories.
//
// # Byte layout
//
// All integers and floats are little-endian (a version whose low 16 bits
// are zero is a big-endian file, refused as such).
//
//	field            type                 notes
//	magic            char[4]              "GGUF"
//	version          u32                  2 or 3 (1 had 32-bit counts; refused)
//	tensor_count     u64                  bounded by the bytes left / 25
//	metadata_count   u64                  bounded by the bytes left / 14
//	metadata         metadata_count ×     key (string), value type (u32), value
//	tensor infos     tensor_count ×       name (string, 1-63 bytes), n_dims (u32, ≤ 4),
//	                                      ne (u64 × n_dims, innermost first), type (u32),
//	                                      offset (u64, from the data section)
//	padding                               to general.alignment (a u32 power of two; default 32)
//	data section                          each tensor at the aligned end of the one before
//
// A string is a u64 length and that many bytes (UTF-8 by convention, kept
// byte for byte). Value types: 0 u8, 1 i8, 2 u16, 3 i16, 4 u32, 5 i32, 6 f32,
// 7 bool (one byte, 0 or 1), 8 string, 9 array (element type u32, count u64,
// elements), 10 u64, 11 i64, 12 f64. Arrays of arrays are read to a depth of
// 3 and never written (llama.cpp refuses them).
//
// # Validation
//
// Parse checks everything before it allocates anything sized by the file:
// every count and string length against the bytes left, at most 4
// dimensions, element counts and byte sizes with overflow checks, rows a
// multiple of the type's block, tensor types known (unknown numbers and the
// types ggml removed are refused, the latter by name), no duplicate or empty
// keys, no duplicate tensor names, and the layout: in info order each tensor
// starts exactly at the aligned end of the one before, and its data ends
// inside the file. Errors are *Error values naming the key or tensor and the
// byte offset, matching ErrFormat or ErrIO
// (the loader codes ML_E_FORMAT and ML_E_IO).
//
// # Split sets
//
// llama.cpp's gguf-split cuts a model into files PREFIX-00001-of-0000N.gguf
// and on: each a GGUF file with split.no (u16, from 0), split.count (u16)
// and split.tensors.count (i32, the whole set's tensors), the first with all
// the model's metadata, the tensors dealt out in order. OpenSplit, given the
// first, finds the others by name and checks that each numbers and counts
// itself as its name says and that the set holds the announced tensors,
// each once.
//
// The writer plans every offset from the tensor list before the first byte,
// writes to a temporary file, verifies it with Open and renames it into place.
package gguf
