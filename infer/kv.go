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

// The key cache is laid out in blocks of kvBlock slots: channel c of slot s
// is at keyIndex(s, c, kvd) = (s/kvBlock)·kvd·kvBlock + c·kvBlock + s%kvBlock,
// so that channel c of the 16 keys of a block is 16 consecutive values, what
// asm.DotF32T reads (one register of 16 keys per channel, shared by several
// queries). Values stay position-major (slot s at s·kvd), as the weighted sum
// wants them. The layout changes no bit: every score is still DotF32 of the
// query and the key.
const kvBlock = asm.KeyBlock

// keyIndex is the index of channel c of slot s in a key block layout of kvd
// channels.
func keyIndex(s, c, kvd int) int { return (s/kvBlock)*kvd*kvBlock + c*kvBlock + s%kvBlock }

// blockLen is the length of a key block layout of n slots: whole blocks, so
// that a kernel reading a block's 16 keys stays inside it.
func blockLen(n, kvd int) int { return (n + kvBlock - 1) / kvBlock * kvBlock * kvd }

// kvLen is the number of elements of a layer's keys and values for slots
// positions of kvd values.
func kvLen(slots, kvd int) int64 { return int64(blockLen(slots, kvd)) + int64(slots)*int64(kvd) }

// alloc makes the layer's cache of slots positions of kvd values.
func (ls *layerState) alloc(kv KVType, kvd int) {
	if kv == KVF16 {
		ls.k16 = make([]uint16, blockLen(ls.slots, kvd))
		ls.v16 = make([]uint16, ls.slots*kvd)
		return
	}
	ls.k = make([]float32, blockLen(ls.slots, kvd))
	ls.v = make([]float32, ls.slots*kvd)
}

// f16 reports whether the layer caches in f16.
func (ls *layerState) f16() bool { return ls.k16 != nil }

// blockScores sets out[r·ldo + slot%kvBlock + j] = query r · key of slot
// slot+j (its kvo…kvo+hd−1 part), in DotF32's order, for j < n and the
// len(q)/hd queries of q, from the key block layout k (or k16 when k is nil);
// the other lanes of the blocks it touches get the scores of their slots
// (garbage where a slot holds nothing). It returns slot%kvBlock, where the
// scores of slot start in each row. ldo must hold the blocks of n slots from
// slot: n + 2·kvBlock is always enough.
func blockScores(out []float32, ldo int, q []float32, hd int, k []float32, k16 []uint16, slot, n, kvo, kvd int) int {
	b0 := slot / kvBlock
	nb := (slot+n-1)/kvBlock - b0 + 1
	off := b0*kvd*kvBlock + kvo*kvBlock
	if k == nil {
		asm.DotF16T(out, ldo, q, hd, k16[off:], nb, kvd*kvBlock)
	} else {
		asm.DotF32T(out, ldo, q, hd, k[off:], nb, kvd*kvBlock)
	}
	return slot % kvBlock
}

// weigh adds Σ_j w[r·ldw + j]·value of slot slot+j (its kvo…kvo+hd−1 part)
// to out[r·hd : (r+1)·hd], in increasing j < n, for the nq queries r < nq.
func (ls *layerState) weigh(out []float32, hd, nq int, w []float32, ldw, n, slot, kvo, kvd int) {
	if ls.f16() {
		asm.AxpyF16StridedN(out, hd, hd, nq, w, ldw, n, ls.v16[slot*kvd+kvo:], kvd)
		return
	}
	asm.AxpyF32StridedN(out, hd, hd, nq, w, ldw, n, ls.v[slot*kvd+kvo:], kvd)
}

// store writes one position's keys and values (kvd each) into slot.
func (ls *layerState) store(slot, kvd int, k, v []float32) {
	i := keyIndex(slot, 0, kvd)
	if ls.f16() {
		for c, x := range k[:kvd] {
			ls.k16[i+c*kvBlock] = asm.F32ToF16(x)
		}
		asm.PutF16(ls.v16[slot*kvd:(slot+1)*kvd], v)
		return
	}
	for c, x := range k[:kvd] {
		ls.k[i+c*kvBlock] = x
	}
	copy(ls.v[slot*kvd:(slot+1)*kvd], v)
}

// transposeKeys writes the n rows of kvd keys in k into the key block layout
// kt, row i as slot i.
func transposeKeys(kt, k []float32, n, kvd int) {
	for i := range n {
		base := keyIndex(i, 0, kvd)
		for c, x := range k[i*kvd : (i+1)*kvd] {
			kt[base+c*kvBlock] = x
		}
	}
}
