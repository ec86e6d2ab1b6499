// Shared by float_amd64.s and f16_amd64.s.

// RED8 stores the 8-lane reduction of the dot products, v[l] = acc[l] +
// acc[l+4], then (v[0] + v[2]) + (v[1] + v[3]), to dst (uses X9, X10).
#define RED8(accy, accx, dst) \
	VEXTRACTF128 $1, accy, X9; \
	VADDPS   X9, accx, X9; \
	VMOVHLPS X9, X9, X10; \
	VADDPS   X10, X9, X9; \
	VMOVSHDUP X9, X10; \
	VADDSS   X10, X9, X9; \
	VMOVSS   X9, dst

// RED4 stores the reductions of the four accumulators Y0-Y3 (RED8's pairs,
// in RED8's order, four keys at a time) to dst, dst+4, dst+8, dst+12 (uses
// Y4-Y7). v = lo + hi half of each; then per key (v0 + v2) and (v1 + v3);
// then their sum.
#define RED4(dst) \
	VPERM2F128 $0x20, Y1, Y0, Y4; \
	VPERM2F128 $0x31, Y1, Y0, Y5; \
	VADDPS     Y5, Y4, Y4; \
	VPERM2F128 $0x20, Y3, Y2, Y6; \
	VPERM2F128 $0x31, Y3, Y2, Y7; \
	VADDPS     Y7, Y6, Y6; \
	VSHUFPS    $0x44, Y6, Y4, Y5; \
	VSHUFPS    $0xEE, Y6, Y4, Y7; \
	VADDPS     Y7, Y5, Y5; \
	VSHUFPS    $0x88, Y5, Y5, Y6; \
	VSHUFPS    $0xDD, Y5, Y5, Y7; \
	VADDPS     Y7, Y6, Y6; \
	VEXTRACTF128 $1, Y6, X7; \
	VUNPCKLPS  X7, X6, X6; \
	VMOVUPS    X6, dst
