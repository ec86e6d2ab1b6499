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
