package quantize

import (
	"encoding/binary"
	"math"

	"github.com/x448/float16"
)

// The Q6_K quantizer: superblocks of 256, 16 sub-blocks of 16 with int8
// scales under one binary16 scale, levels q − 32 in [−32, 31]. The error is
// llama.cpp's: Σ w·(x − y)² with w the importance (imatrix) values, or x²
// without. As for the IQ4 types, each superblock is fitted by a port of
// llama.cpp's quantize_row_q6_K (make_qx_quants per sub-block) and by a
// wider search (sub-block scale candidates every 0.05 from −2 to 2 around
// llama.cpp's 32, each refined by least squares; super-scales for −128,
// −127.5 and −127 over the largest sub-scale, binary16 and its neighbours;
// every sub-scale and its neighbours with the levels re-chosen for the
// scale as stored), and the one with the smaller error on the dequantized
// bytes is kept (llama.cpp's on ties).

// nearestInt is ggml's nearest_int (round half to even, |v| ≤ 2^22).
func nearestInt(v float32) int {
	u := math.Float32bits(float32(v + 12582912))
	return int(u&0x007fffff) - 0x00400000
}

// q6Weights sets the error weights of a superblock: qw, or x².
func q6Weights(x, qw, w []float32) {
	for j, v := range x {
		if qw != nil {
			w[j] = qw[j]
		} else {
			w[j] = float32(v * v)
		}
	}
}

// makeQx is llama.cpp's make_qx_quants(16, 32, x, L, 1, qw) with the
// weights w: the scale of the best of 19 level sets, L its levels + 32.
func makeQx(x, w []float32, L []uint8) float32 { return makeQxN(x, w, L, 32) }

// makeQxN is make_qx_quants(len(x), nmax, x, L, 1, w).
func makeQxN(x, w []float32, L []uint8, nmax int) float32 {
	amax, mx := absMaxSigned(x)
	if amax < 1e-15 {
		clear(L)
		return 0
	}
	iscale := -float32(nmax) / mx
	var sumlx, suml2 float32
	for i, v := range x {
		l := max(-nmax, min(nmax-1, nearestInt(float32(iscale*v))))
		L[i] = uint8(l + nmax)
		sumlx += float32(float32(w[i]*v) * float32(l))
		suml2 += float32(float32(w[i]*float32(l)) * float32(l))
	}
	scale := float32(0)
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := float32(scale * sumlx)
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -float32(float32(nmax)+float32(0.1*float32(is))) / mx
		sumlx, suml2 = 0, 0
		for i, v := range x {
			l := max(-nmax, min(nmax-1, nearestInt(float32(iscale*v))))
			sumlx += float32(float32(w[i]*v) * float32(l))
			suml2 += float32(float32(w[i]*float32(l)) * float32(l))
		}
		if suml2 > 0 && float32(sumlx*sumlx) > float32(best*suml2) {
			for i, v := range x {
				L[i] = uint8(nmax + max(-nmax, min(nmax-1, nearestInt(float32(iscale*v)))))
			}
			scale = sumlx / suml2
			best = float32(scale * sumlx)
		}
	}
	return scale
}

// wideQx is the wider sub-block scale search: the scale of the smallest
// error Σ w(x − s·l)² (float64) over candidates −(32 + 0.05k)/max, k in
// −40…40, each refined twice by least squares.
func wideQx(x, w []float32) float32 { return wideQxN(x, w, 32) }

// wideQxN is wideQx for levels in [−nmax, nmax−1].
func wideQxN(x, w []float32, nmax int) float32 {
	amax, mx := absMaxSigned(x)
	if amax < 1e-15 {
		return 0
	}
	bestE, bestS := math.Inf(1), float32(0)
	for k := -40; k <= 40; k++ {
		id := -float32(float32(nmax)+float32(0.05*float32(k))) / mx
		for range 3 {
			var sumlx, suml2 float64
			for i, v := range x {
				l := float64(max(-nmax, min(nmax-1, nearestInt(float32(id*v)))))
				sumlx += float64(float64(float64(w[i])*float64(v)) * l)
				suml2 += float64(float64(float64(w[i])*l) * l)
			}
			if !(suml2 > 0) {
				break
			}
			s := float32(sumlx / suml2)
			var e float64
			for i, v := range x {
				l := float32(max(-nmax, min(nmax-1, nearestInt(float32(v/s)))))
				r := float64(v) - float64(float32(s*l))
				e += float64(float64(w[i]) * r * r)
			}
			if e < bestE {
				bestE, bestS = e, s
			}
			id = 1 / s
		}
	}
	return bestS
}

// putQ6K writes d, the sub-scales and the levels L (q in [0, 63]) into blk
// (210 bytes) in ggml's layout.
func putQ6K(blk []byte, d float32, sc *[16]int8, L *[256]uint8) {
	ql, qh := blk[0:128], blk[128:192]
	for j := 0; j < 256; j += 128 {
		for l := range 32 {
			q1, q2, q3, q4 := L[j+l], L[j+l+32], L[j+l+64], L[j+l+96]
			ql[j/2+l] = q1&15 | (q3&15)<<4
			ql[j/2+l+32] = q2&15 | (q4&15)<<4
			qh[j/4+l] = q1>>4 | (q2>>4)<<2 | (q3>>4)<<4 | (q4>>4)<<6
		}
	}
	for i, s := range sc {
		blk[192+i] = byte(s)
	}
	binary.LittleEndian.PutUint16(blk[208:], float16.Fromfloat32(d).Bits())
}

// q6kBlock quantizes one superblock of 256 into blk (210 bytes).
func q6kBlock(x, qw []float32, blk []byte) {
	var w [256]float32
	q6Weights(x, qw, w[:])
	q6kLlama(x, w[:], blk)
	var c [210]byte
	q6kWide(x, w[:], c[:])
	if blockErr(GGMLQ6_K, c[:], x, w[:]) < blockErr(GGMLQ6_K, blk, x, w[:]) {
		copy(blk, c[:])
	}
}

// q6kLlama is llama.cpp's quantize_row_q6_K for one superblock.
func q6kLlama(x, w []float32, blk []byte) {
	var L [256]uint8
	var scales [16]float32
	var maxS, maxAbs float32
	for ib := range 16 {
		scales[ib] = makeQx(x[16*ib:16*ib+16], w[16*ib:16*ib+16], L[16*ib:16*ib+16])
		if a := abs32(scales[ib]); a > maxAbs {
			maxAbs, maxS = a, scales[ib]
		}
	}
	if maxAbs < 1e-15 {
		clear(blk[:210])
		return
	}
	iscale := -128 / maxS
	d := f16Round(1 / iscale)
	var sc [16]int8
	for ib := range 16 {
		sc[ib] = int8(min(127, nearestInt(float32(iscale*scales[ib]))))
	}
	for j := range 16 {
		dd := float32(d * float32(sc[j]))
		if dd == 0 {
			continue
		}
		for i := 16 * j; i < 16*j+16; i++ {
			L[i] = uint8(max(-32, min(31, nearestInt(float32(x[i]/dd)))) + 32)
		}
	}
	putQ6K(blk, d, &sc, &L)
}

// q6kWide is the wider search for one superblock.
func q6kWide(x, w []float32, blk []byte) {
	var scales [16]float32
	var maxS, maxAbs float32
	for ib := range 16 {
		scales[ib] = wideQx(x[16*ib:16*ib+16], w[16*ib:16*ib+16])
		if a := abs32(scales[ib]); a > maxAbs {
			maxAbs, maxS = a, scales[ib]
		}
	}
	if maxAbs < 1e-15 {
		clear(blk[:210])
		return
	}
	var bestL, L [256]uint8
	var bestSc, sc [16]int8
	bestD, bestE := float32(0), math.Inf(1)
	for _, top := range []float32{128, 127.5, 127} {
		for _, d := range f16Neighbours(maxS / -top) {
			if d == 0 {
				continue
			}
			var total float64
			for ib := range 16 {
				xb, wb := x[16*ib:16*ib+16], w[16*ib:16*ib+16]
				s0 := nearestInt(float32(scales[ib] / d))
				be := math.Inf(1)
				for _, s := range [3]int{s0 - 1, s0, s0 + 1} {
					s = max(-128, min(127, s))
					dd := float32(d * float32(s))
					var e float64
					var Lb [16]uint8
					for i, v := range xb {
						l := 0
						if dd != 0 {
							l = max(-32, min(31, nearestInt(float32(v/dd))))
						}
						Lb[i] = uint8(l + 32)
						r := float64(v) - float64(float32(dd*float32(l)))
						e += float64(float64(wb[i]) * r * r)
					}
					if e < be {
						be, sc[ib] = e, int8(s)
						copy(L[16*ib:16*ib+16], Lb[:])
					}
				}
				total += be
			}
			if total < bestE {
				bestE, bestD, bestSc, bestL = total, d, sc, L
			}
		}
	}
	putQ6K(blk, bestD, &bestSc, &bestL)
}
