//go:build amd64 && gc && !purego

#include "textflag.h"

// ExpF32 (float.go) sixteen lanes at a time, bit for bit: exp_amd64.s's EXP8
// in ZMM registers, the same float32 operations in the same order (never an
// FMA), VRNDSCALEPS $0 (round to nearest even, as VROUNDPS $0) for
// roundToEven, and NaN lanes (a K mask) taking x + x.

#define CONST16(name, bits) \
	DATA name<>+0(SB)/4, bits; \
	GLOBL name<>(SB), RODATA|NOPTR, $4

CONST16(explog2e, $1.44269504088896341)
CONST16(expc1, $0.693359375)
CONST16(expc2, $-2.12194440e-4)
CONST16(expp0, $1.9875691500e-4)
CONST16(expp1, $1.3981999507e-3)
CONST16(expp2, $8.3334519073e-3)
CONST16(expp3, $4.1665795894e-2)
CONST16(expp4, $1.6666665459e-1)
CONST16(expp5, $5.0000001201e-1)
CONST16(explo, $-104.0)
CONST16(exphi, $89.0)
CONST16(expone, $1.0)
DATA expbias<>+0(SB)/4, $127
GLOBL expbias<>(SB), RODATA|NOPTR, $4

// Z8-Z20: log2e, c1, c2, lo, hi, one, bias (int32), p0, p1, ..., p5.
#define EXPSETUP16 \
	VBROADCASTSS explog2e<>(SB), Z8; \
	VBROADCASTSS expc1<>(SB), Z9; \
	VBROADCASTSS expc2<>(SB), Z10; \
	VBROADCASTSS explo<>(SB), Z11; \
	VBROADCASTSS exphi<>(SB), Z12; \
	VBROADCASTSS expone<>(SB), Z13; \
	VPBROADCASTD expbias<>(SB), Z14; \
	VBROADCASTSS expp0<>(SB), Z15; \
	VBROADCASTSS expp1<>(SB), Z16; \
	VBROADCASTSS expp2<>(SB), Z17; \
	VBROADCASTSS expp3<>(SB), Z18; \
	VBROADCASTSS expp4<>(SB), Z19; \
	VBROADCASTSS expp5<>(SB), Z20

// EXP16 replaces the sixteen float32 of Z0 by ExpF32. Uses Z1-Z6, K1.
#define EXP16 \
	VCMPPS $3, Z0, Z0, K1; \
	VMAXPS Z11, Z0, Z1; \
	VMINPS Z12, Z1, Z1; \
	VMULPS Z8, Z1, Z2; \
	VRNDSCALEPS $0, Z2, Z2; \
	VMULPS Z9, Z2, Z3; \
	VSUBPS Z3, Z1, Z1; \
	VMULPS Z10, Z2, Z3; \
	VSUBPS Z3, Z1, Z1; \
	VMULPS Z15, Z1, Z5; \
	VADDPS Z16, Z5, Z5; \
	VMULPS Z1, Z5, Z5; \
	VADDPS Z17, Z5, Z5; \
	VMULPS Z1, Z5, Z5; \
	VADDPS Z18, Z5, Z5; \
	VMULPS Z1, Z5, Z5; \
	VADDPS Z19, Z5, Z5; \
	VMULPS Z1, Z5, Z5; \
	VADDPS Z20, Z5, Z5; \
	VMULPS Z1, Z1, Z4; \
	VMULPS Z4, Z5, Z5; \
	VADDPS Z1, Z5, Z5; \
	VADDPS Z13, Z5, Z5; \
	VCVTPS2DQ Z2, Z3; \
	VPSRAD $1, Z3, Z6; \
	VPSUBD Z6, Z3, Z3; \
	VPADDD Z14, Z6, Z6; \
	VPSLLD $23, Z6, Z6; \
	VPADDD Z14, Z3, Z3; \
	VPSLLD $23, Z3, Z3; \
	VMULPS Z6, Z5, Z5; \
	VMULPS Z3, Z5, Z5; \
	VADDPS Z0, Z0, Z6; \
	VBLENDMPS Z6, Z5, K1, Z0

// func expShiftF32AVX512(x *float32, m float32, n int)
// x[i] = ExpF32(x[i] - m) for i < n, n a multiple of 16.
TEXT ·expShiftF32AVX512(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), DI
	MOVQ n+16(FP), CX
	EXPSETUP16
	VBROADCASTSS m+8(FP), Z7

exp16loop:
	VMOVUPS (DI), Z0
	VSUBPS Z7, Z0, Z0
	EXP16
	VMOVUPS Z0, (DI)
	ADDQ $64, DI
	SUBQ $16, CX
	JNZ  exp16loop
	VZEROUPPER
	RET
