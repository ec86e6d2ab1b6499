//go:build amd64 && gc && !purego

#include "textflag.h"

// AVX-512 channel-major scores: up to three queries against one block of 16
// keys at a time. Z0-Z7, Z8-Z15 and Z16-Z23 hold the 8 lane sums of queries
// 0, 1 and 2 for the block's 16 keys (lane j of register l: acc[l] of key j),
// so that every key's dot product runs in DotF32's order: for d = 0, 1, …,
// acc[d mod 8] = acc[d mod 8] + float32(q[d]·k[d]), no FMA; then the same
// reduction tree, register by register. Channel d of the block (16 keys) is
// one load shared by the three queries, each q[d] an embedded broadcast.
// The caller passes fewer than three queries by repeating the last one and
// its output row (same bits, written twice).
//
// Registers: DI, R8, CX out rows; SI, R13, AX query rows; DX offset into the
// queries (bytes); R9 m·4; R10 the block; R11 blocks left; R12 bstride (bytes);
// BX the block's channel d.

// Z24 = channel at koff(BX); acc += q_r[qoff] · Z24 for the three queries.
#define MAC3(a0, a1, a2, qoff) \
	VMULPS.BCST qoff(SI)(DX*1), Z24, Z25; \
	VADDPS      Z25, a0, a0; \
	VMULPS.BCST qoff(R13)(DX*1), Z24, Z26; \
	VADDPS      Z26, a1, a1; \
	VMULPS.BCST qoff(AX)(DX*1), Z24, Z27; \
	VADDPS      Z27, a2, a2

// STEP8X3 does channels d … d+7 (DX = 4·d) of the block at BX for the three
// queries, each channel loaded by load (VMOVUPS for f32, VCVTPH2PS for f16)
// from a row of rb bytes.
#define STEP8X3(load, rb) \
	load (0*rb)(BX), Z24; MAC3(Z0, Z8, Z16, 0); \
	load (1*rb)(BX), Z24; MAC3(Z1, Z9, Z17, 4); \
	load (2*rb)(BX), Z24; MAC3(Z2, Z10, Z18, 8); \
	load (3*rb)(BX), Z24; MAC3(Z3, Z11, Z19, 12); \
	load (4*rb)(BX), Z24; MAC3(Z4, Z12, Z20, 16); \
	load (5*rb)(BX), Z24; MAC3(Z5, Z13, Z21, 20); \
	load (6*rb)(BX), Z24; MAC3(Z6, Z14, Z22, 24); \
	load (7*rb)(BX), Z24; MAC3(Z7, Z15, Z23, 28)

// RED stores DotF32's reduction of a0-a7 (clobbered) to dst.
#define RED(a0, a1, a2, a3, a4, a5, a6, a7, dst) \
	VADDPS  a4, a0, a0; \
	VADDPS  a5, a1, a1; \
	VADDPS  a6, a2, a2; \
	VADDPS  a7, a3, a3; \
	VADDPS  a2, a0, a0; \
	VADDPS  a3, a1, a1; \
	VADDPS  a1, a0, a0; \
	VMOVUPS a0, dst

#define PROLOGUE \
	MOVQ o0+0(FP), DI; \
	MOVQ o1+8(FP), R8; \
	MOVQ o2+16(FP), CX; \
	MOVQ q0+24(FP), SI; \
	MOVQ q1+32(FP), R13; \
	MOVQ q2+40(FP), AX; \
	MOVQ m+48(FP), R9; \
	SHLQ $2, R9; \
	MOVQ kt+56(FP), R10; \
	MOVQ nb+64(FP), R11; \
	MOVQ bstride+72(FP), R12

#define ZERO \
	VPXORD Z0, Z0, Z0; VPXORD Z1, Z1, Z1; VPXORD Z2, Z2, Z2; VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; VPXORD Z5, Z5, Z5; VPXORD Z6, Z6, Z6; VPXORD Z7, Z7, Z7; \
	VPXORD Z8, Z8, Z8; VPXORD Z9, Z9, Z9; VPXORD Z10, Z10, Z10; VPXORD Z11, Z11, Z11; \
	VPXORD Z12, Z12, Z12; VPXORD Z13, Z13, Z13; VPXORD Z14, Z14, Z14; VPXORD Z15, Z15, Z15; \
	VPXORD Z16, Z16, Z16; VPXORD Z17, Z17, Z17; VPXORD Z18, Z18, Z18; VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; VPXORD Z21, Z21, Z21; VPXORD Z22, Z22, Z22; VPXORD Z23, Z23, Z23

#define STORE3 \
	RED(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, (DI)); \
	RED(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15, (R8)); \
	RED(Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, (CX)); \
	ADDQ $64, DI; \
	ADDQ $64, R8; \
	ADDQ $64, CX; \
	ADDQ R12, R10

// func dotF32TAVX512(o0, o1, o2 *float32, q0, q1, q2 *float32, m int, kt *float32, nb int, bstride int)
TEXT ·dotF32TAVX512(SB), NOSPLIT, $0-80
	PROLOGUE
	SHLQ $2, R12

f32blk:
	ZERO
	MOVQ R10, BX
	XORQ DX, DX

f32d:
	STEP8X3(VMOVUPS, 64)
	ADDQ $512, BX
	ADDQ $32, DX
	CMPQ DX, R9
	JLT  f32d
	STORE3
	DECQ R11
	JNZ  f32blk
	VZEROUPPER
	RET

// func dotF16TAVX512(o0, o1, o2 *float32, q0, q1, q2 *float32, m int, kt *uint16, nb int, bstride int)
TEXT ·dotF16TAVX512(SB), NOSPLIT, $0-80
	PROLOGUE
	SHLQ $1, R12

f16blk:
	ZERO
	MOVQ R10, BX
	XORQ DX, DX

f16d:
	STEP8X3(VCVTPH2PS, 32)
	ADDQ $256, BX
	ADDQ $32, DX
	CMPQ DX, R9
	JLT  f16d
	STORE3
	DECQ R11
	JNZ  f16blk
	VZEROUPPER
	RET
