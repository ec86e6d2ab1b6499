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
