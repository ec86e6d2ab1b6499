package main

import "fmt"

// The AVX-512 VNNI kernels of the packed interleaved Q5_K layout
// (asm/packed_q5k.go): q4kGemm's with the fifth bits, one per number of
// activation rows N = 1..8.

// q5kSuper is the bytes of one superblock of one group; the offsets of its
// parts that differ from Q4_K's follow (d, dmin, the scales and mins lie as
// there).
const (
	q5kSuper = 832 + 2048
	q5kQh    = 320
	q5kQs    = 832
)

// q5kAhead is how far ahead the weights are prefetched (prefetchLines):
// two superblocks.
const q5kAhead = 2 * q5kSuper

const q5kDoc = `// The products of the packed interleaved Q5_K layout (asm/packed_q5k.go,
// PackQ5_K), AVX-512 VNNI:
//
//	func q5kGemmNAVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)
//
// for N = 1..8 activation rows, as q4kGemmNAVX512 (packed_q4k_avx512_amd64.s),
// with act laid out by packQ4KAct as there. Per superblock and 64 elements t
// (sub-blocks 2t and 2t+1), each 64-byte chunk k of quants gives the 5-bit
// quants of both sub-blocks per byte: the qh chunk k shifted so that bit 2t
// (2t+1) lands on bit 4, a bitwise select (VPTERNLOGD: the low nibble, or
// the high nibble shifted down, under the mask 0x0F, the rest from the
// shifted qh) and a mask 0x1F; then VPDPBUSD with the row's four
// activations broadcast; each sub-block sum times its per-lane scale
// (VPMULLD), added: isum, exact. msum and the float32 steps are Q4_K's.
`

// q5kKernels lists q5kGemm1AVX512 … q5kGemm8AVX512.
func q5kKernels() []kernel {
	var ks []kernel
	for n := 1; n <= 8; n++ {
		ks = append(ks, kernel{func(a *asmFile, name string, _ layout) { q5kGemm(a, name, n) }, fmt.Sprintf("q5kGemm%dAVX512", n), layout{}})
	}
	return ks
}

// qhBitTo4 writes dst = the dwords at mem shifted so that bit b of each
// byte lands on bit 4; every other bit, of the byte or of its neighbour
// across the shift, lands on bits 0..3, which the select takes from the
// quants, or on bits 5..7, which the mask 0x1F clears.
func qhBitTo4(a *asmFile, b int, mem, dst string) {
	switch {
	case b < 4:
		a.e("\tVPSLLD $%d, %s, %s", 4-b, mem, dst)
	case b == 4:
		a.e("\tVMOVDQU64 %s, %s", mem, dst)
	default:
		a.e("\tVPSRLD $%d, %s, %s", b-4, mem, dst)
	}
}

// q5kGemm writes the kernel for n activation rows. Registers as q4kGemm's:
// Z5 the mask 0x0F, Z6 the mask 0x1F, Z0 a chunk of quants, Z1 and Z2 its
// 5-bit quants of sub-blocks 2t and 2t+1, Z3 a temporary (then a scale),
// Z4 a scale, Z8+i isum of row i, Z16+i and Z24+i its two sub-block sums
// (then the mins and msum).
func q5kGemm(a *asmFile, name string, n int) {
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
	a.e("\tVPBROADCASTD AX, Z5")
	a.e("\tMOVL $0x1f1f1f1f, AX")
	a.e("\tVPBROADCASTD AX, Z6")
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
	prefetchLines(a, "SI", q5kAhead, 0, q5kQs)
	for t := range 4 {
		for i := range n {
			a.e("\tVPXORD Z%d, Z%d, Z%d", 16+i, 16+i, 16+i)
			a.e("\tVPXORD Z%d, Z%d, Z%d", 24+i, 24+i, 24+i)
		}
		for k := range 8 {
			qh := fmt.Sprintf("%d(SI)", q5kQh+64*k)
			prefetchLines(a, "SI", q5kAhead, q5kQs+64*(8*t+k), q5kQs+64*(8*t+k)+64)
			a.e("\tVMOVDQU64 %d(SI), Z0", q5kQs+64*(8*t+k))
			qhBitTo4(a, 2*t, qh, "Z1")
			a.e("\tVPTERNLOGD $0xd8, Z5, Z0, Z1") // Z1 = 0x0F ? Z0 : Z1
			a.e("\tVPANDD Z6, Z1, Z1")
			a.e("\tVPSRLD $4, Z0, Z2")
			qhBitTo4(a, 2*t+1, qh, "Z3")
			a.e("\tVPTERNLOGD $0xd8, Z5, Z2, Z3") // Z3 = 0x0F ? Z2 : Z3
			a.e("\tVPANDD Z6, Z3, Z2")
			for i := range n {
				a.e("\tVPDPBUSD.BCST %d(DI), Z1, Z%d", i*q4kAct+64*t+4*k, 16+i)
				a.e("\tVPDPBUSD.BCST %d(DI), Z2, Z%d", i*q4kAct+64*t+32+4*k, 24+i)
			}
		}
		a.e("\tVPMOVZXBD %d(SI), Z3", q4kSc+16*(2*t))
		a.e("\tVPMOVZXBD %d(SI), Z4", q4kSc+16*(2*t+1))
		for i := range n {
			lo, hi, is := 16+i, 24+i, 8+i
			a.e("\tVPMULLD Z3, Z%d, Z%d", lo, lo)
			a.e("\tVPMULLD Z4, Z%d, Z%d", hi, hi)
			if t == 0 {
				a.e("\tVPADDD Z%d, Z%d, Z%d", hi, lo, is)
			} else {
				a.e("\tVPADDD Z%d, Z%d, Z%d", lo, is, is)
				a.e("\tVPADDD Z%d, Z%d, Z%d", hi, is, is)
			}
		}
	}
	// msum: the mins of sub-blocks 2j, 2j+1 as words into Z16+j.
	for j := range 4 {
		a.e("\tVPMOVZXBW %d(SI), Z%d", q4kMins+32*j, 16+j)
	}
	for i := range n {
		m := 24 + i
		a.e("\tVPXORD Z%d, Z%d, Z%d", m, m, m)
		for j := range 4 {
			a.e("\tVPDPWSSD.BCST %d(DI), Z%d, Z%d", i*q4kAct+q4kActB+4*j, 16+j, m)
		}
	}
	// The float steps, Q4_K's.
	a.e("\tVCVTPH2PS %d(SI), Z3", q4kD)
	a.e("\tVCVTPH2PS %d(SI), Z4", q4kDmin)
	a.e("\tMOVQ DX, AX")
	for i := range n {
		da := fmt.Sprintf("%d(DI)", i*q4kAct+q4kActDa)
		a.e("\tVMULPS.BCST %s, Z3, Z0", da)
		a.e("\tVCVTDQ2PS Z%d, Z1", 8+i)
		a.e("\tVMULPS Z1, Z0, Z0")
		a.e("\tVMOVUPS (AX), Z2")
		a.e("\tVADDPS Z0, Z2, Z2")
		a.e("\tVMULPS.BCST %s, Z4, Z0", da)
		a.e("\tVCVTDQ2PS Z%d, Z1", 24+i)
		a.e("\tVMULPS Z1, Z0, Z0")
		a.e("\tVSUBPS Z0, Z2, Z2")
		a.e("\tVMOVUPS Z2, (AX)")
		if i < n-1 {
			a.e("\tADDQ R8, AX")
		}
	}
	a.e("\tADDQ $%d, SI", q5kSuper)
	a.e("\tADDQ $%d, DI", n*q4kAct)
	a.e("\tDECQ BX")
	a.e("\tJNZ %s_super", name)
	a.e("\tADDQ $64, DX")
	a.e("\tDECQ CX")
	a.e("\tJNZ %s_group", name)
	a.e("\tVZEROUPPER")
	a.e("\tRET")
	a.e("")
}
