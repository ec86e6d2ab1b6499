package main

import "fmt"

const avx2Doc = `// AVX2 kernels over the packed layout (packed.go): a group of 16 weight
// rows, per block the 16 float32 scales, then the quants in 4-byte chunks,
// chunk k of row r at 4·(16k+r). The F16 kernels read the layout with
// binary16 scales: a group's scales first (32 bytes a block, padded to 64),
// then its blocks' quants; VCVTPH2PS (F16C) widens the scales exactly
// before the same float arithmetic. A group is taken as two halves of 8 rows
// (rows 0..7 at byte 0 of each 64, rows 8..15 at byte 32): a 32-byte load of
// chunk k feeds 8 rows with the same 4 activation quants (VPBROADCASTD), so
// the int32 lane r of the products is row r's and the block's exact integer
// sum lands in lane r without a horizontal reduction. Then, as the definition
// says, per row acc = acc + float32(float32(p)·float32(dw·da)) (VMULPS,
// VMULPS, VADDPS; never an FMA).
//
// Q8_0: VPMADDUBSW multiplies unsigned by signed bytes, so it gets |w|
// (VPABSB; -128 gives 0x80, which is 128 unsigned) and a·sign(w) (VPSIGNB; a
// lies in [-127, 127]). Pairs are summed into int16 without saturation (at
// most 2·128·127 = 32512), and VPMADDWD by ones sums them into int32.
// Q4_0: the nibbles (0..15) are unsigned already; the 8 int16 products of a
// block sum to at most 8·2·15·127 = 30480, so they are added as int16 and
// widened once per block; the offset −8 is applied exactly as −8·Σa, the
// activation's per-block correction packed by the caller.
//
// Activations are packed by the caller (packAct): per block, g rows of 32
// quants, then g float32 scales, then g int32 corrections (g = 1 or 4).
`

// consts2 loads the AVX2 constants: int16 ones in Y15 (VPMADDWD's pair sum)
// and the nibble mask 0x0f in Y14.
func consts2(a *asmFile) {
	a.e("\tMOVL $0x00010001, AX")
	a.e("\tVMOVQ AX, X15")
	a.e("\tVPBROADCASTD X15, Y15")
	a.e("\tMOVL $0x0f0f0f0f, AX")
	a.e("\tVMOVQ AX, X14")
	a.e("\tVPBROADCASTD X14, Y14")
}

// signedProduct multiplies the signed bytes of Y<w> by the broadcast
// activations in Y<act> as the Q8_0 kernels do: |w| (VPABSB; −128 gives
// 128 unsigned) times a·sign(w) (VPSIGNB, a in [−127, 127]), pairs into
// int16, then into int32 by VPMADDWD with the ones in Y15; Y<w> holds the
// int32 sums, Y<t> is a temporary.
func signedProduct(a *asmFile, w, act, t int) {
	a.e("\tVPSIGNB Y%d, Y%d, Y%d", w, act, t)
	a.e("\tVPABSB Y%d, Y%d", w, w)
	a.e("\tVPMADDUBSW Y%d, Y%d, Y%d", t, w, w)
	a.e("\tVPMADDWD Y15, Y%d, Y%d", w, w)
}

// rowProduct is signedProduct for one of a gemm4's activation rows with
// |w| already in Y<abs>: the broadcast at off(R11) into Y<t>, its int32
// sums stored into (first) or added to Y<acc>.
func rowProduct(a *asmFile, w, abs, off, t, acc int, first bool) {
	a.e("\tVPBROADCASTD %d(R11), Y%d", off, t)
	a.e("\tVPSIGNB Y%d, Y%d, Y%d", w, t, t)
	a.e("\tVPMADDUBSW Y%d, Y%d, Y%d", t, abs, t)
	a.e("\tVPMADDWD Y15, Y%d, Y%d", t, t)
	if first {
		a.e("\tVMOVDQA Y%d, Y%d", t, acc)
	} else {
		a.e("\tVPADDD Y%d, Y%d, Y%d", t, acc, acc)
	}
}

// half names the registers of one 8-row half of a group: the weights w, a
// temporary t (Q4_0: the high nibbles) and the integer sum acc.
type half struct{ w, t, acc int }

// avx2Halves are the two halves: rows 0..7 and rows 8..15.
var avx2Halves = [2]half{{2, 3, 1}, {10, 11, 9}}

// avx2Gemv writes a gemv. Both halves of a group in one pass: each
// activation broadcast feeds two weight loads. Y0/Y1: float and int sums of
// rows 0..7, Y8/Y9 of 8..15.
func avx2Gemv(a *asmFile, name string, l layout) {
	consts := consts2
	if l.iq4 {
		consts = func(a *asmFile) { consts2(a); codebookReg(a, 6, false, "AX") }
	}
	gemvHead(a, name, consts)
	l.header(a, "DX")
	a.e("group:")
	l.startGroup(a, "DX")
	a.e("\tVXORPS Y0, Y0, Y0")
	a.e("\tVXORPS Y8, Y8, Y8")
	a.e("\tMOVQ R8, R11")
	a.e("\tMOVQ R10, BX")
	a.e("block:")
	prefetchAhead(a, l)
	for k := range l.chunks() {
		off := l.quants() + 64*k
		if l.q4 {
			a.e("\tVPBROADCASTD %d(R11), Y4", 4*k)
			a.e("\tVPBROADCASTD %d(R11), Y5", 16+4*k)
			for hh, h := range avx2Halves {
				w, hi, acc := h.w, h.t, h.acc
				a.e("\tVMOVDQU %d(SI), Y%d", off+32*hh, w)
				a.e("\tVPSRLW $4, Y%d, Y%d", w, hi)
				a.e("\tVPAND Y14, Y%d, Y%d", w, w)
				a.e("\tVPAND Y14, Y%d, Y%d", hi, hi)
				add := "VPADDW" // Q4_0: int16 sums, widened per block
				if l.iq4 {
					// The codebook values, multiplied as Q8_0: int32.
					add = "VPADDD"
					for j, r := range [2][2]int{{w, 12}, {hi, 13}} {
						a.e("\tVPSHUFB Y%d, Y6, Y%d", r[0], r[0])
						signedProduct(a, r[0], 4+j, r[1])
					}
				} else {
					a.e("\tVPMADDUBSW Y4, Y%d, Y%d", w, w)
					a.e("\tVPMADDUBSW Y5, Y%d, Y%d", hi, hi)
				}
				if k == 0 {
					a.e("\t%s Y%d, Y%d, Y%d", add, hi, w, acc)
				} else {
					a.e("\t%s Y%d, Y%d, Y%d", add, w, acc, acc)
					a.e("\t%s Y%d, Y%d, Y%d", add, hi, acc, acc)
				}
			}
		} else {
			a.e("\tVPBROADCASTD %d(R11), Y4", 4*k)
			for hh, h := range avx2Halves {
				w, t, acc := h.w, h.t, h.acc
				a.e("\tVMOVDQU %d(SI), Y%d", off+32*hh, w)
				signedProduct(a, w, 4, t)
				if k == 0 {
					a.e("\tVMOVDQA Y%d, Y%d", w, acc)
				} else {
					a.e("\tVPADDD Y%d, Y%d, Y%d", w, acc, acc)
				}
			}
		}
	}
	if l.q4 && !l.iq4 {
		a.e("\tVPBROADCASTD 36(R11), Y6")
		for _, acc := range []int{1, 9} {
			a.e("\tVPMADDWD Y15, Y%d, Y%d", acc, acc)
			a.e("\tVPSUBD Y6, Y%d, Y%d", acc, acc)
		}
	}
	gemvTail(a, l, 12, 13)
}

// gemvTail ends a gemv's block and group: the float steps of the two
// halves' int32 sums (Y1, Y9) into their float sums (Y0, Y8), with Y7 the
// activation scale and Y(t0), Y(t1) the scale products, then the next
// block and, after the last, the store of the group's 16 sums.
func gemvTail(a *asmFile, l layout, t0, t1 int) {
	a.e("\tVBROADCASTSS 32(R11), Y7")
	for hh, r := range [2]struct{ acc, f, t int }{{1, 0, t0}, {9, 8, t1}} {
		a.e("\tVCVTDQ2PS Y%d, Y%d", r.acc, r.acc)
		t := fmt.Sprintf("Y%d", r.t)
		l.mulScales(a, l.scales("SI", 8*hh), "Y7", t, t)
		a.e("\tVMULPS Y%d, Y%d, Y%d", r.t, r.acc, r.acc)
		a.e("\tVADDPS Y%d, Y%d, Y%d", r.acc, r.f, r.f)
	}
	nextBlock(a, l, "SI", 40, "block")
	a.e("\tVMOVUPS Y0, (DI)")
	a.e("\tVMOVUPS Y8, 32(DI)")
	nextGroup(a)
}

// avx2Gemm4 writes a gemm4: 4 activation rows × one 8-row half per inner
// loop, the two halves one after the other. Y0..Y3: float sums, Y4..Y7:
// int sums, Y8 the weights, Y13 the block's scales.
func avx2Gemm4(a *asmFile, name string, l layout) {
	gemmHead(a, name, consts2)
	l.header(a, "R13")
	a.e("group:")
	for h := range 2 {
		for i := range 4 {
			a.e("\tVXORPS Y%d, Y%d, Y%d", i, i, i)
		}
		a.e("\tMOVQ R8, R11")
		a.e("\tMOVQ R10, BX")
		if l.f16 { // AX: this half's scales; DX: its quants, after the scales
			a.e("\tLEAQ %d(SI), AX", 16*h)
			a.e("\tLEAQ %d(SI)(R13*1), DX", 32*h)
		} else {
			a.e("\tLEAQ %d(SI), DX", 32*h)
		}
		a.e("block%d:", h)
		if l.iq4 {
			// Y13 holds the codebook until the block's scales (AX may
			// point at them: R12, free in the block loop, carries it).
			codebookReg(a, 13, false, "R12")
			for k := range 4 {
				a.e("\tVMOVDQU %d(DX), Y8", l.quants()+64*k)
				for nib := range 2 {
					if nib == 0 {
						a.e("\tVPAND Y14, Y8, Y9")
					} else {
						a.e("\tVPSRLW $4, Y8, Y8")
						a.e("\tVPAND Y14, Y8, Y9")
					}
					a.e("\tVPSHUFB Y9, Y13, Y9")
					a.e("\tVPABSB Y9, Y10")
					for i := range 4 {
						rowProduct(a, 9, 10, 32*i+16*nib+4*k, 11+i%2, 4+i, k == 0 && nib == 0)
					}
				}
			}
		} else if l.q4 {
			for k := range 4 {
				a.e("\tVMOVDQU %d(DX), Y8", l.quants()+64*k)
				a.e("\tVPSRLW $4, Y8, Y10")
				a.e("\tVPAND Y14, Y8, Y9")
				a.e("\tVPAND Y14, Y10, Y10")
				for i := range 4 {
					a.e("\tVPBROADCASTD %d(R11), Y11", 32*i+4*k)
					a.e("\tVPMADDUBSW Y11, Y9, Y11")
					a.e("\tVPBROADCASTD %d(R11), Y12", 32*i+16+4*k)
					a.e("\tVPMADDUBSW Y12, Y10, Y12")
					if k == 0 {
						a.e("\tVPADDW Y12, Y11, Y%d", 4+i)
					} else {
						a.e("\tVPADDW Y11, Y%d, Y%d", 4+i, 4+i)
						a.e("\tVPADDW Y12, Y%d, Y%d", 4+i, 4+i)
					}
				}
			}
			for i := range 4 {
				a.e("\tVPMADDWD Y15, Y%d, Y%d", 4+i, 4+i)
				a.e("\tVPBROADCASTD %d(R11), Y11", 144+4*i)
				a.e("\tVPSUBD Y11, Y%d, Y%d", 4+i, 4+i)
			}
		} else {
			for k := range 8 {
				a.e("\tVMOVDQU %d(DX), Y8", l.quants()+64*k)
				a.e("\tVPABSB Y8, Y9")
				for i := range 4 {
					rowProduct(a, 8, 9, 32*i+4*k, 10+(i%2)*2, 4+i, k == 0)
				}
			}
		}
		sm := "(DX)" // float32: DX is SI + 32h, where this half's scales are
		if l.f16 {
			sm = l.scales("", 0)
		}
		l.loadScales(a, sm, "Y13")
		for i := range 4 {
			a.e("\tVCVTDQ2PS Y%d, Y%d", 4+i, 4+i)
			a.e("\tVBROADCASTSS %d(R11), Y11", 128+4*i)
			a.e("\tVMULPS Y13, Y11, Y11")
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
	a.e("\tLEAQ -32(DX), SI")
	nextGroup(a)
}

// packAct writes packAct's AVX2 form: per block b and row i < g, the 32
// quants copied to dst + b·40g + 32i, the scale to dst + b·40g + 32g + 4i,
// and k·Σa (exact: VPMADDUBSW of ones by a gives int16 pairs of at most 254)
// to dst + b·40g + 36g + 4i. It has one form for both weight types.
func packAct(a *asmFile, name string, _ layout) {
	a.e("// func %s(dst *byte, a *int8, da *float32, nb int, ng int, k int, cols int)", name)
	a.e("TEXT ·%s(SB), NOSPLIT, $0-56", name)
	a.lines = append(a.lines, []string{
		"\tMOVL $0x01010101, AX",
		"\tVMOVQ AX, X15",
		"\tVPBROADCASTD X15, Y15",
		"\tMOVL $0x00010001, AX",
		"\tVMOVQ AX, X14",
		"\tVPBROADCASTD X14, Y14",
		"\tMOVQ dst+0(FP), DI",
		"\tMOVQ a+8(FP), SI",
		"\tMOVQ da+16(FP), DX",
		"\tMOVQ nb+24(FP), BX",
		"\tMOVQ ng+32(FP), R8",
		"\tMOVQ BX, R13",
		"\tSHLQ $2, R13",
		"pblock:",
		"\tXORQ CX, CX",
		"\tMOVQ SI, R11",
		"\tMOVQ DX, R12",
		"\tMOVQ R8, AX",
		"\tSHLQ $5, AX",
		"\tLEAQ (DI)(AX*1), R9",
		"\tLEAQ (R9)(R8*4), R10",
		"prow:",
		"\tVMOVDQU (R11), Y0",
		"\tMOVQ CX, AX",
		"\tSHLQ $5, AX",
		"\tVMOVDQU Y0, (DI)(AX*1)",
		"\tVPMADDUBSW Y0, Y15, Y1",
		"\tVPMADDWD Y14, Y1, Y1",
		"\tVEXTRACTI128 $1, Y1, X2",
		"\tVPADDD X2, X1, X1",
		"\tVPSHUFD $0x4e, X1, X2",
		"\tVPADDD X2, X1, X1",
		"\tVPSHUFD $0xb1, X1, X2",
		"\tVPADDD X2, X1, X1",
		"\tMOVL (R12), AX",
		"\tMOVL AX, (R9)(CX*4)",
		"\tVMOVD X1, AX",
		"\tIMULQ k+40(FP), AX",
		"\tMOVL AX, (R10)(CX*4)",
		"\tADDQ cols+48(FP), R11",
		"\tADDQ R13, R12",
		"\tINCQ CX",
		"\tCMPQ CX, R8",
		"\tJLT prow",
		"\tLEAQ (R8)(R8*4), AX",
		"\tSHLQ $3, AX",
		"\tADDQ AX, DI",
		"\tADDQ $32, SI",
		"\tADDQ $4, DX",
		"\tDECQ BX",
		"\tJNZ pblock",
		"\tVZEROUPPER",
		"\tRET",
		"",
	}...)
}
