package quantize

import "math"

// q8Tiny is SPEC.md's threshold: below it 127/amax would overflow. float32(1e-30)
// is the float32 nearest 1e-30 and lies above it, so amax < q8Tiny in float32 is
// the same test as C's amax < 1e-30 in double for every float32 amax.
const q8Tiny = float32(1e-30)

// Q8_0 quantizes x (len a multiple of 32) with SPEC.md's rule and f32 scales,
// writing len(x) quants to q and len(x)/32 scales to d. It is also the runtime's
// activation quantizer, and its bits define what the assembly versions reproduce.
// Per block of 32, in float32 arithmetic with every operation rounded:
//
//	amax = max |x_i|
//	if amax < 1e-30:  d = 0, q_i = 0
//	else:             d = amax/127;  s = 127/amax  (two float32 divisions)
//	                  v_i = float32(x_i*s) + copysign(0.5, x_i)  (no FMA)
//	                  q_i = trunc(v_i) clamped to [-127, 127]
//
// Non-finite input is not meaningful; it does not panic: NaN is ignored by the
// maximum and a NaN v_i gives q_i = 0, so an Inf gives d = +Inf and zero quants.
// Q8_0 panics if len(x) is not a multiple of 32 or q or d is too short.
func Q8_0(x []float32, q []int8, d []float32) {
	if len(x)%BlockSize != 0 || len(q) < len(x) || len(d) < len(x)/BlockSize {
		panic("quantize: Q8_0: len(x) must be a multiple of 32 with len(q) ≥ len(x) and len(d) ≥ len(x)/32")
	}
	for b := 0; b < len(x)/BlockSize; b++ {
		xb := x[b*BlockSize : (b+1)*BlockSize : (b+1)*BlockSize]
		qb := q[b*BlockSize : (b+1)*BlockSize : (b+1)*BlockSize]
		amax := absMax(xb)
		if amax < q8Tiny {
			d[b] = 0
			clear(qb)
			continue
		}
		d[b] = amax / 127
		q8Block(xb, qb, 127/amax)
	}
}

// absMax returns max |x_i|, ignoring NaN.
func absMax(x []float32) float32 {
	var amax float32
	for _, v := range x {
		if a := abs32(v); a > amax {
			amax = a
		}
	}
	return amax
}

// absMaxSigned returns max |x_i| and the first x_i of that magnitude,
// ignoring NaN (both 0 for a block of zeros or NaN).
func absMaxSigned(x []float32) (amax, v float32) {
	for _, xi := range x {
		if a := abs32(xi); a > amax {
			amax, v = a, xi
		}
	}
	return amax, v
}

// q8Block sets q_i = clamp(trunc(float32(x_i*s) + copysign(0.5, x_i)), ±127), NaN → 0.
func q8Block(x []float32, q []int8, s float32) {
	for i, v := range x {
		half := math.Float32frombits(math.Float32bits(v)&(1<<31) | 0x3f000000) // copysign(0.5, v)
		t := float32(v*s) + half
		switch {
		case t >= 127:
			q[i] = 127
		case t <= -127:
			q[i] = -127
		case t == t:
			q[i] = int8(t) // truncates toward zero; |t| < 127 here
		default:
			q[i] = 0
		}
	}
}

// q8Row quantizes one matrix row for Matrix: SPEC.md's rule, and with f16 scales
// its f16 paragraph: d = amax/127 is rounded to the nearest f16 first and the quants
// are trunc(x·(1/d) + copysign(0.5, x)) against that rounded d, clamped to ±127.
// When the rounded d is 0 (amax/127 below half the smallest f16 subnormal) every
// weight decodes to 0 whatever the quants, and the quants are 0.
func q8Row(x []float32, q, scales []byte, f16 bool) error {
	for b := 0; b < len(x)/BlockSize; b++ {
		xb := x[b*BlockSize : (b+1)*BlockSize]
		qb := int8s(q[b*BlockSize : (b+1)*BlockSize])
		amax := absMax(xb)
		var d float32
		switch {
		case amax < q8Tiny:
			clear(qb)
		case !f16:
			d = amax / 127
			q8Block(xb, qb, 127/amax)
		default:
			d = amax / 127
			if d > MaxF16Scale {
				break // refused by putScale
			}
			d = roundF16(d)
			if d == 0 {
				clear(qb)
				break
			}
			q8Block(xb, qb, 1/d)
		}
		if err := putScale(scales, b, d, f16); err != nil {
			return err
		}
	}
	return nil
}
