package main

import "fmt"

// The AVX-512 VNNI kernels of the packed interleaved Q4_K layout
// (asm/packed_q4k.go): one per number of activation rows N = 1..8 that a
// call multiplies with each superblock of a group.

// q4kSuper is the bytes of one superblock of one group of the layout; the
// offsets of its parts follow.
const (
	q4kSuper = 320 + 2048
	q4kD     = 0
	q4kDmin  = 32
	q4kSc    = 64
	q4kMins  = 192
	q4kQs    = 320
)

// q4kAct is the bytes of one superblock of one activation row as
// packQ4KAct lays them out: 256 int8 quants, the 8 int16 pair sums
// B_s = bs_2s + bs_2s+1, the float32 scale, padding.
const (
	q4kAct   = 288
	q4kActB  = 256
	q4kActDa = 272
)

// q4kAhead is how far ahead the weights are prefetched (prefetchLines):
// two superblocks.
const q4kAhead = 2 * q4kSuper

const q4kDoc = `// The products of the packed interleaved Q4_K layout (asm/packed_q4k.go,
// PackQ4_K), AVX-512 VNNI:
//
//	func q4kGemmNAVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)
//
// for N = 1..8 activation rows: ngroups ≥ 1 groups of 16 rows of nb ≥ 1
// superblocks from w, the N rows' superblocks from act (packQ4KAct: per
// superblock, per row, 256 quants, the 8 pair sums B_s of its 16-sums as
// int16, its float32 scale; 288 bytes), out[i·ldo + 16·j + r] for group j,
// row r, activation row i (ldo in floats). The 16 rows of a group are the 16
// dword lanes. Per superblock and 64 elements t (sub-blocks 2t and 2t+1),
// each 64-byte chunk of quants is masked into its low nibbles (0x0F) and its
// high nibbles times 16 (0xF0), then VPDPBUSD with the row's four
// activations broadcast; the high sums shifted back (VPSRAD 4: exact, a
// multiple of 16), each sub-block sum times its per-lane scale (VPMULLD) and
// added: isum, exact. msum: VPDPWSSD of the mins (pairs of words per lane)
// with the broadcast pair sums, exact. Then DotQ4_K's float32 steps, per
// lane, in its order: acc = acc + (d·da)·float32(isum), acc = acc −
// (dmin·da)·float32(msum), acc held in out, +0 before the first superblock.
`

// q4kKernels lists the kernels q4kGemm1AVX512 … q4kGemm8AVX512.
func q4kKernels() []kernel {
	var ks []kernel
	for n := 1; n <= 8; n++ {
		ks = append(ks, kernel{func(a *asmFile, name string, _ layout) { q4kGemm(a, name, n) }, fmt.Sprintf("q4kGemm%dAVX512", n), layout{}})
	}
	return ks
}

// q4kGemm writes the kernel for n activation rows. Registers: DX the
// group's outputs, R8 ldo in bytes, SI the weights, CX the groups left, R10
// nb, R11 act, DI the superblock's activations, BX the superblocks left, AX
// an output row. Z5 and Z6 the nibble masks, Z0–Z4 temporaries, Z8+i
// isum of row i, Z16+i and Z24+i its two sub-block sums (then the mins and
// msum).
func q4kGemm(a *asmFile, name string, n int) {
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
	a.e("\tMOVL $0xf0f0f0f0, AX")
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
	prefetchLines(a, "SI", q4kAhead, 0, q4kQs)
	for t := range 4 {
		for i := range n {
			a.e("\tVPXORD Z%d, Z%d, Z%d", 16+i, 16+i, 16+i)
			a.e("\tVPXORD Z%d, Z%d, Z%d", 24+i, 24+i, 24+i)
		}
		for k := range 8 {
			prefetchLines(a, "SI", q4kAhead, q4kQs+64*(8*t+k), q4kQs+64*(8*t+k)+64)
			a.e("\tVMOVDQU64 %d(SI), Z0", q4kQs+64*(8*t+k))
			a.e("\tVPANDD Z5, Z0, Z1")
			a.e("\tVPANDD Z6, Z0, Z2")
			for i := range n {
				a.e("\tVPDPBUSD.BCST %d(DI), Z1, Z%d", i*q4kAct+64*t+4*k, 16+i)
				a.e("\tVPDPBUSD.BCST %d(DI), Z2, Z%d", i*q4kAct+64*t+32+4*k, 24+i)
			}
		}
		a.e("\tVPMOVZXBD %d(SI), Z3", q4kSc+16*(2*t))
		a.e("\tVPMOVZXBD %d(SI), Z4", q4kSc+16*(2*t+1))
		for i := range n {
			lo, hi, is := 16+i, 24+i, 8+i
			a.e("\tVPSRAD $4, Z%d, Z%d", hi, hi)
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
	// The float steps.
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
	a.e("\tADDQ $%d, SI", q4kSuper)
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
