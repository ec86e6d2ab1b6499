//go:build amd64 && gc && !purego

#include "textflag.h"
#include "float_amd64.h"

// f16 kernels (F16C, present on every AVX2 CPU this package runs): VCVTPS2PH
// with immediate 0 rounds to nearest even, VCVTPH2PS widens exactly, and the
// float work is the f32 kernels' (float_amd64.s), lane for lane. Lengths are
// multiples of 8 (the Go side runs the rest in Go).


// One key's 8 f16 at kaddr against the q chunk in Y4 into acc.
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

// func dotF16StridedAVX2(out *float32, q *float32, k *uint16, n int, m int, stride int)
// As dotF32StridedAVX2: four keys share each load of q, each key has its own
// 8-lane accumulator.
TEXT ·dotF16StridedAVX2(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ q+8(FP), R8
	MOVQ k+16(FP), R9
	MOVQ n+24(FP), CX
	MOVQ m+32(FP), R13
	SHRQ $3, R13
	MOVQ stride+40(FP), R11
	SHLQ $1, R11
	LEAQ (R11)(R11*2), R12

hkeys4:
	CMPQ CX, $4
	JLT  hkeys1
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ R8, SI
	MOVQ R9, BX
	MOVQ R13, DX

hk4loop:
	VMOVUPS (SI), Y4
	DH((BX), Y0, Y5)
	DH((BX)(R11*1), Y1, Y6)
	DH((BX)(R11*2), Y2, Y7)
	DH((BX)(R12*1), Y3, Y8)
	ADDQ $32, SI
	ADDQ $16, BX
	DECQ DX
	JNZ  hk4loop
	RED4((DI))
	ADDQ $16, DI
	LEAQ (R9)(R11*4), R9
	SUBQ $4, CX
	JMP  hkeys4

hkeys1:
	TESTQ CX, CX
	JZ    hdone
	VXORPS Y0, Y0, Y0
	MOVQ R8, SI
	MOVQ R9, BX
	MOVQ R13, DX

hk1loop:
	VMOVUPS (SI), Y4
	DH((BX), Y0, Y5)
	ADDQ $32, SI
	ADDQ $16, BX
	DECQ DX
	JNZ  hk1loop
	RED8(Y0, X0, (DI))
	ADDQ $4, DI
	ADDQ R11, R9
	DECQ CX
	JMP  hkeys1

hdone:
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
