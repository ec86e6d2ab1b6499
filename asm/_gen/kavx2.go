package main

import "fmt"

// The AVX2 kernels of the packed interleaved K-quant layouts
// (asm/packed_q4k.go …): the layouts and activation packing of the AVX-512
// kernels, a group of 16 rows taken as two halves of 8 dword lanes (rows
// 0..7 at byte 0 of each 64-byte chunk of quants, rows 8..15 at byte 32),
// one half after the other over all superblocks.

const q4kAVX2Doc = `// The products of the packed interleaved Q4_K layout (asm/packed_q4k.go,
// PackQ4_K), AVX2:
//
//	func q4kGemmNAVX2(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)
//
// for N = 1..4 activation rows, arguments and act as q4kGemmNAVX512's
// (packed_q4k_avx512_amd64.s; act by packQ4KAct). A group's 16 rows are
// taken as two halves of 8 dword lanes (rows 0..7 at byte 0 of each 64-byte
// chunk, rows 8..15 at byte 32): for N ≤ 2 both halves superblock by
// superblock and a half's 4 parts t as a loop (as q6kGemmNAVX2: the weights
// stream once, the code stays in the op cache; a gemv from memory read 7-8
// GB/s before, 8.5-11.5 after), for N ≥ 3 one half after the other over
// all superblocks, unrolled. Per 64 elements t (sub-blocks 2t and 2t+1) each 32-byte chunk
// is split into its low nibbles (0x0F) and high nibbles (shift 4, 0x0F),
// then VPMADDUBSW (unsigned nibble × signed activation, pairs summed into
// int16: at most 2·15·128 = 3840, no saturation) with the row's four
// activations broadcast, added as int16 over the sub-block's 8 chunks (at
// most 8·3840 = 30720, no wrap); VPMADDWD by the lane's scale in both words
// (VPMOVZXBD, shift, or) gives sc·(both int16 sums) in int32, exact, added
// into isum. msum: VPMADDWD of the mins (word pairs per lane) with the
// broadcast pair sums, exact. Then DotQ4_K's float32 steps per lane, in its
// order: acc = acc + (d·da)·float32(isum), acc = acc − (dmin·da)·float32(msum)
// (VMULPS, VADDPS, VSUBPS; no FMA), acc held in out, +0 before the first
// superblock.
`

// q4kAVX2Kernels lists q4kGemm1AVX2 … q4kGemm4AVX2.
func q4kAVX2Kernels() []kernel {
	var ks []kernel
	for n := 1; n <= 4; n++ {
		ks = append(ks, kernel{func(a *asmFile, name string, _ layout) { q4kGemmAVX2(a, name, n) }, fmt.Sprintf("q4kGemm%dAVX2", n), layout{}})
	}
	return ks
}

// kavx2Head starts a packed K-quant AVX2 kernel: DX the group's outputs, R8
// ldo in bytes, SI the group's weights, CX the groups left, R10 nb, R11 act;
// Y15 the mask 0x0F, then the kernel's own constants (consts, before the
// group loop).
func kavx2Head(a *asmFile, name string, consts ...func(*asmFile)) {
	a.e("// func %s(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)", name)
	a.e("TEXT ·%s(SB), NOSPLIT, $0-48", name)
	a.e("\tMOVQ out+0(FP), DX")
	a.e("\tMOVQ ldo+8(FP), R8")
	a.e("\tSHLQ $2, R8")
	a.e("\tMOVQ w+16(FP), SI")
	a.e("\tMOVQ ngroups+24(FP), CX")
	a.e("\tMOVQ nb+32(FP), R10")
	a.e("\tMOVQ act+40(FP), R11")
	broadcastByte(15, 0x0f)(a)
	for _, c := range consts {
		c(a)
	}
	a.e("%s_group:", name)
}

// broadcastByte returns a kavx2Head constant: the byte b in every byte of
// Y<reg>.
func broadcastByte(reg int, b byte) func(*asmFile) {
	return func(a *asmFile) {
		a.e("\tMOVL $0x%02x%02x%02x%02x, AX", b, b, b, b)
		a.e("\tVMOVQ AX, X%d", reg)
		a.e("\tVPBROADCASTD X%d, Y%d", reg, reg)
	}
}

// kavx2Half starts half h of a group: its n output rows cleared (+0), DI
// the first superblock's activations, R12 the group's weights, BX the
// superblocks left.
func kavx2Half(a *asmFile, name string, h, n int) {
	a.e("\tVXORPS Y0, Y0, Y0")
	a.e("\tMOVQ DX, AX")
	for i := range n {
		a.e("\tVMOVUPS Y0, %d(AX)", 32*h)
		if i < n-1 {
			a.e("\tADDQ R8, AX")
		}
	}
	kavx2Loop(a, name, h)
}

// kavx2Both starts a group whose two halves run in one superblock loop
// (ended as half 1's), so that its weights stream from memory once: both
// halves' outputs of its n rows cleared (+0), then as kavx2Half.
func kavx2Both(a *asmFile, name string, n int) {
	a.e("\tVXORPS Y0, Y0, Y0")
	a.e("\tMOVQ DX, AX")
	for i := range n {
		a.e("\tVMOVUPS Y0, (AX)")
		a.e("\tVMOVUPS Y0, 32(AX)")
		if i < n-1 {
			a.e("\tADDQ R8, AX")
		}
	}
	kavx2Loop(a, name, 1)
}

// kavx2Loop sets DI, R12 and BX for a group's superblock loop and labels it
// as half h's.
func kavx2Loop(a *asmFile, name string, h int) {
	a.e("\tMOVQ R11, DI")
	a.e("\tMOVQ SI, R12")
	a.e("\tMOVQ R10, BX")
	a.e("%s_super%d:", name, h)
}

// kavx2Next ends the superblock loop of half h (the weights R12 and the
// activations DI advance by a superblock: super and n·act bytes) and, after
// the second half, the group (SI at the next group, the outputs DX by 16
// floats) and the function.
func kavx2Next(a *asmFile, name string, h, n, super, act int) {
	a.e("\tADDQ $%d, R12", super)
	a.e("\tADDQ $%d, DI", n*act)
	a.e("\tDECQ BX")
	a.e("\tJNZ %s_super%d", name, h)
	if h == 0 {
		return
	}
	a.e("\tMOVQ R12, SI")
	a.e("\tADDQ $64, DX")
	a.e("\tDECQ CX")
	a.e("\tJNZ %s_group", name)
	a.e("\tVZEROUPPER")
	a.e("\tRET")
	a.e("")
}

// bothWords sets Y<reg> to the 8 bytes at mem zero-extended into dwords with
// the value in both words (tmp a temporary): VPMADDWD's multiplier of both
// int16 sums of a lane.
func bothWords(a *asmFile, mem string, reg, tmp int) {
	a.e("\tVPMOVZXBD %s, Y%d", mem, reg)
	a.e("\tVPSLLD $16, Y%d, Y%d", reg, tmp)
	a.e("\tVPOR Y%d, Y%d, Y%d", tmp, reg, reg)
}

// q4kGemmAVX2 writes the Q4_K kernel for n ≤ 4 activation rows: for n ≤ 2
// both halves superblock by superblock (the weights stream once) and the 4
// parts t of a half as a loop (q6kGemmAVX2's reasons), otherwise one half
// after the other over all superblocks, unrolled.
func q4kGemmAVX2(a *asmFile, name string, n int) {
	kavx2Head(a, name)
	if n <= 2 {
		kavx2Both(a, name, n)
		prefetchLines(a, "R12", q4kAhead, 0, q4kQs)
		for h := range 2 {
			kavx2Parts(a, name, h, n, 8, q4kQs, func() {
				q4kPartAVX2(a, q4kLoop(h), 0, h, n)
			})
			q4kStepAVX2(a, h, n)
		}
		kavx2Next(a, name, 1, n, q4kSuper, q4kAct)
		return
	}
	for h := range 2 {
		kavx2Half(a, name, h, n)
		if h == 0 {
			prefetchLines(a, "R12", q4kAhead, 0, q4kQs)
		}
		for i := range n {
			a.e("\tVPXOR Y%d, Y%d, Y%d", 8+i, 8+i, 8+i)
		}
		for t := range 4 {
			q4kPartAVX2(a, q4kOps{chunks: "R12", chunksOff: q4kQs, pf: h == 0}, t, h, n)
		}
		q4kStepAVX2(a, h, n)
		kavx2Next(a, name, h, n, q4kSuper, q4kAct)
	}
}

// kavx2Parts writes half h's four parts t (sub-blocks 2t, 2t+1) of a Q4_K
// or Q5_K superblock as a loop: isum Y(isum+i) of the n rows +0, then
// part() with R13 at part t's chunks (from qs) and R9 = 32t, its scales'
// offset and half its activations'.
func kavx2Parts(a *asmFile, name string, h, n, isum, qs int, part func()) {
	for i := range n {
		a.e("\tVPXOR Y%d, Y%d, Y%d", isum+i, isum+i, isum+i)
	}
	a.e("\tLEAQ %d(R12), R13", qs)
	a.e("\tXORQ R9, R9")
	a.e("%s_part%d:", name, h)
	part()
	a.e("\tADDQ $%d, R13", 8*64)
	a.e("\tADDQ $32, R9")
	a.e("\tCMPQ R9, $128")
	a.e("\tJNE %s_part%d", name, h)
}

// q4kLoop is the addressing of kavx2Parts' loop (chunks at R13, scales and
// activations indexed by R9), prefetching in the first half.
func q4kLoop(h int) q4kOps {
	return q4kOps{chunks: "R13", sc: "(R9*1)", act: "(R9*2)", pf: h == 0}
}

// q4kOps is how q4kPartAVX2 addresses part t: its chunks at chunksOff(chunks)
// (plus part t's offset), its scales from R12 and activations from DI, with
// sc and act appended (then at their part-0 offsets, the register indexing
// them); pf prefetches the chunks' lines.
type q4kOps struct {
	chunks    string
	chunksOff int
	sc, act   string
	pf        bool
}

// q4kPartAVX2 adds part t (sub-blocks 2t and 2t+1) of half h of a
// superblock for n activation rows into isum: Y12 a chunk (then its high
// nibbles, the scales), Y13 its low nibbles (then scales), Y14 a temporary,
// Yi and Y4+i the int16 sums of sub-blocks 2t and 2t+1 of row i, Y8+i isum
// of row i.
func q4kPartAVX2(a *asmFile, o q4kOps, t, h, n int) {
	off, chunks := 64*t, o.chunksOff+512*t
	if o.sc != "" {
		off, chunks = 0, o.chunksOff
	}
	for k := range 8 {
		if o.pf {
			prefetchLines(a, o.chunks, q4kAhead, chunks+64*k, chunks+64*k+64)
		}
		a.e("\tVMOVDQU %d(%s), Y12", chunks+64*k+32*h, o.chunks)
		a.e("\tVPAND Y15, Y12, Y13")
		a.e("\tVPSRLW $4, Y12, Y12")
		a.e("\tVPAND Y15, Y12, Y12")
		for i := range n {
			for hi, w := range []int{13, 12} {
				acc := i + 4*hi
				a.e("\tVPBROADCASTD %d(DI)%s, Y14", i*q4kAct+off+32*hi+4*k, o.act)
				if k == 0 {
					a.e("\tVPMADDUBSW Y14, Y%d, Y%d", w, acc)
				} else {
					a.e("\tVPMADDUBSW Y14, Y%d, Y14", w)
					a.e("\tVPADDW Y14, Y%d, Y%d", acc, acc)
				}
			}
		}
	}
	bothWords(a, fmt.Sprintf("%d(R12)%s", q4kSc+off/2+8*h, o.sc), 12, 14)
	bothWords(a, fmt.Sprintf("%d(R12)%s", q4kSc+off/2+16+8*h, o.sc), 13, 14)
	for i := range n {
		a.e("\tVPMADDWD Y12, Y%d, Y%d", i, i)
		a.e("\tVPMADDWD Y13, Y%d, Y%d", 4+i, 4+i)
		a.e("\tVPADDD Y%d, Y%d, Y%d", i, 8+i, 8+i)
		a.e("\tVPADDD Y%d, Y%d, Y%d", 4+i, 8+i, 8+i)
	}
}

// q4kStepAVX2 ends half h of a superblock for n activation rows (isum of
// row i in Y8+i): msum, then DotQ4_K's float32 steps into the outputs.
func q4kStepAVX2(a *asmFile, h, n int) { kStepAVX2(a, h, n, 8, 4, [3]int{4, 5, 6}) }

// kStepAVX2 ends half h of a Q4_K or Q5_K superblock for n activation rows,
// isum of row i in Y(isum+i): msum (the mins of sub-blocks 2j, 2j+1 as
// words into Y(mins+j), then Σ into Yi), then DotQ4_K's float32 steps into
// the outputs; Y12, Y13, Y14 and Y(t[k]) temporaries.
func kStepAVX2(a *asmFile, h, n, isum, mins int, t [3]int) {
	for j := range 4 {
		a.e("\tVPMOVZXBW %d(R12), Y%d", q4kMins+32*j+16*h, mins+j)
	}
	for i := range n {
		for j := range 4 {
			a.e("\tVPBROADCASTD %d(DI), Y14", i*q4kAct+q4kActB+4*j)
			if j == 0 {
				a.e("\tVPMADDWD Y14, Y%d, Y%d", mins, i)
			} else {
				a.e("\tVPMADDWD Y14, Y%d, Y14", mins+j)
				a.e("\tVPADDD Y14, Y%d, Y%d", i, i)
			}
		}
	}
	a.e("\tVCVTPH2PS %d(R12), Y12", q4kD+16*h)
	a.e("\tVCVTPH2PS %d(R12), Y13", q4kDmin+16*h)
	a.e("\tMOVQ DX, AX")
	for i := range n {
		a.e("\tVBROADCASTSS %d(DI), Y14", i*q4kAct+q4kActDa)
		a.e("\tVMULPS Y14, Y12, Y%d", t[0])
		a.e("\tVCVTDQ2PS Y%d, Y%d", isum+i, t[1])
		a.e("\tVMULPS Y%d, Y%d, Y%d", t[1], t[0], t[0])
		a.e("\tVMOVUPS %d(AX), Y%d", 32*h, t[2])
		a.e("\tVADDPS Y%d, Y%d, Y%d", t[0], t[2], t[2])
		a.e("\tVMULPS Y14, Y13, Y%d", t[0])
		a.e("\tVCVTDQ2PS Y%d, Y%d", i, t[1])
		a.e("\tVMULPS Y%d, Y%d, Y%d", t[1], t[0], t[0])
		a.e("\tVSUBPS Y%d, Y%d, Y%d", t[0], t[2], t[2])
		a.e("\tVMOVUPS Y%d, %d(AX)", t[2], 32*h)
		if i < n-1 {
			a.e("\tADDQ R8, AX")
		}
	}
}

const q6kAVX2Doc = `// The products of the packed interleaved Q6_K layout (asm/packed_q6k.go,
// PackQ6_K), AVX2:
//
//	func q6kGemmNAVX2(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)
//
// for N = 1..4 activation rows, arguments and act as q6kGemmNAVX512's
// (packed_q6k_avx512_amd64.s; act by packQ6KAct). A group's 16 rows are two
// halves of 8 dword lanes. For N ≤ 2 both halves are taken superblock by
// superblock, so that the weights stream from memory once, and a
// superblock's four quarters 2h + kh are a loop, so that the code stays in
// the op cache (a superblock unrolled was about 16 KB, and a gemv from
// memory ran at 9 GB/s where a plain sum reads 14); for N ≥ 3 one half
// after the other over all superblocks, unrolled. Per sub-block s = 8h + 2g
// + kh (its 16 elements in the 4 units 8h + 4kh …+3, element set g): per
// unit the 6-bit quants of set g, formed per byte from
// its nibble of A or B (shift, 0x0F) and its two bits of C (shift, 0x30),
// then VPMADDUBSW (unsigned quant × signed activation, pairs into int16: at
// most 2·63·128 = 16128, no saturation) with the row's four activations
// broadcast; two units added as int16 (at most 32256, no wrap), then
// VPMADDWD by the lane's int8 scale in both words (VPMOVSXBW of the scale
// pairs, then shifts and or, or in the loop VPSHUFB of the pairs read from
// byte kh on): sc·(the sums) in int32, exact, added into isum. corr
// = Σ sc·bs by VPMADDWD of the scale pairs with the broadcast bs pairs;
// isum − 32·corr, every step in int32 as DotQ6_K (wrapping alike). Then
// DotQ6_K's float32 step per lane: acc = acc + (d·da)·float32(isum), acc
// held in out, +0 before the first superblock.
`

// q6kAVX2Kernels lists q6kGemm1AVX2 … q6kGemm4AVX2.
func q6kAVX2Kernels() []kernel {
	var ks []kernel
	for n := 1; n <= 4; n++ {
		ks = append(ks, kernel{func(a *asmFile, name string, _ layout) { q6kGemmAVX2(a, name, n) }, fmt.Sprintf("q6kGemm%dAVX2", n), layout{}})
	}
	return ks
}

// q6kQuantsAVX2 sets Y13 to the 6-bit quants of element set g of the unit
// at base (its A, B, C parts at +0, +64, +128; rh the row half's 32 bytes),
// Y12 a temporary; Y15 holds 0x0F, Y14 0x30.
func q6kQuantsAVX2(a *asmFile, reg string, base, rh, g int) {
	nib := base + 32*rh // A
	if g%2 == 1 {
		nib += 64 // B
	}
	c := base + 128 + 32*rh
	if g < 2 { // the low nibble
		a.e("\tVPAND %d(%s), Y15, Y13", nib, reg)
	} else {
		a.e("\tVMOVDQU %d(%s), Y13", nib, reg)
		a.e("\tVPSRLW $4, Y13, Y13")
		a.e("\tVPAND Y15, Y13, Y13")
	}
	// Bits 2g, 2g+1 of C to bits 4, 5.
	switch sh := 4 - 2*g; {
	case sh == 0:
		a.e("\tVPAND %d(%s), Y14, Y12", c, reg)
	case sh > 0:
		a.e("\tVMOVDQU %d(%s), Y12", c, reg)
		a.e("\tVPSLLW $%d, Y12, Y12", sh)
		a.e("\tVPAND Y14, Y12, Y12")
	default:
		a.e("\tVMOVDQU %d(%s), Y12", c, reg)
		a.e("\tVPSRLW $%d, Y12, Y12", -sh)
		a.e("\tVPAND Y14, Y12, Y12")
	}
	a.e("\tVPOR Y12, Y13, Y13")
}

// q6kGemmAVX2 writes the Q6_K kernel for n ≤ 4 activation rows: for n ≤ 2
// both halves in one superblock loop, the weights streamed once, and the
// superblock's four quarters as a loop (fully unrolled, a superblock's code
// outgrew the op cache); otherwise one half after the other, unrolled.
func q6kGemmAVX2(a *asmFile, name string, n int) {
	kavx2Head(a, name, broadcastByte(14, 0x30))
	if n <= 2 {
		kavx2Both(a, name, n)
		prefetchLines(a, "R12", q6kAhead, 0, q6kQs)
		for i := range 2 * n {
			a.e("\tVPXOR Y%d, Y%d, Y%d", 4+i, 4+i, 4+i)
		}
		// Y9 copies each dword's low word to its high word (VPSHUFB).
		laneConst(a, 9, 0x0504050401000100, 0x0d0c0d0c09080908, "AX")
		// Quarter t = 2h + kh of the superblock (sub-blocks 8h + 2g + kh):
		// R13 its units, R9 = 128h + 16kh its activations' offset, AX =
		// 128h + kh its scales' (the scale pairs read from one byte on, for
		// kh = 1, so that the sub-block's scale is each dword's low word).
		a.e("\tLEAQ %d(R12), R13", q6kQs)
		a.e("\tXORQ R9, R9")
		a.e("\tXORQ AX, AX")
		a.e("%s_quarter:", name)
		for rh := range 2 {
			q6kQuarterAVX2(a, rh, n, n*rh)
		}
		a.e("\tADDQ $%d, R13", 4*192)
		a.e("\tADDQ $16, R9")
		a.e("\tINCQ AX")
		a.e("\tTESTQ $1, AX")
		a.e("\tJNZ %s_quarter", name)
		a.e("\tADDQ $96, R9")
		a.e("\tADDQ $126, AX")
		a.e("\tCMPQ AX, $256")
		a.e("\tJNE %s_quarter", name)
		for rh := range 2 {
			q6kStepAVX2(a, rh, n, n*rh)
		}
		kavx2Next(a, name, 1, n, q6kSuper, q6kAct)
		return
	}
	for rh := range 2 {
		kavx2Half(a, name, rh, n)
		if rh == 0 {
			prefetchLines(a, "R12", q6kAhead, 0, q6kQs)
		}
		for i := range n {
			a.e("\tVPXOR Y%d, Y%d, Y%d", 4+i, 4+i, 4+i)
		}
		for h := range 2 {
			q6kPartAVX2(a, h, rh, n, rh == 0)
		}
		q6kStepAVX2(a, rh, n, 0)
		kavx2Next(a, name, rh, n, q6kSuper, q6kAct)
	}
}

// q6kPartAVX2 adds part h (elements 128h …+127, sub-blocks 8h …+7) of row
// half rh of a superblock for n activation rows into isum, prefetching its
// units' lines if pf: Y13 a unit's quants, Y12 and Y11 temporaries, Y10 the
// sub-block's scale in both words, Yi the int16 sums of row i, Y4+i isum
// of row i.
func q6kPartAVX2(a *asmFile, h, rh, n int, pf bool) {
	for kh := range 2 {
		for g := range 4 {
			// The scale of sub-block 8h + 2g + kh: pair 4h + g, its low
			// (kh = 0) or high word, in both words.
			a.e("\tVPMOVSXBW %d(R12), Y10", q6kScp+32*(4*h+g)+16*rh)
			if kh == 0 {
				a.e("\tVPSLLD $16, Y10, Y12")
				a.e("\tVPSRLD $16, Y12, Y10")
			} else {
				a.e("\tVPSRLD $16, Y10, Y10")
				a.e("\tVPSLLD $16, Y10, Y12")
			}
			a.e("\tVPOR Y12, Y10, Y10")
			for p := range 2 {
				for u := range 2 {
					k := 4*kh + 2*p + u
					base := q6kQs + 192*(8*h+k)
					if pf && g == 0 {
						prefetchLines(a, "R12", q6kAhead, base, base+192)
					}
					q6kQuantsAVX2(a, "R12", base, rh, g)
					for i := range n {
						a.e("\tVPBROADCASTD %d(DI), Y11", i*q6kAct+128*h+32*g+4*k)
						if u == 0 {
							a.e("\tVPMADDUBSW Y11, Y13, Y%d", i)
						} else {
							a.e("\tVPMADDUBSW Y11, Y13, Y11")
							a.e("\tVPADDW Y11, Y%d, Y%d", i, i)
						}
					}
				}
				for i := range n {
					a.e("\tVPMADDWD Y10, Y%d, Y%d", i, i)
					a.e("\tVPADDD Y%d, Y%d, Y%d", i, 4+i, 4+i)
				}
			}
		}
	}
}

// q6kQuarterAVX2 adds quarter t of row half rh of a superblock (R13, R9,
// AX and Y9 as q6kGemmAVX2 sets them) for n activation rows into isum: Y13
// a unit's quants, Y12 and Y11 temporaries, Y10 the sub-block's scale in
// both words, Y(r+i) the int16 sums of row i, Y(4+r+i) isum of row i.
func q6kQuarterAVX2(a *asmFile, rh, n, r int) {
	for g := range 4 {
		a.e("\tVPMOVSXBW %d(R12)(AX*1), Y10", q6kScp+32*g+16*rh)
		a.e("\tVPSHUFB Y9, Y10, Y10")
		for p := range 2 {
			for u := range 2 {
				k := 2*p + u
				if rh == 0 && g == k {
					// Unit k's three lines, one unit per set g: 12 at
					// once at g = 0 read 12 GB/s from memory, spread 14.
					prefetchLines(a, "R13", q6kAhead, 192*k, 192*k+192)
				}
				q6kQuantsAVX2(a, "R13", 192*k, rh, g)
				for i := range n {
					a.e("\tVPBROADCASTD %d(DI)(R9*1), Y11", i*q6kAct+32*g+4*k)
					if u == 0 {
						a.e("\tVPMADDUBSW Y11, Y13, Y%d", r+i)
					} else {
						a.e("\tVPMADDUBSW Y11, Y13, Y11")
						a.e("\tVPADDW Y11, Y%d, Y%d", r+i, r+i)
					}
				}
			}
			for i := range n {
				a.e("\tVPMADDWD Y10, Y%d, Y%d", r+i, r+i)
				a.e("\tVPADDD Y%d, Y%d, Y%d", r+i, 4+r+i, 4+r+i)
			}
		}
	}
}

// q6kStepAVX2 ends row half rh of a superblock for n activation rows (isum
// of row i in Y(4+r+i)): corr = Σ sc·bs in Y(r+i), isum − 32·corr, and the
// float32 step into the outputs.
func q6kStepAVX2(a *asmFile, rh, n, r int) {
	for j := range 8 {
		a.e("\tVPMOVSXBW %d(R12), Y13", q6kScp+32*j+16*rh)
		for i := range n {
			a.e("\tVPBROADCASTD %d(DI), Y11", i*q6kAct+q6kActBs+4*j)
			if j == 0 {
				a.e("\tVPMADDWD Y11, Y13, Y%d", r+i)
			} else {
				a.e("\tVPMADDWD Y11, Y13, Y11")
				a.e("\tVPADDD Y11, Y%d, Y%d", r+i, r+i)
			}
		}
	}
	a.e("\tVCVTPH2PS %d(R12), Y13", 16*rh)
	a.e("\tMOVQ DX, AX")
	for i := range n {
		a.e("\tVPSLLD $5, Y%d, Y%d", r+i, r+i)
		a.e("\tVPSUBD Y%d, Y%d, Y%d", r+i, 4+r+i, 4+r+i)
		a.e("\tVBROADCASTSS %d(DI), Y11", i*q6kAct+q6kActDa)
		a.e("\tVMULPS Y11, Y13, Y12")
		a.e("\tVCVTDQ2PS Y%d, Y10", 4+r+i)
		a.e("\tVMULPS Y10, Y12, Y12")
		a.e("\tVMOVUPS %d(AX), Y10", 32*rh)
		a.e("\tVADDPS Y12, Y10, Y10")
		a.e("\tVMOVUPS Y10, %d(AX)", 32*rh)
		if i < n-1 {
			a.e("\tADDQ R8, AX")
		}
	}
}

// iq4xsActAVX2 is the bytes of one superblock of one activation row as
// packIQ4XSActAVX2 lays them out: the 256 int8 quants, the float32 scale,
// padding (a multiple of 32, so that the quants stay aligned).
const (
	iq4xsActAVX2   = 288
	iq4xsActAVX2Da = 256
)

// codebook is the IQ4_NL/IQ4_XS codebook as signed bytes (or, abs, their
// magnitudes), the low and high 8 as two little-endian quadwords.
func codebook(abs bool) (lo, hi uint64) {
	for j := 7; j >= 0; j-- {
		l, h := int8(kvaluesIQ4[j]), int8(kvaluesIQ4[j+8])
		if abs {
			l, h = max(l, -l), max(h, -h)
		}
		lo = lo<<8 | uint64(byte(l))
		hi = hi<<8 | uint64(byte(h))
	}
	return lo, hi
}

// codebookReg sets Y<reg> to the codebook (or its magnitudes) in both
// 128-bit lanes, through the general register tmp.
func codebookReg(a *asmFile, reg int, abs bool, tmp string) {
	lo, hi := codebook(abs)
	laneConst(a, reg, lo, hi, tmp)
}

// laneConst sets both 128-bit lanes of Y<reg> to the quadwords lo, hi (tmp
// a temporary general register).
func laneConst(a *asmFile, reg int, lo, hi uint64, tmp string) {
	a.e("\tMOVQ $0x%016x, %s", lo, tmp)
	a.e("\tVMOVQ %s, X%d", tmp, reg)
	a.e("\tMOVQ $0x%016x, %s", hi, tmp)
	a.e("\tVPINSRQ $1, %s, X%d, X%d", tmp, reg, reg)
	a.e("\tVINSERTI128 $1, X%d, Y%d, Y%d", reg, reg, reg)
}

const iq4xsAVX2Doc = `// The products of the packed interleaved IQ4_XS layout
// (asm/packed_iq4xs.go, PackIQ4_XS), AVX2:
//
//	func iq4xsGemmNAVX2(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)
//
// for N = 1..8 activation rows, arguments as q4kGemmNAVX2's
// (packed_q4k_avx2_amd64.s), act laid out by packIQ4XSActAVX2 (per
// superblock, per row: the 256 quants a, none of them −128, the float32
// scale; 288 bytes). A group is taken superblock by superblock, both halves
// of 8 dword lanes (rows 0..7, then 8..15) of a superblock one after the
// other, so that a superblock's activations are read from L1 twice in a
// row, and a half's 8 sub-blocks are a loop, so that the code stays in the
// op cache (unrolled, 8 rows' superblock was some 15 KB). Per chunk of
// sub-block s the nibbles (0x0F, shift 4) index the codebook twice (VPSHUFB, in each 128-bit lane): its magnitudes |K| and
// the signed K. Per activation row the broadcast a takes K's signs (VPSIGNB:
// a·sign(K), no K is 0, and |a| ≤ 127, so no −128 arises), VPMADDUBSW
// multiplies the unsigned |K| by them, pairs into int16 at most 2·127·127 =
// 32258 (no saturation), and VPMADDWD by the lane's int8 scale in both
// words gives sc·(the two products) in int32, exact, added into isum. Then
// DotIQ4_XS's float32 step per lane: acc = acc + (d·da)·float32(isum), acc
// held in out, +0 before the first superblock.
`

// iq4xsAVX2Kernels lists iq4xsGemm1AVX2 … iq4xsGemm8AVX2.
func iq4xsAVX2Kernels() []kernel {
	var ks []kernel
	for n := 1; n <= 8; n++ {
		ks = append(ks, kernel{func(a *asmFile, name string, _ layout) { iq4xsGemmAVX2(a, name, n) }, fmt.Sprintf("iq4xsGemm%dAVX2", n), layout{}})
	}
	return ks
}

// iq4xsGemmAVX2 writes the IQ4_XS kernel for n ≤ 8 activation rows. Y15
// the mask 0x0F, Y14 the codebook's magnitudes |K| in each lane, Y8 the
// signed codebook K; per half of a superblock: Y13 a chunk (then its high
// nibbles, d), Y12 and Y11 |K| and K of its low (then high) nibbles, Y9
// the sub-block's scale in both words, Y10 a broadcast a (then a·sign(K),
// the products), Yi isum of row i.
func iq4xsGemmAVX2(a *asmFile, name string, n int) {
	kavx2Head(a, name,
		func(a *asmFile) { codebookReg(a, 14, true, "AX") },
		func(a *asmFile) { codebookReg(a, 8, false, "AX") })
	kavx2Both(a, name, n)
	prefetchLines(a, "R12", iq4xsAhead, 0, iq4xsQs)
	for rh := range 2 {
		// The 8 sub-blocks as a loop (R13 the sub-block's quants, SI its
		// scales (SI is the group's start again at its end), R9 its
		// activations, AX the count): unrolled, a superblock's code for 8
		// rows was about 15 KB, more than the op cache holds.
		for i := range n {
			a.e("\tVPXOR Y%d, Y%d, Y%d", i, i, i)
		}
		a.e("\tMOVQ R12, R13")
		a.e("\tMOVQ R12, SI")
		a.e("\tMOVQ DI, R9")
		a.e("\tMOVQ $8, AX")
		a.e("%s_sub%d:", name, rh)
		a.e("\tVPMOVSXBD %d(SI), Y9", iq4xsSc+8*rh)
		a.e("\tVPSLLD $16, Y9, Y10")
		a.e("\tVPSRLD $16, Y10, Y9")
		a.e("\tVPOR Y10, Y9, Y9")
		for k := range 4 {
			if rh == 0 {
				prefetchLines(a, "R13", iq4xsAhead, iq4xsQs+64*k, iq4xsQs+64*k+64)
			}
			a.e("\tVMOVDQU %d(R13), Y13", iq4xsQs+64*k+32*rh)
			for nib := range 2 {
				idx := 12
				if nib == 0 {
					a.e("\tVPAND Y15, Y13, Y12")
				} else {
					a.e("\tVPSRLW $4, Y13, Y13")
					a.e("\tVPAND Y15, Y13, Y13")
					idx = 13
				}
				a.e("\tVPSHUFB Y%d, Y8, Y11", idx)
				a.e("\tVPSHUFB Y%d, Y14, Y12", idx)
				e := 16*nib + 4*k
				for i := range n {
					a.e("\tVPBROADCASTD %d(R9), Y10", i*iq4xsActAVX2+e)
					a.e("\tVPSIGNB Y11, Y10, Y10")
					a.e("\tVPMADDUBSW Y10, Y12, Y10")
					a.e("\tVPMADDWD Y9, Y10, Y10")
					a.e("\tVPADDD Y10, Y%d, Y%d", i, i)
				}
			}
		}
		// The next sub-block: quants 256 bytes on, scales 16, activations 32.
		a.e("\tADDQ $256, R13")
		a.e("\tADDQ $16, SI")
		a.e("\tADDQ $32, R9")
		a.e("\tDECQ AX")
		a.e("\tJNZ %s_sub%d", name, rh)
		a.e("\tVCVTPH2PS %d(R12), Y13", 16*rh)
		a.e("\tMOVQ DX, AX")
		for i := range n {
			a.e("\tVBROADCASTSS %d(DI), Y11", i*iq4xsActAVX2+iq4xsActAVX2Da)
			a.e("\tVMULPS Y11, Y13, Y12")
			a.e("\tVCVTDQ2PS Y%d, Y10", i)
			a.e("\tVMULPS Y10, Y12, Y12")
			a.e("\tVMOVUPS %d(AX), Y10", 32*rh)
			a.e("\tVADDPS Y12, Y10, Y10")
			a.e("\tVMOVUPS Y10, %d(AX)", 32*rh)
			if i < n-1 {
				a.e("\tADDQ R8, AX")
			}
		}
	}
	kavx2Next(a, name, 1, n, iq4xsSuper, iq4xsActAVX2)
}

const q5kAVX2Doc = `// The products of the packed interleaved Q5_K layout (asm/packed_q5k.go,
// PackQ5_K), AVX2:
//
//	func q5kGemmNAVX2(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)
//
// for N = 1..3 activation rows, as q4kGemmNAVX2 (packed_q4k_avx2_amd64.s;
// act by packQ4KAct) with the 5-bit quants: each nibble (0x0F) or'ed with
// its fifth bit, bit s of the qh chunk shifted to bit 4 (word shift, 0x10;
// the bits crossing a byte land on bits 0..3, cleared; in the loop of N ≤
// 2, bits 2t and 2t+1 by a shift right by 2t, then left by 4, and right by
// 1). VPMADDUBSW pairs at
// most 2·31·128 = 7936, added as int16 over 4 chunks (at most 31744, no
// wrap), then VPMADDWD by the lane's scale in both words, added into isum
// in int32, exact; msum and the float32 steps as Q4_K's.
`

// q5kAVX2Kernels lists q5kGemm1AVX2 … q5kGemm3AVX2.
func q5kAVX2Kernels() []kernel {
	var ks []kernel
	for n := 1; n <= 3; n++ {
		ks = append(ks, kernel{func(a *asmFile, name string, _ layout) { q5kGemmAVX2(a, name, n) }, fmt.Sprintf("q5kGemm%dAVX2", n), layout{}})
	}
	return ks
}

// q5kBitAVX2 sets Y14 to the qh chunk at mem with bit b of each byte on bit
// 4 and every other bit cleared (Y9 the mask 0x10).
func q5kBitAVX2(a *asmFile, mem string, b int) {
	a.e("\tVMOVDQU %s, Y14", mem)
	switch {
	case b < 4:
		a.e("\tVPSLLW $%d, Y14, Y14", 4-b)
	case b > 4:
		a.e("\tVPSRLW $%d, Y14, Y14", b-4)
	}
	a.e("\tVPAND Y9, Y14, Y14")
}

// q5kGemmAVX2 writes the Q5_K kernel for n ≤ 3 activation rows: for n ≤ 2
// both halves superblock by superblock and a half's 4 parts t as a loop
// (q4kGemmAVX2's reasons), otherwise one half after the other over all
// superblocks, unrolled. Y15 the mask 0x0F, Y9 0x10.
func q5kGemmAVX2(a *asmFile, name string, n int) {
	kavx2Head(a, name, broadcastByte(9, 0x10))
	if n <= 2 {
		kavx2Both(a, name, n)
		prefetchLines(a, "R12", q5kAhead, 0, q5kQs)
		for h := range 2 {
			kavx2Parts(a, name, h, n, 6, q5kQs, func() {
				// X8 = 2t, the shift of the part's qh bits.
				a.e("\tMOVQ R9, AX")
				a.e("\tSHRQ $4, AX")
				a.e("\tVMOVQ AX, X8")
				q5kPartAVX2(a, q4kLoop(h), 0, h, n)
			})
			kStepAVX2(a, h, n, 6, 10, [3]int{3, 4, 5})
		}
		kavx2Next(a, name, 1, n, q5kSuper, q4kAct)
		return
	}
	for h := range 2 {
		kavx2Half(a, name, h, n)
		if h == 0 {
			prefetchLines(a, "R12", q5kAhead, 0, q5kQs)
		}
		for i := range n {
			a.e("\tVPXOR Y%d, Y%d, Y%d", 6+i, 6+i, 6+i)
		}
		for t := range 4 {
			q5kPartAVX2(a, q4kOps{chunks: "R12", chunksOff: q5kQs, pf: h == 0}, t, h, n)
		}
		kStepAVX2(a, h, n, 6, 10, [3]int{3, 4, 5})
		kavx2Next(a, name, h, n, q5kSuper, q4kAct)
	}
}

// q5kPartAVX2 adds part t (sub-blocks 2t and 2t+1) of half h of a Q5_K
// superblock for n activation rows into isum, addressed as q4kPartAVX2's
// (in the loop, X8 = 2t): Y12 a chunk (then its high 5-bit quants), Y13 its
// low 5-bit quants, Y14 a temporary (and Y5 in the loop), Y10 and Y11 the
// scales of sub-blocks 2t and 2t+1 in both words, Yi and Y3+i the int16
// sums of row i, Y6+i isum of row i.
func q5kPartAVX2(a *asmFile, o q4kOps, t, h, n int) {
	off, chunks := 64*t, o.chunksOff+512*t
	if o.sc != "" {
		off, chunks = 0, o.chunksOff
	}
	bothWords(a, fmt.Sprintf("%d(R12)%s", q4kSc+off/2+8*h, o.sc), 10, 14)
	bothWords(a, fmt.Sprintf("%d(R12)%s", q4kSc+off/2+16+8*h, o.sc), 11, 14)
	for k := range 8 {
		qh := fmt.Sprintf("%d(R12)", q5kQh+64*k+32*h)
		if o.pf {
			prefetchLines(a, o.chunks, q5kAhead, chunks+64*k, chunks+64*k+64)
		}
		a.e("\tVMOVDQU %d(%s), Y12", chunks+64*k+32*h, o.chunks)
		a.e("\tVPAND Y15, Y12, Y13")
		if o.sc == "" {
			q5kBitAVX2(a, qh, 2*t)
			a.e("\tVPOR Y14, Y13, Y13")
		} else {
			// Bits 2t and 2t+1 of each byte to bits 4 and 5 (a word shift
			// right by 2t, left by 4: a byte's bits stay in the byte),
			// then each on bit 4 by 0x10.
			a.e("\tVMOVDQU %s, Y14", qh)
			a.e("\tVPSRLW X8, Y14, Y14")
			a.e("\tVPSLLW $4, Y14, Y14")
			a.e("\tVPAND Y9, Y14, Y5")
			a.e("\tVPOR Y5, Y13, Y13")
		}
		a.e("\tVPSRLW $4, Y12, Y12")
		a.e("\tVPAND Y15, Y12, Y12")
		if o.sc == "" {
			q5kBitAVX2(a, qh, 2*t+1)
		} else {
			a.e("\tVPSRLW $1, Y14, Y14")
			a.e("\tVPAND Y9, Y14, Y14")
		}
		a.e("\tVPOR Y14, Y12, Y12")
		for i := range n {
			for hi, w := range []int{13, 12} {
				acc := i + 3*hi
				a.e("\tVPBROADCASTD %d(DI)%s, Y14", i*q4kAct+off+32*hi+4*k, o.act)
				if k%4 == 0 {
					a.e("\tVPMADDUBSW Y14, Y%d, Y%d", w, acc)
				} else {
					a.e("\tVPMADDUBSW Y14, Y%d, Y14", w)
					a.e("\tVPADDW Y14, Y%d, Y%d", acc, acc)
				}
			}
		}
		if k%4 != 3 {
			continue
		}
		for i := range n {
			a.e("\tVPMADDWD Y10, Y%d, Y%d", i, i)
			a.e("\tVPMADDWD Y11, Y%d, Y%d", 3+i, 3+i)
			a.e("\tVPADDD Y%d, Y%d, Y%d", i, 6+i, 6+i)
			a.e("\tVPADDD Y%d, Y%d, Y%d", 3+i, 6+i, 6+i)
		}
	}
}
