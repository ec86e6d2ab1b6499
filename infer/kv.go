package infer

import (
	"fmt"

	"github.com/krafla/krafla/asm"
)

// KVType is the element type of the attention cache.
type KVType int

const (
	// KVF32 keeps keys and values as computed (float32), 4 bytes each.
	KVF32 KVType = iota
	// KVF16 keeps them in IEEE binary16 (asm.F32ToF16: nearest, ties to
	// even), 2 bytes each: half the memory and half the cache reads per token.
	// A pass rounds its own keys and values to f16 too before attending, so
	// that batched prefill still equals token-by-token decoding bit for bit.
	KVF16
)

// String returns the name ParseKVType takes: "f32" or "f16".
func (k KVType) String() string {
	switch k {
	case KVF32:
		return "f32"
	case KVF16:
		return "f16"
	}
	return fmt.Sprintf("KVType(%d)", int(k))
}

// ParseKVType parses "f32" or "f16" (the --kv flag).
func ParseKVType(s string) (KVType, error) {
	switch s {
	case "f32":
		return KVF32, nil
	case "f16":
		return KVF16, nil
	}
	return KVF32, fmt.Errorf("unknown KV cache type %q (want f32 or f16)", s)
}

// bytes is the size of one cached element.
func (k KVType) bytes() int64 {
	if k == KVF16 {
		return 2
	}
	return 4
}

// alloc makes the layer's cache of slots positions of kvd values.
func (ls *layerState) alloc(kv KVType, kvd int) {
	if kv == KVF16 {
		ls.k16 = make([]uint16, ls.slots*kvd)
		ls.v16 = make([]uint16, ls.slots*kvd)
		return
	}
	ls.k = make([]float32, ls.slots*kvd)
	ls.v = make([]float32, ls.slots*kvd)
}

// f16 reports whether the layer caches in f16.
func (ls *layerState) f16() bool { return ls.k16 != nil }

// scores sets w[j] = q · key of slot slot+j (its kvo…kvo+len(q)−1 part), in
// DotF32's order, for j < len(w).
func (ls *layerState) scores(w, q []float32, slot, kvo, kvd int) {
	if ls.f16() {
		asm.DotF16Strided(w, q, ls.k16[slot*kvd+kvo:], kvd)
		return
	}
	asm.DotF32Strided(w, q, ls.k[slot*kvd+kvo:], kvd)
}

// weigh adds Σ_j w[j]·value of slot slot+j to out, in increasing j.
func (ls *layerState) weigh(out, w []float32, slot, kvo, kvd int) {
	if ls.f16() {
		asm.AxpyF16Strided(out, w, ls.v16[slot*kvd+kvo:], kvd)
		return
	}
	asm.AxpyF32Strided(out, w, ls.v[slot*kvd+kvo:], kvd)
}

// store writes one position's keys and values (kvd each) into slot.
func (ls *layerState) store(slot, kvd int, k, v []float32) {
	if ls.f16() {
		asm.PutF16(ls.k16[slot*kvd:(slot+1)*kvd], k)
		asm.PutF16(ls.v16[slot*kvd:(slot+1)*kvd], v)
		return
	}
	copy(ls.k[slot*kvd:(slot+1)*kvd], k)
	copy(ls.v[slot*kvd:(slot+1)*kvd], v)
}
