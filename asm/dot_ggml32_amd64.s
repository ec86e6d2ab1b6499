//go:build amd64 && gc && !purego

#include "textflag.h"

// Block sums of the ggml types with blocks of 32 (Q5_0, IQ4_NL, Q4_1): the
// *SumsGeneric twins of dot_ggml.go, over nb ≥ 1 blocks of one row. Each
// block's sum is formed in int32 lanes, then TREE4 reduces four 8-lane
// vectors Y2…Y5 into the four dwords of X2 (VPHADDD pairs, then the two
// 128-bit halves added): one sum per vector, in order. All integer: any
// grouping gives the twin's result.
//
// A block's 16 bytes of nibbles become 32 bytes in element order: the low
// nibbles (elements 0–15) in the low 128-bit lane, the high (16–31) in the
// high lane.

#define TREE4 \
	VPHADDD Y3, Y2, Y2 \
	VPHADDD Y5, Y4, Y4 \
	VPHADDD Y4, Y2, Y2 \
	VEXTRACTI128 $1, Y2, X3 \
	VPADDD X3, X2, X2

// The IQ4 codebook as int8 (VPSHUFB) and plus 128 (unsigned, VPDPBUSD).
DATA kvIQ4s<>+0(SB)/8, $0xf6eaddcfbfad9881
DATA kvIQ4s<>+8(SB)/8, $0x7159453526190d01
GLOBL kvIQ4s<>(SB), RODATA|NOPTR, $16

DATA kvIQ4u<>+0(SB)/8, $0x766a5d4f3f2d1801
DATA kvIQ4u<>+8(SB)/8, $0xf1d9c5b5a6998d81
GLOBL kvIQ4u<>(SB), RODATA|NOPTR, $16

// Q5_0's 32 high bits as bytes (AVX2): VPSHUFB spreads byte e/8 of the
// broadcast qh to byte e (indices within each 128-bit lane: the low lane is
// elements 0–15, bytes 0 and 1 of qh; the high lane 16–31, bytes 2 and 3),
// then bit e%8 is tested.
DATA q50spread<>+0(SB)/8, $0x0000000000000000
DATA q50spread<>+8(SB)/8, $0x0101010101010101
DATA q50spread<>+16(SB)/8, $0x0202020202020202
DATA q50spread<>+24(SB)/8, $0x0303030303030303
GLOBL q50spread<>(SB), RODATA|NOPTR, $32

DATA q50bits<>+0(SB)/8, $0x8040201008040201
DATA q50bits<>+8(SB)/8, $0x8040201008040201
DATA q50bits<>+16(SB)/8, $0x8040201008040201
DATA q50bits<>+24(SB)/8, $0x8040201008040201
GLOBL q50bits<>(SB), RODATA|NOPTR, $32

// ---- AVX2 ----

// NIB_AVX2 loads the 16 nibble bytes at off(SI) into Y0 in element order.
#define NIB_AVX2(off) \
	VMOVDQU off(SI), X0 \
	VPSRLW $4, X0, X1 \
	VINSERTI128 $1, X1, Y0, Y0 \
	VPAND Y15, Y0, Y0

// IQ4NL_AVX2: K (VPSHUFB) · a as VPMADDUBSW(|K|, a·sign(K)) (a ≠ −128, pairs
// at most 2·127·127: no saturation), VPMADDWD by ones into R.
#define IQ4NL_AVX2(woff, aoff, R) \
	NIB_AVX2(woff) \
	VPSHUFB Y0, Y12, Y0 \
	VMOVDQU aoff(DI), Y1 \
	VPSIGNB Y0, Y1, Y1 \
	VPABSB Y0, Y0 \
	VPMADDUBSW Y1, Y0, Y0 \
	VPMADDWD Y14, Y0, R

// func iq4nlSumsAVX2(w *byte, a *int8, nb int, p *int32)
TEXT ·iq4nlSumsAVX2(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ p+24(FP), DX
	MOVL $0x0f0f0f0f, AX
	VMOVQ AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x00010001, AX
	VMOVQ AX, X14
	VPBROADCASTD X14, Y14
	VBROADCASTI128 kvIQ4s<>(SB), Y12

iq4nl4:
	CMPQ CX, $4
	JLT  iq4nl1
	IQ4NL_AVX2(2, 0, Y2)
	IQ4NL_AVX2(20, 32, Y3)
	IQ4NL_AVX2(38, 64, Y4)
	IQ4NL_AVX2(56, 96, Y5)
	TREE4
	VMOVDQU X2, (DX)
	ADDQ $72, SI
	ADDQ $128, DI
	ADDQ $16, DX
	SUBQ $4, CX
	JMP  iq4nl4

iq4nl1:
	TESTQ CX, CX
	JZ    iq4nldone
	IQ4NL_AVX2(2, 0, Y2)
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	TREE4
	VMOVQ X2, AX
	MOVL AX, (DX)
	ADDQ $18, SI
	ADDQ $32, DI
	ADDQ $4, DX
	DECQ CX
	JMP  iq4nl1

iq4nldone:
	VZEROUPPER
	RET

// Q50_AVX2: n = nibble + 16·bit (VPCMPEQB of the spread qh bits), then
// VPMADDUBSW n·a − 16·VPMADDUBSW(1, a) in int16 (|pair| ≤ 2·31·128 +
// 16·256: no saturation), VPMADDWD by ones into R.
#define Q50_AVX2(qoff, hoff, aoff, R) \
	NIB_AVX2(qoff) \
	VPBROADCASTD hoff(SI), Y1 \
	VPSHUFB Y13, Y1, Y1 \
	VPAND Y11, Y1, Y1 \
	VPCMPEQB Y11, Y1, Y1 \
	VPAND Y10, Y1, Y1 \
	VPOR Y1, Y0, Y0 \
	VMOVDQU aoff(DI), Y1 \
	VPMADDUBSW Y1, Y0, Y0 \
	VPMADDUBSW Y1, Y9, Y1 \
	VPSLLW $4, Y1, Y1 \
	VPSUBW Y1, Y0, Y0 \
	VPMADDWD Y14, Y0, R

// func q5_0SumsAVX2(w *byte, a *int8, nb int, p *int32)
TEXT ·q5_0SumsAVX2(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ p+24(FP), DX
	MOVL $0x0f0f0f0f, AX
	VMOVQ AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x00010001, AX
	VMOVQ AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x10101010, AX
	VMOVQ AX, X10
	VPBROADCASTD X10, Y10
	MOVL $0x01010101, AX
	VMOVQ AX, X9
	VPBROADCASTD X9, Y9
	VMOVDQU q50spread<>(SB), Y13
	VMOVDQU q50bits<>(SB), Y11

q504:
	CMPQ CX, $4
	JLT  q501
	Q50_AVX2(6, 2, 0, Y2)
	Q50_AVX2(28, 24, 32, Y3)
	Q50_AVX2(50, 46, 64, Y4)
	Q50_AVX2(72, 68, 96, Y5)
	TREE4
	VMOVDQU X2, (DX)
	ADDQ $88, SI
	ADDQ $128, DI
	ADDQ $16, DX
	SUBQ $4, CX
	JMP  q504

q501:
	TESTQ CX, CX
	JZ    q50done
	Q50_AVX2(6, 2, 0, Y2)
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	TREE4
	VMOVQ X2, AX
	MOVL AX, (DX)
	ADDQ $22, SI
	ADDQ $32, DI
	ADDQ $4, DX
	DECQ CX
	JMP  q501

q50done:
	VZEROUPPER
	RET

// Q41_AVX2: P = VPMADDUBSW(n, a), T = VPMADDUBSW(1, a), each widened by
// VPMADDWD with ones.
#define Q41_AVX2(qoff, aoff, RP, RT) \
	NIB_AVX2(qoff) \
	VMOVDQU aoff(DI), Y1 \
	VPMADDUBSW Y1, Y0, Y0 \
	VPMADDWD Y14, Y0, RP \
	VPMADDUBSW Y1, Y9, Y1 \
	VPMADDWD Y14, Y1, RT

// func q4_1SumsAVX2(w *byte, a *int8, nb int, pt *int32)
//
// Two blocks per TREE4: (p, t) of each, in order.
TEXT ·q4_1SumsAVX2(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ pt+24(FP), DX
	MOVL $0x0f0f0f0f, AX
	VMOVQ AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x00010001, AX
	VMOVQ AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x01010101, AX
	VMOVQ AX, X9
	VPBROADCASTD X9, Y9

q412:
	CMPQ CX, $2
	JLT  q411
	Q41_AVX2(4, 0, Y2, Y3)
	Q41_AVX2(24, 32, Y4, Y5)
	TREE4
	VMOVDQU X2, (DX)
	ADDQ $40, SI
	ADDQ $64, DI
	ADDQ $16, DX
	SUBQ $2, CX
	JMP  q412

q411:
	TESTQ CX, CX
	JZ    q41done
	Q41_AVX2(4, 0, Y2, Y3)
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	TREE4
	VMOVQ X2, (DX)

q41done:
	VZEROUPPER
	RET

// ---- AVX-512 (F/BW/VL + VNNI) ----
//
// Two blocks per ZMM: NIB2 puts block i's nibble bytes in lanes 0 (low
// nibbles) and 1 (high), block i+1's in lanes 2 and 3 (VSHUFI64X2 makes
// Q_i, Q_i, Q_i+1, Q_i+1; VPSRLW by 4 under K1, the words of lanes 1 and 3),
// so the vector meets the 64 activations of the two blocks in order.
// VPDPBUSD (unsigned × signed, 4 products per int32 lane, no saturation)
// then gives block i in dword lanes 0–7 and block i+1 in 8–15, which
// VEXTRACTI64X4 splits for TREE4. A lone last block uses the low halves.

#define NIB2(o1, o2) \
	VMOVDQU o1(SI), X0 \
	VINSERTI128 $1, o2(SI), Y0, Y0 \
	VSHUFI64X2 $0x50, Z0, Z0, Z0 \
	VPSRLW $4, Z0, K1, Z0 \
	VPANDD Z31, Z0, Z0

#define NIB1(off) \
	VMOVDQU off(SI), X0 \
	VPSRLW $4, X0, X1 \
	VINSERTI128 $1, X1, Y0, Y0 \
	VPANDD Y31, Y0, Y0

#define SETUP512 \
	MOVL $0x0f0f0f0f, AX \
	VPBROADCASTD AX, Z31 \
	MOVL $0xff00ff00, AX \
	KMOVD AX, K1

// IQ4NL2: Σ(K+128)·a − Σ128·a = Σ K·a for any activations (Z30 the
// codebook plus 128, Z29 bytes of 0x80).
#define IQ4NL2(o1, o2, aoff, ZA, YB) \
	NIB2(o1, o2) \
	VPSHUFB Z0, Z30, Z0 \
	VMOVDQU64 aoff(DI), Z1 \
	VPXORD ZA, ZA, ZA \
	VPXORD Z6, Z6, Z6 \
	VPDPBUSD Z1, Z0, ZA \
	VPDPBUSD Z1, Z29, Z6 \
	VPSUBD Z6, ZA, ZA \
	VEXTRACTI64X4 $1, ZA, YB

// func iq4nlSumsAVX512(w *byte, a *int8, nb int, p *int32)
TEXT ·iq4nlSumsAVX512(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ p+24(FP), DX
	SETUP512
	VBROADCASTI32X4 kvIQ4u<>(SB), Z30
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z29

iq4nlz4:
	CMPQ CX, $4
	JLT  iq4nlz1
	IQ4NL2(2, 20, 0, Z2, Y3)
	IQ4NL2(38, 56, 64, Z4, Y5)
	TREE4
	VMOVDQU X2, (DX)
	ADDQ $72, SI
	ADDQ $128, DI
	ADDQ $16, DX
	SUBQ $4, CX
	JMP  iq4nlz4

iq4nlz1:
	TESTQ CX, CX
	JZ    iq4nlzdone
	NIB1(2)
	VPSHUFB Y0, Y30, Y0
	VMOVDQU (DI), Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y6, Y6, Y6
	VPDPBUSD Y1, Y0, Y2
	VPDPBUSD Y1, Y29, Y6
	VPSUBD Y6, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	TREE4
	MOVQ X2, AX
	MOVL AX, (DX)
	ADDQ $18, SI
	ADDQ $32, DI
	ADDQ $4, DX
	DECQ CX
	JMP  iq4nlz1

iq4nlzdone:
	VZEROUPPER
	RET

// Q502: the fifth bits are a mask register (qh_i | qh_i+1 << 32: bit e of
// the 64 is byte e of the vector), VPADDB of 16 under it; Σ n·a − Σ 16·a
// (Z28 bytes of 0x10).
#define Q502(q1, q2, h1, h2, aoff, ZA, YB) \
	NIB2(q1, q2) \
	MOVL h1(SI), AX \
	MOVL h2(SI), BX \
	SHLQ $32, BX \
	ORQ  BX, AX \
	KMOVQ AX, K2 \
	VPADDB Z28, Z0, K2, Z0 \
	VMOVDQU64 aoff(DI), Z1 \
	VPXORD ZA, ZA, ZA \
	VPXORD Z6, Z6, Z6 \
	VPDPBUSD Z1, Z0, ZA \
	VPDPBUSD Z1, Z28, Z6 \
	VPSUBD Z6, ZA, ZA \
	VEXTRACTI64X4 $1, ZA, YB

// func q5_0SumsAVX512(w *byte, a *int8, nb int, p *int32)
TEXT ·q5_0SumsAVX512(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ p+24(FP), DX
	SETUP512
	MOVL $0x10101010, AX
	VPBROADCASTD AX, Z28

q50z4:
	CMPQ CX, $4
	JLT  q50z1
	Q502(6, 28, 2, 24, 0, Z2, Y3)
	Q502(50, 72, 46, 68, 64, Z4, Y5)
	TREE4
	VMOVDQU X2, (DX)
	ADDQ $88, SI
	ADDQ $128, DI
	ADDQ $16, DX
	SUBQ $4, CX
	JMP  q50z4

q50z1:
	TESTQ CX, CX
	JZ    q50zdone
	NIB1(6)
	MOVL 2(SI), AX
	KMOVD AX, K2
	VPADDB Y28, Y0, K2, Y0
	VMOVDQU (DI), Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y6, Y6, Y6
	VPDPBUSD Y1, Y0, Y2
	VPDPBUSD Y1, Y28, Y6
	VPSUBD Y6, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	TREE4
	MOVQ X2, AX
	MOVL AX, (DX)
	ADDQ $22, SI
	ADDQ $32, DI
	ADDQ $4, DX
	DECQ CX
	JMP  q50z1

q50zdone:
	VZEROUPPER
	RET

// func q4_1SumsAVX512(w *byte, a *int8, nb int, pt *int32)
//
// P = VPDPBUSD(n, a), T = VPDPBUSD(1, a) for two blocks; TREE4 of
// (P_i, T_i, P_i+1, T_i+1) is the four outputs in order.
TEXT ·q4_1SumsAVX512(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ pt+24(FP), DX
	SETUP512
	MOVL $0x01010101, AX
	VPBROADCASTD AX, Z29

q41z2:
	CMPQ CX, $2
	JLT  q41z1
	NIB2(4, 24)
	VMOVDQU64 (DI), Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPDPBUSD Z1, Z0, Z2
	VPDPBUSD Z1, Z29, Z3
	VEXTRACTI64X4 $1, Z2, Y4
	VEXTRACTI64X4 $1, Z3, Y5
	TREE4
	VMOVDQU X2, (DX)
	ADDQ $40, SI
	ADDQ $64, DI
	ADDQ $16, DX
	SUBQ $2, CX
	JMP  q41z2

q41z1:
	TESTQ CX, CX
	JZ    q41zdone
	NIB1(4)
	VMOVDQU (DI), Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPDPBUSD Y1, Y0, Y2
	VPDPBUSD Y1, Y29, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	TREE4
	MOVQ X2, (DX)

q41zdone:
	VZEROUPPER
	RET
