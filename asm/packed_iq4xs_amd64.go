//go:build amd64 && gc && !purego

package asm

import (
	"bytes"
	"encoding/binary"
	"math"
	"unsafe"
)

// The AVX-512 VNNI kernels of the packed IQ4_XS layout
// (packed_iq4xs_avx512_amd64.s, written by _gen): iq4xsGemmNAVX512
// multiplies ngroups ≥ 1 groups of nb ≥ 1 superblocks with N activation
// rows packed by packIQ4XSAct, out[i·ldo + 16·j + r], as q4kGemmNAVX512.

//go:noescape
func iq4xsGemm1AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func iq4xsGemm2AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func iq4xsGemm3AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func iq4xsGemm4AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func iq4xsGemm5AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func iq4xsGemm6AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func iq4xsGemm7AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func iq4xsGemm8AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

// iq4xsGemms[N] is the kernel for N activation rows.
var iq4xsGemms = [...]func(out *float32, ldo int, w *byte, ngroups, nb int, act *byte){
	nil, iq4xsGemm1AVX512, iq4xsGemm2AVX512, iq4xsGemm3AVX512, iq4xsGemm4AVX512,
	iq4xsGemm5AVX512, iq4xsGemm6AVX512, iq4xsGemm7AVX512, iq4xsGemm8AVX512,
}

// iq4xsTile is the most activation rows one IQ4_XS kernel call multiplies;
// iq4xsAct the bytes of one superblock of one activation row
// (packIQ4XSAct).
const (
	iq4xsTile = 8
	iq4xsAct  = 320
)

// The AVX2 kernels of the packed IQ4_XS layout
// (packed_iq4xs_avx2_amd64.s): iq4xsGemmNAVX2 for N ≤ 8 activation rows
// packed by packIQ4XSActAVX2.

//go:noescape
func iq4xsGemm1AVX2(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func iq4xsGemm2AVX2(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func iq4xsGemm3AVX2(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func iq4xsGemm4AVX2(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func iq4xsGemm5AVX2(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func iq4xsGemm6AVX2(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func iq4xsGemm7AVX2(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func iq4xsGemm8AVX2(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

var iq4xsGemmsAVX2 = [...]func(out *float32, ldo int, w *byte, ngroups, nb int, act *byte){
	nil, iq4xsGemm1AVX2, iq4xsGemm2AVX2, iq4xsGemm3AVX2, iq4xsGemm4AVX2,
	iq4xsGemm5AVX2, iq4xsGemm6AVX2, iq4xsGemm7AVX2, iq4xsGemm8AVX2,
}

// iq4xsActAVX2 is the bytes of one superblock of one activation row for
// the AVX2 kernels (packIQ4XSActAVX2).
const iq4xsActAVX2 = 288

// PacksIQ4_XS is PacksQ4_K for PackIQ4_XS's layout (AVX-512, AVX2); the
// others multiply IQ4_XS fastest by the row products (DotsRowsIQ4_XS).
func PacksIQ4_XS() bool { return active == AVX512 || active == AVX2 }

// packIQ4XSActAVX2 lays the n activation rows out for the AVX2 IQ4_XS
// kernels, in tiles of iq4xsTile rows: per tile, superblock by superblock,
// per row 288 bytes: the 256 quants a, the float32 scale da, zeros. It
// reports false when an activation is −128, which the kernels cannot take
// (their a·sign(K) would be +128); QuantizeQ8_K never writes one (its
// quants are within ±127), so the caller's fallback to the definition
// costs nothing in practice.
func packIQ4XSActAVX2(dst []byte, a []int8, da []float32, n, nb int) bool {
	cols := nb * QK
	ab := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(a))), n*cols)
	if bytes.IndexByte(ab, 0x80) >= 0 {
		return false
	}
	for i0 := 0; i0 < n; i0 += iq4xsTile {
		m := min(iq4xsTile, n-i0)
		for b := range nb {
			for j := range m {
				i := i0 + j
				o := dst[(i0*nb+b*m+j)*iq4xsActAVX2 : (i0*nb+b*m+j+1)*iq4xsActAVX2]
				copy(o, ab[i*cols+b*QK:i*cols+(b+1)*QK])
				binary.LittleEndian.PutUint32(o[256:], math.Float32bits(da[i*nb+b]))
				clear(o[260:288])
			}
		}
	}
	return true
}

// packIQ4XSAct lays the n activation rows out for the IQ4_XS kernels, in
// tiles of iq4xsTile rows (the last one shorter): per tile, superblock by
// superblock, per row of the tile 320 bytes: the 256 quants, −128·A_s as
// int32 for the sums A_s of the 32 activations of each sub-block s < 8 (the
// kernels look the codebook up as K + 128, unsigned for VPDPBUSD, and start
// each sub-block's sum at this correction: Σ (K+128)·a − 128·Σ a = Σ K·a,
// exact), the float32 scale da, zeros. A_s is summed from the activations,
// so the products do not depend on bs.
func packIQ4XSAct(dst []byte, a []int8, da []float32, n, nb int) {
	cols := nb * QK
	for i0 := 0; i0 < n; i0 += iq4xsTile {
		m := min(iq4xsTile, n-i0)
		for b := range nb {
			for j := range m {
				i := i0 + j
				o := dst[(i0*nb+b*m+j)*iq4xsAct : (i0*nb+b*m+j+1)*iq4xsAct]
				ab := a[i*cols+b*QK : i*cols+(b+1)*QK]
				for s := range 8 {
					var sum int32
					for k, v := range ab[32*s : 32*s+32] {
						o[32*s+k] = byte(v)
						sum += int32(v)
					}
					binary.LittleEndian.PutUint32(o[256+4*s:], uint32(-128*sum))
				}
				binary.LittleEndian.PutUint32(o[288:], math.Float32bits(da[i*nb+b]))
				clear(o[292:320])
			}
		}
	}
}

func packedIQ4XSMatMul(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, n, nb int) {
	if active == AVX2 {
		sp := getScratch(n * nb * iq4xsActAVX2)
		defer scratchPool.Put(sp)
		if packIQ4XSActAVX2(*sp, a, da, n, nb) {
			packedKRun(iq4xsGemmsAVX2[:], iq4xsTile, iq4xsActAVX2, nb*iq4xsSuper, out, ldo, w, rows, *sp, n, nb)
			return
		}
	}
	if active != AVX512 {
		packedIQ4XSRef(out, ldo, w, rows, a, da, n, nb)
		return
	}
	sp := getScratch(n * nb * iq4xsAct)
	act := *sp
	packIQ4XSAct(act, a, da, n, nb)
	packedKRun(iq4xsGemms[:], iq4xsTile, iq4xsAct, nb*iq4xsSuper, out, ldo, w, rows, act, n, nb)
	scratchPool.Put(sp)
}
