//go:build amd64 && gc && !purego

#include "textflag.h"

// AVX-512 forms of the strided weighted sums: y in chunks of 64 floats (four
// ZMM) held in registers while every value j = 0..n-1 is added in order,
// then chunks of 16, then a masked tail. Each lane does what the AVX2 kernel
// and the Go twin do: y[i] = y[i] + float32(w[j]·v[j][i]), no FMA.

// func axpyF32StridedAVX512(y *float32, w *float32, v *float32, n int, m int, stride int)
TEXT ·axpyF32StridedAVX512(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ w+8(FP), R8
	MOVQ v+16(FP), R9
	MOVQ n+24(FP), CX
	MOVQ m+32(FP), R10
	MOVQ stride+40(FP), R11
	SHLQ $2, R11

zc64:
	CMPQ R10, $64
	JLT  zc16
	VMOVUPS (DI), Z0
	VMOVUPS 64(DI), Z1
	VMOVUPS 128(DI), Z2
	VMOVUPS 192(DI), Z3
	MOVQ R8, SI
	MOVQ R9, BX
	MOVQ CX, DX

zj64:
	VBROADCASTSS (SI), Z4
	VMULPS (BX), Z4, Z5
	VADDPS Z5, Z0, Z0
	VMULPS 64(BX), Z4, Z6
	VADDPS Z6, Z1, Z1
	VMULPS 128(BX), Z4, Z7
	VADDPS Z7, Z2, Z2
	VMULPS 192(BX), Z4, Z8
	VADDPS Z8, Z3, Z3
	ADDQ $4, SI
	ADDQ R11, BX
	DECQ DX
	JNZ  zj64
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ $256, DI
	ADDQ $256, R9
	SUBQ $64, R10
	JMP  zc64

zc16:
	CMPQ R10, $16
	JLT  ztail
	VMOVUPS (DI), Z0
	MOVQ R8, SI
	MOVQ R9, BX
	MOVQ CX, DX

zj16:
	VBROADCASTSS (SI), Z4
	VMULPS (BX), Z4, Z5
	VADDPS Z5, Z0, Z0
	ADDQ $4, SI
	ADDQ R11, BX
	DECQ DX
	JNZ  zj16
	VMOVUPS Z0, (DI)
	ADDQ $64, DI
	ADDQ $64, R9
	SUBQ $16, R10
	JMP  zc16

ztail:
	TESTQ R10, R10
	JZ    zdone
	// K1 = the first m mod 16 lanes.
	MOVQ $1, AX
	MOVQ R10, CX
	SHLQ CX, AX
	DECQ AX
	KMOVW AX, K1
	MOVQ n+24(FP), CX
	VMOVUPS.Z (DI), K1, Z0
	MOVQ R8, SI
	MOVQ R9, BX
	MOVQ CX, DX

zjt:
	VBROADCASTSS (SI), Z4
	VMOVUPS.Z (BX), K1, Z5
	VMULPS Z5, Z4, Z5
	VADDPS Z5, Z0, Z0
	ADDQ $4, SI
	ADDQ R11, BX
	DECQ DX
	JNZ  zjt
	VMOVUPS Z0, K1, (DI)

zdone:
	VZEROUPPER
	RET

// func axpyF16StridedAVX512(y *float32, w *float32, v *uint16, n int, m int, stride int)
// m a multiple of 16, ≥ 16; v in f16, widened exactly by VCVTPH2PS.
TEXT ·axpyF16StridedAVX512(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ w+8(FP), R8
	MOVQ v+16(FP), R9
	MOVQ n+24(FP), CX
	MOVQ m+32(FP), R10
	MOVQ stride+40(FP), R11
	SHLQ $1, R11

hz64:
	CMPQ R10, $64
	JLT  hz16
	VMOVUPS (DI), Z0
	VMOVUPS 64(DI), Z1
	VMOVUPS 128(DI), Z2
	VMOVUPS 192(DI), Z3
	MOVQ R8, SI
	MOVQ R9, BX
	MOVQ CX, DX

hzj64:
	VBROADCASTSS (SI), Z4
	VCVTPH2PS (BX), Z5
	VMULPS Z5, Z4, Z5
	VADDPS Z5, Z0, Z0
	VCVTPH2PS 32(BX), Z6
	VMULPS Z6, Z4, Z6
	VADDPS Z6, Z1, Z1
	VCVTPH2PS 64(BX), Z7
	VMULPS Z7, Z4, Z7
	VADDPS Z7, Z2, Z2
	VCVTPH2PS 96(BX), Z8
	VMULPS Z8, Z4, Z8
	VADDPS Z8, Z3, Z3
	ADDQ $4, SI
	ADDQ R11, BX
	DECQ DX
	JNZ  hzj64
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ $256, DI
	ADDQ $128, R9
	SUBQ $64, R10
	JMP  hz64

hz16:
	CMPQ R10, $16
	JLT  hzdone
	VMOVUPS (DI), Z0
	MOVQ R8, SI
	MOVQ R9, BX
	MOVQ CX, DX

hzj16:
	VBROADCASTSS (SI), Z4
	VCVTPH2PS (BX), Z5
	VMULPS Z5, Z4, Z5
	VADDPS Z5, Z0, Z0
	ADDQ $4, SI
	ADDQ R11, BX
	DECQ DX
	JNZ  hzj16
	VMOVUPS Z0, (DI)
	ADDQ $64, DI
	ADDQ $32, R9
	SUBQ $16, R10
	JMP  hz16

hzdone:
	VZEROUPPER
	RET
