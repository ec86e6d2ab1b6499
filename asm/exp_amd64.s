//go:build amd64 && gc && !purego

#include "textflag.h"

// float32(math.Exp(float64(x))) four lanes at a time, bit for bit. Go's
// math.Exp on amd64 (math/exp_amd64.s, on CPUs with AVX and FMA: the avxfma
// path) is a fixed sequence of IEEE double operations; each lane below runs
// the same operations in the same order (packed instead of scalar, which
// rounds identically), so each lane has math.Exp's bits. The callers use these
// kernels only where math.Exp takes its FMA path (useFMA in exp.go).
//
// Arguments are first clamped to [-110, 100]: below -110 (and for -Inf)
// float32(math.Exp) is +0 (e^-104 is already under half the smallest float32
// subnormal) and so is float32 of e^-110; above 100 (and for +Inf) both are
// +Inf (e^88.73 exceeds the largest float32). In between, the exponent
// 2^round(x·log2 e) is a normal double, so the scalar code's denormal and
// overflow branches are never taken. NaN lanes take float32(float64(x)), as
// math.Exp returns a NaN argument unchanged.

#define CONST4(name, bits) \
	DATA name<>+0(SB)/8, bits; \
	DATA name<>+8(SB)/8, bits; \
	DATA name<>+16(SB)/8, bits; \
	DATA name<>+24(SB)/8, bits; \
	GLOBL name<>(SB), RODATA|NOPTR, $32

CONST4(explog2e, $1.4426950408889634073599246810018920)
CONST4(expln2u, $0.69314718055966295651160180568695068359375)
CONST4(expln2l, $0.28235290563031577122588448175013436025525412068e-12)
CONST4(expsixteenth, $0.0625)
CONST4(explo, $-110.0)
CONST4(exphi, $100.0)
CONST4(exptwo, $2.0)
CONST4(expone, $1.0)
CONST4(exphalf, $0.5)
CONST4(expc3, $1.6666666666666666667e-1)
CONST4(expc4, $4.1666666666666666667e-2)
CONST4(expc5, $8.3333333333333333333e-3)
CONST4(expc6, $1.3888888888888888889e-3)
CONST4(expc7, $1.9841269841269841270e-4)
CONST4(expc8, $2.4801587301587301587e-5)
CONST4(expbias, $1023)

DATA expsign<>+0(SB)/4, $0x80000000
GLOBL expsign<>(SB), RODATA|NOPTR, $4
DATA exponef<>+0(SB)/4, $1.0
GLOBL exponef<>(SB), RODATA|NOPTR, $4

// EXP4 replaces the four float32 of X0 by float32(math.Exp(float64(x))).
// Uses Y1-Y6; Y8-Y15 hold constants (EXPSETUP).
#define EXPSETUP \
	VMOVUPD explog2e<>(SB), Y8; \
	VMOVUPD expln2u<>(SB), Y9; \
	VMOVUPD expln2l<>(SB), Y10; \
	VMOVUPD expsixteenth<>(SB), Y11; \
	VMOVUPD explo<>(SB), Y12; \
	VMOVUPD exphi<>(SB), Y13; \
	VMOVUPD exptwo<>(SB), Y14; \
	VMOVUPD expone<>(SB), Y15

#define EXP4 \
	VCVTPS2PD X0, Y1; \
	VMAXPD Y12, Y1, Y2; \
	VMINPD Y13, Y2, Y2; \
	VMULPD Y8, Y2, Y3; \
	VCVTPD2DQY Y3, X4; \
	VCVTDQ2PD X4, Y3; \
	VFNMADD231PD Y9, Y3, Y2; \
	VFNMADD231PD Y10, Y3, Y2; \
	VMULPD Y11, Y2, Y2; \
	VMOVUPD expc8<>(SB), Y5; \
	VFMADD213PD expc7<>(SB), Y2, Y5; \
	VFMADD213PD expc6<>(SB), Y2, Y5; \
	VFMADD213PD expc5<>(SB), Y2, Y5; \
	VFMADD213PD expc4<>(SB), Y2, Y5; \
	VFMADD213PD expc3<>(SB), Y2, Y5; \
	VFMADD213PD exphalf<>(SB), Y2, Y5; \
	VFMADD213PD Y15, Y2, Y5; \
	VMULPD Y5, Y2, Y2; \
	VADDPD Y14, Y2, Y5; \
	VMULPD Y5, Y2, Y2; \
	VADDPD Y14, Y2, Y5; \
	VMULPD Y5, Y2, Y2; \
	VADDPD Y14, Y2, Y5; \
	VMULPD Y5, Y2, Y2; \
	VADDPD Y14, Y2, Y5; \
	VFMADD213PD Y15, Y5, Y2; \
	VPMOVSXDQ X4, Y3; \
	VPADDQ expbias<>(SB), Y3, Y3; \
	VPSLLQ $52, Y3, Y3; \
	VMULPD Y3, Y2, Y2; \
	VCVTPD2PSY Y2, X3; \
	VCVTPD2PSY Y1, X5; \
	VCMPPS $3, X0, X0, X6; \
	VBLENDVPS X6, X5, X3, X0

// func expShiftF32AVX2(x *float32, m float32, n int)
// x[i] = float32(math.Exp(float64(x[i] - m))) for i < n, n a multiple of 4.
TEXT ·expShiftF32AVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), DI
	VBROADCASTSS m+8(FP), X7
	MOVQ n+16(FP), CX
	EXPSETUP

exploop:
	VMOVUPS (DI), X0
	VSUBPS X7, X0, X0
	EXP4
	VMOVUPS X0, (DI)
	ADDQ $16, DI
	SUBQ $4, CX
	JNZ  exploop
	VZEROUPPER
	RET

// func siluMulF32AVX2(gate *float32, up *float32, n int)
// gate[i] = gate[i] / (1 + float32(math.Exp(float64(-gate[i])))) · up[i] for i < n, n a
// multiple of 4 (float32 operations in that order).
TEXT ·siluMulF32AVX2(SB), NOSPLIT, $0-24
	MOVQ gate+0(FP), DI
	MOVQ up+8(FP), SI
	MOVQ n+16(FP), CX
	EXPSETUP
	VBROADCASTSS expsign<>(SB), X7
	VBROADCASTSS exponef<>(SB), X6

siluloop:
	VMOVUPS (DI), X0
	VXORPS X7, X0, X0
	EXP4
	VBROADCASTSS exponef<>(SB), X6
	VADDPS X6, X0, X0
	VMOVUPS (DI), X1
	VDIVPS X0, X1, X1
	VMULPS (SI), X1, X1
	VMOVUPS X1, (DI)
	ADDQ $16, DI
	ADDQ $16, SI
	SUBQ $4, CX
	JNZ  siluloop
	VZEROUPPER
	RET
