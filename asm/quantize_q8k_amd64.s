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

// func quantizeQ8KAVX2(x *float32, q *int8, d *float32, bs *int16, nb int)
//
// quantizeQ8KAVX512's steps with 8 lanes: amax by VMAXPS(acc, |x|) (acc
// when |x| is NaN), mx the first element with |x| = amax (VCMPPS EQ,
// VMOVMSKPS, the lowest set bit), amax = 0 gives zeros; iscale = −127/mx,
// d = 1/iscale (VDIVSS); per element q = int8(min(127, (bits(iscale·x +
// 1.5·2^23) & 0x7fffff) − 0x400000)), the int8 truncation as VPSHUFB of
// each dword's low byte (q8kLow), two 8-element vectors merged by VPOR and
// VPERMD; bs: each 16 q plus 128 summed by VPSADBW, minus 2048.
TEXT ·quantizeQ8KAVX2(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ q+8(FP), DI
	MOVQ d+16(FP), DX
	MOVQ bs+24(FP), BX
	MOVQ nb+32(FP), R8
	MOVL $0x7fffffff, AX
	VMOVQ AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x4b400000, AX // 12582912.0
	VMOVQ AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x007fffff, AX
	VMOVQ AX, X13
	VPBROADCASTD X13, Y13
	MOVL $0x00400000, AX
	VMOVQ AX, X12
	VPBROADCASTD X12, Y12
	MOVL $127, AX
	VMOVQ AX, X11
	VPBROADCASTD X11, Y11
	VMOVDQU q8kLow<>+0(SB), Y10  // low bytes of the dwords to bytes 0..3 of each lane
	VMOVDQU q8kLow<>+32(SB), Y9  // to bytes 4..7
	VMOVDQU q8kLow<>+64(SB), Y8  // VPERMD: dwords 0, 4, 1, 5
	MOVL $0x80808080, AX
	VMOVQ AX, X7
	VPBROADCASTD X7, X7
	VPXOR X6, X6, X6

q8k2super:
	VXORPS Y0, Y0, Y0
	XORQ CX, CX

q8k2max:
	VANDPS (SI)(CX*1), Y15, Y1
	VMAXPS Y0, Y1, Y0
	VANDPS 32(SI)(CX*1), Y15, Y1
	VMAXPS Y0, Y1, Y0
	ADDQ $64, CX
	CMPQ CX, $1024
	JNE q8k2max
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPSHUFD $0x4e, X0, X1
	VMAXPS X1, X0, X0
	VPSHUFD $0xb1, X0, X1
	VMAXPS X1, X0, X0 // amax in every lane
	VPTEST X0, X0
	JZ q8k2zero
	VBROADCASTSS X0, Y0
	XORQ CX, CX

q8k2find:
	VANDPS (SI)(CX*1), Y15, Y1
	VCMPPS $0, Y0, Y1, Y1
	VMOVMSKPS Y1, AX
	TESTL AX, AX
	JNZ q8k2found
	ADDQ $32, CX
	JMP q8k2find

q8k2found:
	BSFL AX, AX
	LEAQ (CX)(AX*4), AX
	MOVL $0xc2fe0000, R9 // −127.0
	VMOVQ R9, X2
	MOVL $0x3f800000, R9 // 1.0
	VMOVQ R9, X3
	VMOVSS (SI)(AX*1), X0 // mx
	VDIVSS X0, X2, X1 // iscale = −127/mx
	VDIVSS X1, X3, X2 // 1/iscale
	VMOVSS X2, (DX)
	VBROADCASTSS X1, Y1
	XORQ CX, CX

q8k2quant:
	VMULPS (SI)(CX*4), Y1, Y2
	VMULPS 32(SI)(CX*4), Y1, Y3
	VADDPS Y14, Y2, Y2
	VADDPS Y14, Y3, Y3
	VPAND Y13, Y2, Y2
	VPAND Y13, Y3, Y3
	VPSUBD Y12, Y2, Y2
	VPSUBD Y12, Y3, Y3
	VPMINSD Y11, Y2, Y2
	VPMINSD Y11, Y3, Y3
	VPSHUFB Y10, Y2, Y2
	VPSHUFB Y9, Y3, Y3
	VPOR Y3, Y2, Y2
	VPERMD Y2, Y8, Y2
	VMOVDQU X2, (DI)(CX*1)
	VPXOR X7, X2, X2
	VPSADBW X6, X2, X2
	VPSHUFD $0x4e, X2, X3
	VPADDQ X3, X2, X2
	VMOVD X2, AX
	SUBL $2048, AX
	MOVQ CX, R9
	SHRQ $3, R9
	MOVW AX, (BX)(R9*1)
	ADDQ $16, CX
	CMPQ CX, $256
	JNE q8k2quant
	JMP q8k2next

q8k2zero:
	MOVL $0, (DX)
	VPXOR Y0, Y0, Y0
	VMOVDQU Y0, (DI)
	VMOVDQU Y0, 32(DI)
	VMOVDQU Y0, 64(DI)
	VMOVDQU Y0, 96(DI)
	VMOVDQU Y0, 128(DI)
	VMOVDQU Y0, 160(DI)
	VMOVDQU Y0, 192(DI)
	VMOVDQU Y0, 224(DI)
	VMOVDQU Y0, (BX)

q8k2next:
	ADDQ $1024, SI
	ADDQ $256, DI
	ADDQ $4, DX
	ADDQ $32, BX
	DECQ R8
	JNZ q8k2super
	VZEROUPPER
	RET

// q8kLow: VPSHUFB controls taking each dword's low byte to bytes 0..3 (then
// 4..7) of its 128-bit lane, the other bytes zeroed (0x80); then the VPERMD
// indexes 0, 4, 1, 5 that put the 16 bytes in element order.
DATA q8kLow<>+0(SB)/8, $0x808080800c080400
DATA q8kLow<>+8(SB)/8, $0x8080808080808080
DATA q8kLow<>+16(SB)/8, $0x808080800c080400
DATA q8kLow<>+24(SB)/8, $0x8080808080808080
DATA q8kLow<>+32(SB)/8, $0x0c08040080808080
DATA q8kLow<>+40(SB)/8, $0x8080808080808080
DATA q8kLow<>+48(SB)/8, $0x0c08040080808080
DATA q8kLow<>+56(SB)/8, $0x8080808080808080
DATA q8kLow<>+64(SB)/8, $0x0000000400000000
DATA q8kLow<>+72(SB)/8, $0x0000000500000001
DATA q8kLow<>+80(SB)/8, $0x0000000300000002
DATA q8kLow<>+88(SB)/8, $0x0000000700000006
GLOBL q8kLow<>(SB), RODATA|NOPTR, $96
