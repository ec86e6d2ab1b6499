//go:build amd64 && gc && !purego

#include "textflag.h"

// AVX-512 VNNI kernels. Each reproduces the pure-Go definition bit for bit:
// the integer lane sums are exact, and the float work is done in the same
// order with the same roundings (VMULPS then VADDPS, never an FMA).
//
// A ZMM holds two consecutive blocks b (even) and b+1 (odd): its 16 int32
// lanes are p[b][0..7], p[b+1][0..7], so one accumulator ZMM is exactly the
// definition's acc[0..15] (even blocks in the low half, odd in the high
// half). A final odd block goes through YMM ops and a masked add (K1 = low 8
// lanes) into the low half.
//
// The s8×s8 products use VPDPBUSD (u8×s8) with an offset:
//   Q8_0: w+128 = w XOR 0x80 is an unsigned byte, and
//         Σ(w+128)·a = Σw·a + 128·Σa, so the accumulator starts at -128·Σa.
//   Q4_0: the nibble n is already unsigned and Σ(n-8)·a = Σn·a - 8·Σa, so the
//         accumulator starts at -8·Σa.
// The corrections -k·Σa per lane depend only on the activations; packAct
// computes them once per activation row together with the lane-broadcast
// activation scales. Every sum stays far inside int32, so the lanes are exact.
//
// Packed activations (packAct), per pair of blocks p and activation i of a
// group of g rows, at offset (p·g + i)·192:
//   +0   64 bytes  quants of blocks 2p, 2p+1
//   +64  16 int32  -k·lane sums of a
//   +128 16 float32 da[2p] ×8, da[2p+1] ×8
// A final odd block fills the first 32 bytes of each part.

// VPERMPS index: lanes 0-7 take element 0, lanes 8-15 element 1.
DATA pairidx<>+0(SB)/8, $0
DATA pairidx<>+8(SB)/8, $0
DATA pairidx<>+16(SB)/8, $0
DATA pairidx<>+24(SB)/8, $0
DATA pairidx<>+32(SB)/8, $0x0000000100000001
DATA pairidx<>+40(SB)/8, $0x0000000100000001
DATA pairidx<>+48(SB)/8, $0x0000000100000001
DATA pairidx<>+56(SB)/8, $0x0000000100000001
GLOBL pairidx<>(SB), RODATA|NOPTR, $64

// The same for Q4_0's pair layout: lanes 0-3 and 8-11 element 0, lanes 4-7
// and 12-15 element 1.
DATA q4pairidx<>+0(SB)/8, $0x0000000000000000
DATA q4pairidx<>+8(SB)/8, $0x0000000000000000
DATA q4pairidx<>+16(SB)/8, $0x0000000100000001
DATA q4pairidx<>+24(SB)/8, $0x0000000100000001
DATA q4pairidx<>+32(SB)/8, $0x0000000000000000
DATA q4pairidx<>+40(SB)/8, $0x0000000000000000
DATA q4pairidx<>+48(SB)/8, $0x0000000100000001
DATA q4pairidx<>+56(SB)/8, $0x0000000100000001
GLOBL q4pairidx<>(SB), RODATA|NOPTR, $64

// Q4_0 accumulators hold the lanes of a pair in the order of Q4W2 (128-bit
// lanes: acc[0-3], acc[8-11], acc[4-7], acc[12-15]); Q4FIX swaps the middle
// two back into the definition's order before a final odd block and the
// reduction. Q8_0 needs nothing.
#define Q4FIX(z) VSHUFF32X4 $0xd8, z, z, z
#define NOFIX(z)


// Load two blocks of weights at addr into z (y, x: its YMM and XMM names)
// as unsigned bytes; tx is a scratch XMM.
#define Q8W2(addr, z, y, x, tx) \
	VMOVDQU64 addr, z; \
	VPXORD    Z31, z, z

// Q4_0: the pair's 32 bytes broadcast to both halves; the words of the upper
// half (mask K2) shift right by 4, and AND 0x0f leaves the nibbles: 128-bit
// lanes [elements 0-15 of b, 0-15 of b+1, 16-31 of b, 16-31 of b+1] (no
// cross-lane permute per pair). packAct lays the activations (k = 8) out in
// the same order, the scale indexes follow it, and Q4FIX restores the
// definition's lane order of the accumulators at the end.
#define Q4W2(addr, z, y, x, tx) \
	VBROADCASTI64X4 addr, z; \
	VPSRLW   $4, z, K2, z; \
	VPANDD   Z27, z, z

// One block of weights into y.
#define Q8W1(addr, z, y, x, tx) \
	VMOVDQU addr, y; \
	VPXORD  Y31, y, y

#define Q4W1(addr, z, y, x, tx) \
	VMOVDQU addr, x; \
	VPSRLW  $4, x, tx; \
	VINSERTI128 $1, tx, y, y; \
	VPANDD  Y27, y, y

// Two blocks of activation slot off (R10) into accumulator acc; Z5 holds
// the lane-broadcast weight scales.
#define ACT2(off, acc, t, s) \
	VMOVDQU32 64+off(R10), t; \
	VPDPBUSD  off(R10), Z4, t; \
	VCVTDQ2PS t, t; \
	VMULPS    128+off(R10), Z5, s; \
	VMULPS    s, t, t; \
	VADDPS    t, acc, acc

// The final odd block (even parity): low half of acc only.
#define ACT1(off, acc, ty, tz, sy) \
	VMOVDQU32 64+off(R10), ty; \
	VPDPBUSD  off(R10), Y4, ty; \
	VCVTDQ2PS ty, ty; \
	VMULPS    128+off(R10), Y5, sy; \
	VMULPS    sy, ty, ty; \
	VADDPS    tz, acc, K1, acc

// v = lo+hi, u = v[0:4]+v[4:8], r = (u0+u2)+(u1+u3), stored to dst.
#define REDUCE(accz, accy, dst) \
	VEXTRACTF64X4 $1, accz, Y6; \
	VADDPS   Y6, accy, Y6; \
	VEXTRACTF128 $1, Y6, X7; \
	VADDPS   X7, X6, X6; \
	VMOVHLPS X6, X6, X7; \
	VADDPS   X7, X6, X6; \
	VMOVSHDUP X6, X7; \
	VADDSS   X7, X6, X6; \
	VMOVSS   X6, dst

#define SETUP \
	MOVL $0x80, AX; \
	VPBROADCASTB AX, Z31; \
	MOVL $0x0f, AX; \
	VPBROADCASTB AX, Z27; \
	VMOVDQU64 pairidx<>(SB), Z30; \
	MOVL $0xff, AX; \
	KMOVW AX, K1; \
	MOVL $0xffff0000, AX; \
	KMOVD AX, K2

// One pair of blocks of the shared activation (registers Z17 corr, Z18 quants,
// Z19 scales) times weights w with lane-broadcast weight scales dws.
#define ACTR2(w, dws, acc, t, s) \
	VMOVDQA32 Z17, t; \
	VPDPBUSD  Z18, w, t; \
	VCVTDQ2PS t, t; \
	VMULPS    Z19, dws, s; \
	VMULPS    s, t, t; \
	VADDPS    t, acc, acc

#define ACTR1(w, dws, acc, ty, tz, sy) \
	VMOVDQA32 Y17, ty; \
	VPDPBUSD  Y18, w, ty; \
	VCVTDQ2PS ty, ty; \
	VMULPS    Y19, dws, sy; \
	VMULPS    sy, ty, ty; \
	VADDPS    tz, acc, K1, acc

// One pair of blocks of the packed activation at off(R10) times weights w,
// with the lane-broadcast block scales sc = dw·da computed beforehand.
#define ACTM2(off, w, sc, acc, t) \
	VMOVDQU32 64+off(R10), t; \
	VPDPBUSD  off(R10), w, t; \
	VCVTDQ2PS t, t; \
	VMULPS    sc, t, t; \
	VADDPS    t, acc, acc

// GROUP1: 8 pairs (16 blocks) of one weight row into Z0. The 16 scales are
// one VMULPS (dw·da, exactly the definition's s_b), spread per pair by
// VPERMPS with the indexes in Z2, Z3, Z10-Z13, Z20, Z21. One row at a time
// reads the weights as a single sequential stream, which the hardware
// prefetchers follow best.
#define GROUP1(W2, wstep2) \
	VMOVUPS (DX), Z22; \
	VMULPS  (AX), Z22, Z22; \
	W2(0*wstep2(SI), Z4, Y4, X4, X6); \
	VPERMPS Z22, Z2, Z5; \
	ACTM2(0, Z4, Z5, Z0, Z6); \
	W2(1*wstep2(SI), Z14, Y14, X14, X7); \
	VPERMPS Z22, Z3, Z16; \
	ACTM2(192, Z14, Z16, Z0, Z8); \
	W2(2*wstep2(SI), Z4, Y4, X4, X6); \
	VPERMPS Z22, Z10, Z5; \
	ACTM2(384, Z4, Z5, Z0, Z6); \
	W2(3*wstep2(SI), Z14, Y14, X14, X7); \
	VPERMPS Z22, Z11, Z16; \
	ACTM2(576, Z14, Z16, Z0, Z8); \
	W2(4*wstep2(SI), Z4, Y4, X4, X6); \
	VPERMPS Z22, Z12, Z5; \
	ACTM2(768, Z4, Z5, Z0, Z6); \
	W2(5*wstep2(SI), Z14, Y14, X14, X7); \
	VPERMPS Z22, Z13, Z16; \
	ACTM2(960, Z14, Z16, Z0, Z8); \
	W2(6*wstep2(SI), Z4, Y4, X4, X6); \
	VPERMPS Z22, Z20, Z5; \
	ACTM2(1152, Z4, Z5, Z0, Z6); \
	W2(7*wstep2(SI), Z14, Y14, X14, X7); \
	VPERMPS Z22, Z21, Z16; \
	ACTM2(1344, Z14, Z16, Z0, Z8); \
	ADDQ $(8*wstep2), SI; \
	ADDQ $64, DX; \
	ADDQ $64, AX; \
	ADDQ $(8*192), R10

// MATVEC: one activation (packed with g = 1) against rows weight rows, one
// row at a time: 16 blocks per GROUP1, then pairs, then a final odd block.
// (Two rows per pass, sharing the activation loads, read two interleaved
// streams and reached only about half the bandwidth from memory.)
// wstep2/wstep1: weight bytes per pair / per block.
#define MATVEC(W2, W1, wstep2, wstep1, pidx, gidx, FIX) \
	SETUP; \
	VMOVDQU64 pidx, Z30; \
	MOVQ out+0(FP), DI; \
	MOVQ w+8(FP), SI; \
	MOVQ dw+16(FP), DX; \
	MOVQ rows+24(FP), CX; \
	MOVQ act+32(FP), R8; \
	MOVQ da+40(FP), R11; \
	MOVQ nb+48(FP), R9; \
	VMOVDQU64 gidx+0(SB), Z2; \
	VMOVDQU64 gidx+64(SB), Z3; \
	VMOVDQU64 gidx+128(SB), Z10; \
	VMOVDQU64 gidx+192(SB), Z11; \
	VMOVDQU64 gidx+256(SB), Z12; \
	VMOVDQU64 gidx+320(SB), Z13; \
	VMOVDQU64 gidx+384(SB), Z20; \
	VMOVDQU64 gidx+448(SB), Z21; \
row1: \
	TESTQ CX, CX; \
	JZ    done1; \
	VPXORD Z0, Z0, Z0; \
	MOVQ  R8, R10; \
	MOVQ  R9, BX; \
	MOVQ  R11, AX; \
group1: \
	CMPQ BX, $16; \
	JLT  pair1; \
	GROUP1(W2, wstep2); \
	SUBQ $16, BX; \
	JMP  group1; \
pair1: \
	CMPQ BX, $2; \
	JLT  tail1; \
	W2((SI), Z4, Y4, X4, X6); \
	VMOVQ (DX), X5; \
	VPERMPS Z5, Z30, Z5; \
	ACT2(0, Z0, Z6, Z7); \
	ADDQ $wstep2, SI; \
	ADDQ $8, DX; \
	ADDQ $192, R10; \
	SUBQ $2, BX; \
	JMP  pair1; \
tail1: \
	FIX(Z0); \
	TESTQ BX, BX; \
	JZ    red1; \
	W1((SI), Z4, Y4, X4, X6); \
	VBROADCASTSS (DX), Y5; \
	ACT1(0, Z0, Y6, Z6, Y7); \
	ADDQ $wstep1, SI; \
	ADDQ $4, DX; \
red1: \
	REDUCE(Z0, Y0, (DI)); \
	ADDQ $4, DI; \
	DECQ CX; \
	JMP  row1; \
done1: \
	VZEROUPPER; \
	RET

// MATMUL42 body: two weight rows at a time against the four activations,
// so that each activation load serves two rows (then MATMUL4's loop takes
// a last odd row).
#define MATMUL42(W2, W1, wstep2, wstep1, FIX) \
	IMUL3Q $wstep1, R9, R13; \
row42: \
	CMPQ CX, $2; \
	JLT  row4; \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z8, Z8, Z8; \
	VPXORD Z9, Z9, Z9; \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11; \
	MOVQ  R8, R10; \
	MOVQ  R9, BX; \
	LEAQ  (DX)(R9*4), AX; \
pair42: \
	CMPQ BX, $2; \
	JLT  tail42; \
	W2((SI), Z4, Y4, X4, X6); \
	W2((SI)(R13*1), Z14, Y14, X14, X6); \
	VMOVQ (DX), X5; \
	VPERMPS Z5, Z30, Z5; \
	VMOVQ (AX), X16; \
	VPERMPS Z16, Z30, Z16; \
	VMOVDQU32 64(R10), Z17; \
	VMOVDQU64 0(R10), Z18; \
	VMOVUPS 128(R10), Z19; \
	ACTR2(Z4, Z5, Z0, Z6, Z7); \
	ACTR2(Z14, Z16, Z8, Z12, Z13); \
	VMOVDQU32 256(R10), Z17; \
	VMOVDQU64 192(R10), Z18; \
	VMOVUPS 320(R10), Z19; \
	ACTR2(Z4, Z5, Z1, Z6, Z7); \
	ACTR2(Z14, Z16, Z9, Z12, Z13); \
	VMOVDQU32 448(R10), Z17; \
	VMOVDQU64 384(R10), Z18; \
	VMOVUPS 512(R10), Z19; \
	ACTR2(Z4, Z5, Z2, Z6, Z7); \
	ACTR2(Z14, Z16, Z10, Z12, Z13); \
	VMOVDQU32 640(R10), Z17; \
	VMOVDQU64 576(R10), Z18; \
	VMOVUPS 704(R10), Z19; \
	ACTR2(Z4, Z5, Z3, Z6, Z7); \
	ACTR2(Z14, Z16, Z11, Z12, Z13); \
	ADDQ $wstep2, SI; \
	ADDQ $8, DX; \
	ADDQ $8, AX; \
	ADDQ $768, R10; \
	SUBQ $2, BX; \
	JMP  pair42; \
tail42: \
	FIX(Z0); \
	FIX(Z1); \
	FIX(Z2); \
	FIX(Z3); \
	FIX(Z8); \
	FIX(Z9); \
	FIX(Z10); \
	FIX(Z11); \
	TESTQ BX, BX; \
	JZ    red42; \
	W1((SI), Z4, Y4, X4, X6); \
	W1((SI)(R13*1), Z14, Y14, X14, X6); \
	VBROADCASTSS (DX), Y5; \
	VBROADCASTSS (AX), Y16; \
	VMOVDQU32 64(R10), Y17; \
	VMOVDQU32 0(R10), Y18; \
	VMOVUPS 128(R10), Y19; \
	ACTR1(Y4, Y5, Z0, Y6, Z6, Y7); \
	ACTR1(Y14, Y16, Z8, Y12, Z12, Y13); \
	VMOVDQU32 256(R10), Y17; \
	VMOVDQU32 192(R10), Y18; \
	VMOVUPS 320(R10), Y19; \
	ACTR1(Y4, Y5, Z1, Y6, Z6, Y7); \
	ACTR1(Y14, Y16, Z9, Y12, Z12, Y13); \
	VMOVDQU32 448(R10), Y17; \
	VMOVDQU32 384(R10), Y18; \
	VMOVUPS 512(R10), Y19; \
	ACTR1(Y4, Y5, Z2, Y6, Z6, Y7); \
	ACTR1(Y14, Y16, Z10, Y12, Z12, Y13); \
	VMOVDQU32 640(R10), Y17; \
	VMOVDQU32 576(R10), Y18; \
	VMOVUPS 704(R10), Y19; \
	ACTR1(Y4, Y5, Z3, Y6, Z6, Y7); \
	ACTR1(Y14, Y16, Z11, Y12, Z12, Y13); \
	ADDQ $wstep1, SI; \
	ADDQ $4, DX; \
	ADDQ $4, AX; \
red42: \
	REDUCE(Z0, Y0, (DI)); \
	REDUCE(Z8, Y8, 4(DI)); \
	REDUCE(Z1, Y1, (DI)(R11*1)); \
	REDUCE(Z9, Y9, 4(DI)(R11*1)); \
	REDUCE(Z2, Y2, (DI)(R11*2)); \
	REDUCE(Z10, Y10, 4(DI)(R11*2)); \
	REDUCE(Z3, Y3, (DI)(R12*1)); \
	REDUCE(Z11, Y11, 4(DI)(R12*1)); \
	ADDQ $8, DI; \
	ADDQ R13, SI; \
	MOVQ AX, DX; \
	SUBQ $2, CX; \
	JMP  row42

// MATMUL4: four activations (packed with g = 4) against rows weight rows;
// out for activation i at out + i·ldo floats.
#define MATMUL4(W2, W1, wstep2, wstep1, pidx, FIX) \
	SETUP; \
	VMOVDQU64 pidx, Z30; \
	MOVQ out+0(FP), DI; \
	MOVQ ldo+8(FP), R11; \
	SHLQ $2, R11; \
	LEAQ (R11)(R11*2), R12; \
	MOVQ w+16(FP), SI; \
	MOVQ dw+24(FP), DX; \
	MOVQ rows+32(FP), CX; \
	MOVQ act+40(FP), R8; \
	MOVQ nb+48(FP), R9; \
	MATMUL42(W2, W1, wstep2, wstep1, FIX); \
row4: \
	TESTQ CX, CX; \
	JZ    done4; \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	MOVQ  R8, R10; \
	MOVQ  R9, BX; \
pair4: \
	CMPQ BX, $2; \
	JLT  tail4; \
	W2((SI), Z4, Y4, X4, X6); \
	VMOVQ (DX), X5; \
	VPERMPS Z5, Z30, Z5; \
	ACT2(0, Z0, Z6, Z7); \
	ACT2(192, Z1, Z8, Z9); \
	ACT2(384, Z2, Z10, Z11); \
	ACT2(576, Z3, Z12, Z13); \
	ADDQ $wstep2, SI; \
	ADDQ $8, DX; \
	ADDQ $768, R10; \
	SUBQ $2, BX; \
	JMP  pair4; \
tail4: \
	FIX(Z0); \
	FIX(Z1); \
	FIX(Z2); \
	FIX(Z3); \
	TESTQ BX, BX; \
	JZ    red4; \
	W1((SI), Z4, Y4, X4, X6); \
	VBROADCASTSS (DX), Y5; \
	ACT1(0, Z0, Y6, Z6, Y7); \
	ACT1(192, Z1, Y8, Z8, Y9); \
	ACT1(384, Z2, Y10, Z10, Y11); \
	ACT1(576, Z3, Y12, Z12, Y13); \
	ADDQ $wstep1, SI; \
	ADDQ $4, DX; \
red4: \
	REDUCE(Z0, Y0, (DI)); \
	REDUCE(Z1, Y1, (DI)(R11*1)); \
	REDUCE(Z2, Y2, (DI)(R11*2)); \
	REDUCE(Z3, Y3, (DI)(R12*1)); \
	ADDQ $4, DI; \
	DECQ CX; \
	JMP  row4; \
done4: \
	VZEROUPPER; \
	RET

// VPERMPS indexes for pair k of a group of 8: lanes 0-7 take element 2k,
// lanes 8-15 element 2k+1 (of 16 precomputed block scales).
DATA grpidx<>+0(SB)/8, $0x0000000000000000
DATA grpidx<>+8(SB)/8, $0x0000000000000000
DATA grpidx<>+16(SB)/8, $0x0000000000000000
DATA grpidx<>+24(SB)/8, $0x0000000000000000
DATA grpidx<>+32(SB)/8, $0x0000000100000001
DATA grpidx<>+40(SB)/8, $0x0000000100000001
DATA grpidx<>+48(SB)/8, $0x0000000100000001
DATA grpidx<>+56(SB)/8, $0x0000000100000001
DATA grpidx<>+64(SB)/8, $0x0000000200000002
DATA grpidx<>+72(SB)/8, $0x0000000200000002
DATA grpidx<>+80(SB)/8, $0x0000000200000002
DATA grpidx<>+88(SB)/8, $0x0000000200000002
DATA grpidx<>+96(SB)/8, $0x0000000300000003
DATA grpidx<>+104(SB)/8, $0x0000000300000003
DATA grpidx<>+112(SB)/8, $0x0000000300000003
DATA grpidx<>+120(SB)/8, $0x0000000300000003
DATA grpidx<>+128(SB)/8, $0x0000000400000004
DATA grpidx<>+136(SB)/8, $0x0000000400000004
DATA grpidx<>+144(SB)/8, $0x0000000400000004
DATA grpidx<>+152(SB)/8, $0x0000000400000004
DATA grpidx<>+160(SB)/8, $0x0000000500000005
DATA grpidx<>+168(SB)/8, $0x0000000500000005
DATA grpidx<>+176(SB)/8, $0x0000000500000005
DATA grpidx<>+184(SB)/8, $0x0000000500000005
DATA grpidx<>+192(SB)/8, $0x0000000600000006
DATA grpidx<>+200(SB)/8, $0x0000000600000006
DATA grpidx<>+208(SB)/8, $0x0000000600000006
DATA grpidx<>+216(SB)/8, $0x0000000600000006
DATA grpidx<>+224(SB)/8, $0x0000000700000007
DATA grpidx<>+232(SB)/8, $0x0000000700000007
DATA grpidx<>+240(SB)/8, $0x0000000700000007
DATA grpidx<>+248(SB)/8, $0x0000000700000007
DATA grpidx<>+256(SB)/8, $0x0000000800000008
DATA grpidx<>+264(SB)/8, $0x0000000800000008
DATA grpidx<>+272(SB)/8, $0x0000000800000008
DATA grpidx<>+280(SB)/8, $0x0000000800000008
DATA grpidx<>+288(SB)/8, $0x0000000900000009
DATA grpidx<>+296(SB)/8, $0x0000000900000009
DATA grpidx<>+304(SB)/8, $0x0000000900000009
DATA grpidx<>+312(SB)/8, $0x0000000900000009
DATA grpidx<>+320(SB)/8, $0x0000000a0000000a
DATA grpidx<>+328(SB)/8, $0x0000000a0000000a
DATA grpidx<>+336(SB)/8, $0x0000000a0000000a
DATA grpidx<>+344(SB)/8, $0x0000000a0000000a
DATA grpidx<>+352(SB)/8, $0x0000000b0000000b
DATA grpidx<>+360(SB)/8, $0x0000000b0000000b
DATA grpidx<>+368(SB)/8, $0x0000000b0000000b
DATA grpidx<>+376(SB)/8, $0x0000000b0000000b
DATA grpidx<>+384(SB)/8, $0x0000000c0000000c
DATA grpidx<>+392(SB)/8, $0x0000000c0000000c
DATA grpidx<>+400(SB)/8, $0x0000000c0000000c
DATA grpidx<>+408(SB)/8, $0x0000000c0000000c
DATA grpidx<>+416(SB)/8, $0x0000000d0000000d
DATA grpidx<>+424(SB)/8, $0x0000000d0000000d
DATA grpidx<>+432(SB)/8, $0x0000000d0000000d
DATA grpidx<>+440(SB)/8, $0x0000000d0000000d
DATA grpidx<>+448(SB)/8, $0x0000000e0000000e
DATA grpidx<>+456(SB)/8, $0x0000000e0000000e
DATA grpidx<>+464(SB)/8, $0x0000000e0000000e
DATA grpidx<>+472(SB)/8, $0x0000000e0000000e
DATA grpidx<>+480(SB)/8, $0x0000000f0000000f
DATA grpidx<>+488(SB)/8, $0x0000000f0000000f
DATA grpidx<>+496(SB)/8, $0x0000000f0000000f
DATA grpidx<>+504(SB)/8, $0x0000000f0000000f
GLOBL grpidx<>(SB), RODATA|NOPTR, $512

// The Q4_0 layout of a pair (see Q4W2): lanes 0-3 and 8-11 belong to block
// 2k, lanes 4-7 and 12-15 to block 2k+1.
DATA q4grpidx<>+0(SB)/8, $0x0000000000000000
DATA q4grpidx<>+8(SB)/8, $0x0000000000000000
DATA q4grpidx<>+16(SB)/8, $0x0000000100000001
DATA q4grpidx<>+24(SB)/8, $0x0000000100000001
DATA q4grpidx<>+32(SB)/8, $0x0000000000000000
DATA q4grpidx<>+40(SB)/8, $0x0000000000000000
DATA q4grpidx<>+48(SB)/8, $0x0000000100000001
DATA q4grpidx<>+56(SB)/8, $0x0000000100000001
DATA q4grpidx<>+64(SB)/8, $0x0000000200000002
DATA q4grpidx<>+72(SB)/8, $0x0000000200000002
DATA q4grpidx<>+80(SB)/8, $0x0000000300000003
DATA q4grpidx<>+88(SB)/8, $0x0000000300000003
DATA q4grpidx<>+96(SB)/8, $0x0000000200000002
DATA q4grpidx<>+104(SB)/8, $0x0000000200000002
DATA q4grpidx<>+112(SB)/8, $0x0000000300000003
DATA q4grpidx<>+120(SB)/8, $0x0000000300000003
DATA q4grpidx<>+128(SB)/8, $0x0000000400000004
DATA q4grpidx<>+136(SB)/8, $0x0000000400000004
DATA q4grpidx<>+144(SB)/8, $0x0000000500000005
DATA q4grpidx<>+152(SB)/8, $0x0000000500000005
DATA q4grpidx<>+160(SB)/8, $0x0000000400000004
DATA q4grpidx<>+168(SB)/8, $0x0000000400000004
DATA q4grpidx<>+176(SB)/8, $0x0000000500000005
DATA q4grpidx<>+184(SB)/8, $0x0000000500000005
DATA q4grpidx<>+192(SB)/8, $0x0000000600000006
DATA q4grpidx<>+200(SB)/8, $0x0000000600000006
DATA q4grpidx<>+208(SB)/8, $0x0000000700000007
DATA q4grpidx<>+216(SB)/8, $0x0000000700000007
DATA q4grpidx<>+224(SB)/8, $0x0000000600000006
DATA q4grpidx<>+232(SB)/8, $0x0000000600000006
DATA q4grpidx<>+240(SB)/8, $0x0000000700000007
DATA q4grpidx<>+248(SB)/8, $0x0000000700000007
DATA q4grpidx<>+256(SB)/8, $0x0000000800000008
DATA q4grpidx<>+264(SB)/8, $0x0000000800000008
DATA q4grpidx<>+272(SB)/8, $0x0000000900000009
DATA q4grpidx<>+280(SB)/8, $0x0000000900000009
DATA q4grpidx<>+288(SB)/8, $0x0000000800000008
DATA q4grpidx<>+296(SB)/8, $0x0000000800000008
DATA q4grpidx<>+304(SB)/8, $0x0000000900000009
DATA q4grpidx<>+312(SB)/8, $0x0000000900000009
DATA q4grpidx<>+320(SB)/8, $0x0000000a0000000a
DATA q4grpidx<>+328(SB)/8, $0x0000000a0000000a
DATA q4grpidx<>+336(SB)/8, $0x0000000b0000000b
DATA q4grpidx<>+344(SB)/8, $0x0000000b0000000b
DATA q4grpidx<>+352(SB)/8, $0x0000000a0000000a
DATA q4grpidx<>+360(SB)/8, $0x0000000a0000000a
DATA q4grpidx<>+368(SB)/8, $0x0000000b0000000b
DATA q4grpidx<>+376(SB)/8, $0x0000000b0000000b
DATA q4grpidx<>+384(SB)/8, $0x0000000c0000000c
DATA q4grpidx<>+392(SB)/8, $0x0000000c0000000c
DATA q4grpidx<>+400(SB)/8, $0x0000000d0000000d
DATA q4grpidx<>+408(SB)/8, $0x0000000d0000000d
DATA q4grpidx<>+416(SB)/8, $0x0000000c0000000c
DATA q4grpidx<>+424(SB)/8, $0x0000000c0000000c
DATA q4grpidx<>+432(SB)/8, $0x0000000d0000000d
DATA q4grpidx<>+440(SB)/8, $0x0000000d0000000d
DATA q4grpidx<>+448(SB)/8, $0x0000000e0000000e
DATA q4grpidx<>+456(SB)/8, $0x0000000e0000000e
DATA q4grpidx<>+464(SB)/8, $0x0000000f0000000f
DATA q4grpidx<>+472(SB)/8, $0x0000000f0000000f
DATA q4grpidx<>+480(SB)/8, $0x0000000e0000000e
DATA q4grpidx<>+488(SB)/8, $0x0000000e0000000e
DATA q4grpidx<>+496(SB)/8, $0x0000000f0000000f
DATA q4grpidx<>+504(SB)/8, $0x0000000f0000000f
GLOBL q4grpidx<>(SB), RODATA|NOPTR, $512

// func matVec1Q8_0AVX512(out *float32, w *int8, dw *float32, rows int, act *byte, da *float32, nb int)
TEXT ·matVec1Q8_0AVX512(SB), NOSPLIT, $0-56
	MATVEC(Q8W2, Q8W1, 64, 32, pairidx<>(SB), grpidx<>, NOFIX)

// func matVec1Q4_0AVX512(out *float32, w *byte, dw *float32, rows int, act *byte, da *float32, nb int)
TEXT ·matVec1Q4_0AVX512(SB), NOSPLIT, $0-56
	MATVEC(Q4W2, Q4W1, 32, 16, q4pairidx<>(SB), q4grpidx<>, Q4FIX)

// func matMul4Q8_0AVX512(out *float32, ldo int, w *int8, dw *float32, rows int, act *byte, nb int)
TEXT ·matMul4Q8_0AVX512(SB), NOSPLIT, $0-56
	MATMUL4(Q8W2, Q8W1, 64, 32, pairidx<>(SB), NOFIX)

// func matMul4Q4_0AVX512(out *float32, ldo int, w *byte, dw *float32, rows int, act *byte, nb int)
TEXT ·matMul4Q4_0AVX512(SB), NOSPLIT, $0-56
	MATMUL4(Q4W2, Q4W1, 32, 16, q4pairidx<>(SB), Q4FIX)

// func packActAVX512(dst *byte, a *int8, da *float32, nb int, ng int, k int)
TEXT ·packActAVX512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ da+16(FP), DX
	MOVQ ng+32(FP), R8
	MOVQ k+40(FP), AX
	VPBROADCASTB AX, Z5         // k as unsigned bytes
	VPXORD Y6, Y6, Y6
	IMUL3Q $192, R8, R9         // R9 = pair stride g·192

packrow:
	TESTQ R8, R8
	JZ    packdone
	MOVQ  DI, R10               // this row's slot in pair 0
	MOVQ  nb+24(FP), CX

	CMPQ AX, $8
	JEQ  packpair4

packpair:
	CMPQ CX, $2
	JLT  packtail
	VMOVDQU64 (SI), Z0
	VMOVDQU64 Z0, (R10)
	VPXORD    Z1, Z1, Z1
	VPDPBUSD  Z0, Z5, Z1        // k·Σa per lane (u8 k × s8 a)
	VPSUBD    Z1, Z6, Z1        // -k·Σa
	VMOVDQU32 Z1, 64(R10)
	VBROADCASTSS (DX), Y2
	VBROADCASTSS 4(DX), Y3
	VMOVUPS   Y2, 128(R10)
	VMOVUPS   Y3, 160(R10)
	ADDQ $64, SI
	ADDQ $8, DX
	ADDQ R9, R10
	SUBQ $2, CX
	JMP  packpair

	JMP  packtail

// Q4_0 (k = 8): the pair's 128-bit lanes in the order of Q4W2: quants and
// corrections of [a0-15 of 2p, a0-15 of 2p+1, a16-31 of 2p, a16-31 of 2p+1],
// scales da[2p] ×4, da[2p+1] ×4, twice.
packpair4:
	CMPQ CX, $2
	JLT  packtail
	VMOVDQU64 (SI), Z0
	VSHUFI64X2 $0xd8, Z0, Z0, Z0
	VMOVDQU64 Z0, (R10)
	VPXORD    Z1, Z1, Z1
	VPDPBUSD  Z0, Z5, Z1
	VPSUBD    Z1, Z6, Z1
	VMOVDQU32 Z1, 64(R10)
	VBROADCASTSS (DX), X2
	VBROADCASTSS 4(DX), X3
	VMOVUPS   X2, 128(R10)
	VMOVUPS   X3, 144(R10)
	VMOVUPS   X2, 160(R10)
	VMOVUPS   X3, 176(R10)
	ADDQ $64, SI
	ADDQ $8, DX
	ADDQ R9, R10
	SUBQ $2, CX
	JMP  packpair4

packtail:
	TESTQ CX, CX
	JZ    packnext
	VMOVDQU (SI), Y0
	VMOVDQU Y0, (R10)
	VPXORD   Y1, Y1, Y1
	VPDPBUSD Y0, Y5, Y1
	VPSUBD   Y1, Y6, Y1
	VMOVDQU32 Y1, 64(R10)
	VBROADCASTSS (DX), Y2
	VMOVUPS Y2, 128(R10)
	ADDQ $32, SI
	ADDQ $4, DX

packnext:
	ADDQ $192, DI
	DECQ R8
	JMP  packrow

packdone:
	VZEROUPPER
	RET
