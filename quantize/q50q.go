package quantize

import (
	"encoding/binary"
	"math"

	"github.com/x448/float16"
)

// The Q5_0 quantizer (blocks of 32, y = d·l, l in [−16, 15]), for the
// K-quant mixes' fallback where a width is not a multiple of 256 (as
// llama-quantize uses it). Error weights: with importance qw·sqrt(σ² + x²)
// (σ² = Σx²/32 of the block), else x². Candidates: make_qx_quants' search
// and the wider one, each with its binary16 scale and neighbours and the
// levels re-chosen for the scale as stored; the smallest error on the
// dequantized block wins.

func q50Block(x, qw []float32, blk []byte) {
	var w [32]float32
	var s2 float32
	for _, v := range x {
		s2 += float32(v * v)
	}
	s2 = float32(s2 / 32) // converted: s2·(1/32) must not fuse with the + below
	for j, v := range x {
		vv := float32(v * v)
		if qw != nil {
			w[j] = float32(qw[j] * float32(math.Sqrt(float64(float32(s2+vv)))))
		} else {
			w[j] = vv
		}
	}
	var L [32]uint8
	bestE, bestD := math.Inf(1), float32(0)
	var bestL [32]uint8
	for _, d := range []float32{makeQxN(x, w[:], L[:], 16), wideQxN(x, w[:], 16)} {
		for _, c := range f16Neighbours(d) {
			var e float64
			for j, v := range x {
				l := 0
				if c != 0 {
					l = max(-16, min(15, nearestInt(float32(v/c))))
				}
				L[j] = uint8(l + 16)
				r := float64(v) - float64(float32(float32(l)*c))
				e += float64(float64(w[j]) * r * r)
			}
			if e < bestE {
				bestE, bestD, bestL = e, c, L
			}
		}
	}
	binary.LittleEndian.PutUint16(blk, float16.Fromfloat32(bestD).Bits())
	var qh uint32
	qs := blk[6:22]
	for j := range 16 {
		a, b := bestL[j], bestL[j+16]
		qs[j] = a&15 | (b&15)<<4
		qh |= uint32(a>>4)<<j | uint32(b>>4)<<(j+16)
	}
	binary.LittleEndian.PutUint32(blk[2:], qh)
}
