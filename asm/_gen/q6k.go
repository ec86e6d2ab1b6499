package main

import "fmt"

// The AVX-512 VNNI kernels of the packed interleaved Q6_K layout
// (asm/packed_q6k.go): one per number of activation rows N = 1..4.

const (
	q6kSuper = 288 + 16*192
	q6kScp   = 32
	q6kQs    = 288
	q6kAct   = 320 // per activation row and superblock: 256 quants, 16 int16 bs, float32 da, padding
	q6kActBs = 256
	q6kActDa = 288
)

// q6kAhead is how far ahead the weights are prefetched (prefetchLines):
// two superblocks.
const q6kAhead = 2 * q6kSuper

const q6kDoc = `// The products of the packed interleaved Q6_K layout (asm/packed_q6k.go,
// PackQ6_K), AVX-512 VNNI:
//
//	func q6kGemmNAVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)
//
// for N = 1..4 activation rows, as q4kGemmNAVX512 (packed_q4k_avx512_amd64.s)
// with act laid out by packQ6KAct (per superblock, per row: 256 quants, the
// 16 int16 sums bs, the float32 scale; 320 bytes). Per unit of 4 elements of
// each of the 4 element sets g of a half h (A, B: ql chunks; C: qh chunk),
// the 6-bit quants are formed per byte by a shift, a bitwise select
// (VPTERNLOGD, the nibble from A or B, the two high bits from C) and a mask
// 0x3F, then VPDPBUSD with the row's four activations broadcast; each
// sub-block's sum (4 units) times its per-lane int8 scale (VPMOVSXBW of the
// scale pairs, sign-extended from the low or high word), added into isum;
// corr = Σ sc·bs by VPDPWSSD of the scale pairs with the broadcast bs pairs;
// isum − 32·corr, every step in int32 as DotQ6_K (wrapping alike). Then
// DotQ6_K's float32 step per lane: acc = acc + (d·da)·float32(isum).
`

// q6kKernels lists q6kGemm1AVX512 … q6kGemm4AVX512.
func q6kKernels() []kernel {
	var ks []kernel
	for n := 1; n <= 4; n++ {
		ks = append(ks, kernel{func(a *asmFile, name string, _ layout) { q6kGemm(a, name, n) }, fmt.Sprintf("q6kGemm%dAVX512", n), layout{}})
	}
	return ks
}

// q6kGemm writes the kernel for n activation rows. Registers as q4kGemm's;
// Z30, Z31 the masks 0x0F and 0x3F, Z0–Z2 a unit's A, B, C, Z3–Z6 its
// quants of g = 0..3, Z7 and Z28 temporaries, Z8+i isum of row i, Z12+4i+g
// the sub-block sums (then Z12+i corr).
func q6kGemm(a *asmFile, name string, n int) {
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
	a.e("\tVPBROADCASTD AX, Z30")
	a.e("\tMOVL $0x3f3f3f3f, AX")
	a.e("\tVPBROADCASTD AX, Z31")
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
	for i := range n {
		a.e("\tVPXORD Z%d, Z%d, Z%d", 8+i, 8+i, 8+i)
	}
	prefetchLines(a, "SI", q6kAhead, 0, q6kQs)
	for h := range 2 {
		for kh := range 2 {
			for i := range n {
				for g := range 4 {
					p := 12 + 4*i + g
					a.e("\tVPXORD Z%d, Z%d, Z%d", p, p, p)
				}
			}
			for k := 4 * kh; k < 4*kh+4; k++ {
				base := q6kQs + 192*(8*h+k)
				prefetchLines(a, "SI", q6kAhead, base, base+192)
				a.e("\tVMOVDQU64 %d(SI), Z0", base)
				a.e("\tVMOVDQU64 %d(SI), Z1", base+64)
				a.e("\tVMOVDQU64 %d(SI), Z2", base+128)
				a.e("\tVPSLLW $4, Z2, Z3")
				a.e("\tVPTERNLOGD $0xd8, Z30, Z0, Z3")
				a.e("\tVPANDD Z31, Z3, Z3")
				a.e("\tVPSLLW $2, Z2, Z4")
				a.e("\tVPTERNLOGD $0xd8, Z30, Z1, Z4")
				a.e("\tVPANDD Z31, Z4, Z4")
				a.e("\tVPSRLW $4, Z0, Z5")
				a.e("\tVPTERNLOGD $0xe4, Z30, Z2, Z5")
				a.e("\tVPANDD Z31, Z5, Z5")
				a.e("\tVPSRLW $4, Z1, Z6")
				a.e("\tVPSRLW $2, Z2, Z7")
				a.e("\tVPTERNLOGD $0xe4, Z30, Z7, Z6")
				a.e("\tVPANDD Z31, Z6, Z6")
				for i := range n {
					for g := range 4 {
						a.e("\tVPDPBUSD.BCST %d(DI), Z%d, Z%d", i*q6kAct+128*h+32*g+4*k, 3+g, 12+4*i+g)
					}
				}
			}
			for g := range 4 {
				// sub-block 8h + 2g + kh: pair 4h + g, its low (kh = 0) or high word.
				a.e("\tVPMOVSXBW %d(SI), Z28", q6kScp+32*(4*h+g))
				if kh == 0 {
					a.e("\tVPSLLD $16, Z28, Z28")
				}
				a.e("\tVPSRAD $16, Z28, Z28")
				for i := range n {
					p := 12 + 4*i + g
					a.e("\tVPMULLD Z28, Z%d, Z%d", p, p)
					a.e("\tVPADDD Z%d, Z%d, Z%d", p, 8+i, 8+i)
				}
			}
		}
	}
	for i := range n {
		a.e("\tVPXORD Z%d, Z%d, Z%d", 12+i, 12+i, 12+i)
	}
	for j := range 8 {
		a.e("\tVPMOVSXBW %d(SI), Z28", q6kScp+32*j)
		for i := range n {
			a.e("\tVPDPWSSD.BCST %d(DI), Z28, Z%d", i*q6kAct+q6kActBs+4*j, 12+i)
		}
	}
	a.e("\tVCVTPH2PS (SI), Z0")
	a.e("\tMOVQ DX, AX")
	for i := range n {
		a.e("\tVPSLLD $5, Z%d, Z%d", 12+i, 12+i)
		a.e("\tVPSUBD Z%d, Z%d, Z%d", 12+i, 8+i, 8+i)
		a.e("\tVMULPS.BCST %d(DI), Z0, Z1", i*q6kAct+q6kActDa)
		a.e("\tVCVTDQ2PS Z%d, Z2", 8+i)
		a.e("\tVMULPS Z2, Z1, Z1")
		a.e("\tVMOVUPS (AX), Z3")
		a.e("\tVADDPS Z1, Z3, Z3")
		a.e("\tVMOVUPS Z3, (AX)")
		if i < n-1 {
			a.e("\tADDQ R8, AX")
		}
	}
	a.e("\tADDQ $%d, SI", q6kSuper)
	a.e("\tADDQ $%d, DI", n*q6kAct)
	a.e("\tDECQ BX")
	a.e("\tJNZ %s_super", name)
	a.e("\tADDQ $64, DX")
	a.e("\tDECQ CX")
	a.e("\tJNZ %s_group", name)
	a.e("\tVZEROUPPER")
	a.e("\tRET")
	a.e("")
}
