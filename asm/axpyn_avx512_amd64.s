//go:build amd64 && gc && !purego

#include "textflag.h"

// Three-query weighted sums: y_r[i] = y_r[i] + float32(w_r[j]·v[j][i]) for
// j = 0..n-1 in order (no FMA), the three y rows in chunks of 64 floats (Z0-Z3,
// Z4-Z7, Z8-Z11) then 16 (Z0, Z4, Z8; m is a multiple of 16) held in registers, each value row loaded
// (and widened) once for the three queries.
//
// Registers: DI, R8, CX the y rows; SI, R13, AX the weight rows; DX offset
// into the weights (bytes); R11 n·4; R9 columns left; R10 the chunk's column
// in value 0; BX value j's chunk; R12 stride (bytes).

#define PROLOGUE_S3(shift) \
	MOVQ y+0(FP), DI; \
	MOVQ ldy+8(FP), CX; \
	SHLQ $2, CX; \
	LEAQ (DI)(CX*1), R8; \
	LEAQ (R8)(CX*1), CX; \
	MOVQ w+16(FP), SI; \
	MOVQ ldw+24(FP), AX; \
	SHLQ $2, AX; \
	LEAQ (SI)(AX*1), R13; \
	LEAQ (R13)(AX*1), AX; \
	MOVQ v+32(FP), R10; \
	MOVQ n+40(FP), R11; \
	SHLQ $2, R11; \
	MOVQ m+48(FP), R9; \
	MOVQ stride+56(FP), R12; \
	SHLQ $shift, R12

// MULADD adds float32(w · vreg) to acc (tmp: the rounded product).
#define MULADD(vreg, w, tmp, acc) \
	VMULPS vreg, w, tmp; \
	VADDPS tmp, acc, acc

// S3ROW64 adds one value row of 64 (Z12-Z15) to the three queries; S3ROW16
// one of 16 (Z12).
#define S3ROW64 \
	VBROADCASTSS (SI)(DX*1), Z16; \
	VBROADCASTSS (R13)(DX*1), Z17; \
	VBROADCASTSS (AX)(DX*1), Z18; \
	MULADD(Z12, Z16, Z20, Z0); \
	MULADD(Z13, Z16, Z21, Z1); \
	MULADD(Z14, Z16, Z22, Z2); \
	MULADD(Z15, Z16, Z23, Z3); \
	MULADD(Z12, Z17, Z24, Z4); \
	MULADD(Z13, Z17, Z25, Z5); \
	MULADD(Z14, Z17, Z26, Z6); \
	MULADD(Z15, Z17, Z27, Z7); \
	MULADD(Z12, Z18, Z28, Z8); \
	MULADD(Z13, Z18, Z29, Z9); \
	MULADD(Z14, Z18, Z30, Z10); \
	MULADD(Z15, Z18, Z31, Z11)

#define S3ROW16 \
	VBROADCASTSS (SI)(DX*1), Z16; \
	VBROADCASTSS (R13)(DX*1), Z17; \
	VBROADCASTSS (AX)(DX*1), Z18; \
	MULADD(Z12, Z16, Z20, Z0); \
	MULADD(Z12, Z17, Z24, Z4); \
	MULADD(Z12, Z18, Z28, Z8)

#define LOAD3_64 \
	VMOVUPS (DI), Z0; VMOVUPS 64(DI), Z1; VMOVUPS 128(DI), Z2; VMOVUPS 192(DI), Z3; \
	VMOVUPS (R8), Z4; VMOVUPS 64(R8), Z5; VMOVUPS 128(R8), Z6; VMOVUPS 192(R8), Z7; \
	VMOVUPS (CX), Z8; VMOVUPS 64(CX), Z9; VMOVUPS 128(CX), Z10; VMOVUPS 192(CX), Z11

#define STORE3_64 \
	VMOVUPS Z0, (DI); VMOVUPS Z1, 64(DI); VMOVUPS Z2, 128(DI); VMOVUPS Z3, 192(DI); \
	VMOVUPS Z4, (R8); VMOVUPS Z5, 64(R8); VMOVUPS Z6, 128(R8); VMOVUPS Z7, 192(R8); \
	VMOVUPS Z8, (CX); VMOVUPS Z9, 64(CX); VMOVUPS Z10, 128(CX); VMOVUPS Z11, 192(CX); \
	ADDQ $256, DI; ADDQ $256, R8; ADDQ $256, CX

#define LOAD3_16 \
	VMOVUPS (DI), Z0; VMOVUPS (R8), Z4; VMOVUPS (CX), Z8

#define STORE3_16 \
	VMOVUPS Z0, (DI); VMOVUPS Z4, (R8); VMOVUPS Z8, (CX); \
	ADDQ $64, DI; ADDQ $64, R8; ADDQ $64, CX

// func axpyF32S3AVX512(y *float32, ldy int, w *float32, ldw int, v *float32, n int, m int, stride int)
TEXT ·axpyF32S3AVX512(SB), NOSPLIT, $0-64
	PROLOGUE_S3(2)

s3f64:
	CMPQ R9, $64
	JLT  s3f16
	LOAD3_64
	MOVQ R10, BX
	XORQ DX, DX

s3f64j:
	VMOVUPS (BX), Z12
	VMOVUPS 64(BX), Z13
	VMOVUPS 128(BX), Z14
	VMOVUPS 192(BX), Z15
	S3ROW64
	ADDQ $4, DX
	ADDQ R12, BX
	CMPQ DX, R11
	JLT  s3f64j
	STORE3_64
	ADDQ $256, R10
	SUBQ $64, R9
	JMP  s3f64

s3f16:
	CMPQ R9, $16
	JLT  s3fdone
	LOAD3_16
	MOVQ R10, BX
	XORQ DX, DX

s3f16j:
	VMOVUPS (BX), Z12
	S3ROW16
	ADDQ $4, DX
	ADDQ R12, BX
	CMPQ DX, R11
	JLT  s3f16j
	STORE3_16
	ADDQ $64, R10
	SUBQ $16, R9
	JMP  s3f16

s3fdone:
	VZEROUPPER
	RET

// func axpyF16S3AVX512(y *float32, ldy int, w *float32, ldw int, v *uint16, n int, m int, stride int)
TEXT ·axpyF16S3AVX512(SB), NOSPLIT, $0-64
	PROLOGUE_S3(1)

s3h64:
	CMPQ R9, $64
	JLT  s3h16
	LOAD3_64
	MOVQ R10, BX
	XORQ DX, DX

s3h64j:
	VCVTPH2PS (BX), Z12
	VCVTPH2PS 32(BX), Z13
	VCVTPH2PS 64(BX), Z14
	VCVTPH2PS 96(BX), Z15
	S3ROW64
	ADDQ $4, DX
	ADDQ R12, BX
	CMPQ DX, R11
	JLT  s3h64j
	STORE3_64
	ADDQ $128, R10
	SUBQ $64, R9
	JMP  s3h64

s3h16:
	CMPQ R9, $16
	JLT  s3hdone
	LOAD3_16
	MOVQ R10, BX
	XORQ DX, DX

s3h16j:
	VCVTPH2PS (BX), Z12
	S3ROW16
	ADDQ $4, DX
	ADDQ R12, BX
	CMPQ DX, R11
	JLT  s3h16j
	STORE3_16
	ADDQ $32, R10
	SUBQ $16, R9
	JMP  s3h16

s3hdone:
	VZEROUPPER
	RET
