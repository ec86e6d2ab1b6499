//go:build arm64 && gc && !purego

#include "textflag.h"

// ExpF32's steps (float.go) on four lanes, each a separate rounded
// instruction in the twin's order: FMAX/FMIN clamp, FRINTN (ties to even),
// FCVTZS of the exact integer n, SSHR for ⌊n/2⌋, the two power-of-two
// scalings; NaN lanes get x + x (FCMEQ mask, BIT).

#define FMUL4(d, n, m) WORD $(0x6E20DC00 | ((m)<<16) | ((n)<<5) | (d))
#define FADD4(d, n, m) WORD $(0x4E20D400 | ((m)<<16) | ((n)<<5) | (d))
#define FSUB4(d, n, m) WORD $(0x4EA0D400 | ((m)<<16) | ((n)<<5) | (d))
#define FDIV4(d, n, m) WORD $(0x6E20FC00 | ((m)<<16) | ((n)<<5) | (d))
#define FMAX4(d, n, m) WORD $(0x4E20F400 | ((m)<<16) | ((n)<<5) | (d))
#define FMIN4(d, n, m) WORD $(0x4EA0F400 | ((m)<<16) | ((n)<<5) | (d))
#define FCMEQ4(d, n, m) WORD $(0x4E20E400 | ((m)<<16) | ((n)<<5) | (d))
#define FRINTN4(d, n) WORD $(0x4E218800 | ((n)<<5) | (d))
#define FCVTZS4(d, n) WORD $(0x4EA1B800 | ((n)<<5) | (d))
#define FNEG4(d, n) WORD $(0x6EA0F800 | ((n)<<5) | (d))
#define SSHR1(d, n) WORD $(0x4F3F0400 | ((n)<<5) | (d))
#define BIT16(d, n, m) WORD $(0x6EA01C00 | ((m)<<16) | ((n)<<5) | (d))

// func expShiftF32NEON(x *float32, m float32, n int)
// x[i] = ExpF32(x[i] − m), n a multiple of 4, ≥ 4.
TEXT ·expShiftF32NEON(SB), NOSPLIT, $0-24
	MOVD x+0(FP), R0
	FMOVS m+8(FP), F9
	MOVD n+16(FP), R3
	VDUP V9.S[0], V9.S4
	MOVW $0xc2d00000, R5 // expLo
	VDUP R5, V16.S4
	MOVW $0x42b20000, R5 // expHi
	VDUP R5, V17.S4
	MOVW $0x3fb8aa3b, R5 // expLog2e
	VDUP R5, V18.S4
	MOVW $0x3f318000, R5 // expC1
	VDUP R5, V19.S4
	MOVW $0xb95e8083, R5 // expC2
	VDUP R5, V20.S4
	MOVW $0x39506967, R5 // expP0
	VDUP R5, V21.S4
	MOVW $0x3ab743ce, R5 // expP1
	VDUP R5, V22.S4
	MOVW $0x3c088908, R5 // expP2
	VDUP R5, V23.S4
	MOVW $0x3d2aa9c1, R5 // expP3
	VDUP R5, V24.S4
	MOVW $0x3e2aaaaa, R5 // expP4
	VDUP R5, V25.S4
	MOVW $0x3f000000, R5 // expP5
	VDUP R5, V26.S4
	MOVW $0x3f800000, R5 // 1
	VDUP R5, V27.S4
	MOVW $127, R5
	VDUP R5, V28.S4
exploop:
	VLD1 (R0), [V0.S4]
	FSUB4(0, 0, 9)
	FCMEQ4(7, 0, 0)   // not NaN
	FADD4(6, 0, 0)    // x + x
	FMAX4(1, 0, 16)
	FMIN4(1, 1, 17)   // t
	FMUL4(2, 1, 18)
	FRINTN4(2, 2)     // n
	FMUL4(3, 2, 19)
	FSUB4(3, 1, 3)
	FMUL4(4, 2, 20)
	FSUB4(3, 3, 4)    // r
	FMUL4(4, 21, 3)
	FADD4(4, 4, 22)
	FMUL4(4, 4, 3)
	FADD4(4, 4, 23)
	FMUL4(4, 4, 3)
	FADD4(4, 4, 24)
	FMUL4(4, 4, 3)
	FADD4(4, 4, 25)
	FMUL4(4, 4, 3)
	FADD4(4, 4, 26)   // p
	FMUL4(5, 3, 3)    // r²
	FMUL4(4, 4, 5)
	FADD4(4, 4, 3)
	FADD4(4, 4, 27)   // y
	FCVTZS4(2, 2)
	SSHR1(5, 2)       // e1
	VSUB V5.S4, V2.S4, V2.S4 // e2 = n − e1
	VADD V28.S4, V5.S4, V5.S4
	VSHL $23, V5.S4, V5.S4
	VADD V28.S4, V2.S4, V2.S4
	VSHL $23, V2.S4, V2.S4
	FMUL4(4, 4, 5)
	FMUL4(4, 4, 2)
	BIT16(6, 4, 7)    // V6 = NaN ? x + x : y
	VST1.P [V6.S4], 16(R0)
	SUBS $4, R3, R3
	BNE exploop
	RET

// func siluMulF32NEON(gate *float32, up *float32, n int)
// gate[i] = v / (1 + ExpF32(−v)) · up[i] with v = gate[i], n a multiple of 4, ≥ 4.
TEXT ·siluMulF32NEON(SB), NOSPLIT, $0-24
	MOVD gate+0(FP), R0
	MOVD up+8(FP), R1
	MOVD n+16(FP), R3
	MOVW $0xc2d00000, R5 // expLo
	VDUP R5, V16.S4
	MOVW $0x42b20000, R5 // expHi
	VDUP R5, V17.S4
	MOVW $0x3fb8aa3b, R5 // expLog2e
	VDUP R5, V18.S4
	MOVW $0x3f318000, R5 // expC1
	VDUP R5, V19.S4
	MOVW $0xb95e8083, R5 // expC2
	VDUP R5, V20.S4
	MOVW $0x39506967, R5 // expP0
	VDUP R5, V21.S4
	MOVW $0x3ab743ce, R5 // expP1
	VDUP R5, V22.S4
	MOVW $0x3c088908, R5 // expP2
	VDUP R5, V23.S4
	MOVW $0x3d2aa9c1, R5 // expP3
	VDUP R5, V24.S4
	MOVW $0x3e2aaaaa, R5 // expP4
	VDUP R5, V25.S4
	MOVW $0x3f000000, R5 // expP5
	VDUP R5, V26.S4
	MOVW $0x3f800000, R5 // 1
	VDUP R5, V27.S4
	MOVW $127, R5
	VDUP R5, V28.S4
siluloop:
	VLD1 (R0), [V8.S4]
	VLD1.P 16(R1), [V9.S4]
	FNEG4(0, 8)
	FCMEQ4(7, 0, 0)   // not NaN
	FADD4(6, 0, 0)    // x + x
	FMAX4(1, 0, 16)
	FMIN4(1, 1, 17)   // t
	FMUL4(2, 1, 18)
	FRINTN4(2, 2)     // n
	FMUL4(3, 2, 19)
	FSUB4(3, 1, 3)
	FMUL4(4, 2, 20)
	FSUB4(3, 3, 4)    // r
	FMUL4(4, 21, 3)
	FADD4(4, 4, 22)
	FMUL4(4, 4, 3)
	FADD4(4, 4, 23)
	FMUL4(4, 4, 3)
	FADD4(4, 4, 24)
	FMUL4(4, 4, 3)
	FADD4(4, 4, 25)
	FMUL4(4, 4, 3)
	FADD4(4, 4, 26)   // p
	FMUL4(5, 3, 3)    // r²
	FMUL4(4, 4, 5)
	FADD4(4, 4, 3)
	FADD4(4, 4, 27)   // y
	FCVTZS4(2, 2)
	SSHR1(5, 2)       // e1
	VSUB V5.S4, V2.S4, V2.S4 // e2 = n − e1
	VADD V28.S4, V5.S4, V5.S4
	VSHL $23, V5.S4, V5.S4
	VADD V28.S4, V2.S4, V2.S4
	VSHL $23, V2.S4, V2.S4
	FMUL4(4, 4, 5)
	FMUL4(4, 4, 2)
	BIT16(6, 4, 7)    // V6 = NaN ? x + x : y
	FADD4(6, 27, 6)   // 1 + e
	FDIV4(8, 8, 6)
	FMUL4(8, 8, 9)
	VST1.P [V8.S4], 16(R0)
	SUBS $4, R3, R3
	BNE siluloop
	RET
