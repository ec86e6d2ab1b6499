package asm

import "math"

// IEEE binary16 ("f16") for the KV cache: conversions round to nearest, ties
// to even, with subnormals, overflow to ±Inf and NaN quieted with the top 10
// bits of its payload kept, as F16C's VCVTPS2PH (immediate rounding 0) and
// VCVTPH2PS do; f16 → f32 is exact.

// F32ToF16 rounds x to binary16.
func F32ToF16(x float32) uint16 {
	b := math.Float32bits(x)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man != 0 {
			return sign | 0x7e00 | uint16(man>>13)
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15 // binary16 biased exponent
	if e >= 31 {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Subnormal (or zero) in binary16: units of 2^-24.
		if e < -10 {
			return sign // below 2^-25: rounds to zero
		}
		m := man | 0x800000
		shift := uint(14 - e)
		h := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || rem == half && h&1 == 1 {
			h++ // may carry into the smallest normal, 0x0400: still right
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
		h++ // may carry into exponent 31: 0x7c00 is Inf, right
	}
	return sign | uint16(h)
}

// F16ToF32 widens the binary16 value h (exactly).
func F16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		// Subnormal: normalize.
		e := uint32(127 - 15 + 1)
		for man&0x400 == 0 {
			man <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (man&0x3ff)<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
}

// PutF16 sets dst[i] = F32ToF16(x[i]) for i < len(x); len(dst) ≥ len(x).
func PutF16(dst []uint16, x []float32) {
	if len(dst) < len(x) {
		panic("asm: PutF16: len(dst) < len(x)")
	}
	putF16(dst[:len(x)], x)
}

// RoundF16 sets x[i] = F16ToF32(F32ToF16(x[i])): x rounded to what an f16
// cache holds.
func RoundF16(x []float32) { roundF16(x) }

func putF16Generic(dst []uint16, x []float32) {
	for i, v := range x {
		dst[i] = F32ToF16(v)
	}
}

func roundF16Generic(x []float32) {
	for i, v := range x {
		x[i] = F16ToF32(F32ToF16(v))
	}
}

// AxpyF16Strided is AxpyF32Strided over values held in f16: for j = 0, 1, …,
// len(w)−1 in that order, y[i] = y[i] + float32(w[j]·F16ToF32(v[j·stride+i])).
func AxpyF16Strided(y, w []float32, v []uint16, stride int) {
	n := len(w)
	if n == 0 || len(y) == 0 {
		return
	}
	if stride < 0 || (n-1)*stride+len(y) > len(v) {
		panic("asm: AxpyF16Strided: v too short for len(w) values of len(y) at stride")
	}
	axpyF16Strided(y, w, v, stride)
}

func axpyF16StridedGeneric(y, w []float32, v []uint16, stride int) {
	for j, a := range w {
		vj := v[j*stride : j*stride+len(y)]
		for i := range y {
			y[i] = y[i] + float32(a*F16ToF32(vj[i]))
		}
	}
}
