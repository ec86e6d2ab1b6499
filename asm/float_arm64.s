//go:build arm64 && gc && !purego

#include "textflag.h"

// The f32 kernels of float.go for arm64, each a separate rounded FMUL and
// FADD (no FMLA where the twin has a product and a sum). The 8-lane sums
// keep lanes 0-3 in one register and 4-7 in another.

#define FMUL4(d, n, m) WORD $(0x6E20DC00 | ((m)<<16) | ((n)<<5) | (d))
#define FADD4(d, n, m) WORD $(0x4E20D400 | ((m)<<16) | ((n)<<5) | (d))
#define FDIV4(d, n, m) WORD $(0x6E20FC00 | ((m)<<16) | ((n)<<5) | (d))

// func dotF32NEON(acc *[8]float32, a *float32, b *float32, n int)
// acc[l] = acc[l] + float32(a[i]·b[i]) for i ≡ l mod 8, n a multiple of 8, ≥ 8.
TEXT ·dotF32NEON(SB), NOSPLIT, $0-32
	MOVD acc+0(FP), R0
	MOVD a+8(FP), R1
	MOVD b+16(FP), R2
	MOVD n+24(FP), R3
	VLD1 (R0), [V0.S4, V1.S4]
dotloop:
	VLD1.P 32(R1), [V2.S4, V3.S4]
	VLD1.P 32(R2), [V4.S4, V5.S4]
	FMUL4(2, 2, 4)
	FMUL4(3, 3, 5)
	FADD4(0, 0, 2)
	FADD4(1, 1, 3)
	SUBS $8, R3, R3
	BNE dotloop
	VST1 [V0.S4, V1.S4], (R0)
	RET

// func sumF32NEON(acc *[8]float32, x *float32, n int)
// acc[l] = acc[l] + x[i] for i ≡ l mod 8, n a multiple of 8, ≥ 8.
TEXT ·sumF32NEON(SB), NOSPLIT, $0-24
	MOVD acc+0(FP), R0
	MOVD x+8(FP), R1
	MOVD n+16(FP), R3
	VLD1 (R0), [V0.S4, V1.S4]
sumloop:
	VLD1.P 32(R1), [V2.S4, V3.S4]
	FADD4(0, 0, 2)
	FADD4(1, 1, 3)
	SUBS $8, R3, R3
	BNE sumloop
	VST1 [V0.S4, V1.S4], (R0)
	RET

// func axpyF32NEON(y *float32, a float32, x *float32, n int)
// y[i] = y[i] + float32(a·x[i]), n a multiple of 4, ≥ 4.
TEXT ·axpyF32NEON(SB), NOSPLIT, $0-32
	MOVD y+0(FP), R0
	FMOVS a+8(FP), F6
	MOVD x+16(FP), R2
	MOVD n+24(FP), R3
	VDUP V6.S[0], V6.S4
axpyloop:
	VLD1 (R0), [V0.S4]
	VLD1.P 16(R2), [V2.S4]
	FMUL4(2, 2, 6)
	FADD4(0, 0, 2)
	VST1.P [V0.S4], 16(R0)
	SUBS $4, R3, R3
	BNE axpyloop
	RET

// func scaleF32NEON(x *float32, s float32, n int, div bool)
// x[i] = x[i]·s, or x[i]/s with div, n a multiple of 4, ≥ 4.
TEXT ·scaleF32NEON(SB), NOSPLIT, $0-25
	MOVD x+0(FP), R0
	FMOVS s+8(FP), F6
	MOVD n+16(FP), R3
	MOVBU div+24(FP), R4
	VDUP V6.S[0], V6.S4
	CBNZ R4, divloop
mulloop:
	VLD1 (R0), [V0.S4]
	FMUL4(0, 0, 6)
	VST1.P [V0.S4], 16(R0)
	SUBS $4, R3, R3
	BNE mulloop
	RET
divloop:
	VLD1 (R0), [V0.S4]
	FDIV4(0, 0, 6)
	VST1.P [V0.S4], 16(R0)
	SUBS $4, R3, R3
	BNE divloop
	RET

#define FCVTN(d, n) WORD $(0x0E216800 | ((n)<<5) | (d))
#define FCVTN2(d, n) WORD $(0x4E216800 | ((n)<<5) | (d))
#define FCVTL(d, n) WORD $(0x0E217800 | ((n)<<5) | (d))
#define FCVTL2(d, n) WORD $(0x4E217800 | ((n)<<5) | (d))

// func putF16NEON(dst *uint16, x *float32, n int)
// dst[i] = F32ToF16(x[i]) by FCVTN (round to nearest even, FPCR's default;
// NaNs quieted keeping the payload's top bits), n a multiple of 8, ≥ 8.
TEXT ·putF16NEON(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R0
	MOVD x+8(FP), R1
	MOVD n+16(FP), R3
putloop:
	VLD1.P 32(R1), [V0.S4, V1.S4]
	FCVTN(2, 0)
	FCVTN2(2, 1)
	VST1.P [V2.H8], 16(R0)
	SUBS $8, R3, R3
	BNE putloop
	RET

// func roundF16NEON(x *float32, n int)
// x[i] = F16ToF32(F32ToF16(x[i])), n a multiple of 8, ≥ 8.
TEXT ·roundF16NEON(SB), NOSPLIT, $0-16
	MOVD x+0(FP), R0
	MOVD n+8(FP), R3
roundloop:
	VLD1 (R0), [V0.S4, V1.S4]
	FCVTN(2, 0)
	FCVTN2(2, 1)
	FCVTL(0, 2)
	FCVTL2(1, 2)
	VST1.P [V0.S4, V1.S4], 32(R0)
	SUBS $8, R3, R3
	BNE roundloop
	RET

#define FCMGT4(d, n, m) WORD $(0x6EA0E400 | ((m)<<16) | ((n)<<5) | (d))
#define BIT16(d, n, m) WORD $(0x6EA01C00 | ((m)<<16) | ((n)<<5) | (d))

// func maxF32NEON(lanes *[4]float32, x *float32, n int)
// Four running maxima of MaxF32's loop (lane l over x[i], i ≡ l mod 4,
// every lane starting at x[0]; v replaces the lane where v > it, so NaNs
// are skipped unless x[0] is one), n a multiple of 4, ≥ 4.
TEXT ·maxF32NEON(SB), NOSPLIT, $0-24
	MOVD lanes+0(FP), R0
	MOVD x+8(FP), R1
	MOVD n+16(FP), R3
	VLD1R (R1), [V0.S4]
maxloop:
	VLD1.P 16(R1), [V1.S4]
	FCMGT4(2, 1, 0)
	BIT16(0, 1, 2)
	SUBS $4, R3, R3
	BNE maxloop
	VST1 [V0.S4], (R0)
	RET
