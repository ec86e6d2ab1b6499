//go:build (amd64 || arm64) && gc && !purego

package asm

import (
	"encoding/binary"
	"math"
)

// The activation layout and the driver of the packed K-quant kernels, shared
// by the amd64 (AVX2, AVX-512) and arm64 (NEON, DotProd) ones.

// q4kAct is the bytes of one superblock of one activation row as the
// kernels read it (packQ4KAct).
const q4kAct = 288

// packQ4KAct lays the n activation rows out for the kernels, in tiles of
// tile rows (q4kTile or q4kTileAVX2, the kernels' most rows a call; the
// last tile shorter): per tile, superblock by superblock,
// per row of the tile 288 bytes: the 256 quants, the pair sums B_s =
// bs_2s + bs_2s+1 (s < 8) as int16, the float32 scale da, 12 bytes of zeros.
// It reports false if a pair sum does not fit int16 (bs are then not the
// 16-sums of int8 activations, which are at most 2048 in magnitude).
func packQ4KAct(dst []byte, a []int8, da []float32, bs []int16, n, nb, tile int) bool {
	cols := nb * QK
	for i0 := 0; i0 < n; i0 += tile {
		m := min(tile, n-i0)
		for b := range nb {
			for j := range m {
				i := i0 + j
				o := dst[(i0*nb+b*m+j)*q4kAct : (i0*nb+b*m+j+1)*q4kAct]
				ab := a[i*cols+b*QK : i*cols+(b+1)*QK]
				for k, v := range ab {
					o[k] = byte(v)
				}
				bsb := bs[(i*nb+b)*16 : (i*nb+b+1)*16]
				for s := range 8 {
					p := int32(bsb[2*s]) + int32(bsb[2*s+1])
					if p != int32(int16(p)) {
						return false
					}
					binary.LittleEndian.PutUint16(o[256+2*s:], uint16(p))
				}
				binary.LittleEndian.PutUint32(o[272:], math.Float32bits(da[i*nb+b]))
				clear(o[276:288])
			}
		}
	}
	return true
}

// q6kAct is the bytes of one superblock of one activation row as the Q6_K
// kernels read it (packQ6KAct).
const q6kAct = 320

// packQ6KAct lays the n activation rows out for the Q6_K kernels, in tiles
// of tile rows (the kernels' most rows a call; the last tile shorter): per tile, superblock by superblock, per row 320 bytes:
// the 256 quants, the 16 int16 sums bs, the float32 scale, zeros.
func packQ6KAct(dst []byte, a []int8, da []float32, bs []int16, n, nb, tile int) {
	cols := nb * QK
	for i0 := 0; i0 < n; i0 += tile {
		m := min(tile, n-i0)
		for b := range nb {
			for j := range m {
				i := i0 + j
				o := dst[(i0*nb+b*m+j)*q6kAct : (i0*nb+b*m+j+1)*q6kAct]
				for k, v := range a[i*cols+b*QK : i*cols+(b+1)*QK] {
					o[k] = byte(v)
				}
				for s, v := range bs[(i*nb+b)*16 : (i*nb+b+1)*16] {
					binary.LittleEndian.PutUint16(o[256+2*s:], uint16(v))
				}
				binary.LittleEndian.PutUint32(o[288:], math.Float32bits(da[i*nb+b]))
				clear(o[292:320])
			}
		}
	}
}

// packedKMaxTile is the most activation rows a packed K-quant kernel call
// multiplies, on any architecture.
const packedKMaxTile = 8

// packedKRun runs the packed K-quant kernels kern[m] (m ≤ tile activation
// rows a call) over the groups of w (gs bytes each; rows rows, the last
// group possibly partial, through a buffer) with the activations act
// (actBytes per row and superblock, in tiles of tile rows).
func packedKRun(kern []gemmK, tile, actBytes, gs int, out []float32, ldo int, w []byte, rows int, act []byte, n, nb int) {
	full := rows / GroupRows
	gt := full
	if n > tile {
		gt = max(1, tileBytes/gs)
	}
	for g0 := 0; g0 < full; g0 += gt {
		nt := min(gt, full-g0)
		for i0 := 0; i0 < n; i0 += tile {
			m := min(tile, n-i0)
			kern[m](&out[i0*ldo+g0*GroupRows], ldo, &w[g0*gs], nt, nb, &act[i0*nb*actBytes])
		}
	}
	if rest := rows - full*GroupRows; rest > 0 {
		var tmp [packedKMaxTile * GroupRows]float32
		r0 := full * GroupRows
		for i0 := 0; i0 < n; i0 += tile {
			m := min(tile, n-i0)
			kern[m](&tmp[0], GroupRows, &w[full*gs], 1, nb, &act[i0*nb*actBytes])
			for j := range m {
				copy(out[(i0+j)*ldo+r0:(i0+j)*ldo+rows], tmp[j*GroupRows:j*GroupRows+rest])
			}
		}
	}
}

// gemmK is a packed K-quant kernel: ngroups groups of nb superblocks times
// the activation rows at act (kern[N] multiplies N of them).
type gemmK = func(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

// runQ4KAct packs the n activation rows by packQ4KAct (the layout of the
// Q4_K and Q5_K kernels) and runs kern over the rows of w, super bytes a
// group's superblock; it reports false, having written nothing, when a pair
// sum of bs does not fit int16 (the caller then runs the twin).
func runQ4KAct(kern []gemmK, tile, super int, out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n, nb int) bool {
	sp := getScratch(n * nb * q4kAct)
	defer scratchPool.Put(sp)
	if !packQ4KAct(*sp, a, da, bs, n, nb, tile) {
		return false
	}
	packedKRun(kern, tile, q4kAct, nb*super, out, ldo, w, rows, *sp, n, nb)
	return true
}

// runQ6KAct is runQ4KAct for the Q6_K kernels (packQ6KAct, which cannot fail).
func runQ6KAct(kern []gemmK, tile int, out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n, nb int) {
	sp := getScratch(n * nb * q6kAct)
	defer scratchPool.Put(sp)
	packQ6KAct(*sp, a, da, bs, n, nb, tile)
	packedKRun(kern, tile, q6kAct, nb*q6kSuper, out, ldo, w, rows, *sp, n, nb)
}
