package quantize

import "math"

// q4RoundRow quantizes one row with llama.cpp's rule (quantize_row_q4_0_ref), in
// float32 arithmetic: max is the first element of largest magnitude, d = max/−8,
// id = 1/d (0 when d = 0), nibble = min(15, trunc(float32(x·id) + 8.5)). With f16
// scales the nibbles use the float32 d and d is then stored rounded to f16
// (SPEC-NOTES.md), as llama.cpp does.
//
// C leaves the conversion undefined where id overflows to Inf (a block whose largest
// magnitude is below about 2.4e-38); here a NaN level (0·Inf) gives nibble 8, −Inf
// gives 0 and +Inf gives 15.
func q4RoundRow(x []float32, q, scales []byte, f16 bool) error {
	for b := 0; b < len(x)/BlockSize; b++ {
		xb := x[b*BlockSize : (b+1)*BlockSize]
		_, max := absMaxSigned(xb)
		d := max / -8
		var id float32
		if d != 0 {
			id = 1 / d
		}
		qb := q[b*16 : (b+1)*16]
		for j := range qb {
			qb[j] = roundLevel(xb[j], id) | roundLevel(xb[j+16], id)<<4
		}
		if err := putScale(scales, b, d, f16); err != nil {
			return err
		}
	}
	return nil
}

func roundLevel(v, id float32) byte {
	t := float32(v*id) + 8.5
	switch {
	case t >= 15:
		return 15
	case t >= 0:
		return byte(t)
	case t < 0:
		return 0
	}
	return 8 // NaN
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// bestCandidates is the number of levels tried for the block's largest-magnitude
// element: −6.0, −6.2, …, −8.4 (SPEC.md, SPEC-NOTES.md).
const bestCandidates = 13

// candidateLevel returns candidate k's level −(6 + 0.2k), the float64 nearest it.
func candidateLevel(k int) float64 { return -float64(60+2*k) / 10 }

// tinyBlock: a block whose largest magnitude is below it is scaled up to 1 before
// fitting (SPEC.md), so that squares and cubes of its elements do not underflow.
// The comparison is of real numbers (float64(amax) < 1e-6): float32(1e-6),
// 9.99999997e-7, is below the limit and scaled, and no float32 equals it.
const tinyBlock = 1e-6

// tieMargin: relative to Σ w·x², the error difference below which candidates tie.
const tieMargin = 1e-12

type rowScratch struct {
	xs [BlockSize]float64 // the block, scaled
	w  [BlockSize]float64 // weights
	wx [BlockSize]float64 // w·xs
	h  [BlockSize]float64 // copysign(0.5⁻, xs·(−xmax))
}

// q4BestRow quantizes one row with the best-fit rule (see bestFit). With imp != nil
// each element is weighted by imp[c]·sqrt(s² + x²) where s² is the mean x² of the row
// (float64, summed in column order), as in llama.cpp's quantize_row_q4_0_impl.
func q4BestRow(x []float32, q, scales []byte, f16 bool, imp []float32, s *rowScratch) error {
	var s2 float64
	if imp != nil {
		var sum float64
		for _, v := range x {
			f := float64(v)
			sum += float64(f * f) // exact anyway; rounded explicitly so that no platform fuses it
		}
		s2 = sum / float64(len(x))
	}
	var lv [BlockSize]int8
	for b := 0; b < len(x)/BlockSize; b++ {
		xb := x[b*BlockSize : (b+1)*BlockSize]
		var ib []float32
		if imp != nil {
			ib = imp[b*BlockSize : (b+1)*BlockSize]
		}
		d := bestFit(xb, ib, s2, s, &lv)
		qb := q[b*16 : (b+1)*16]
		for j := range qb {
			qb[j] = byte(lv[j]+8) | byte(lv[j+16]+8)<<4
		}
		// putScale rounds d to f16 itself; the levels do not depend on that rounding
		if err := putScale(scales, b, d, f16); err != nil {
			return err
		}
	}
	return nil
}

// bestFit is the best-fit rule for one block of 32 finite values, returning d and
// setting the levels lv (in [-8, 7]):
//
//	xmax = the first element of largest magnitude; all zero: d = 0, levels 0
//	if |xmax| < 1e-6: the block is divided by |xmax| before fitting and d multiplied back
//	weights w_i = x_i² (imp == nil) or imp_i·sqrt(s² + x_i²), in float64
//	for L = −6.0, −6.2, …, −8.4:
//	    q_i = clamp(round(x_i · (L/xmax)), −8, 7)   round half away from zero, float64
//	    d_L = Σ w·x·q / Σ w·q²,  error_L = Σ w·(x − d_L·q)² = Σ w·x² − d_L·Σ w·x·q
//	the first L with the smallest error wins (compared as the largest d_L·Σ w·x·q,
//	the same order without the common term Σ w·x²); d = float32(d_L)
//
// Errors within 1e-12·Σ w·x² of each other count as equal (the earlier candidate
// stays): that is far below any real difference and far above float64 rounding, so
// mathematically equal errors are ties whatever the rounding.
//
// Candidates with Σ w·q² = 0 (possible only with zero importance) are skipped, and if
// none is left d = 0 with levels 0. The candidate sums are float64, each the sum of
// two partial sums (even elements, odd elements) accumulated in element order, each
// product rounded before it is added, so the result is the same on every platform.
func bestFit(x []float32, imp []float32, s2 float64, s *rowScratch, lv *[BlockSize]int8) float32 {
	var amax, xmax float32
	for _, v := range x {
		if a := abs32(v); a > amax {
			amax, xmax = a, v
		}
	}
	if amax == 0 {
		*lv = [BlockSize]int8{}
		return 0
	}
	scale, sxx := 1.0, 0.0
	if float64(amax) < tinyBlock { // in float64: float32(1e-6) is below 1e-6, and no float32 equals it
		scale = float64(amax)
	}
	for i, v := range x {
		xs := float64(v) / scale
		var w float64
		if imp != nil {
			f := float64(v)
			w = float64(imp[i]) * math.Sqrt(s2+float64(f*f))
		} else {
			w = xs * xs
		}
		s.xs[i], s.w[i], s.wx[i] = xs, w, w*xs
		sxx += float64(w * xs * xs)
	}
	// Candidates whose errors differ by rounding only are ties: different level
	// vectors can fit equally well (a block with one outlier fits exactly with any
	// level for it), and the closed-form error would pick among them by rounding noise.
	margin := float64(tieMargin * sxx) // rounded: no FMA with the comparison below
	xm := float64(xmax) / scale
	// t = xs·L/xm has the sign of xs·(−xm): the rounding offset copysign(0.5⁻, t) is
	// fixed per element for all candidates (for xs = 0 either sign truncates to 0)
	neg := math.Float64bits(xm)&(1<<63) ^ 1<<63
	for i, xs := range s.xs {
		s.h[i] = math.Float64frombits((math.Float64bits(xs) & (1 << 63)) ^ neg | math.Float64bits(halfBelow))
	}
	best, bestGain, bestD := -1, 0.0, 0.0
	for k := 0; k < bestCandidates; k++ {
		is := candidateLevel(k) / xm
		// two partial sums (even and odd elements) halve the latency chain
		var sxq0, sqq0, sxq1, sqq1 float64
		for i := 0; i < BlockSize; i += 2 {
			l0 := float64(levelH(float64(s.xs[i]*is), s.h[i]))
			l1 := float64(levelH(float64(s.xs[i+1]*is), s.h[i+1]))
			sxq0 += float64(s.wx[i] * l0)
			sqq0 += float64(s.w[i] * (l0 * l0))
			sxq1 += float64(s.wx[i+1] * l1)
			sqq1 += float64(s.w[i+1] * (l1 * l1))
		}
		sxq, sqq := sxq0+sxq1, sqq0+sqq1
		if !(sqq > 0) {
			continue
		}
		d := sxq / sqq
		if g := float64(d * sxq); best < 0 || g > bestGain+margin {
			best, bestGain, bestD = k, g, d
		}
	}
	if best < 0 {
		*lv = [BlockSize]int8{}
		return 0
	}
	is := candidateLevel(best) / xm
	for i := range s.xs {
		lv[i] = levelH(float64(s.xs[i]*is), s.h[i])
	}
	return float32(bestD * scale)
}

// level rounds t half away from zero and clamps it to [-8, 7]. t is finite and
// small (|t| ≤ 8.4 up to rounding). Adding copysign(0.5⁻, t), the float64 just below
// one half, and truncating is exactly round-half-away for |t| < 2^52: where the true
// sum would cross an integer only by rounding, the tie goes to that integer as it
// should, and t just below a half-integer stays below. It avoids the data-dependent
// branch of a fraction test, which mispredicts on random data.
func level(t float64) int8 {
	return levelH(t, math.Float64frombits(math.Float64bits(t)&(1<<63)|math.Float64bits(halfBelow)))
}

// levelH is level with the offset h = copysign(0.5⁻, t) given.
func levelH(t, h float64) int8 {
	i := int32(t + h)
	return int8(min(max(i, -8), 7))
}

// halfBelow is the largest float64 below 0.5.
const halfBelow = 0.49999999999999994
