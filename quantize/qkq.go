package quantize

import (
	"encoding/binary"
	"math"

	"github.com/x448/float16"
)

// The Q4_K and Q5_K quantizers: superblocks of 256, 8 sub-blocks of 32, y =
// d·sc·q − dmin·m with 6-bit sc and m, q in [0, 15] (Q5_K: [0, 31]). The
// error weights are llama.cpp's (quantize_row_q4_K_impl / _ref): with
// importance qw·sqrt(σ² + x²), σ² = 2Σx²/256; without, the sub-block's
// rms + |x|. Per sub-block a scale and a min are fitted by weighted least
// squares over level sets from 41 candidate scales (llama.cpp's
// make_qkx2/3_quants search, made twice as fine), each refined by
// re-choosing the levels for the fit; then the two binary16 super-scales
// (and their neighbours) and, per sub-block, the 6-bit scale and min and
// their neighbours are chosen by the error of the values as dequantization
// forms them, with the levels re-chosen for each. Sequential float
// arithmetic per superblock: the bytes do not depend on the thread count.

// qkWeights sets the error weights of a superblock.
func qkWeights(x, qw, w []float32) {
	if qw != nil {
		iq4Weights(x, qw, w) // the same rule
		return
	}
	for ib := range 8 {
		xb := x[32*ib : 32*ib+32]
		var s2 float32
		for _, v := range xb {
			s2 += float32(v * v)
		}
		av := float32(math.Sqrt(float64(float32(s2 / 32))))
		for j, v := range xb {
			w[32*ib+j] = float32(av + abs32(v))
		}
	}
}

// fitScaleMin fits y = s·l − mn (s > 0, mn ≥ 0, l in [0, nmax]) to x with
// weights w, returning s and mn ((0, −x) for a constant block x ≤ 0; a
// constant positive block is fitted as any other).
func fitScaleMin(x, w []float32, nmax int) (s, mn float32) {
	// Comparisons, not min/max: s390x's float min/max instructions
	// (WFMINSB) look like fused multiply-adds to TestNoFusedMultiplyAdd.
	lo, hi := x[0], x[0]
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	if lo > 0 {
		lo = 0
	}
	if hi <= lo {
		return 0, -lo
	}
	var sw, sx float64
	for j, v := range x {
		sw += float64(w[j])
		sx += float64(float64(w[j]) * float64(v))
	}
	bestE := math.Inf(1)
	s, mn = float32(hi-lo)/float32(nmax), -lo
	for k := 0; k <= 40; k++ {
		is := float32(float32(nmax)+float32(-1+float32(0.05*float32(k)))) / float32(hi-lo)
		cs, cm := float32(1/is), -lo
		for range 3 {
			var sl, sl2, sxl float64
			var L [32]uint8
			for j, v := range x {
				l := max(0, min(nmax, nearestInt(float32(float32(v+cm)/cs))))
				L[j] = uint8(l)
				fl := float64(l)
				sl += float64(float64(w[j]) * fl)
				sl2 += float64(float64(float64(w[j])*fl) * fl)
				sxl += float64(float64(float64(w[j])*fl) * float64(v))
			}
			D := float64(sw*sl2) - float64(sl*sl)
			if !(D > 0) {
				break
			}
			ts := (float64(sw*sxl) - float64(sx*sl)) / D
			tm := (float64(sl2*sx) - float64(sl*sxl)) / D // x ≈ ts·l + tm
			if tm > 0 {
				tm, ts = 0, sxl/sl2
			}
			if !(ts > 0) {
				break
			}
			var e float64
			for j, v := range x {
				r := float64(v) - (float64(ts*float64(L[j])) + tm)
				e += float64(float64(w[j]) * r * r)
			}
			if e < bestE {
				bestE, s, mn = e, float32(ts), float32(-tm)
			}
			cs, cm = float32(ts), float32(-tm)
		}
	}
	return s, mn
}

// qkSubErr chooses the levels of sub-block x for the dequantized d1 =
// d·sc, m1 = dmin·m and returns the error.
func qkSubErr(x, w []float32, d1, m1 float32, nmax int, L []uint8) float64 {
	var e float64
	for j, v := range x {
		l := 0
		if d1 > 0 {
			l = max(0, min(nmax, nearestInt(float32(float32(v+m1)/d1))))
		}
		L[j] = uint8(l)
		r := float64(v) - float64(float32(float32(d1*float32(l))-m1))
		e += float64(float64(w[j]) * r * r)
	}
	return e
}

// qkBlock quantizes one Q4_K (five = false, 144 bytes) or Q5_K (176 bytes)
// superblock.
func qkBlock(x, qw []float32, blk []byte, five bool) {
	nmax := 15
	if five {
		nmax = 31
	}
	var w [256]float32
	qkWeights(x, qw, w[:])
	var ss, ms [8]float32
	var maxS, maxM float32
	for ib := range 8 {
		ss[ib], ms[ib] = fitScaleMin(x[32*ib:32*ib+32], w[32*ib:32*ib+32], nmax)
		if ss[ib] > maxS {
			maxS = ss[ib]
		}
		if ms[ib] > maxM {
			maxM = ms[ib]
		}
	}
	type fit struct {
		d, dmin float32
		sc, m   [8]int
		L       [256]uint8
	}
	var best, cand fit
	bestE := math.Inf(1)
	var Lb [32]uint8
	for _, d := range f16Neighbours(maxS / 63) {
		if d < 0 || maxS > 0 && d == 0 {
			continue
		}
		for _, dmin := range f16Neighbours(maxM / 63) {
			if dmin < 0 {
				continue
			}
			cand.d, cand.dmin = d, dmin
			var total float64
			for ib := range 8 {
				xb, wb := x[32*ib:32*ib+32], w[32*ib:32*ib+32]
				s0, m0 := 0, 0
				if d > 0 {
					s0 = nearestInt(float32(ss[ib] / d))
				}
				if dmin > 0 {
					m0 = nearestInt(float32(ms[ib] / dmin))
				}
				be := math.Inf(1)
				for _, sc := range [3]int{s0 - 1, s0, s0 + 1} {
					sc = max(0, min(63, sc))
					for _, m := range [3]int{m0 - 1, m0, m0 + 1} {
						m = max(0, min(63, m))
						e := qkSubErr(xb, wb, float32(d*float32(sc)), float32(dmin*float32(m)), nmax, Lb[:])
						if e < be {
							be, cand.sc[ib], cand.m[ib] = e, sc, m
							copy(cand.L[32*ib:32*ib+32], Lb[:])
						}
					}
				}
				total += be
			}
			if total < bestE {
				bestE, best = total, cand
			}
		}
	}
	binary.LittleEndian.PutUint16(blk, float16.Fromfloat32(best.d).Bits())
	binary.LittleEndian.PutUint16(blk[2:], float16.Fromfloat32(best.dmin).Bits())
	sc := blk[4:16]
	clear(sc)
	for j := range 8 {
		ls, lm := uint8(best.sc[j]), uint8(best.m[j])
		if j < 4 {
			sc[j] |= ls
			sc[j+4] |= lm
		} else {
			sc[j+4] = ls&15 | (lm&15)<<4
			sc[j-4] |= (ls >> 4) << 6
			sc[j] |= (lm >> 4) << 6
		}
	}
	if !five {
		qs := blk[16:144]
		for k := range 4 {
			for l := range 32 {
				qs[32*k+l] = best.L[64*k+l] | best.L[64*k+32+l]<<4
			}
		}
		return
	}
	qh, qs := blk[16:48], blk[48:176]
	clear(qh)
	for k := range 4 {
		for l := range 32 {
			a, b := best.L[64*k+l], best.L[64*k+32+l]
			qh[l] |= (a>>4)<<(2*k) | (b>>4)<<(2*k+1)
			qs[32*k+l] = a&15 | (b&15)<<4
		}
	}
}

func q4kBlock(x, qw []float32, blk []byte) { qkBlock(x, qw, blk, false) }
func q5kBlock(x, qw []float32, blk []byte) { qkBlock(x, qw, blk, true) }
