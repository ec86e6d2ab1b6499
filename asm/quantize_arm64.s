//go:build arm64 && gc && !purego

#include "textflag.h"

// quantizeQ8_0NEON is quantizeQ8_0Generic over nb ≥ 1 blocks, per block:
// amax by an unsigned maximum of |x| bits with the NaNs (bits above
// 0x7f800000) cleared, the scalar divisions of the twin, then per element
// FMUL, FADD of copysign(0.5, x), FCVTZS (truncates; NaN gives 0, ±Inf
// saturates) and a clamp to [-127, 127]: the twin's result.

#define FMUL4(d, n, m) WORD $(0x6E20DC00 | ((m)<<16) | ((n)<<5) | (d))
#define FADD4(d, n, m) WORD $(0x4E20D400 | ((m)<<16) | ((n)<<5) | (d))
#define CMHI4(d, n, m) WORD $(0x6EA03400 | ((m)<<16) | ((n)<<5) | (d))
#define BIC16(d, n, m) WORD $(0x4E601C00 | ((m)<<16) | ((n)<<5) | (d))
#define UMAXV4(d, n) WORD $(0x6EB0A800 | ((n)<<5) | (d))
#define FCVTZS4(d, n) WORD $(0x4EA1B800 | ((n)<<5) | (d))
#define SMIN4(d, n, m) WORD $(0x4EA06C00 | ((m)<<16) | ((n)<<5) | (d))
#define SMAX4(d, n, m) WORD $(0x4EA06400 | ((m)<<16) | ((n)<<5) | (d))
#define XTN4H(d, n) WORD $(0x0E612800 | ((n)<<5) | (d))
#define XTN8H(d, n) WORD $(0x4E612800 | ((n)<<5) | (d))
#define XTN8B(d, n) WORD $(0x0E212800 | ((n)<<5) | (d))
#define XTN16B(d, n) WORD $(0x4E212800 | ((n)<<5) | (d))

// func quantizeQ8_0NEON(x *float32, q *int8, d *float32, nb int)
TEXT ·quantizeQ8_0NEON(SB), NOSPLIT, $0-32
	MOVD x+0(FP), R0
	MOVD q+8(FP), R1
	MOVD d+16(FP), R2
	MOVD nb+24(FP), R3
	MOVW $0x7fffffff, R5
	VDUP R5, V28.S4
	MOVW $0x7f800000, R5
	VDUP R5, V29.S4
	MOVW $0x80000000, R5
	VDUP R5, V30.S4
	MOVW $0x3f000000, R5
	VDUP R5, V31.S4
	MOVW $127, R5
	VDUP R5, V27.S4
	MOVW $-127, R5
	VDUP R5, V26.S4
	MOVW $0x0da24260, R5 // 1e-30
	FMOVS R5, F25
	MOVW $0x42fe0000, R5 // 127
	FMOVS R5, F24

loop:
	VLD1.P 64(R0), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P 64(R0), [V4.S4, V5.S4, V6.S4, V7.S4]
	VAND V28.B16, V0.B16, V8.B16
	VAND V28.B16, V1.B16, V9.B16
	VAND V28.B16, V2.B16, V10.B16
	VAND V28.B16, V3.B16, V11.B16
	VAND V28.B16, V4.B16, V12.B16
	VAND V28.B16, V5.B16, V13.B16
	VAND V28.B16, V6.B16, V14.B16
	VAND V28.B16, V7.B16, V15.B16
	CMHI4(16, 8, 29)
	CMHI4(17, 9, 29)
	CMHI4(18, 10, 29)
	CMHI4(19, 11, 29)
	CMHI4(20, 12, 29)
	CMHI4(21, 13, 29)
	CMHI4(22, 14, 29)
	CMHI4(23, 15, 29)
	BIC16(8, 8, 16)
	BIC16(9, 9, 17)
	BIC16(10, 10, 18)
	BIC16(11, 11, 19)
	BIC16(12, 12, 20)
	BIC16(13, 13, 21)
	BIC16(14, 14, 22)
	BIC16(15, 15, 23)
	VUMAX V8.S4, V9.S4, V8.S4
	VUMAX V10.S4, V11.S4, V10.S4
	VUMAX V12.S4, V13.S4, V12.S4
	VUMAX V14.S4, V15.S4, V14.S4
	VUMAX V8.S4, V10.S4, V8.S4
	VUMAX V12.S4, V14.S4, V12.S4
	VUMAX V8.S4, V12.S4, V8.S4
	UMAXV4(8, 8)           // F8 = amax
	FCMPS F25, F8
	BLT zero               // amax < 1e-30
	FDIVS F24, F8, F9      // d = amax/127
	FDIVS F8, F24, F10     // s = 127/amax
	FMOVS.P F9, 4(R2)
	VDUP V10.S[0], V10.S4
	FMUL4(8, 0, 10)
	FMUL4(9, 1, 10)
	FMUL4(11, 2, 10)
	FMUL4(12, 3, 10)
	FMUL4(13, 4, 10)
	FMUL4(14, 5, 10)
	FMUL4(15, 6, 10)
	FMUL4(16, 7, 10)
	VAND V30.B16, V0.B16, V0.B16
	VAND V30.B16, V1.B16, V1.B16
	VAND V30.B16, V2.B16, V2.B16
	VAND V30.B16, V3.B16, V3.B16
	VAND V30.B16, V4.B16, V4.B16
	VAND V30.B16, V5.B16, V5.B16
	VAND V30.B16, V6.B16, V6.B16
	VAND V30.B16, V7.B16, V7.B16
	VORR V31.B16, V0.B16, V0.B16
	VORR V31.B16, V1.B16, V1.B16
	VORR V31.B16, V2.B16, V2.B16
	VORR V31.B16, V3.B16, V3.B16
	VORR V31.B16, V4.B16, V4.B16
	VORR V31.B16, V5.B16, V5.B16
	VORR V31.B16, V6.B16, V6.B16
	VORR V31.B16, V7.B16, V7.B16
	FADD4(8, 8, 0)
	FADD4(9, 9, 1)
	FADD4(11, 11, 2)
	FADD4(12, 12, 3)
	FADD4(13, 13, 4)
	FADD4(14, 14, 5)
	FADD4(15, 15, 6)
	FADD4(16, 16, 7)
	FCVTZS4(8, 8)
	FCVTZS4(9, 9)
	FCVTZS4(11, 11)
	FCVTZS4(12, 12)
	FCVTZS4(13, 13)
	FCVTZS4(14, 14)
	FCVTZS4(15, 15)
	FCVTZS4(16, 16)
	SMIN4(8, 8, 27)
	SMIN4(9, 9, 27)
	SMIN4(11, 11, 27)
	SMIN4(12, 12, 27)
	SMIN4(13, 13, 27)
	SMIN4(14, 14, 27)
	SMIN4(15, 15, 27)
	SMIN4(16, 16, 27)
	SMAX4(8, 8, 26)
	SMAX4(9, 9, 26)
	SMAX4(11, 11, 26)
	SMAX4(12, 12, 26)
	SMAX4(13, 13, 26)
	SMAX4(14, 14, 26)
	SMAX4(15, 15, 26)
	SMAX4(16, 16, 26)
	XTN4H(17, 8)
	XTN8H(17, 9)
	XTN4H(18, 11)
	XTN8H(18, 12)
	XTN4H(19, 13)
	XTN8H(19, 14)
	XTN4H(20, 15)
	XTN8H(20, 16)
	XTN8B(21, 17)
	XTN16B(21, 18)
	XTN8B(22, 19)
	XTN16B(22, 20)
	VST1.P [V21.B16, V22.B16], 32(R1)
	SUBS $1, R3, R3
	BNE loop
	RET

zero:
	MOVW ZR, (R2)
	ADD $4, R2, R2
	STP.P (ZR, ZR), 16(R1)
	STP.P (ZR, ZR), 16(R1)
	SUBS $1, R3, R3
	BNE loop
	RET
