//go:build amd64 && gc && !purego

#include "textflag.h"

// f16 kernels (F16C, present on every AVX2 CPU this package runs): VCVTPS2PH
// with immediate 0 rounds to nearest even, VCVTPH2PS widens exactly, and the
// float work is the f32 kernels' (float_amd64.s), lane for lane. Lengths are
// multiples of 8 (the Go side runs the rest in Go).

// One product of the 8 f16 at kaddr (widened) and Y4 added into acc.
#define DH(kaddr, acc, t) \
	VCVTPH2PS kaddr, t; \
	VMULPS t, Y4, t; \
	VADDPS t, acc, acc

// func putF16AVX2(dst *uint16, x *float32, n int)
TEXT ·putF16AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX

put8:
	VMOVUPS (SI), Y0
	VCVTPS2PH $0, Y0, X1
	VMOVUPS X1, (DI)
	ADDQ $32, SI
	ADDQ $16, DI
	DECQ CX
	JNZ  put8
	VZEROUPPER
	RET

// func roundF16AVX2(x *float32, n int)
TEXT ·roundF16AVX2(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $3, CX

round8:
	VMOVUPS (SI), Y0
	VCVTPS2PH $0, Y0, X1
	VCVTPH2PS X1, Y0
	VMOVUPS Y0, (SI)
	ADDQ $32, SI
	DECQ CX
	JNZ  round8
	VZEROUPPER
	RET

// func axpyF16StridedAVX2(y *float32, w *float32, v *uint16, n int, m int, stride int)
// As axpyF32StridedAVX2: y in chunks of 32 then 8 held in registers while
// every value j = 0..n-1 is added in order.
TEXT ·axpyF16StridedAVX2(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ w+8(FP), R8
	MOVQ v+16(FP), R9
	MOVQ n+24(FP), CX
	MOVQ m+32(FP), R10
	MOVQ stride+40(FP), R11
	SHLQ $1, R11

hc32:
	CMPQ R10, $32
	JLT  hc8
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	MOVQ R8, SI
	MOVQ R9, BX
	MOVQ CX, DX

hj32:
	VBROADCASTSS (SI), Y4
	DH((BX), Y0, Y5)
	DH(16(BX), Y1, Y6)
	DH(32(BX), Y2, Y7)
	DH(48(BX), Y3, Y8)
	ADDQ $4, SI
	ADDQ R11, BX
	DECQ DX
	JNZ  hj32
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, DI
	ADDQ $64, R9
	SUBQ $32, R10
	JMP  hc32

hc8:
	CMPQ R10, $8
	JLT  hadone
	VMOVUPS (DI), Y0
	MOVQ R8, SI
	MOVQ R9, BX
	MOVQ CX, DX

hj8:
	VBROADCASTSS (SI), Y4
	DH((BX), Y0, Y5)
	ADDQ $4, SI
	ADDQ R11, BX
	DECQ DX
	JNZ  hj8
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $16, R9
	SUBQ $8, R10
	JMP  hc8

hadone:
	VZEROUPPER
	RET
