//go:build amd64 && gc && !purego

#include "textflag.h"

// The lane index tables and the IQ4 codebook of dot_ggml_avx512_amd64.s
// (file-local there): dword indices {0×8, 1×8} (two scales for the halves of
// 64 bytes of sub-blocks of 32) and {0×4, 1×4, 2×4, 3×4} (four sub-blocks of
// 16); kvalues_iq4nl + 128.
DATA dotsPairs<>+0(SB)/8, $0x0000000000000000
DATA dotsPairs<>+8(SB)/8, $0x0000000000000000
DATA dotsPairs<>+16(SB)/8, $0x0000000000000000
DATA dotsPairs<>+24(SB)/8, $0x0000000000000000
DATA dotsPairs<>+32(SB)/8, $0x0000000100000001
DATA dotsPairs<>+40(SB)/8, $0x0000000100000001
DATA dotsPairs<>+48(SB)/8, $0x0000000100000001
DATA dotsPairs<>+56(SB)/8, $0x0000000100000001
GLOBL dotsPairs<>(SB), RODATA|NOPTR, $64

DATA dotsQuads<>+0(SB)/8, $0x0000000000000000
DATA dotsQuads<>+8(SB)/8, $0x0000000000000000
DATA dotsQuads<>+16(SB)/8, $0x0000000100000001
DATA dotsQuads<>+24(SB)/8, $0x0000000100000001
DATA dotsQuads<>+32(SB)/8, $0x0000000200000002
DATA dotsQuads<>+40(SB)/8, $0x0000000200000002
DATA dotsQuads<>+48(SB)/8, $0x0000000300000003
DATA dotsQuads<>+56(SB)/8, $0x0000000300000003
GLOBL dotsQuads<>(SB), RODATA|NOPTR, $64

DATA dotsIQ4u<>+0(SB)/8, $0x766a5d4f3f2d1801
DATA dotsIQ4u<>+8(SB)/8, $0xf1d9c5b5a6998d81
GLOBL dotsIQ4u<>(SB), RODATA|NOPTR, $16

// The row-times-batch products (dots_ggml.go's Dots…), whole in assembly:
//
//	func dotsQ6KAVX512(out *float32, ldo int, w *byte, nb int, a *int8, da *float32, bs *int16, n int, sa, sd, sb, rows int)
//
// and dotsQ4KAVX512, dotsQ5KAVX512, dotsIQ4XSAVX512 alike: rows ≥ 1 weight
// rows of nb superblocks one after the other in w, row r's outputs at
// out + r (out[i·ldo + r] for activation row i). Superblock b of the row is
// unpacked once (quants into Z0–Z3 in element order, per-lane sub-block
// scales into Z4–Z7, the bs weights into Y8), then multiplied with
// superblock b of each activation row i < n (a at stride sa bytes, da at sd,
// bs at sb), whose running sum out[i·ldo] this adds to: +0 before the first
// superblock, so the float steps are the twin's, in the same order
// (superblocks in increasing order for every i). The integer sums are exact
// (VPDPBUSD: nibbles or 6-bit quants, unsigned, times activations; VPMULLD by
// the scales; VPMADDWD of bs by the bs weights, exact in int32), then one
// horizontal reduction. nb ≥ 1, n ≥ 1.

// DOTS4 multiplies Z0–Z3 with the 256 activations at DI, by the per-lane
// scales Z4–Z7, into Z10 (16 lanes; Z11–Z13 clobbered).
#define DOTS4 \
	VPXORD Z10, Z10, Z10 \
	VPXORD Z11, Z11, Z11 \
	VPXORD Z12, Z12, Z12 \
	VPXORD Z13, Z13, Z13 \
	VPDPBUSD (DI), Z0, Z10 \
	VPDPBUSD 64(DI), Z1, Z11 \
	VPDPBUSD 128(DI), Z2, Z12 \
	VPDPBUSD 192(DI), Z3, Z13 \
	VPMULLD Z4, Z10, Z10 \
	VPMULLD Z5, Z11, Z11 \
	VPMULLD Z6, Z12, Z12 \
	VPMULLD Z7, Z13, Z13 \
	VPADDD Z11, Z10, Z10 \
	VPADDD Z13, Z12, Z12 \
	VPADDD Z12, Z10, Z10

// SUM1 adds the 8 int32 lanes of Y14 to Z10 and sums Z10's 16 lanes into
// X10's low lane as a float32 (VCVTDQ2PS: float32(isum), rounded to nearest
// as Go's conversion).
#define SUM1 \
	VPADDD Z14, Z10, Z10 \
	VEXTRACTI64X4 $1, Z10, Y11 \
	VPADDD Y11, Y10, Y10 \
	VEXTRACTI128 $1, Y10, X11 \
	VPADDD X11, X10, X10 \
	VPSHUFD $0x4e, X10, X11 \
	VPADDD X11, X10, X10 \
	VPSHUFD $0xb1, X10, X11 \
	VPADDD X11, X10, X10 \
	VCVTDQ2PS X10, X10

// ACCLOAD sets X13 to out[i·ldo] (AX), or +0 for the first superblock (R10
// = nb).
#define ACCLOAD(first) \
	VXORPS X13, X13, X13 \
	CMPQ R10, nb+24(FP) \
	JEQ first \
	VMOVSS (AX), X13 \
first:

// STEP1 is superStep: X13 = X13 + float32(float32(d·da)·X10), d in X9, da
// at BX.
#define STEP1 \
	VMOVSS (BX), X11 \
	VMULSS X9, X11, X11 \
	VMULSS X11, X10, X10 \
	VADDSS X10, X13, X13

// DOTSPROLOG loads the arguments: R8 out (row r's), R9 ldo·4, SI w (rows
// one after the other, so SI walks them all).
#define DOTSPROLOG \
	MOVQ out+0(FP), R8 \
	MOVQ ldo+8(FP), R9 \
	SHLQ $2, R9 \
	MOVQ w+16(FP), SI

// DOTSROW starts a weight row: R10 nb (counts down), R11 a, R12 da, R13 bs
// (each at superblock b), R14 n.
#define DOTSROW \
	MOVQ nb+24(FP), R10 \
	MOVQ a+32(FP), R11 \
	MOVQ da+40(FP), R12 \
	MOVQ bs+48(FP), R13 \
	MOVQ n+56(FP), R14

// DOTSNEXTROW steps to the next weight row's outputs (out + 4), the rows
// argument counting down.
#define DOTSNEXTROW(loop) \
	ADDQ $4, R8 \
	DECQ rows+88(FP) \
	JNZ loop

// DOTSINNER starts the loop over activation rows: DI, BX, DX at superblock b
// of row 0, AX at out, CX = n.
#define DOTSINNER \
	MOVQ R11, DI \
	MOVQ R12, BX \
	MOVQ R13, DX \
	MOVQ R8, AX \
	MOVQ R14, CX

// DOTSNEXT steps to the next activation row, and DOTSNEXTB to the next
// superblock (bb bytes of w).
#define DOTSNEXT(loop) \
	ADDQ sa+64(FP), DI \
	ADDQ sd+72(FP), BX \
	ADDQ sb+80(FP), DX \
	ADDQ R9, AX \
	DECQ CX \
	JNZ loop

#define DOTSNEXTB(bb, loop) \
	ADDQ $bb, SI \
	ADDQ $256, R11 \
	ADDQ $4, R12 \
	ADDQ $32, R13 \
	DECQ R10 \
	JNZ loop

// Q6_K (210-byte blocks: ql 128, qh 64, sc 16 int8, d f16): the quants as
// q6kIsumAVX512 unpacks them; Y8 = −32·sc as int16, so VPMADDWD with bs
// subtracts 32·Σ sc_s·bs_s.
TEXT ·dotsQ6KAVX512(SB), NOSPLIT, $0-96
	DOTSPROLOG
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	MOVL $0x30303030, AX
	VPBROADCASTD AX, Z30
	MOVL $4, AX
	VPBROADCASTD AX, Z29
	VMOVDQU64 dotsQuads<>(SB), Z24
	VPADDD Z29, Z24, Z25
	VPADDD Z29, Z25, Z26
	VPADDD Z29, Z26, Z27
	VPXORD Z28, Z28, Z28

q6dotsrowstart:
	DOTSROW

q6dotsblock:
	VMOVDQU64 (SI), Z16
	VMOVDQU64 128(SI), Y17
	VPSRLW $2, Y17, Y18
	VINSERTI64X4 $1, Y18, Z17, Z17
	VPANDD Z31, Z16, Z0
	VPSLLW $4, Z17, Z18
	VPANDD Z30, Z18, Z18
	VPORD Z18, Z0, Z0
	VPSRLW $4, Z16, Z1
	VPANDD Z31, Z1, Z1
	VPANDD Z30, Z17, Z18
	VPORD Z18, Z1, Z1
	VMOVDQU64 64(SI), Z16
	VMOVDQU64 160(SI), Y17
	VPSRLW $2, Y17, Y18
	VINSERTI64X4 $1, Y18, Z17, Z17
	VPANDD Z31, Z16, Z2
	VPSLLW $4, Z17, Z18
	VPANDD Z30, Z18, Z18
	VPORD Z18, Z2, Z2
	VPSRLW $4, Z16, Z3
	VPANDD Z31, Z3, Z3
	VPANDD Z30, Z17, Z18
	VPORD Z18, Z3, Z3
	VPMOVSXBD 192(SI), Z19
	VPERMD Z19, Z24, Z4
	VPERMD Z19, Z25, Z5
	VPERMD Z19, Z26, Z6
	VPERMD Z19, Z27, Z7
	VPMOVSXBW 192(SI), Y8
	VPSLLW $5, Y8, Y8
	VPSUBW Y8, Y28, Y8
	MOVWLZX 208(SI), AX
	VMOVQ AX, X9
	VCVTPH2PS X9, X9
	DOTSINNER

q6dotsrow:
	DOTS4
	VPMADDWD (DX), Y8, Y14
	SUM1
	ACCLOAD(q6dotsfirst)
	STEP1
	VMOVSS X13, (AX)
	DOTSNEXT(q6dotsrow)
	DOTSNEXTB(210, q6dotsblock)
	DOTSNEXTROW(q6dotsrowstart)
	VZEROUPPER
	RET

// Q4_K (144-byte blocks: d, dmin f16, 12 scale bytes, qs 128): quants
// vector k holds the low (sub-block 2k) then high (2k+1) nibbles of
// qs[32k …]; the 6-bit scales and mins are unpacked with ggml's 32-bit
// masks (sc 0–3 = u0 & 0x3f…, sc 4–7 = u2 & 0x0f… | (u0>>6 & 3…)<<4, m 0–3 =
// u1 & 0x3f…, m 4–7 = u2>>4 & 0x0f… | (u1>>6 & 3…)<<4, u_j the j-th 32 bits
// of the scale bytes: get_scale_min_k4 for all eight at once). Y8 holds each
// m_s twice (words 2s, 2s+1), so VPMADDWD with bs gives msum's lanes; one
// reduction (VPHADDD) gives isum in lane 0 and msum in lane 1.
TEXT ·dotsQ4KAVX512(SB), NOSPLIT, $0-96
	DOTSPROLOG
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	MOVL $2, AX
	VPBROADCASTD AX, Z29
	VMOVDQU64 dotsPairs<>(SB), Z24
	VPADDD Z29, Z24, Z25
	VPADDD Z29, Z25, Z26
	VPADDD Z29, Z26, Z27

q4dotsrowstart:
	DOTSROW

q4dotsblock:
	VMOVDQU64 16(SI), Y16
	VPSRLW $4, Y16, Y17
	VINSERTI64X4 $1, Y17, Z16, Z0
	VPANDD Z31, Z0, Z0
	VMOVDQU64 48(SI), Y16
	VPSRLW $4, Y16, Y17
	VINSERTI64X4 $1, Y17, Z16, Z1
	VPANDD Z31, Z1, Z1
	VMOVDQU64 80(SI), Y16
	VPSRLW $4, Y16, Y17
	VINSERTI64X4 $1, Y17, Z16, Z2
	VPANDD Z31, Z2, Z2
	VMOVDQU64 112(SI), Y16
	VPSRLW $4, Y16, Y17
	VINSERTI64X4 $1, Y17, Z16, Z3
	VPANDD Z31, Z3, Z3
	MOVL 4(SI), AX // u0
	MOVL 8(SI), BX // u1
	MOVL 12(SI), CX // u2
	MOVL CX, DX
	SHRL $4, DX
	ANDL $0x0f0f0f0f, DX
	MOVL BX, DI
	SHRL $6, DI
	ANDL $0x03030303, DI
	SHLL $4, DI
	ORL DI, DX // m 4–7
	ANDL $0x3f3f3f3f, BX // m 0–3
	ANDL $0x0f0f0f0f, CX
	MOVL AX, DI
	SHRL $6, DI
	ANDL $0x03030303, DI
	SHLL $4, DI
	ORL DI, CX // sc 4–7
	ANDL $0x3f3f3f3f, AX // sc 0–3
	SHLQ $32, CX
	ORQ CX, AX
	SHLQ $32, DX
	ORQ DX, BX
	VMOVQ AX, X10
	VPMOVZXBD X10, Y10
	VPERMD Z10, Z24, Z4
	VPERMD Z10, Z25, Z5
	VPERMD Z10, Z26, Z6
	VPERMD Z10, Z27, Z7
	VMOVQ BX, X11
	VPMOVZXBW X11, X11
	VPUNPCKHWD X11, X11, X12
	VPUNPCKLWD X11, X11, X11
	VINSERTI128 $1, X12, Y11, Y8
	MOVWLZX (SI), AX
	VMOVQ AX, X9
	VCVTPH2PS X9, X9 // d
	MOVWLZX 2(SI), AX
	VMOVQ AX, X15
	VCVTPH2PS X15, X15 // dmin
	DOTSINNER

q4dotsrow:
	DOTS4
	VPMADDWD (DX), Y8, Y14
	VEXTRACTI64X4 $1, Z10, Y11
	VPADDD Y11, Y10, Y10
	VPHADDD Y14, Y10, Y10
	VPHADDD Y10, Y10, Y10
	VEXTRACTI128 $1, Y10, X11
	VPADDD X11, X10, X10 // isum, msum
	VCVTDQ2PS X10, X10
	VMOVSHDUP X10, X12
	ACCLOAD(q4dotsfirst)
	VMOVSS (BX), X11
	VMULSS X11, X15, X14 // dmin·da
	VMULSS X9, X11, X11 // d·da
	VMULSS X11, X10, X10
	VMULSS X14, X12, X12
	VADDSS X10, X13, X13
	VSUBSS X12, X13, X13
	VMOVSS X13, (AX)
	DOTSNEXT(q4dotsrow)
	DOTSNEXTB(144, q4dotsblock)
	DOTSNEXTROW(q4dotsrowstart)
	VZEROUPPER
	RET

// Q5_K (176-byte blocks: d, dmin, 12 scale bytes, qh 32, qs 128): Q4_K's
// kernel with each quant's fifth bit, bit s of qh[l] for sub-block s: vector
// k ORs in (qh >> 2k | qh >> (2k+1) in the high half) & 1, shifted to bit 4
// (word shifts by at most 7 bring a neighbour's bits only into bits the
// mask drops).
TEXT ·dotsQ5KAVX512(SB), NOSPLIT, $0-96
	DOTSPROLOG
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	MOVL $2, AX
	VPBROADCASTD AX, Z29
	VMOVDQU64 dotsPairs<>(SB), Z24
	VPADDD Z29, Z24, Z25
	VPADDD Z29, Z25, Z26
	VPADDD Z29, Z26, Z27
	MOVL $0x10101010, AX
	VPBROADCASTD AX, Z21

q5dotsrowstart:
	DOTSROW

q5dotsblock:
	VMOVDQU64 16(SI), Y22 // qh
	VMOVDQU64 48(SI), Y16
	VPSRLW $4, Y16, Y17
	VINSERTI64X4 $1, Y17, Z16, Z0
	VPANDD Z31, Z0, Z0
	VPSRLW $0, Y22, Y16
	VPSRLW $1, Y22, Y17
	VINSERTI64X4 $1, Y17, Z16, Z16
	VPSLLW $4, Z16, Z16
	VPANDD Z21, Z16, Z16
	VPORD Z16, Z0, Z0
	VMOVDQU64 80(SI), Y16
	VPSRLW $4, Y16, Y17
	VINSERTI64X4 $1, Y17, Z16, Z1
	VPANDD Z31, Z1, Z1
	VPSRLW $2, Y22, Y16
	VPSRLW $3, Y22, Y17
	VINSERTI64X4 $1, Y17, Z16, Z16
	VPSLLW $4, Z16, Z16
	VPANDD Z21, Z16, Z16
	VPORD Z16, Z1, Z1
	VMOVDQU64 112(SI), Y16
	VPSRLW $4, Y16, Y17
	VINSERTI64X4 $1, Y17, Z16, Z2
	VPANDD Z31, Z2, Z2
	VPSRLW $4, Y22, Y16
	VPSRLW $5, Y22, Y17
	VINSERTI64X4 $1, Y17, Z16, Z16
	VPSLLW $4, Z16, Z16
	VPANDD Z21, Z16, Z16
	VPORD Z16, Z2, Z2
	VMOVDQU64 144(SI), Y16
	VPSRLW $4, Y16, Y17
	VINSERTI64X4 $1, Y17, Z16, Z3
	VPANDD Z31, Z3, Z3
	VPSRLW $6, Y22, Y16
	VPSRLW $7, Y22, Y17
	VINSERTI64X4 $1, Y17, Z16, Z16
	VPSLLW $4, Z16, Z16
	VPANDD Z21, Z16, Z16
	VPORD Z16, Z3, Z3
	MOVL 4(SI), AX // u0
	MOVL 8(SI), BX // u1
	MOVL 12(SI), CX // u2
	MOVL CX, DX
	SHRL $4, DX
	ANDL $0x0f0f0f0f, DX
	MOVL BX, DI
	SHRL $6, DI
	ANDL $0x03030303, DI
	SHLL $4, DI
	ORL DI, DX // m 4–7
	ANDL $0x3f3f3f3f, BX // m 0–3
	ANDL $0x0f0f0f0f, CX
	MOVL AX, DI
	SHRL $6, DI
	ANDL $0x03030303, DI
	SHLL $4, DI
	ORL DI, CX // sc 4–7
	ANDL $0x3f3f3f3f, AX // sc 0–3
	SHLQ $32, CX
	ORQ CX, AX
	SHLQ $32, DX
	ORQ DX, BX
	VMOVQ AX, X10
	VPMOVZXBD X10, Y10
	VPERMD Z10, Z24, Z4
	VPERMD Z10, Z25, Z5
	VPERMD Z10, Z26, Z6
	VPERMD Z10, Z27, Z7
	VMOVQ BX, X11
	VPMOVZXBW X11, X11
	VPUNPCKHWD X11, X11, X12
	VPUNPCKLWD X11, X11, X11
	VINSERTI128 $1, X12, Y11, Y8
	MOVWLZX (SI), AX
	VMOVQ AX, X9
	VCVTPH2PS X9, X9 // d
	MOVWLZX 2(SI), AX
	VMOVQ AX, X15
	VCVTPH2PS X15, X15 // dmin
	DOTSINNER

q5dotsrow:
	DOTS4
	VPMADDWD (DX), Y8, Y14
	VEXTRACTI64X4 $1, Z10, Y11
	VPADDD Y11, Y10, Y10
	VPHADDD Y14, Y10, Y10
	VPHADDD Y10, Y10, Y10
	VEXTRACTI128 $1, Y10, X11
	VPADDD X11, X10, X10 // isum, msum
	VCVTDQ2PS X10, X10
	VMOVSHDUP X10, X12
	ACCLOAD(q5dotsfirst)
	VMOVSS (BX), X11
	VMULSS X11, X15, X14 // dmin·da
	VMULSS X9, X11, X11 // d·da
	VMULSS X11, X10, X10
	VMULSS X14, X12, X12
	VADDSS X10, X13, X13
	VSUBSS X12, X13, X13
	VMOVSS X13, (AX)
	DOTSNEXT(q5dotsrow)
	DOTSNEXTB(176, q5dotsblock)
	DOTSNEXTROW(q5dotsrowstart)
	VZEROUPPER
	RET


// IQ4_XS (136-byte blocks: d f16, scales_h u16, scales_l 4 bytes, qs 128):
// quants vector k is sub-blocks 2k, 2k+1 looked up in K+128 as
// iq4xsIsumAVX512 does; ls_s = nibble s of scales_l | bits 2s, 2s+1 of
// scales_h << 4 by two PDEPs (BMI2), sc = ls − 32. Y8 = −128·sc_s twice, so
// VPMADDWD with bs subtracts 128·Σ a per sub-block: Σ (K+128)·a − 128·Σ a =
// Σ K·a for any activations whose bs are their sums.
TEXT ·dotsIQ4XSAVX512(SB), NOSPLIT, $0-96
	DOTSPROLOG
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z31
	MOVL $2, AX
	VPBROADCASTD AX, Z29
	MOVL $32, AX
	VPBROADCASTD AX, Z30
	MOVL $0xff00ff00, AX
	KMOVD AX, K1
	VBROADCASTI32X4 dotsIQ4u<>(SB), Z23
	VMOVDQU64 dotsPairs<>(SB), Z24
	VPADDD Z29, Z24, Z25
	VPADDD Z29, Z25, Z26
	VPADDD Z29, Z26, Z27
	VPXORD Z28, Z28, Z28

iq4dotsrowstart:
	DOTSROW

iq4dotsblock:
	VBROADCASTI64X4 8(SI), Z16
	VSHUFI64X2 $0x50, Z16, Z16, Z16
	VPSRLW $4, Z16, K1, Z16
	VPANDD Z31, Z16, Z16
	VPSHUFB Z16, Z23, Z0
	VBROADCASTI64X4 40(SI), Z16
	VSHUFI64X2 $0x50, Z16, Z16, Z16
	VPSRLW $4, Z16, K1, Z16
	VPANDD Z31, Z16, Z16
	VPSHUFB Z16, Z23, Z1
	VBROADCASTI64X4 72(SI), Z16
	VSHUFI64X2 $0x50, Z16, Z16, Z16
	VPSRLW $4, Z16, K1, Z16
	VPANDD Z31, Z16, Z16
	VPSHUFB Z16, Z23, Z2
	VBROADCASTI64X4 104(SI), Z16
	VSHUFI64X2 $0x50, Z16, Z16, Z16
	VPSRLW $4, Z16, K1, Z16
	VPANDD Z31, Z16, Z16
	VPSHUFB Z16, Z23, Z3
	MOVL 4(SI), AX
	MOVQ $0x0f0f0f0f0f0f0f0f, CX
	PDEPQ CX, AX, AX
	MOVWLZX 2(SI), BX
	MOVQ $0x3030303030303030, CX
	PDEPQ CX, BX, BX
	ORQ BX, AX // ls bytes
	VMOVQ AX, X10
	VPMOVZXBD X10, Y10
	VPSUBD Y30, Y10, Y10 // sc = ls − 32
	VPERMD Z10, Z24, Z4
	VPERMD Z10, Z25, Z5
	VPERMD Z10, Z26, Z6
	VPERMD Z10, Z27, Z7
	VPMOVDW Y10, X11
	VPSLLW $7, X11, X11
	VPSUBW X11, X28, X11 // −128·sc
	VPUNPCKHWD X11, X11, X12
	VPUNPCKLWD X11, X11, X11
	VINSERTI128 $1, X12, Y11, Y8
	MOVWLZX (SI), AX
	VMOVQ AX, X9
	VCVTPH2PS X9, X9
	DOTSINNER

iq4dotsrow:
	DOTS4
	VPMADDWD (DX), Y8, Y14
	SUM1
	ACCLOAD(iq4dotsfirst)
	STEP1
	VMOVSS X13, (AX)
	DOTSNEXT(iq4dotsrow)
	DOTSNEXTB(136, iq4dotsblock)
	DOTSNEXTROW(iq4dotsrowstart)
	VZEROUPPER
	RET
