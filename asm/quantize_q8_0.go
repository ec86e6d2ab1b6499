package asm

import "math"

// BlockSize is the number of weights or activations per quantization block.
const BlockSize = 32

// q8Tiny is SPEC.md's threshold 1e-30 as a float32 (see quantize.Q8_0).
const q8Tiny = float32(1e-30)

// QuantizeQ8_0 quantizes x (len a multiple of 32) with SPEC.md's rule and f32
// scales, writing len(x) quants to q and len(x)/32 scales to d; it equals
// quantize.Q8_0 bit for bit. Per block, every float32 operation rounded:
//
//	amax = max |x_i| (NaN ignored)
//	if amax < 1e-30:  d = 0, q_i = 0
//	else:             d = amax/127;  s = 127/amax
//	                  v_i = float32(x_i*s) + copysign(0.5, x_i)  (no FMA)
//	                  q_i = trunc(v_i) clamped to [-127, 127]; NaN v_i gives 0
//
// It panics if len(x) is not a multiple of 32 or q or d is too short.
func QuantizeQ8_0(x []float32, q []int8, d []float32) {
	if len(x)%BlockSize != 0 || len(q) < len(x) || len(d) < len(x)/BlockSize {
		panic("asm: QuantizeQ8_0: len(x) must be a multiple of 32 with len(q) ≥ len(x) and len(d) ≥ len(x)/32")
	}
	if len(x) == 0 {
		return
	}
	quantizeQ8_0(x, q, d)
}

// quantizeQ8_0Generic is the definition of QuantizeQ8_0 (lengths checked).
func quantizeQ8_0Generic(x []float32, q []int8, d []float32) {
	for b := 0; b < len(x)/BlockSize; b++ {
		xb := x[b*BlockSize : (b+1)*BlockSize : (b+1)*BlockSize]
		qb := q[b*BlockSize : (b+1)*BlockSize : (b+1)*BlockSize]
		var amax float32
		for _, v := range xb {
			if a := math.Float32frombits(math.Float32bits(v) &^ (1 << 31)); a > amax {
				amax = a
			}
		}
		if amax < q8Tiny {
			d[b] = 0
			clear(qb)
			continue
		}
		d[b] = amax / 127
		s := 127 / amax
		for i, v := range xb {
			half := math.Float32frombits(math.Float32bits(v)&(1<<31) | 0x3f000000) // copysign(0.5, v)
			t := float32(v*s) + half
			switch {
			case t >= 127:
				qb[i] = 127
			case t <= -127:
				qb[i] = -127
			case t == t:
				qb[i] = int8(t) // truncates toward zero
			default:
				qb[i] = 0
			}
		}
	}
}
