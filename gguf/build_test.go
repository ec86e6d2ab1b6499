package gguf

import (
	"encoding/binary"
	"math"
)

// raw builds GGUF images byte by byte, so tests can write what the Writer
// refuses to.
type raw struct{ b []byte }

func (r *raw) u32(v uint32) *raw { r.b = binary.LittleEndian.AppendUint32(r.b, v); return r }
func (r *raw) u64(v uint64) *raw { r.b = binary.LittleEndian.AppendUint64(r.b, v); return r }
func (r *raw) str(s string) *raw { r.u64(uint64(len(s))); r.b = append(r.b, s...); return r }
func (r *raw) bytes(p ...byte) *raw {
	r.b = append(r.b, p...)
	return r
}

// header writes magic, version and the two counts.
func (r *raw) header(version uint32, nt, nkv uint64) *raw {
	r.b = append(r.b, Magic...)
	return r.u32(version).u64(nt).u64(nkv)
}

// info writes one tensor info.
func (r *raw) info(name string, typ Type, off uint64, shape ...uint64) *raw {
	r.str(name).u32(uint32(len(shape)))
	for _, d := range shape {
		r.u64(d)
	}
	return r.u32(uint32(typ)).u64(off)
}

// pad pads to a multiple of a.
func (r *raw) pad(a int) *raw {
	for len(r.b)%a != 0 {
		r.b = append(r.b, 0)
	}
	return r
}

// good returns a small valid v3 file: two metadata entries and two F32
// tensors [4] and [8, 2] at offsets 0 and 32, with their data.
func good() []byte {
	r := &raw{}
	r.header(3, 2, 2)
	r.str("general.architecture").u32(uint32(TypeString)).str("llama")
	r.str("llama.block_count").u32(uint32(TypeUint32)).u32(1)
	r.info("a", F32, 0, 4)
	r.info("b", F32, 32, 8, 2)
	r.pad(32)
	for i := range 4 + 16 + 4 { // 16 bytes of a, 16 of padding, 64 of b
		r.u32(math.Float32bits(float32(i)))
	}
	return r.b
}
