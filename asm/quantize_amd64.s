//go:build amd64 && gc && !purego

#include "textflag.h"

// QuantizeQ8_0 in AVX-512 and AVX2, bit-identical to quantizeQ8_0Generic.
// Per block of 32: amax ignores NaN as the Go loop does: |x| is first
// replaced by MAXPS(|x|, 0), which returns its second operand 0 when |x| is
// NaN; the remaining maxima see no NaN. d = amax/127 and s = 127/amax are the
// same two scalar float32 divisions, v = float32(x·s) + copysign(0.5, x) is a
// MULPS then an ADDPS (no FMA), v is clamped to [-127, 127] in float (exact),
// lanes where v is NaN are set to 0 by an ordered-compare mask, and
// CVTTPS2DQ truncates toward zero as Go's int8(v) does.

#define TINY $0x0da24260 // float32(1e-30)
#define F127 $0x42fe0000 // 127.0
#define FM127 $0xc2fe0000 // -127.0

// func quantizeQ8_0AVX512(x *float32, q *int8, d *float32, nb int)
TEXT ·quantizeQ8_0AVX512(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ q+8(FP), DI
	MOVQ d+16(FP), DX
	MOVQ nb+24(FP), CX
	MOVL $0x7fffffff, AX
	VPBROADCASTD AX, Z31
	MOVL $0x80000000, AX
	VPBROADCASTD AX, Z30
	MOVL $0x3f000000, AX
	VPBROADCASTD AX, Z29
	MOVL F127, AX
	VPBROADCASTD AX, Z28
	MOVL FM127, AX
	VPBROADCASTD AX, Z27
	VPXORD Z26, Z26, Z26
	MOVL TINY, AX
	MOVQ AX, X10
	MOVL F127, AX
	MOVQ AX, X11

q512loop:
	TESTQ CX, CX
	JZ    q512done
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VPANDD  Z31, Z0, Z2
	VPANDD  Z31, Z1, Z3
	VMAXPS  Z26, Z2, Z2      // NaN → 0
	VMAXPS  Z26, Z3, Z3
	VMAXPS  Z3, Z2, Z2
	VEXTRACTF64X4 $1, Z2, Y3
	VMAXPS  Y3, Y2, Y2
	VEXTRACTF128 $1, Y2, X3
	VMAXPS  X3, X2, X2
	VMOVHLPS X2, X2, X3
	VMAXPS  X3, X2, X2
	VMOVSHDUP X2, X3
	VMAXSS  X3, X2, X2       // amax
	VUCOMISS X10, X2
	JCS     q512zero         // amax < 1e-30
	VDIVSS  X2, X11, X4      // s = 127/amax
	VDIVSS  X11, X2, X5      // d = amax/127
	VMOVSS  X5, (DX)
	VBROADCASTSS X4, Z4
	VMULPS  Z4, Z0, Z6
	VPANDD  Z30, Z0, Z7
	VPORD   Z29, Z7, Z7      // copysign(0.5, x)
	VADDPS  Z7, Z6, Z6
	VMULPS  Z4, Z1, Z8
	VPANDD  Z30, Z1, Z9
	VPORD   Z29, Z9, Z9
	VADDPS  Z9, Z8, Z8
	VCMPPS  $7, Z6, Z6, K2   // ordered: not NaN
	VCMPPS  $7, Z8, Z8, K3
	VMINPS  Z28, Z6, Z6
	VMAXPS  Z27, Z6, Z6
	VMINPS  Z28, Z8, Z8
	VMAXPS  Z27, Z8, Z8
	VCVTTPS2DQ.Z Z6, K2, Z6
	VCVTTPS2DQ.Z Z8, K3, Z8
	VPMOVSDB Z6, (DI)
	VPMOVSDB Z8, 16(DI)
	JMP     q512next

q512zero:
	MOVL    $0, (DX)
	VMOVDQU32 Y26, (DI)

q512next:
	ADDQ $128, SI
	ADDQ $32, DI
	ADDQ $4, DX
	DECQ CX
	JMP  q512loop

q512done:
	VZEROUPPER
	RET

DATA tiny<>+0(SB)/4, TINY
GLOBL tiny<>(SB), RODATA|NOPTR, $4

DATA packidx<>+0(SB)/4, $0
DATA packidx<>+4(SB)/4, $4
DATA packidx<>+8(SB)/4, $1
DATA packidx<>+12(SB)/4, $5
DATA packidx<>+16(SB)/4, $2
DATA packidx<>+20(SB)/4, $6
DATA packidx<>+24(SB)/4, $3
DATA packidx<>+28(SB)/4, $7
GLOBL packidx<>(SB), RODATA|NOPTR, $32

// v = clamp(float32(x·s) + copysign(0.5, x)), NaN → 0, truncated to int32.
#define Q2(v) \
	VMULPS  Y4, v, Y5; \
	VANDPS  Y13, v, Y6; \
	VORPS   Y12, Y6, Y6; \
	VADDPS  Y6, Y5, Y5; \
	VCMPPS  $7, Y5, Y5, Y7; \
	VMINPS  Y11, Y5, Y5; \
	VMAXPS  Y10, Y5, Y5; \
	VANDPS  Y7, Y5, Y5; \
	VCVTTPS2DQ Y5, v

// func quantizeQ8_0AVX2(x *float32, q *int8, d *float32, nb int)
TEXT ·quantizeQ8_0AVX2(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ q+8(FP), DI
	MOVQ d+16(FP), DX
	MOVQ nb+24(FP), CX
	MOVL $0x7fffffff, AX
	VMOVQ AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x80000000, AX
	VMOVQ AX, X13
	VPBROADCASTD X13, Y13
	MOVL $0x3f000000, AX
	VMOVQ AX, X12
	VPBROADCASTD X12, Y12
	MOVL F127, AX
	VMOVQ AX, X11
	VPBROADCASTD X11, Y11
	MOVL FM127, AX
	VMOVQ AX, X10
	VPBROADCASTD X10, Y10
	VXORPS Y9, Y9, Y9
	VMOVDQU packidx<>(SB), Y8

q2loop:
	TESTQ CX, CX
	JZ    q2done
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VANDPS  Y14, Y0, Y4
	VANDPS  Y14, Y1, Y5
	VANDPS  Y14, Y2, Y6
	VANDPS  Y14, Y3, Y7
	VMAXPS  Y9, Y4, Y4       // NaN → 0
	VMAXPS  Y9, Y5, Y5
	VMAXPS  Y9, Y6, Y6
	VMAXPS  Y9, Y7, Y7
	VMAXPS  Y5, Y4, Y4
	VMAXPS  Y7, Y6, Y6
	VMAXPS  Y6, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VMAXPS  X5, X4, X4
	VMOVHLPS X4, X4, X5
	VMAXPS  X5, X4, X4
	VMOVSHDUP X4, X5
	VMAXSS  X5, X4, X4       // amax
	VUCOMISS tiny<>(SB), X4
	JCS     q2zero
	VDIVSS  X11, X4, X5      // d = amax/127 (X11 lane 0 is 127)
	VMOVSS  X5, (DX)
	VDIVSS  X4, X11, X4      // s = 127/amax
	VBROADCASTSS X4, Y4
	Q2(Y0)
	Q2(Y1)
	Q2(Y2)
	Q2(Y3)
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSWB Y2, Y0, Y0
	VPERMD    Y0, Y8, Y0
	VMOVDQU   Y0, (DI)
	JMP     q2next

q2zero:
	MOVL    $0, (DX)
	VMOVDQU Y9, (DI)

q2next:
	ADDQ $128, SI
	ADDQ $32, DI
	ADDQ $4, DX
	DECQ CX
	JMP  q2loop

q2done:
	VZEROUPPER
	RET
