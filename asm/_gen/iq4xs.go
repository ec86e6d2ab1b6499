package main

import "fmt"

// The AVX-512 VNNI kernels of the packed interleaved IQ4_XS layout
// (asm/packed_iq4xs.go): one per number of activation rows N = 1..8.

// iq4xsSuper is the bytes of one superblock of one group of the layout; the
// offsets of its parts follow.
const (
	iq4xsSuper = 192 + 2048
	iq4xsD     = 0
	iq4xsSc    = 32
	iq4xsQs    = 192
)

// iq4xsAhead is how far ahead the weights are prefetched (prefetchLines):
// two superblocks.
const iq4xsAhead = 2 * iq4xsSuper

// iq4xsAct is the bytes of one superblock of one activation row as
// packIQ4XSAct lays them out: 256 int8 quants, the 8 int32 corrections
// −128·A_s (A_s the sum of sub-block s's 32 activations), the float32
// scale, padding.
const (
	iq4xsAct     = 320
	iq4xsActCorr = 256
	iq4xsActDa   = 288
)

// kvaluesIQ4 is ggml's kvalues_iq4nl, the IQ4_NL and IQ4_XS codebook.
var kvaluesIQ4 = [16]int{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// codebookPlus128 is the codebook + 128 as bytes (unsigned for VPDPBUSD),
// the low and high 8 as two little-endian quadwords.
func codebookPlus128() (lo, hi uint64) {
	for j := 7; j >= 0; j-- {
		lo = lo<<8 | uint64(kvaluesIQ4[j]+128)
		hi = hi<<8 | uint64(kvaluesIQ4[j+8]+128)
	}
	return lo, hi
}

const iq4xsDoc = `// The products of the packed interleaved IQ4_XS layout
// (asm/packed_iq4xs.go, PackIQ4_XS), AVX-512 VNNI:
//
//	func iq4xsGemmNAVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)
//
// for N = 1..8 activation rows, as q4kGemmNAVX512 (packed_q4k_avx512_amd64.s)
// with act laid out by packIQ4XSAct (per superblock, per row: 256 quants,
// the 8 int32 corrections −128·A_s, A_s the sum of sub-block s's
// activations, the float32 scale; 320 bytes). Per sub-block s and each of
// its four 64-byte chunks, the low nibbles (0x0F) and the high nibbles
// (shifted down, 0x0F) index the codebook + 128 (VPSHUFB; every byte in
// 1..241, unsigned), then VPDPBUSD with the row's four activations
// broadcast, the low nibbles' sum started at −128·A_s, the high nibbles'
// at 0: their sum is Σ (K+128)·a − 128·Σ a = Σ K·a, exact; times the
// sub-block's per-lane scale ls − 32 (VPMOVSXBD, VPMULLD) and added: isum,
// exact, as DotIQ4_XS's. Then its float32 step per lane: acc = acc +
// (d·da)·float32(isum), acc held in out, +0 before the first superblock.
`

// iq4xsKernels lists iq4xsGemm1AVX512 … iq4xsGemm8AVX512.
func iq4xsKernels() []kernel {
	var ks []kernel
	for n := 1; n <= 8; n++ {
		ks = append(ks, kernel{func(a *asmFile, name string, _ layout) { iq4xsGemm(a, name, n) }, fmt.Sprintf("iq4xsGemm%dAVX512", n), layout{}})
	}
	return ks
}

// iq4xsGemm writes the kernel for n activation rows. Registers as
// q4kGemm's; Z4 the nibble mask, Z5 the codebook + 128 in each 128-bit
// lane, Z0 a chunk, Z1 and Z2 its low and high nibbles' codebook values +
// 128, Z3 the scales (then d), Z8+i isum of row i, Z16+i and Z24+i the
// sub-block sums of its low and high nibbles.
func iq4xsGemm(a *asmFile, name string, n int) {
	lo, hi := codebookPlus128()
	a.e("// func %s(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)", name)
	a.e("TEXT ·%s(SB), NOSPLIT, $0-48", name)
	a.e("\tMOVQ out+0(FP), DX")
	a.e("\tMOVQ ldo+8(FP), R8")
	a.e("\tSHLQ $2, R8")
	a.e("\tMOVQ w+16(FP), SI")
	a.e("\tMOVQ ngroups+24(FP), CX")
	a.e("\tMOVQ nb+32(FP), R10")
	a.e("\tMOVQ act+40(FP), R11")
	a.e("\tMOVL $0x0f0f0f0f, AX")
	a.e("\tVPBROADCASTD AX, Z4")
	a.e("\tMOVQ $0x%016x, AX", lo)
	a.e("\tVMOVQ AX, X5")
	a.e("\tMOVQ $0x%016x, AX", hi)
	a.e("\tVPINSRQ $1, AX, X5, X5")
	a.e("\tVSHUFI32X4 $0, Z5, Z5, Z5")
	a.e("%s_group:", name)
	a.e("\tMOVQ R11, DI")
	a.e("\tVPXORD Z0, Z0, Z0")
	a.e("\tMOVQ DX, AX")
	for i := range n {
		a.e("\tVMOVUPS Z0, (AX)")
		if i < n-1 {
			a.e("\tADDQ R8, AX")
		}
	}
	a.e("\tMOVQ R10, BX")
	a.e("%s_super:", name)
	prefetchLines(a, "SI", iq4xsAhead, 0, iq4xsQs)
	for s := range 8 {
		for i := range n {
			a.e("\tVPBROADCASTD %d(DI), Z%d", i*iq4xsAct+iq4xsActCorr+4*s, 16+i)
			a.e("\tVPXORD Z%d, Z%d, Z%d", 24+i, 24+i, 24+i)
		}
		for k := range 4 {
			q := iq4xsQs + 64*(4*s+k)
			prefetchLines(a, "SI", iq4xsAhead, q, q+64)
			a.e("\tVMOVDQU64 %d(SI), Z0", q)
			a.e("\tVPANDD Z4, Z0, Z1")
			a.e("\tVPSRLD $4, Z0, Z2")
			a.e("\tVPANDD Z4, Z2, Z2")
			a.e("\tVPSHUFB Z1, Z5, Z1")
			a.e("\tVPSHUFB Z2, Z5, Z2")
			for i := range n {
				a.e("\tVPDPBUSD.BCST %d(DI), Z1, Z%d", i*iq4xsAct+32*s+4*k, 16+i)
				a.e("\tVPDPBUSD.BCST %d(DI), Z2, Z%d", i*iq4xsAct+32*s+16+4*k, 24+i)
			}
		}
		a.e("\tVPMOVSXBD %d(SI), Z3", iq4xsSc+16*s)
		for i := range n {
			p, q, is := 16+i, 24+i, 8+i
			a.e("\tVPADDD Z%d, Z%d, Z%d", q, p, p)
			if s == 0 {
				a.e("\tVPMULLD Z3, Z%d, Z%d", p, is)
			} else {
				a.e("\tVPMULLD Z3, Z%d, Z%d", p, p)
				a.e("\tVPADDD Z%d, Z%d, Z%d", p, is, is)
			}
		}
	}
	// The float step.
	a.e("\tVCVTPH2PS %d(SI), Z3", iq4xsD)
	a.e("\tMOVQ DX, AX")
	for i := range n {
		a.e("\tVMULPS.BCST %d(DI), Z3, Z0", i*iq4xsAct+iq4xsActDa)
		a.e("\tVCVTDQ2PS Z%d, Z1", 8+i)
		a.e("\tVMULPS Z1, Z0, Z0")
		a.e("\tVMOVUPS (AX), Z2")
		a.e("\tVADDPS Z0, Z2, Z2")
		a.e("\tVMOVUPS Z2, (AX)")
		if i < n-1 {
			a.e("\tADDQ R8, AX")
		}
	}
	a.e("\tADDQ $%d, SI", iq4xsSuper)
	a.e("\tADDQ $%d, DI", n*iq4xsAct)
	a.e("\tDECQ BX")
	a.e("\tJNZ %s_super", name)
	a.e("\tADDQ $64, DX")
	a.e("\tDECQ CX")
	a.e("\tJNZ %s_group", name)
	a.e("\tVZEROUPPER")
	a.e("\tRET")
	a.e("")
}
