//go:build amd64 && gc && !purego

#include "textflag.h"

// func q4kIsumAVX2(qs *byte, a *int8, sc *[8]int32) int32
//
// Four iterations k = 0…3, each over the 32 bytes qs[32k …]: their low
// nibbles are sub-block 2k (activations a[64k …]), their high nibbles
// sub-block 2k+1 (a[64k+32 …]). VPMADDUBSW multiplies the unsigned nibbles
// by the signed activations and adds pairs into int16 (at most 2·15·128 =
// 3840: no saturation); VPMADDWD with ones widens pairs into int32; VPMULLD by
// the broadcast sub-block scale and VPADDD accumulate 8 int32 lanes, summed
// at the end. All integer, so the result is the generic one exactly.
TEXT ·q4kIsumAVX2(SB), NOSPLIT, $0-28
	MOVQ qs+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ sc+16(FP), DX
	MOVL $0x0f0f0f0f, AX
	VMOVQ AX, X7
	VPBROADCASTD X7, Y7
	MOVL $0x00010001, AX
	VMOVQ AX, X6
	VPBROADCASTD X6, Y6
	VPXOR Y5, Y5, Y5
	MOVQ $4, CX

loop:
	VMOVDQU (SI), Y0
	VPAND Y7, Y0, Y1
	VPSRLW $4, Y0, Y2
	VPAND Y7, Y2, Y2
	VMOVDQU (DI), Y3
	VMOVDQU 32(DI), Y4
	VPMADDUBSW Y3, Y1, Y1
	VPMADDUBSW Y4, Y2, Y2
	VPMADDWD Y6, Y1, Y1
	VPMADDWD Y6, Y2, Y2
	VPBROADCASTD (DX), Y3
	VPBROADCASTD 4(DX), Y4
	VPMULLD Y3, Y1, Y1
	VPMULLD Y4, Y2, Y2
	VPADDD Y1, Y5, Y5
	VPADDD Y2, Y5, Y5
	ADDQ $32, SI
	ADDQ $64, DI
	ADDQ $8, DX
	DECQ CX
	JNZ  loop

	VEXTRACTI128 $1, Y5, X0
	VPADDD X0, X5, X0
	VPSHUFD $0x4e, X0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0xb1, X0, X1
	VPADDD X1, X0, X0
	VMOVQ X0, AX
	MOVL AX, ret+24(FP)
	VZEROUPPER
	RET

// func q6kIsumAVX2(ql, qh *byte, a *int8, sc *[16]int16) int32
//
// Two halves of 128 weights. In each, the 32 qh bytes give, for group g =
// 0…3 of 32 weights, bits 2g…2g+1 (the q's top two bits); group g's low four
// bits are the low (g < 2) or high (g ≥ 2) nibbles of ql[32·(g%2) …]. q =
// low | top<<4 is at most 63 (VPSLLW of values ≤ 3 stays inside each byte).
// VPMADDUBSW q × a gives int16 pairs (≤ 2·63·128 = 16128, no saturation);
// VPMADDWD against the scales (the first sub-block's in the low 128-bit
// lane, the second's in the high one: bytes 0–15 and 16–31 of the group)
// gives int32, accumulated in 8 lanes and summed at the end. All integer.
TEXT ·q6kIsumAVX2(SB), NOSPLIT, $0-36
	MOVQ ql+0(FP), SI
	MOVQ qh+8(FP), BX
	MOVQ a+16(FP), DI
	MOVQ sc+24(FP), DX
	MOVL $0x0f0f0f0f, AX
	VMOVQ AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x03030303, AX
	VMOVQ AX, X14
	VPBROADCASTD X14, Y14
	VPXOR Y13, Y13, Y13
	MOVQ $2, CX

half:
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y7
	VMOVDQU (BX), Y2

	// g = 0: low nibbles of ql[0…31], qh bits 0–1.
	VPAND Y15, Y0, Y1
	VPAND Y14, Y2, Y3
	VPSLLW $4, Y3, Y3
	VPOR Y3, Y1, Y1
	VMOVDQU (DI), Y4
	VPMADDUBSW Y4, Y1, Y1
	VPBROADCASTW (DX), X5
	VPBROADCASTW 2(DX), X6
	VINSERTI128 $1, X6, Y5, Y5
	VPMADDWD Y5, Y1, Y1
	VPADDD Y1, Y13, Y13

	// g = 1: low nibbles of ql[32…63], qh bits 2–3.
	VPAND Y15, Y7, Y1
	VPSRLW $2, Y2, Y3
	VPAND Y14, Y3, Y3
	VPSLLW $4, Y3, Y3
	VPOR Y3, Y1, Y1
	VMOVDQU 32(DI), Y4
	VPMADDUBSW Y4, Y1, Y1
	VPBROADCASTW 4(DX), X5
	VPBROADCASTW 6(DX), X6
	VINSERTI128 $1, X6, Y5, Y5
	VPMADDWD Y5, Y1, Y1
	VPADDD Y1, Y13, Y13

	// g = 2: high nibbles of ql[0…31], qh bits 4–5.
	VPSRLW $4, Y0, Y1
	VPAND Y15, Y1, Y1
	VPSRLW $4, Y2, Y3
	VPAND Y14, Y3, Y3
	VPSLLW $4, Y3, Y3
	VPOR Y3, Y1, Y1
	VMOVDQU 64(DI), Y4
	VPMADDUBSW Y4, Y1, Y1
	VPBROADCASTW 8(DX), X5
	VPBROADCASTW 10(DX), X6
	VINSERTI128 $1, X6, Y5, Y5
	VPMADDWD Y5, Y1, Y1
	VPADDD Y1, Y13, Y13

	// g = 3: high nibbles of ql[32…63], qh bits 6–7.
	VPSRLW $4, Y7, Y1
	VPAND Y15, Y1, Y1
	VPSRLW $6, Y2, Y3
	VPAND Y14, Y3, Y3
	VPSLLW $4, Y3, Y3
	VPOR Y3, Y1, Y1
	VMOVDQU 96(DI), Y4
	VPMADDUBSW Y4, Y1, Y1
	VPBROADCASTW 12(DX), X5
	VPBROADCASTW 14(DX), X6
	VINSERTI128 $1, X6, Y5, Y5
	VPMADDWD Y5, Y1, Y1
	VPADDD Y1, Y13, Y13

	ADDQ $64, SI
	ADDQ $32, BX
	ADDQ $128, DI
	ADDQ $16, DX
	DECQ CX
	JNZ  half

	VEXTRACTI128 $1, Y13, X0
	VPADDD X0, X13, X0
	VPSHUFD $0x4e, X0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0xb1, X0, X1
	VPADDD X1, X0, X0
	VMOVQ X0, AX
	MOVL AX, ret+32(FP)
	VZEROUPPER
	RET

// The IQ4_NL / IQ4_XS codebook as int8, for VPSHUFB.
DATA kvaluesIQ4<>+0(SB)/8, $0xf6eaddcfbfad9881
DATA kvaluesIQ4<>+8(SB)/8, $0x7159453526190d01
GLOBL kvaluesIQ4<>(SB), RODATA|NOPTR, $16

// func iq4xsIsumAVX2(qs *byte, a *int8, sc *[8]int16) int32
//
// Four iterations k over qs[32k …]: bytes 0–15 are sub-block 2k (low
// nibbles: elements 0–15, high: 16–31), bytes 16–31 sub-block 2k+1. VPSHUFB
// looks the nibbles up in the codebook; the activations are regrouped with
// VPERM2I128 to match (low nibbles: a[64k …+15] and a[64k+32 …+47]; high:
// a[64k+16 …] and a[64k+48 …]). s8 × s8 is VPMADDUBSW(|K|, VPSIGNB(a, K)):
// K is never 0, a never −128, pairs at most 2·127·127 = 32258 (no
// saturation). VPMADDWD by the scales (sub-block 2k's in the low lane,
// 2k+1's in the high) gives int32, accumulated in 8 lanes. All integer.
TEXT ·iq4xsIsumAVX2(SB), NOSPLIT, $0-28
	MOVQ qs+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ sc+16(FP), DX
	MOVL $0x0f0f0f0f, AX
	VMOVQ AX, X15
	VPBROADCASTD X15, Y15
	VBROADCASTI128 kvaluesIQ4<>(SB), Y12
	VPXOR Y13, Y13, Y13
	MOVQ $4, CX

iq4loop:
	VMOVDQU (SI), Y0
	VPAND Y15, Y0, Y1
	VPSRLW $4, Y0, Y2
	VPAND Y15, Y2, Y2
	VPSHUFB Y1, Y12, Y1          // K of the low nibbles
	VPSHUFB Y2, Y12, Y2          // K of the high nibbles
	VMOVDQU (DI), Y3             // a[64k …+31]
	VMOVDQU 32(DI), Y4           // a[64k+32 …+63]
	VPERM2I128 $0x20, Y4, Y3, Y5 // a[64k …+15], a[64k+32 …+47]
	VPERM2I128 $0x31, Y4, Y3, Y6 // a[64k+16 …+31], a[64k+48 …+63]
	VPSIGNB Y1, Y5, Y5
	VPSIGNB Y2, Y6, Y6
	VPABSB Y1, Y1
	VPABSB Y2, Y2
	VPMADDUBSW Y5, Y1, Y1
	VPMADDUBSW Y6, Y2, Y2
	VPBROADCASTW (DX), X7
	VPBROADCASTW 2(DX), X8
	VINSERTI128 $1, X8, Y7, Y7
	VPMADDWD Y7, Y1, Y1
	VPMADDWD Y7, Y2, Y2
	VPADDD Y1, Y13, Y13
	VPADDD Y2, Y13, Y13
	ADDQ $32, SI
	ADDQ $64, DI
	ADDQ $4, DX
	DECQ CX
	JNZ  iq4loop

	VEXTRACTI128 $1, Y13, X0
	VPADDD X0, X13, X0
	VPSHUFD $0x4e, X0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0xb1, X0, X1
	VPADDD X1, X0, X0
	VMOVQ X0, AX
	MOVL AX, ret+24(FP)
	VZEROUPPER
	RET

// func q5kIsumAVX2(qs, qh *byte, a *int8, sc *[8]int32) int32
//
// q4kIsumAVX2 with a fifth bit: in iteration k, sub-block 2k takes bit 2k of
// each qh byte and 2k+1 bit 2k+1. Y8 holds qh shifted right by 2k (VPSRLW
// moves the high byte's low bits into the low byte's top, which the 0x01
// mask drops); bit 0 and bit 1 of each byte, times 16, are added to the
// nibbles (q ≤ 31, pairs ≤ 2·31·128: no saturation). All integer.
TEXT ·q5kIsumAVX2(SB), NOSPLIT, $0-36
	MOVQ qs+0(FP), SI
	MOVQ qh+8(FP), BX
	MOVQ a+16(FP), DI
	MOVQ sc+24(FP), DX
	MOVL $0x0f0f0f0f, AX
	VMOVQ AX, X7
	VPBROADCASTD X7, Y7
	MOVL $0x00010001, AX
	VMOVQ AX, X6
	VPBROADCASTD X6, Y6
	MOVL $0x01010101, AX
	VMOVQ AX, X10
	VPBROADCASTD X10, Y10
	VMOVDQU (BX), Y8
	VPXOR Y5, Y5, Y5
	MOVQ $4, CX

q5loop:
	VMOVDQU (SI), Y0
	VPAND Y7, Y0, Y1
	VPSRLW $4, Y0, Y2
	VPAND Y7, Y2, Y2
	VPAND Y10, Y8, Y9
	VPSLLW $4, Y9, Y9
	VPOR Y9, Y1, Y1
	VPSRLW $1, Y8, Y9
	VPAND Y10, Y9, Y9
	VPSLLW $4, Y9, Y9
	VPOR Y9, Y2, Y2
	VPSRLW $2, Y8, Y8
	VMOVDQU (DI), Y3
	VMOVDQU 32(DI), Y4
	VPMADDUBSW Y3, Y1, Y1
	VPMADDUBSW Y4, Y2, Y2
	VPMADDWD Y6, Y1, Y1
	VPMADDWD Y6, Y2, Y2
	VPBROADCASTD (DX), Y3
	VPBROADCASTD 4(DX), Y4
	VPMULLD Y3, Y1, Y1
	VPMULLD Y4, Y2, Y2
	VPADDD Y1, Y5, Y5
	VPADDD Y2, Y5, Y5
	ADDQ $32, SI
	ADDQ $64, DI
	ADDQ $8, DX
	DECQ CX
	JNZ  q5loop

	VEXTRACTI128 $1, Y5, X0
	VPADDD X0, X5, X0
	VPSHUFD $0x4e, X0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0xb1, X0, X1
	VPADDD X1, X0, X0
	VMOVQ X0, AX
	MOVL AX, ret+32(FP)
	VZEROUPPER
	RET
