//go:build amd64 && gc && !purego

#include "textflag.h"

// AVX-512 (F/BW/VL + VNNI) superblock sums of the ggml block types
// (dot_ggml.go's *Generic twins). VPDPBUSD multiplies unsigned by signed
// bytes and adds each 4 products into an int32 lane without saturation, so
// the nibbles (unsigned) meet the activations (signed) directly. Every sum is
// an exact integer: any grouping gives the twin's result.

// Dword lane indices for VPERMD: {0×8, 1×8} picks two scales for the two
// halves of a vector of 64 bytes of sub-blocks of 32; {0×4, 1×4, 2×4, 3×4}
// four scales for four sub-blocks of 16 (Q6_K).
DATA idxPairs<>+0(SB)/8, $0x0000000000000000
DATA idxPairs<>+8(SB)/8, $0x0000000000000000
DATA idxPairs<>+16(SB)/8, $0x0000000000000000
DATA idxPairs<>+24(SB)/8, $0x0000000000000000
DATA idxPairs<>+32(SB)/8, $0x0000000100000001
DATA idxPairs<>+40(SB)/8, $0x0000000100000001
DATA idxPairs<>+48(SB)/8, $0x0000000100000001
DATA idxPairs<>+56(SB)/8, $0x0000000100000001
GLOBL idxPairs<>(SB), RODATA|NOPTR, $64

DATA idxQuads<>+0(SB)/8, $0x0000000000000000
DATA idxQuads<>+8(SB)/8, $0x0000000000000000
DATA idxQuads<>+16(SB)/8, $0x0000000100000001
DATA idxQuads<>+24(SB)/8, $0x0000000100000001
DATA idxQuads<>+32(SB)/8, $0x0000000200000002
DATA idxQuads<>+40(SB)/8, $0x0000000200000002
DATA idxQuads<>+48(SB)/8, $0x0000000300000003
DATA idxQuads<>+56(SB)/8, $0x0000000300000003
GLOBL idxQuads<>(SB), RODATA|NOPTR, $64

// The IQ4 codebook plus 128 (K+128 in [1, 241], unsigned for VPDPBUSD):
// kvalues_iq4nl with the top bit of each byte flipped.
DATA kvaluesIQ4u<>+0(SB)/8, $0x766a5d4f3f2d1801
DATA kvaluesIQ4u<>+8(SB)/8, $0xf1d9c5b5a6998d81
GLOBL kvaluesIQ4u<>(SB), RODATA|NOPTR, $16

// REDUCE16 sums the 16 int32 lanes of Z into the low dword of X (Y, X its
// low halves; T a scratch X/Y pair) and stores it at ret.
#define REDUCE16(Z, Y, X, TY, TX, ret) \
	VEXTRACTI64X4 $1, Z, TY \
	VPADDD TY, Y, TY \
	VEXTRACTI128 $1, TY, X \
	VPADDD X, TX, X \
	VPSHUFD $0x4e, X, TX \
	VPADDD TX, X, X \
	VPSHUFD $0xb1, X, TX \
	VPADDD TX, X, X \
	MOVQ X, AX \
	MOVL AX, ret

// func q4kIsumAVX512(qs *byte, a *int8, sc *[8]int32) int32
//
// Two iterations j over qs[64j …]: the low nibbles of bytes 0–31 are
// sub-block 4j, of bytes 32–63 sub-block 4j+2; the high nibbles 4j+1 and
// 4j+3. VSHUFI64X2 regroups them as (4j, 4j+1) and (4j+2, 4j+3), which match
// a[128j …+63] and a[128j+64 …+63]. VPDPBUSD gives 16 int32 lanes, the low 8
// of the first sub-block, the high 8 of the second; VPMULLD by the two
// scales (VPERMD of sc by idxPairs + 2·step) and VPADDD accumulate.
TEXT ·q4kIsumAVX512(SB), NOSPLIT, $0-28
	MOVQ qs+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ sc+16(FP), DX
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z15
	MOVL $2, AX
	VPBROADCASTD AX, Z14
	VMOVDQU (DX), Y13 // sc[0…7]; lanes 8–15 zero
	VMOVDQU64 idxPairs<>(SB), Z12
	VPXORD Z11, Z11, Z11
	MOVQ $2, CX

q4kloop:
	VMOVDQU64 (SI), Z0
	VPANDD Z15, Z0, Z1
	VPSRLW $4, Z0, Z2
	VPANDD Z15, Z2, Z2
	VSHUFI64X2 $0x44, Z2, Z1, Z3 // sub-blocks 4j, 4j+1
	VSHUFI64X2 $0xee, Z2, Z1, Z4 // sub-blocks 4j+2, 4j+3
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPDPBUSD (DI), Z3, Z5
	VPDPBUSD 64(DI), Z4, Z6
	VPERMD Z13, Z12, Z7
	VPADDD Z14, Z12, Z12
	VPERMD Z13, Z12, Z8
	VPADDD Z14, Z12, Z12
	VPMULLD Z7, Z5, Z5
	VPMULLD Z8, Z6, Z6
	VPADDD Z5, Z11, Z11
	VPADDD Z6, Z11, Z11
	ADDQ $64, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  q4kloop

	REDUCE16(Z11, Y11, X0, Y1, X1, ret+24(FP))
	VZEROUPPER
	RET

// func q5kIsumAVX512(qs, qh *byte, a *int8, sc *[8]int32) int32
//
// q4kIsumAVX512 with a fifth bit: sub-block s takes bit s of qh[l]. Z10
// holds qh in its low 32 bytes and qh>>1 in its high 32 (VPSRLW: a
// neighbour's bit lands only in the top bits, which the masks below never
// read, since at most 7 more bits are shifted), so bit 0 of its bytes is the
// bit of sub-blocks (4j, 4j+1) after shifting by 4j, and of (4j+2, 4j+3)
// after 4j+2. VPSLLW by 4 and the 0x10 mask put it at bit 4 (q ≤ 31).
TEXT ·q5kIsumAVX512(SB), NOSPLIT, $0-36
	MOVQ qs+0(FP), SI
	MOVQ qh+8(FP), BX
	MOVQ a+16(FP), DI
	MOVQ sc+24(FP), DX
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z15
	MOVL $2, AX
	VPBROADCASTD AX, Z14
	MOVL $0x10101010, AX
	VPBROADCASTD AX, Z9
	VMOVDQU (DX), Y13
	VMOVDQU64 idxPairs<>(SB), Z12
	VMOVDQU (BX), Y10
	VPSRLW $1, Y10, Y8
	VINSERTI64X4 $1, Y8, Z10, Z10
	VPXORD Z11, Z11, Z11
	MOVQ $2, CX

q5kloop:
	VMOVDQU64 (SI), Z0
	VPANDD Z15, Z0, Z1
	VPSRLW $4, Z0, Z2
	VPANDD Z15, Z2, Z2
	VSHUFI64X2 $0x44, Z2, Z1, Z3
	VSHUFI64X2 $0xee, Z2, Z1, Z4
	VPSLLW $4, Z10, Z7
	VPANDD Z9, Z7, Z7
	VPORD Z7, Z3, Z3
	VPSRLW $2, Z10, Z10
	VPSLLW $4, Z10, Z7
	VPANDD Z9, Z7, Z7
	VPORD Z7, Z4, Z4
	VPSRLW $2, Z10, Z10
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPDPBUSD (DI), Z3, Z5
	VPDPBUSD 64(DI), Z4, Z6
	VPERMD Z13, Z12, Z7
	VPADDD Z14, Z12, Z12
	VPERMD Z13, Z12, Z8
	VPADDD Z14, Z12, Z12
	VPMULLD Z7, Z5, Z5
	VPMULLD Z8, Z6, Z6
	VPADDD Z5, Z11, Z11
	VPADDD Z6, Z11, Z11
	ADDQ $64, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  q5kloop

	REDUCE16(Z11, Y11, X0, Y1, X1, ret+32(FP))
	VZEROUPPER
	RET

// func q6kIsumAVX512(ql, qh *byte, a *int8, sc *[16]int16) int32
//
// Two halves h of 128 weights. ql[64h …+63]'s low nibbles are groups g = 0
// (bytes 0–31) and g = 1 (32–63), its high nibbles g = 2 and 3; Z1 holds the
// half's 32 qh bytes in its low half and qh>>2 in its high half, so bits 0–1
// of its bytes are the top bits of groups 0 | 1 and bits 4–5 those of 2 | 3
// (the word shifts bring a neighbour's bits only into bits 6–7). q = nibble
// | top<<4 ≤ 63. Each vector is four sub-blocks of 16 (4 dword lanes each);
// VPMULLD by the scales (VPMOVSXWD of sc, VPERMD by idxQuads + 4·step).
TEXT ·q6kIsumAVX512(SB), NOSPLIT, $0-36
	MOVQ ql+0(FP), SI
	MOVQ qh+8(FP), BX
	MOVQ a+16(FP), DI
	MOVQ sc+24(FP), DX
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z15
	MOVL $0x30303030, AX
	VPBROADCASTD AX, Z9
	MOVL $4, AX
	VPBROADCASTD AX, Z14
	VPMOVSXWD (DX), Z13
	VMOVDQU64 idxQuads<>(SB), Z12
	VPXORD Z11, Z11, Z11
	MOVQ $2, CX

q6khalf:
	VMOVDQU64 (SI), Z0
	VMOVDQU (BX), Y1
	VPSRLW $2, Y1, Y2
	VINSERTI64X4 $1, Y2, Z1, Z1
	VPANDD Z15, Z0, Z3 // low nibbles: g = 0, 1
	VPSLLW $4, Z1, Z4
	VPANDD Z9, Z4, Z4
	VPORD Z4, Z3, Z3
	VPSRLW $4, Z0, Z4 // high nibbles: g = 2, 3
	VPANDD Z15, Z4, Z4
	VPANDD Z9, Z1, Z2
	VPORD Z2, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPDPBUSD (DI), Z3, Z5
	VPDPBUSD 64(DI), Z4, Z6
	VPERMD Z13, Z12, Z7
	VPADDD Z14, Z12, Z12
	VPERMD Z13, Z12, Z8
	VPADDD Z14, Z12, Z12
	VPMULLD Z7, Z5, Z5
	VPMULLD Z8, Z6, Z6
	VPADDD Z5, Z11, Z11
	VPADDD Z6, Z11, Z11
	ADDQ $64, SI
	ADDQ $32, BX
	ADDQ $128, DI
	DECQ CX
	JNZ  q6khalf

	REDUCE16(Z11, Y11, X0, Y1, X1, ret+32(FP))
	VZEROUPPER
	RET

// func iq4xsIsumAVX512(qs *byte, a *int8, sc *[8]int16) int32
//
// Four iterations m over qs[32m …] (sub-blocks 2m, 2m+1, 16 bytes each).
// VBROADCASTI64X4 and VSHUFI64X2 make the 128-bit lanes (Q0, Q0, Q1, Q1);
// VPSRLW by 4 under the mask of lanes 1 and 3 leaves the high nibbles
// there, so after the 0x0f mask the lanes are the codebook indices of
// a[64m …+15], [+16 …+31], [+32 …], [+48 …], in order. VPSHUFB looks them up
// in K+128 (unsigned); Σ(K+128)·a − Σ128·a = Σ K·a, the second VPDPBUSD (by
// 0x80 bytes) forming the correction per lane, for any activations (−128
// included). VPMULLD by the two scales and VPADDD accumulate.
TEXT ·iq4xsIsumAVX512(SB), NOSPLIT, $0-28
	MOVQ qs+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ sc+16(FP), DX
	MOVL $0x0f0f0f0f, AX
	VPBROADCASTD AX, Z15
	MOVL $2, AX
	VPBROADCASTD AX, Z14
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z9
	MOVL $0xff00ff00, AX
	KMOVD AX, K1
	VBROADCASTI32X4 kvaluesIQ4u<>(SB), Z10
	VPMOVSXWD (DX), Y13
	VMOVDQU64 idxPairs<>(SB), Z12
	VPXORD Z11, Z11, Z11
	MOVQ $4, CX

iq4xsloop:
	VBROADCASTI64X4 (SI), Z0
	VSHUFI64X2 $0x50, Z0, Z0, Z0
	VPSRLW $4, Z0, K1, Z0
	VPANDD Z15, Z0, Z0
	VPSHUFB Z0, Z10, Z0
	VMOVDQU64 (DI), Z1
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPDPBUSD Z1, Z0, Z5
	VPDPBUSD Z1, Z9, Z6
	VPSUBD Z6, Z5, Z5
	VPERMD Z13, Z12, Z7
	VPADDD Z14, Z12, Z12
	VPMULLD Z7, Z5, Z5
	VPADDD Z5, Z11, Z11
	ADDQ $32, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  iq4xsloop

	REDUCE16(Z11, Y11, X0, Y1, X1, ret+24(FP))
	VZEROUPPER
	RET

