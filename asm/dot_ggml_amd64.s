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
	MOVQ AX, X7
	VPBROADCASTD X7, Y7
	MOVL $0x00010001, AX
	MOVQ AX, X6
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
	MOVQ X0, AX
	MOVL AX, ret+24(FP)
	VZEROUPPER
	RET
