//go:build amd64 && gc && !purego

#include "textflag.h"

// ExpF32 (float.go) eight lanes at a time, bit for bit: the same float32
// operations in the same order (VMULPS, VADDPS, VSUBPS: never an FMA),
// VROUNDPS $0 for roundToEven, and the two scalings by 2^⌊n/2⌋ and
// 2^(n−⌊n/2⌋) built from integer exponents (VPSRAD, VPSUBD, VPSLLD). NaN
// lanes take x + x, as the Go code returns.

#define CONST8(name, bits) \
	DATA name<>+0(SB)/4, bits; \
	GLOBL name<>(SB), RODATA|NOPTR, $4

CONST8(explog2e, $1.44269504088896341)
CONST8(expc1, $0.693359375)
CONST8(expc2, $-2.12194440e-4)
CONST8(expp0, $1.9875691500e-4)
CONST8(expp1, $1.3981999507e-3)
CONST8(expp2, $8.3334519073e-3)
CONST8(expp3, $4.1665795894e-2)
CONST8(expp4, $1.6666665459e-1)
CONST8(expp5, $5.0000001201e-1)
CONST8(explo, $-104.0)
CONST8(exphi, $89.0)
CONST8(expone, $1.0)
DATA expbias<>+0(SB)/4, $127
GLOBL expbias<>(SB), RODATA|NOPTR, $4
DATA expsign<>+0(SB)/4, $0x80000000
GLOBL expsign<>(SB), RODATA|NOPTR, $4

// Y8-Y15: log2e, c1, c2, lo, hi, one, bias (int32), p0.
#define EXPSETUP \
	VBROADCASTSS explog2e<>(SB), Y8; \
	VBROADCASTSS expc1<>(SB), Y9; \
	VBROADCASTSS expc2<>(SB), Y10; \
	VBROADCASTSS explo<>(SB), Y11; \
	VBROADCASTSS exphi<>(SB), Y12; \
	VBROADCASTSS expone<>(SB), Y13; \
	VPBROADCASTD expbias<>(SB), Y14; \
	VBROADCASTSS expp0<>(SB), Y15

// EXP8 replaces the eight float32 of Y0 by ExpF32. Uses Y1-Y7.
#define EXP8 \
	VCMPPS $3, Y0, Y0, Y7; \
	VMAXPS Y11, Y0, Y1; \
	VMINPS Y12, Y1, Y1; \
	VMULPS Y8, Y1, Y2; \
	VROUNDPS $0, Y2, Y2; \
	VMULPS Y9, Y2, Y3; \
	VSUBPS Y3, Y1, Y1; \
	VMULPS Y10, Y2, Y3; \
	VSUBPS Y3, Y1, Y1; \
	VMULPS Y15, Y1, Y5; \
	VBROADCASTSS expp1<>(SB), Y4; \
	VADDPS Y4, Y5, Y5; \
	VMULPS Y1, Y5, Y5; \
	VBROADCASTSS expp2<>(SB), Y4; \
	VADDPS Y4, Y5, Y5; \
	VMULPS Y1, Y5, Y5; \
	VBROADCASTSS expp3<>(SB), Y4; \
	VADDPS Y4, Y5, Y5; \
	VMULPS Y1, Y5, Y5; \
	VBROADCASTSS expp4<>(SB), Y4; \
	VADDPS Y4, Y5, Y5; \
	VMULPS Y1, Y5, Y5; \
	VBROADCASTSS expp5<>(SB), Y4; \
	VADDPS Y4, Y5, Y5; \
	VMULPS Y1, Y1, Y4; \
	VMULPS Y4, Y5, Y5; \
	VADDPS Y1, Y5, Y5; \
	VADDPS Y13, Y5, Y5; \
	VCVTPS2DQ Y2, Y3; \
	VPSRAD $1, Y3, Y6; \
	VPSUBD Y6, Y3, Y3; \
	VPADDD Y14, Y6, Y6; \
	VPSLLD $23, Y6, Y6; \
	VPADDD Y14, Y3, Y3; \
	VPSLLD $23, Y3, Y3; \
	VMULPS Y6, Y5, Y5; \
	VMULPS Y3, Y5, Y5; \
	VADDPS Y0, Y0, Y6; \
	VBLENDVPS Y7, Y6, Y5, Y0

// func expShiftF32AVX2(x *float32, m float32, n int)
// x[i] = ExpF32(x[i] - m) for i < n, n a multiple of 8.
TEXT ·expShiftF32AVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), DI
	MOVQ n+16(FP), CX
	EXPSETUP

exploop:
	VMOVUPS (DI), Y0
	VBROADCASTSS m+8(FP), Y1
	VSUBPS Y1, Y0, Y0
	EXP8
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  exploop
	VZEROUPPER
	RET

// func siluMulF32AVX2(gate *float32, up *float32, n int)
// gate[i] = gate[i] / (1 + ExpF32(-gate[i])) · up[i] for i < n, n a multiple
// of 8 (float32 operations in that order).
TEXT ·siluMulF32AVX2(SB), NOSPLIT, $0-24
	MOVQ gate+0(FP), DI
	MOVQ up+8(FP), SI
	MOVQ n+16(FP), CX
	EXPSETUP

siluloop:
	VMOVUPS (DI), Y0
	VBROADCASTSS expsign<>(SB), Y1
	VXORPS Y1, Y0, Y0
	EXP8
	VADDPS Y13, Y0, Y0
	VMOVUPS (DI), Y1
	VDIVPS Y0, Y1, Y1
	VMULPS (SI), Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	SUBQ $8, CX
	JNZ  siluloop
	VZEROUPPER
	RET
