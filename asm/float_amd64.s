//go:build amd64 && gc && !purego

#include "textflag.h"

// Float kernels in AVX2 (used by both SIMD variants), bit-identical to their
// Go twins: a YMM accumulator is the 8 lanes of the definition; the last
// n mod 8 elements are loaded with VMASKMOVPS (masked lanes read as +0 and
// do not fault), and adding float32(0·0) = +0 leaves a lane unchanged: an
// accumulator that starts at +0 can never be -0 under round-to-nearest.

// 8 all-ones dwords then 8 zero dwords: a mask of the first r lanes is the
// 32 bytes at offset (8-r)·4.
DATA tailmask<>+0(SB)/8, $-1
DATA tailmask<>+8(SB)/8, $-1
DATA tailmask<>+16(SB)/8, $-1
DATA tailmask<>+24(SB)/8, $-1
DATA tailmask<>+32(SB)/8, $0
DATA tailmask<>+40(SB)/8, $0
DATA tailmask<>+48(SB)/8, $0
DATA tailmask<>+56(SB)/8, $0
GLOBL tailmask<>(SB), RODATA|NOPTR, $64

// func dotF32AVX2(a *float32, b *float32, n int) float32
TEXT ·dotF32AVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0

dotloop:
	CMPQ CX, $8
	JLT  dottail
	VMOVUPS (SI), Y1
	VMULPS  (DI), Y1, Y1
	VADDPS  Y1, Y0, Y0
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  dotloop

dottail:
	TESTQ CX, CX
	JZ    dotreduce
	LEAQ tailmask<>(SB), AX
	MOVQ $8, DX
	SUBQ CX, DX
	VMOVDQU (AX)(DX*4), Y2
	VMASKMOVPS (SI), Y2, Y1
	VMASKMOVPS (DI), Y2, Y3
	VMULPS  Y3, Y1, Y1
	VADDPS  Y1, Y0, Y0

dotreduce:
	VEXTRACTF128 $1, Y0, X1
	VADDPS   X1, X0, X0      // v[l] = acc[l] + acc[l+4]
	VMOVHLPS X0, X0, X1
	VADDPS   X1, X0, X0      // v0+v2, v1+v3
	VMOVSHDUP X0, X1
	VADDSS   X1, X0, X0
	VMOVSS   X0, ret+24(FP)
	VZEROUPPER
	RET

// func axpyF32AVX2(y *float32, a float32, x *float32, n int)
TEXT ·axpyF32AVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	VBROADCASTSS a+8(FP), Y4
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX

axpyloop:
	CMPQ CX, $8
	JLT  axpytail
	VMULPS  (SI), Y4, Y1
	VADDPS  (DI), Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  axpyloop

axpytail:
	TESTQ CX, CX
	JZ    axpydone
	LEAQ tailmask<>(SB), AX
	MOVQ $8, DX
	SUBQ CX, DX
	VMOVDQU (AX)(DX*4), Y2
	VMASKMOVPS (SI), Y2, Y1
	VMASKMOVPS (DI), Y2, Y3
	VMULPS  Y1, Y4, Y1
	VADDPS  Y3, Y1, Y1
	VMASKMOVPS Y1, Y2, (DI)

axpydone:
	VZEROUPPER
	RET

// Y14 = mask of the first m mod 8 lanes (m in R10).
#define TAILMASK \
	MOVQ R10, AX; \
	ANDQ $7, AX; \
	MOVQ $8, DX; \
	SUBQ AX, DX; \
	LEAQ tailmask<>(SB), AX; \
	VMOVDQU (AX)(DX*4), Y14

// One product of the chunk at kaddr and Y4 added into acc.
#define DK(kaddr, acc, t) \
	VMULPS kaddr, Y4, t; \
	VADDPS t, acc, acc

#define DKTAIL(kaddr, acc, t) \
	VMASKMOVPS kaddr, Y14, t; \
	VMULPS t, Y4, t; \
	VADDPS t, acc, acc

// func axpyF32StridedAVX2(y *float32, w *float32, v *float32, n int, m int, stride int)
// y is processed in chunks of 32, then 8, then a masked tail, each chunk held
// in registers while every value j = 0..n-1 is added in order.
TEXT ·axpyF32StridedAVX2(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ w+8(FP), R8
	MOVQ v+16(FP), R9
	MOVQ n+24(FP), CX
	MOVQ m+32(FP), R10
	MOVQ stride+40(FP), R11
	SHLQ $2, R11
	TAILMASK

c32:
	CMPQ R10, $32
	JLT  c8
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	MOVQ R8, SI
	MOVQ R9, BX
	MOVQ CX, DX

j32:
	VBROADCASTSS (SI), Y4
	DK((BX), Y0, Y5)
	DK(32(BX), Y1, Y6)
	DK(64(BX), Y2, Y7)
	DK(96(BX), Y3, Y8)
	ADDQ $4, SI
	ADDQ R11, BX
	DECQ DX
	JNZ  j32
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, DI
	ADDQ $128, R9
	SUBQ $32, R10
	JMP  c32

c8:
	CMPQ R10, $8
	JLT  ctail
	VMOVUPS (DI), Y0
	MOVQ R8, SI
	MOVQ R9, BX
	MOVQ CX, DX

j8:
	VBROADCASTSS (SI), Y4
	DK((BX), Y0, Y5)
	ADDQ $4, SI
	ADDQ R11, BX
	DECQ DX
	JNZ  j8
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, R9
	SUBQ $8, R10
	JMP  c8

ctail:
	TESTQ R10, R10
	JZ    asdone
	VMASKMOVPS (DI), Y14, Y0
	MOVQ R8, SI
	MOVQ R9, BX
	MOVQ CX, DX

jt:
	VBROADCASTSS (SI), Y4
	DKTAIL((BX), Y0, Y5)
	ADDQ $4, SI
	ADDQ R11, BX
	DECQ DX
	JNZ  jt
	VMASKMOVPS Y0, Y14, (DI)

asdone:
	VZEROUPPER
	RET

// func sumF32AVX2(x *float32, n int) float32
// DotF32's lanes and reduction over x alone (masked tail lanes add +0).
TEXT ·sumF32AVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VXORPS Y0, Y0, Y0

sumloop:
	CMPQ CX, $8
	JLT  sumtail
	VADDPS (SI), Y0, Y0
	ADDQ $32, SI
	SUBQ $8, CX
	JMP  sumloop

sumtail:
	TESTQ CX, CX
	JZ    sumreduce
	LEAQ tailmask<>(SB), AX
	MOVQ $8, DX
	SUBQ CX, DX
	VMOVDQU (AX)(DX*4), Y2
	VMASKMOVPS (SI), Y2, Y1
	VADDPS  Y1, Y0, Y0

sumreduce:
	VEXTRACTF128 $1, Y0, X1
	VADDPS   X1, X0, X0
	VMOVHLPS X0, X0, X1
	VADDPS   X1, X0, X0
	VMOVSHDUP X0, X1
	VADDSS   X1, X0, X0
	VMOVSS   X0, ret+16(FP)
	VZEROUPPER
	RET

// func scaleF32AVX2(x *float32, s float32, n int, div bool)
// x[i] = x[i]·s (or x[i]/s with div) for i < n, n a multiple of 8, ≥ 8.
TEXT ·scaleF32AVX2(SB), NOSPLIT, $0-25
	MOVQ x+0(FP), SI
	VBROADCASTSS s+8(FP), Y1
	MOVQ n+16(FP), CX
	MOVBLZX div+24(FP), AX
	TESTQ AX, AX
	JNZ  divloop

mulloop:
	VMULPS (SI), Y1, Y0
	VMOVUPS Y0, (SI)
	ADDQ $32, SI
	SUBQ $8, CX
	JNZ  mulloop
	VZEROUPPER
	RET

divloop:
	VMOVUPS (SI), Y0
	VDIVPS Y1, Y0, Y0
	VMOVUPS Y0, (SI)
	ADDQ $32, SI
	SUBQ $8, CX
	JNZ  divloop
	VZEROUPPER
	RET

// func maxF32AVX2(x *float32, n int) float32
// The running maximum m = x[0], then m = v where v > m, kept per lane from a
// broadcast of x[0] over the first n elements (n a multiple of 8, ≥ 8):
// VMAXPS v, m returns v exactly when v > m, as the Go loop's test, so NaNs
// are skipped unless x[0] is one. The lanes are combined the same way.
TEXT ·maxF32AVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VBROADCASTSS (SI), Y0

maxloop:
	VMOVUPS (SI), Y1
	VMAXPS Y0, Y1, Y0
	ADDQ $32, SI
	SUBQ $8, CX
	JNZ  maxloop
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X0, X1, X0
	VMOVHLPS X0, X0, X1
	VMAXPS X0, X1, X0
	VMOVSHDUP X0, X1
	VMAXSS X0, X1, X0
	VMOVSS X0, ret+16(FP)
	VZEROUPPER
	RET
