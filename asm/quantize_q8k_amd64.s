//go:build amd64 && gc && !purego

#include "textflag.h"

// func quantizeQ8KAVX512(x *float32, q *int8, d *float32, bs *int16, nb int)
//
// QuantizeQ8_K over nb ≥ 1 superblocks, bit for bit quantizeQ8KGeneric:
// amax = max |x| over the non-NaN elements (VMAXPS(acc, |x|) returns acc
// when |x| is NaN, and acc never is); mx = the first element with |x| = amax
// (VCMPPS EQ per 16, the lowest set mask bit); amax = 0 gives d = 0, q = 0,
// bs = 0. Else iscale = −127/mx and d = 1/iscale (two VDIVSS, as Go's
// float32 divisions), and per element the Go steps on float32 bits:
// t = float32(iscale·x) + 1.5·2^23, q = int8(min(127, (bits(t) & 0x7fffff) −
// 0x400000)) (VPMINSD, then VPMOVDB truncates as int8() does), NaN and Inf
// included. bs: each 16 q plus 128 summed by VPSADBW, minus 2048.
TEXT ·quantizeQ8KAVX512(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ q+8(FP), DI
	MOVQ d+16(FP), DX
	MOVQ bs+24(FP), BX
	MOVQ nb+32(FP), R8
	MOVL $0x7fffffff, AX
	VPBROADCASTD AX, Z31
	MOVL $0x4b400000, AX // 12582912.0
	VPBROADCASTD AX, Z30
	MOVL $0x007fffff, AX
	VPBROADCASTD AX, Z29
	MOVL $0x00400000, AX
	VPBROADCASTD AX, Z28
	MOVL $127, AX
	VPBROADCASTD AX, Z27
	MOVL $0x80808080, AX
	VPBROADCASTD AX, X26
	VPXORD Z25, Z25, Z25
	MOVL $0xc2fe0000, AX // −127.0
	MOVQ AX, X14
	MOVL $0x3f800000, AX // 1.0
	MOVQ AX, X15

q8ksuper:
	VPXORD Z16, Z16, Z16
	XORQ CX, CX

q8kmax:
	VANDPS (SI)(CX*1), Z31, Z17
	VMAXPS Z16, Z17, Z16
	ADDQ $64, CX
	CMPQ CX, $1024
	JNE q8kmax
	VEXTRACTF64X4 $1, Z16, Y17
	VMAXPS Y17, Y16, Y16
	VEXTRACTF32X4 $1, Y16, X17
	VMAXPS X17, X16, X16
	VPSHUFD $0x4e, X16, X17
	VMAXPS X17, X16, X16
	VPSHUFD $0xb1, X16, X17
	VMAXPS X17, X16, X16 // amax in every lane
	VPTESTMD Z16, Z16, K1
	KORTESTW K1, K1
	JZ q8kzero
	VBROADCASTSS X16, Z17
	XORQ CX, CX

q8kfind:
	VANDPS (SI)(CX*1), Z31, Z18
	VCMPPS $0, Z17, Z18, K1
	KMOVW K1, AX
	TESTL AX, AX
	JNZ q8kfound
	ADDQ $64, CX
	JMP q8kfind

q8kfound:
	BSFL AX, AX
	LEAQ (CX)(AX*4), AX
	VMOVSS (SI)(AX*1), X0 // mx
	VDIVSS X0, X14, X1 // iscale = −127/mx
	VDIVSS X1, X15, X2 // 1/iscale
	VMOVSS X2, (DX)
	VBROADCASTSS X1, Z1
	XORQ CX, CX

q8kquant:
	VMULPS (SI)(CX*4), Z1, Z18
	VADDPS Z30, Z18, Z18
	VPANDD Z29, Z18, Z18
	VPSUBD Z28, Z18, Z18
	VPMINSD Z27, Z18, Z18
	VPMOVDB Z18, X18
	VMOVDQU8 X18, (DI)(CX*1)
	VPXORD X26, X18, X18
	VPSADBW X25, X18, X18
	VPSHUFD $0x4e, X18, X19
	VPADDQ X19, X18, X18
	VMOVD X18, AX
	SUBL $2048, AX
	MOVQ CX, R9
	SHRQ $3, R9
	MOVW AX, (BX)(R9*1)
	ADDQ $16, CX
	CMPQ CX, $256
	JNE q8kquant
	JMP q8knext

q8kzero:
	MOVL $0, (DX)
	VMOVDQU64 Z25, (DI)
	VMOVDQU64 Z25, 64(DI)
	VMOVDQU64 Z25, 128(DI)
	VMOVDQU64 Z25, 192(DI)
	VMOVDQU64 Y25, (BX)

q8knext:
	ADDQ $1024, SI
	ADDQ $256, DI
	ADDQ $4, DX
	ADDQ $32, BX
	DECQ R8
	JNZ q8ksuper
	VZEROUPPER
	RET
