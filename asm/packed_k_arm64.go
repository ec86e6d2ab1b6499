//go:build arm64 && gc && !purego

package asm

import (
	"encoding/binary"
	"math"
)

// The arm64 kernels of the packed K-quant layouts (packed_k_arm64.s, written
// by _genarm64/packedk.py): q4kGemvV multiplies ngroups ≥ 1 groups of
// nb ≥ 1 superblocks of PackQ4_K's layout with one activation row packed by
// packQ4KAct, out[16·j + r] (ldo unused), in the DotProd (SDOT) and plain
// NEON variants, and q4kGemm2DotProd for two activation rows (packQ4KAct's
// tiles of 2, out[i·ldo + 16·j + r]); q6kGemvV and q6kGemm2DotProd the same
// for PackQ6_K's layout (packQ6KAct), iq4xsGemvV and iq4xsGemm2DotProd for
// PackIQ4_XS's (packIQ4XSActARM), q5kGemvV and q5kGemm2DotProd for PackQ5_K's
// (packQ4KAct).

//go:noescape
func q4kGemvDotProd(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q4kGemm2DotProd(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q4kGemvNEON(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

// q4kKernels returns the active variant's Q4_K kernels (index: activation
// rows a call), nil for Generic. I8MM CPUs have the dot product.
func q4kKernels() []gemmK {
	switch active {
	case DotProd, I8MM:
		return []gemmK{nil, q4kGemvDotProd, q4kGemm2DotProd}
	case NEON:
		return []gemmK{nil, q4kGemvNEON}
	}
	return nil
}

// PacksQ4_K reports whether the active variant has kernels for PackQ4_K's
// layout (NEON, DotProd, I8MM); Generic multiplies Q4_K fastest by the row
// products (DotsRowsQ4_K), and a packed matrix by the definition's loop.
func PacksQ4_K() bool { return active >= NEON }

func packedQ4KMatMul(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n, nb int) {
	kern := q4kKernels()
	if kern == nil {
		packedQ4KRef(out, ldo, w, rows, a, da, bs, n, nb)
		return
	}
	tile := len(kern) - 1
	if !runQ4KAct(kern, tile, q4kSuper, out, ldo, w, rows, a, da, bs, n, nb) {
		packedQ4KRef(out, ldo, w, rows, a, da, bs, n, nb)
	}
}

//go:noescape
func q6kGemvDotProd(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q6kGemm2DotProd(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q6kGemvNEON(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

// q6kKernels is q4kKernels for the Q6_K kernels (packQ6KAct's activations).
func q6kKernels() []gemmK {
	switch active {
	case DotProd, I8MM:
		return []gemmK{nil, q6kGemvDotProd, q6kGemm2DotProd}
	case NEON:
		return []gemmK{nil, q6kGemvNEON}
	}
	return nil
}

// PacksQ6_K is PacksQ4_K for PackQ6_K's layout (NEON, DotProd, I8MM).
func PacksQ6_K() bool { return active >= NEON }

func packedQ6KMatMul(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n, nb int) {
	kern := q6kKernels()
	if kern == nil {
		packedQ6KRef(out, ldo, w, rows, a, da, bs, n, nb)
		return
	}
	tile := len(kern) - 1
	runQ6KAct(kern, tile, out, ldo, w, rows, a, da, bs, n, nb)
}

//go:noescape
func iq4xsGemvDotProd(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func iq4xsGemm2DotProd(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func iq4xsGemvNEON(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

// iq4xsKernels is q4kKernels for the IQ4_XS kernels (packIQ4XSActARM's
// activations).
func iq4xsKernels() []gemmK {
	switch active {
	case DotProd, I8MM:
		return []gemmK{nil, iq4xsGemvDotProd, iq4xsGemm2DotProd}
	case NEON:
		return []gemmK{nil, iq4xsGemvNEON}
	}
	return nil
}

// iq4xsActARM is the bytes of one superblock of one activation row as the
// arm64 IQ4_XS kernels read it (packIQ4XSActARM).
const iq4xsActARM = 272

// packIQ4XSActARM lays the n activation rows out for the arm64 IQ4_XS
// kernels, in tiles of tile rows (the last one shorter): per tile,
// superblock by superblock, per row 272 bytes: the 256 quants, the float32
// da, 12 bytes of zeros.
func packIQ4XSActARM(dst []byte, a []int8, da []float32, n, nb, tile int) {
	cols := nb * QK
	for i0 := 0; i0 < n; i0 += tile {
		m := min(tile, n-i0)
		for b := range nb {
			for j := range m {
				i := i0 + j
				o := dst[(i0*nb+b*m+j)*iq4xsActARM : (i0*nb+b*m+j+1)*iq4xsActARM]
				for k, v := range a[i*cols+b*QK : i*cols+(b+1)*QK] {
					o[k] = byte(v)
				}
				binary.LittleEndian.PutUint32(o[256:], math.Float32bits(da[i*nb+b]))
				clear(o[260:272])
			}
		}
	}
}

// PacksIQ4_XS is PacksQ4_K for PackIQ4_XS's layout (NEON, DotProd, I8MM).
func PacksIQ4_XS() bool { return active >= NEON }

func packedIQ4XSMatMul(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, n, nb int) {
	kern := iq4xsKernels()
	if kern == nil {
		packedIQ4XSRef(out, ldo, w, rows, a, da, n, nb)
		return
	}
	tile := len(kern) - 1
	sp := getScratch(n * nb * iq4xsActARM)
	act := *sp
	packIQ4XSActARM(act, a, da, n, nb, tile)
	packedKRun(kern, tile, iq4xsActARM, nb*iq4xsSuper, out, ldo, w, rows, act, n, nb)
	scratchPool.Put(sp)
}

//go:noescape
func q5kGemvDotProd(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q5kGemm2DotProd(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q5kGemvNEON(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

// q5kKernels is q4kKernels for the Q5_K kernels (packQ4KAct's activations).
func q5kKernels() []gemmK {
	switch active {
	case DotProd, I8MM:
		return []gemmK{nil, q5kGemvDotProd, q5kGemm2DotProd}
	case NEON:
		return []gemmK{nil, q5kGemvNEON}
	}
	return nil
}

// PacksQ5_K is PacksQ4_K for PackQ5_K's layout (NEON, DotProd, I8MM).
func PacksQ5_K() bool { return active >= NEON }

func packedQ5KMatMul(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n, nb int) {
	kern := q5kKernels()
	if kern == nil {
		packedQ5KRef(out, ldo, w, rows, a, da, bs, n, nb)
		return
	}
	tile := len(kern) - 1
	if !runQ4KAct(kern, tile, q5kSuper, out, ldo, w, rows, a, da, bs, n, nb) { // Q4_K's activation layout
		packedQ5KRef(out, ldo, w, rows, a, da, bs, n, nb)
	}
}
