package main

import "fmt"

const avx512Doc = `// AVX-512 kernels over the packed layout (packed.go): a 64-byte load of
// chunk k of a block holds the 4 quants of each of the group's 16 rows, and
// VPDPBUSD with the 4 activation quants broadcast (.BCST) adds row r's exact
// products into int32 lane r. VPDPBUSD multiplies unsigned by signed bytes:
// Q4_0 nibbles are unsigned; Q8_0 weights are offset by 128 (XOR 0x80). The
// offsets come off exactly: the integer sums start at the per-block
// correction packed with the activation (−8·Σa or −128·Σa). The float part
// is the definition's, 16 rows per ZMM: acc = acc + float32(float32(p)·float32(dw·da)), no FMA.
// The F16 kernels read the layout with binary16 scales (a group's scales
// first, 32 bytes a block, then its quants) and widen them exactly
// (VCVTPH2PS). The IQ4_NL kernels read the Q4_0 layout holding IQ4_NL
// nibbles and look each up in the codebook + 128 (VPSHUFB), the correction
// being −128·Σa.
`

// consts5 loads the AVX-512 constants: the Q8_0 offset 0x80 in Z31 and the
// nibble mask 0x0f in Z30.
func consts5(a *asmFile) {
	a.e("\tMOVL $0x80808080, AX")
	a.e("\tVPBROADCASTD AX, Z31")
	a.e("\tMOVL $0x0f0f0f0f, AX")
	a.e("\tVPBROADCASTD AX, Z30")
}

// consts5IQ4 is consts5 plus the IQ4 codebook + 128 (kvalues_iq4nl with
// each byte's top bit flipped: unsigned for VPDPBUSD) in every 128-bit lane
// of Z29, for VPSHUFB; the correction packed with the activations is then
// −128·Σa, as for Q8_0.
func consts5IQ4(a *asmFile) {
	consts5(a)
	a.e("\tMOVQ $0x766a5d4f3f2d1801, AX")
	a.e("\tMOVQ AX, X8")
	a.e("\tMOVQ $0xf1d9c5b5a6998d81, AX")
	a.e("\tVPINSRQ $1, AX, X8, X8")
	a.e("\tVSHUFI32X4 $0, Z8, Z8, Z29")
}

// consts picks the constants a kernel of layout l needs.
func (l layout) consts5() func(*asmFile) {
	if l.iq4 {
		return consts5IQ4
	}
	if l.q5 {
		return consts5Q5
	}
	return consts5
}

// lookup replaces the nibbles in reg by their codebook values + 128 (IQ4_NL).
func (l layout) lookup(a *asmFile, reg string) {
	if l.iq4 {
		a.e("\tVPSHUFB %s, Z29, %s", reg, reg)
	}
}

// zmm names register Z n.
func zmm(n int) string { return fmt.Sprintf("Z%d", n) }

// avx512Gemv writes a gemv: Z0 the float sums of the group's 16 rows, Z1 and
// Z3 the int sums of even and odd chunks (Z1 started at the packed −k·Σa).
func avx512Gemv(a *asmFile, name string, l layout) {
	gemvHead(a, name, l.consts5())
	l.header(a, "DX")
	a.e("group:")
	l.startGroup(a, "DX")
	a.e("\tVPXORD Z0, Z0, Z0")
	a.e("\tMOVQ R8, R11")
	a.e("\tMOVQ R10, BX")
	a.e("block:")
	prefetchAhead(a, l)
	a.e("\tVPBROADCASTD 36(R11), Z1")
	a.e("\tVPXORD Z3, Z3, Z3")
	for k := range l.chunks() {
		off := l.nibbles() + 64*k
		acc := "Z1"
		if k%2 != 0 {
			acc = "Z3"
		}
		if l.q4 {
			lo, h := zmm(4+2*(k%2)), zmm(5+2*(k%2))
			a.e("\tVPANDD %d(SI), Z30, %s", off, lo)
			a.e("\tVPSRLW $4, %d(SI), %s", off, h)
			a.e("\tVPANDD Z30, %s, %s", h, h)
			l.lookup(a, lo)
			l.lookup(a, h)
			l.addFifth(a, k, lo, h)
			a.e("\tVPDPBUSD.BCST %d(R11), %s, Z1", 4*k, lo)
			a.e("\tVPDPBUSD.BCST %d(R11), %s, Z3", 16+4*k, h)
		} else {
			t := zmm(4 + k%4)
			a.e("\tVPXORD %d(SI), Z31, %s", off, t)
			a.e("\tVPDPBUSD.BCST %d(R11), %s, %s", 4*k, t, acc)
		}
	}
	a.e("\tVPADDD Z3, Z1, Z1")
	a.e("\tVCVTDQ2PS Z1, Z1")
	a.e("\tVBROADCASTSS 32(R11), Z2")
	l.mulScales(a, l.scales("SI", 0), "Z2", "Z8", "Z2")
	a.e("\tVMULPS Z2, Z1, Z1")
	a.e("\tVADDPS Z1, Z0, Z0")
	nextBlock(a, l, "SI", 40, "block")
	a.e("\tVMOVUPS Z0, (DI)")
	nextGroup(a)
}

// gemmRows is the AVX-512 gemm's activation rows per inner loop.
const gemmRows = 8

// avx512Gemm writes a gemm8: gemmRows activation rows × 16 weight rows per
// inner loop. Z0..: float sums, Z8..: int sums (started at the packed
// −k·Σa), Z16-Z19 weights, Z20 the block's scales, Z21..: scale products.
func avx512Gemm(a *asmFile, name string, l layout) {
	const g = gemmRows
	gemmHead(a, name, l.consts5())
	a.e("\tLEAQ (R9)(R9*2), R12")
	l.header(a, "DX")
	a.e("group:")
	l.startGroup(a, "DX")
	for i := range g {
		a.e("\tVPXORD Z%d, Z%d, Z%d", i, i, i)
	}
	a.e("\tMOVQ R8, R11")
	a.e("\tMOVQ R10, BX")
	a.e("block:")
	for i := range g {
		a.e("\tVPBROADCASTD %d(R11), Z%d", 36*g+4*i, 8+i)
	}
	for k := range l.chunks() {
		off := l.nibbles() + 64*k
		if l.q4 {
			lo, h := zmm(16+2*(k%2)), zmm(17+2*(k%2))
			a.e("\tVPANDD %d(SI), Z30, %s", off, lo)
			a.e("\tVPSRLW $4, %d(SI), %s", off, h)
			a.e("\tVPANDD Z30, %s, %s", h, h)
			l.lookup(a, lo)
			l.lookup(a, h)
			l.addFifth(a, k, lo, h)
			for i := range g {
				a.e("\tVPDPBUSD.BCST %d(R11), %s, Z%d", 32*i+4*k, lo, 8+i)
			}
			for i := range g {
				a.e("\tVPDPBUSD.BCST %d(R11), %s, Z%d", 32*i+16+4*k, h, 8+i)
			}
		} else {
			t := zmm(16 + k%4)
			a.e("\tVPXORD %d(SI), Z31, %s", off, t)
			for i := range g {
				a.e("\tVPDPBUSD.BCST %d(R11), %s, Z%d", 32*i+4*k, t, 8+i)
			}
		}
	}
	l.loadScales(a, l.scales("SI", 0), "Z20")
	for i := range g {
		a.e("\tVCVTDQ2PS Z%d, Z%d", 8+i, 8+i)
		a.e("\tVMULPS.BCST %d(R11), Z20, Z%d", 32*g+4*i, 21+i)
		a.e("\tVMULPS Z%d, Z%d, Z%d", 21+i, 8+i, 8+i)
		a.e("\tVADDPS Z%d, Z%d, Z%d", 8+i, i, i)
	}
	nextBlock(a, l, "SI", 40*g, "block")
	a.e("\tLEAQ (DI)(R9*4), R13")
	// Row i of the output is at DI + i·ldo: DI for rows 0..3, R13 = DI +
	// 4·ldo for rows 4..7, indexed by 0, ldo, 2·ldo, 3·ldo (R12).
	for i := range g {
		base := "DI"
		if i >= 4 {
			base = "R13"
		}
		idx := [4]string{"", "(R9*1)", "(R9*2)", "(R12*1)"}[i%4]
		a.e("\tVMOVUPS Z%d, (%s)%s", i, base, idx)
	}
	nextGroup(a)
}
