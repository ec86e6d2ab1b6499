//go:build amd64 && gc && !purego

#include "textflag.h"

// AVX2 channel-major scores: one query against half a block (8 keys) at a
// time. Y0-Y7 hold the 8 lane sums of the 8 keys (lane j of register l: acc[l]
// of key j), so that every key's dot product runs in DotF32's order: for
// d = 0, 1, …, acc[d mod 8] = acc[d mod 8] + float32(q[d]·k[d]), no FMA; then
// the same reduction tree, register by register.
//
// Registers: DI the query's output row, SI the query, CX queries left, R8 ldo
// (bytes), R9 m·4, R10 kt, R11 blocks left, R12 bstride (bytes), R13 the
// block, AX the output, BX the half block's channel d, DX offset into the
// query (bytes).

// acc += q[qoff] · Y8 (the channel just loaded).
#define MAC(acc, qoff) \
	VBROADCASTSS qoff(SI)(DX*1), Y9; \
	VMULPS       Y8, Y9, Y9; \
	VADDPS       Y9, acc, acc

// STEP8 does channels d … d+7 (DX = 4·d) of the half block at BX, each loaded
// by load (VMOVUPS for f32, VCVTPH2PS for f16) from a row of rb bytes.
#define STEP8(load, rb) \
	load (0*rb)(BX), Y8; MAC(Y0, 0); \
	load (1*rb)(BX), Y8; MAC(Y1, 4); \
	load (2*rb)(BX), Y8; MAC(Y2, 8); \
	load (3*rb)(BX), Y8; MAC(Y3, 12); \
	load (4*rb)(BX), Y8; MAC(Y4, 16); \
	load (5*rb)(BX), Y8; MAC(Y5, 20); \
	load (6*rb)(BX), Y8; MAC(Y6, 24); \
	load (7*rb)(BX), Y8; MAC(Y7, 28)

// RED2 stores DotF32's reduction of Y0-Y7 (clobbered) to dst.
#define RED2(dst) \
	VADDPS  Y4, Y0, Y0; \
	VADDPS  Y5, Y1, Y1; \
	VADDPS  Y6, Y2, Y2; \
	VADDPS  Y7, Y3, Y3; \
	VADDPS  Y2, Y0, Y0; \
	VADDPS  Y3, Y1, Y1; \
	VADDPS  Y1, Y0, Y0; \
	VMOVUPS Y0, dst

#define ZERO2 \
	VXORPS Y0, Y0, Y0; VXORPS Y1, Y1, Y1; VXORPS Y2, Y2, Y2; VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; VXORPS Y5, Y5, Y5; VXORPS Y6, Y6, Y6; VXORPS Y7, Y7, Y7

#define PROLOGUE2 \
	MOVQ out+0(FP), DI; \
	MOVQ ldo+8(FP), R8; \
	SHLQ $2, R8; \
	MOVQ q+16(FP), SI; \
	MOVQ nq+24(FP), CX; \
	MOVQ m+32(FP), R9; \
	SHLQ $2, R9; \
	MOVQ kt+40(FP), R10; \
	MOVQ bstride+56(FP), R12

// func dotF32TAVX2(out *float32, ldo int, q *float32, nq int, m int, kt *float32, nb int, bstride int)
TEXT ·dotF32TAVX2(SB), NOSPLIT, $0-64
	PROLOGUE2
	SHLQ $2, R12

f32row:
	MOVQ nb+48(FP), R11
	MOVQ R10, R13
	MOVQ DI, AX

f32blk:
	MOVQ R13, BX
	XORQ DX, DX
	ZERO2

f32lo:
	STEP8(VMOVUPS, 64)
	ADDQ $512, BX
	ADDQ $32, DX
	CMPQ DX, R9
	JLT  f32lo
	RED2((AX))
	LEAQ 32(R13), BX
	XORQ DX, DX
	ZERO2

f32hi:
	STEP8(VMOVUPS, 64)
	ADDQ $512, BX
	ADDQ $32, DX
	CMPQ DX, R9
	JLT  f32hi
	RED2(32(AX))
	ADDQ $64, AX
	ADDQ R12, R13
	DECQ R11
	JNZ  f32blk
	ADDQ R8, DI
	ADDQ R9, SI
	DECQ CX
	JNZ  f32row
	VZEROUPPER
	RET

// func dotF16TAVX2(out *float32, ldo int, q *float32, nq int, m int, kt *uint16, nb int, bstride int)
TEXT ·dotF16TAVX2(SB), NOSPLIT, $0-64
	PROLOGUE2
	SHLQ $1, R12

f16row:
	MOVQ nb+48(FP), R11
	MOVQ R10, R13
	MOVQ DI, AX

f16blk:
	MOVQ R13, BX
	XORQ DX, DX
	ZERO2

f16lo:
	STEP8(VCVTPH2PS, 32)
	ADDQ $256, BX
	ADDQ $32, DX
	CMPQ DX, R9
	JLT  f16lo
	RED2((AX))
	LEAQ 16(R13), BX
	XORQ DX, DX
	ZERO2

f16hi:
	STEP8(VCVTPH2PS, 32)
	ADDQ $256, BX
	ADDQ $32, DX
	CMPQ DX, R9
	JLT  f16hi
	RED2(32(AX))
	ADDQ $64, AX
	ADDQ R12, R13
	DECQ R11
	JNZ  f16blk
	ADDQ R8, DI
	ADDQ R9, SI
	DECQ CX
	JNZ  f16row
	VZEROUPPER
	RET
