//go:build amd64 && gc && !purego

#include "textflag.h"

// AVX2 kernels: one block per YMM. Each reproduces the pure-Go definition bit
// for bit: the integer lane sums are exact, and the float work happens in the
// same order with the same roundings (VMULPS then VADDPS, never an FMA).
//
// Sign trick: VPMADDUBSW multiplies unsigned by signed bytes, so it gets
// |w| (VPSIGNB w, w; -128 stays 0x80, which is 128 unsigned) and a·sign(w)
// (VPSIGNB; a lies in [-127, 127], so its negation fits). Adjacent products
// are summed into int16 without saturation (at most 2·128·127 = 32512), and
// VPMADDWD by ones sums the pairs into the int32 lanes p[b][l] of bytes
// 4l..4l+3. Even blocks accumulate in Y0 (acc[0..7]), odd ones in Y1
// (acc[8..15]).

// Weights of one block as signed bytes into wy (tmp: a scratch register).
#define Q8W(off, wy, wx, tmp) \
	VMOVDQU off(SI), wy

// Q4_0: byte j holds element j low and element j+16 high; value nibble-8.
#define Q4W(off, wy, wx, tmp) \
	VMOVDQU off(SI), wx; \
	VPSRLW  $4, wx, tmp; \
	VINSERTI128 $1, tmp, wy, wy; \
	VPAND   Y13, wy, wy; \
	VPSUBB  Y12, wy, wy

// One block: acc += float32(p)·(dw·da) per lane. wy holds the weights.
#define BLOCK(wy, aoff, dwoff, daoff, acc, ty, sy, s2y) \
	VMOVDQU aoff(R11), ty; \
	VPSIGNB wy, ty, ty; \
	VPSIGNB wy, wy, wy; \
	VPMADDUBSW ty, wy, wy; \
	VPMADDWD Y14, wy, wy; \
	VCVTDQ2PS wy, wy; \
	VBROADCASTSS dwoff(DX), sy; \
	VBROADCASTSS daoff(R12), s2y; \
	VMULPS  s2y, sy, sy; \
	VMULPS  sy, wy, wy; \
	VADDPS  wy, acc, acc

#define MATVEC(W, wstep1, wstep2) \
	MOVL $0x00010001, AX; \
	MOVQ AX, X14; \
	VPBROADCASTD X14, Y14; \
	MOVL $0x0f0f0f0f, AX; \
	MOVQ AX, X13; \
	VPBROADCASTD X13, Y13; \
	MOVL $0x08080808, AX; \
	MOVQ AX, X12; \
	VPBROADCASTD X12, Y12; \
	MOVQ out+0(FP), DI; \
	MOVQ w+8(FP), SI; \
	MOVQ dw+16(FP), DX; \
	MOVQ rows+24(FP), CX; \
	MOVQ a+32(FP), R8; \
	MOVQ da+40(FP), R9; \
	MOVQ nb+48(FP), R10; \
row: \
	TESTQ CX, CX; \
	JZ    done; \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	MOVQ  R8, R11; \
	MOVQ  R9, R12; \
	MOVQ  R10, BX; \
pair: \
	CMPQ BX, $2; \
	JLT  tail; \
	W(0, Y2, X2, X3); \
	W(wstep1, Y6, X6, X7); \
	BLOCK(Y2, 0, 0, 0, Y0, Y3, Y4, Y5); \
	BLOCK(Y6, 32, 4, 4, Y1, Y7, Y8, Y9); \
	ADDQ $wstep2, SI; \
	ADDQ $64, R11; \
	ADDQ $8, DX; \
	ADDQ $8, R12; \
	SUBQ $2, BX; \
	JMP  pair; \
tail: \
	TESTQ BX, BX; \
	JZ    reduce; \
	W(0, Y2, X2, X3); \
	BLOCK(Y2, 0, 0, 0, Y0, Y3, Y4, Y5); \
	ADDQ $wstep1, SI; \
	ADDQ $4, DX; \
reduce: \
	VADDPS   Y1, Y0, Y6; \
	VEXTRACTF128 $1, Y6, X7; \
	VADDPS   X7, X6, X6; \
	VMOVHLPS X6, X6, X7; \
	VADDPS   X7, X6, X6; \
	VMOVSHDUP X6, X7; \
	VADDSS   X7, X6, X6; \
	VMOVSS   X6, (DI); \
	ADDQ $4, DI; \
	DECQ CX; \
	JMP  row; \
done: \
	VZEROUPPER; \
	RET

// func matVecQ8_0AVX2(out *float32, w *int8, dw *float32, rows int, a *int8, da *float32, nb int)
TEXT ·matVecQ8_0AVX2(SB), NOSPLIT, $0-56
	MATVEC(Q8W, 32, 64)

// func matVecQ4_0AVX2(out *float32, w *byte, dw *float32, rows int, a *int8, da *float32, nb int)
TEXT ·matVecQ4_0AVX2(SB), NOSPLIT, $0-56
	MATVEC(Q4W, 16, 32)
