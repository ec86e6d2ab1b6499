package main

import "fmt"

const q50AVX2Doc = `// AVX2 kernels over the packed Q5_0 layout (packed_q50.go): the Q4_0
// kernels of kernels_avx2_amd64.s (the same halves of 8 rows, the same
// float32 steps in the same order and operand order), with per block, before
// the nibbles, 8 words of fifth bits: bit 4·r + j of word c is that of
// element 4c + j of row r, so the 32 bits of an 8-row half of chunk k's low
// nibbles are dword 2k + h of the block's bits (h the half) and those of its
// high nibbles dword 8 + 2k + h. AVX2 has no mask registers: the dword is
// broadcast (VPBROADCASTD), byte p/8 moved to byte p (VPSHUFB), bit p%8
// selected and compared (VPAND, VPCMPEQB with 1, 2, 4, …, 128), the 0xFF
// so got cut to 16 (VPAND) and or'ed into the nibble: the unsigned n + 16·h
// in [0, 31]. VPMADDUBSW pairs are at most 2·31·127 = 7874; the low and
// high pairs of two chunks are added as int16 (at most 31496), widened
// (VPMADDWD by ones) and added in int32, and the correction 16·Σa, packed with the
// activations, is subtracted once per block: the exact Σ (n + 16·h − 16)·a
// of the Q8_0 form's quants (Q5_0AsQ8_0), so the products are that form's
// bit for bit.
`

// q50AVX2Data emits the kernels' constants: the VPSHUFB control that puts
// byte p/8 of a broadcast dword in byte p (+0), the bit selectors 1, 2, 4,
// …, 128 (+32) and 0x10 in every byte (+64).
func q50AVX2Data(a *asmFile) {
	words := []uint64{
		0x0000000000000000, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303,
		0x8040201008040201, 0x8040201008040201, 0x8040201008040201, 0x8040201008040201,
		0x1010101010101010, 0x1010101010101010, 0x1010101010101010, 0x1010101010101010,
	}
	for i, w := range words {
		a.e("DATA q50avx2<>+%d(SB)/8, $0x%016x", 8*i, w)
	}
	a.e("GLOBL q50avx2<>(SB), RODATA|NOPTR, $%d", 8*len(words))
	a.e("")
}

// q5Expand sets Y<dst> to 16 in the bytes whose fifth bit (bit p of the
// dword at mem, for byte p) is set, 0 elsewhere; shuf, sel and c16 are the
// operands holding the three constants (registers or memory).
func q5Expand(a *asmFile, mem string, dst int, shuf, sel, c16 string) {
	a.e("\tVPBROADCASTD %s, Y%d", mem, dst)
	a.e("\tVPSHUFB %s, Y%d, Y%d", shuf, dst, dst)
	a.e("\tVPAND %s, Y%d, Y%d", sel, dst, dst)
	a.e("\tVPCMPEQB %s, Y%d, Y%d", sel, dst, dst)
	a.e("\tVPAND %s, Y%d, Y%d", c16, dst, dst)
}

// q5BitsMem is the address of the fifth-bit dword of half h of chunk k's low
// (hi = 0) or high (hi = 1) nibbles, from the weight pointer w.
func q5BitsMem(l layout, w string, k, h, hi int) string {
	return fmt.Sprintf("%d(%s)", l.quants()+8*(4*hi+k)+4*h, w)
}

// q50AVX2Gemv writes the Q5_0 gemv: both halves of a group in one pass, as
// avx2Gemv. Y0/Y8 the float sums of rows 0..7 and 8..15, Y1/Y9 their int32
// sums, Y2/Y10 the int16 sums of chunks 2t and 2t + 1 (8 products of at
// most 31·127: 31496, no wrap), Y3, Y6, Y7 the weights, Y4/Y5 the
// activation quants; constants Y11 (VPSHUFB control), Y12 (bit selectors),
// Y13 (0x10), Y14 (0x0f), Y15 (int16 ones).
func q50AVX2Gemv(a *asmFile, name string, l layout) {
	gemvHead(a, name, func(a *asmFile) {
		consts2(a)
		a.e("\tVMOVDQU q50avx2<>+0(SB), Y11")
		a.e("\tVMOVDQU q50avx2<>+32(SB), Y12")
		a.e("\tVMOVDQU q50avx2<>+64(SB), Y13")
	})
	l.header(a, "DX")
	a.e("group:")
	l.startGroup(a, "DX")
	a.e("\tVXORPS Y0, Y0, Y0")
	a.e("\tVXORPS Y8, Y8, Y8")
	a.e("\tMOVQ R8, R11")
	a.e("\tMOVQ R10, BX")
	a.e("block:")
	prefetchAhead(a, l)
	for k := range 4 {
		off := l.nibbles() + 64*k
		a.e("\tVPBROADCASTD %d(R11), Y4", 4*k)
		a.e("\tVPBROADCASTD %d(R11), Y5", 16+4*k)
		for hh, h := range [2]struct{ acc, s int }{{1, 2}, {9, 10}} {
			a.e("\tVMOVDQU %d(SI), Y3", off+32*hh)
			a.e("\tVPSRLW $4, Y3, Y6")
			a.e("\tVPAND Y14, Y3, Y3")
			a.e("\tVPAND Y14, Y6, Y6")
			q5Expand(a, q5BitsMem(l, "SI", k, hh, 0), 7, "Y11", "Y12", "Y13")
			a.e("\tVPOR Y7, Y3, Y3")
			q5Expand(a, q5BitsMem(l, "SI", k, hh, 1), 7, "Y11", "Y12", "Y13")
			a.e("\tVPOR Y7, Y6, Y6")
			a.e("\tVPMADDUBSW Y4, Y3, Y3")
			a.e("\tVPMADDUBSW Y5, Y6, Y6")
			if k%2 == 0 {
				a.e("\tVPADDW Y6, Y3, Y%d", h.s)
				continue
			}
			a.e("\tVPADDW Y3, Y%d, Y%d", h.s, h.s)
			a.e("\tVPADDW Y6, Y%d, Y%d", h.s, h.s)
			if k == 1 {
				a.e("\tVPMADDWD Y15, Y%d, Y%d", h.s, h.acc)
			} else {
				a.e("\tVPMADDWD Y15, Y%d, Y%d", h.s, h.s)
				a.e("\tVPADDD Y%d, Y%d, Y%d", h.s, h.acc, h.acc)
			}
		}
	}
	a.e("\tVPBROADCASTD 36(R11), Y6")
	for _, acc := range []int{1, 9} {
		a.e("\tVPSUBD Y6, Y%d, Y%d", acc, acc)
	}
	gemvTail(a, l, 4, 5) // avx2Gemv's float steps, Y4/Y5 the scale products
}

// q50AVX2Gemm4 writes the Q5_0 gemm4: 4 activation rows × one 8-row half per
// inner loop, the two halves one after the other, as avx2Gemm4, two chunks
// at a time. Y0..Y3: float sums, Y4..Y7: int32 sums, Y8/Y9 the low and
// high 5-bit quants of chunk 2t (Y8 then the block's scales), Y10/Y13 those
// of chunk 2t + 1, Y11 a row's int16 sum over both chunks (8 products of
// at most 31·127: 31496, no wrap), Y12 a temporary; the constants from
// memory.
func q50AVX2Gemm4(a *asmFile, name string, l layout) {
	gemmHead(a, name, consts2)
	l.header(a, "R13")
	a.e("group:")
	for h := range 2 {
		for i := range 4 {
			a.e("\tVXORPS Y%d, Y%d, Y%d", i, i, i)
		}
		a.e("\tMOVQ R8, R11")
		a.e("\tMOVQ R10, BX")
		// DX: this half's quants (bits at DX − 32h + …, nibbles at DX + …).
		if l.f16 {
			a.e("\tLEAQ %d(SI), AX", 16*h)
			a.e("\tLEAQ (SI)(R13*1), DX")
		} else {
			a.e("\tMOVQ SI, DX")
		}
		a.e("block%d:", h)
		for t := range 2 { // chunks 2t and 2t + 1
			wr := [2][2]int{{8, 9}, {10, 13}} // [chunk][low, high] 5-bit quants
			for c := range 2 {
				k, lo, hi := 2*t+c, wr[c][0], wr[c][1]
				a.e("\tVMOVDQU %d(DX), Y%d", l.nibbles()+64*k+32*h, lo)
				a.e("\tVPSRLW $4, Y%d, Y%d", lo, hi)
				a.e("\tVPAND Y14, Y%d, Y%d", lo, lo)
				a.e("\tVPAND Y14, Y%d, Y%d", hi, hi)
				q5Expand(a, q5BitsMem(l, "DX", k, h, 0), 11, "q50avx2<>+0(SB)", "q50avx2<>+32(SB)", "q50avx2<>+64(SB)")
				a.e("\tVPOR Y11, Y%d, Y%d", lo, lo)
				q5Expand(a, q5BitsMem(l, "DX", k, h, 1), 12, "q50avx2<>+0(SB)", "q50avx2<>+32(SB)", "q50avx2<>+64(SB)")
				a.e("\tVPOR Y12, Y%d, Y%d", hi, hi)
			}
			for i := range 4 {
				for c := range 2 {
					k := 2*t + c
					for hi := range 2 {
						a.e("\tVPBROADCASTD %d(R11), Y12", 32*i+16*hi+4*k)
						if c == 0 && hi == 0 {
							a.e("\tVPMADDUBSW Y12, Y%d, Y11", wr[c][hi])
							continue
						}
						a.e("\tVPMADDUBSW Y12, Y%d, Y12", wr[c][hi])
						a.e("\tVPADDW Y12, Y11, Y11")
					}
				}
				if t == 0 {
					a.e("\tVPMADDWD Y15, Y11, Y%d", 4+i)
				} else {
					a.e("\tVPMADDWD Y15, Y11, Y11")
					a.e("\tVPADDD Y11, Y%d, Y%d", 4+i, 4+i)
				}
			}
		}
		for i := range 4 {
			a.e("\tVPBROADCASTD %d(R11), Y11", 144+4*i)
			a.e("\tVPSUBD Y11, Y%d, Y%d", 4+i, 4+i)
		}
		// The float steps, avx2Gemm4's (the scales in Y8).
		sm := fmt.Sprintf("%d(DX)", 32*h) // float32: this half's scales
		if l.f16 {
			sm = l.scales("", 0)
		}
		l.loadScales(a, sm, "Y8")
		for i := range 4 {
			a.e("\tVCVTDQ2PS Y%d, Y%d", 4+i, 4+i)
			a.e("\tVBROADCASTSS %d(R11), Y11", 128+4*i)
			a.e("\tVMULPS Y8, Y11, Y11")
			a.e("\tVMULPS Y11, Y%d, Y%d", 4+i, 4+i)
			a.e("\tVADDPS Y%d, Y%d, Y%d", 4+i, i, i)
		}
		nextBlock(a, l, "DX", 160, fmt.Sprintf("block%d", h))
		a.e("\tVMOVUPS Y0, %d(DI)", 32*h)
		a.e("\tVMOVUPS Y1, %d(DI)(R9*1)", 32*h)
		a.e("\tVMOVUPS Y2, %d(DI)(R9*2)", 32*h)
		a.e("\tLEAQ (DI)(R9*2), R12")
		a.e("\tVMOVUPS Y3, %d(R12)(R9*1)", 32*h)
	}
	a.e("\tMOVQ DX, SI")
	nextGroup(a)
}

// q50AVX2Kernels lists the AVX2 Q5_0 kernels: gemv and gemm4, float32 then
// binary16 scales; the first emits the constants.
func q50AVX2Kernels() []kernel {
	return []kernel{
		{func(a *asmFile, _ string, _ layout) { q50AVX2Data(a) }, "", layout{}},
		{q50AVX2Gemv, "gemvQ5_0AVX2", layout{q4: true, q5: true}},
		{q50AVX2Gemm4, "gemm4Q5_0AVX2", layout{q4: true, q5: true}},
		{q50AVX2Gemv, "gemvQ5_0F16AVX2", layout{q4: true, f16: true, q5: true}},
		{q50AVX2Gemm4, "gemm4Q5_0F16AVX2", layout{q4: true, f16: true, q5: true}},
	}
}
