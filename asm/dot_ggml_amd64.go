//go:build amd64 && gc && !purego

package asm

// q4kIsumAVX2 is q4kIsumGeneric on AVX2: qs points to 128 bytes of Q4_K
// nibbles, a to 256 int8 activations, sc to the 8 sub-block scales (each at
// most 63, but any int32 whose products do not overflow gives the generic
// result, since the sums are integers). No alignment needed; no aliasing
// (nothing is written).
//
//go:noescape
func q4kIsumAVX2(qs *byte, a *int8, sc *[8]int32) int32

func q4kIsum(qs []byte, a []int8, sc *[8]int32) int32 {
	if hasAVX2 {
		qs, a = qs[:128:128], a[:256:256] // bounds checked here, not in the kernel
		return q4kIsumAVX2(&qs[0], &a[0], sc)
	}
	return q4kIsumGeneric(qs, a, sc)
}

// q6kIsumAVX2 is q6kIsumGeneric on AVX2: ql points to 128 bytes of low
// nibbles, qh to 64 bytes of high bits, a to 256 int8 activations, sc to the
// 16 sub-block scales as int16 (int8 values). No alignment needed; nothing
// is written.
//
//go:noescape
func q6kIsumAVX2(ql, qh *byte, a *int8, sc *[16]int16) int32

func q6kIsum(ql, qh []byte, a []int8, sc *[16]int16) int32 {
	if hasAVX2 {
		ql, qh, a = ql[:128:128], qh[:64:64], a[:256:256]
		return q6kIsumAVX2(&ql[0], &qh[0], &a[0], sc)
	}
	return q6kIsumGeneric(ql, qh, a, sc)
}

// iq4xsIsumAVX2 is iq4xsIsumGeneric on AVX2 for activations in [−127, 127]
// (it multiplies |K| by a·sign(K), and −128 has no negation): qs points to
// 128 bytes of codebook indices, a to 256 int8 activations, sc to the 8
// sub-block scales (ls − 32). Nothing is written.
//
//go:noescape
func iq4xsIsumAVX2(qs *byte, a *int8, sc *[8]int16) int32

func iq4xsIsum(qs []byte, a []int8, sc *[8]int16) int32 {
	if hasAVX2 {
		qs, a = qs[:128:128], a[:256:256]
		return iq4xsIsumAVX2(&qs[0], &a[0], sc)
	}
	return iq4xsIsumGeneric(qs, a, sc)
}

// q5kIsumAVX2 is q5kIsumGeneric on AVX2: qs points to 128 bytes of nibbles,
// qh to the 32 high-bit bytes, a to 256 int8 activations, sc to the 8
// sub-block scales. Nothing is written.
//
//go:noescape
func q5kIsumAVX2(qs, qh *byte, a *int8, sc *[8]int32) int32

func q5kIsum(qs, qh []byte, a []int8, sc *[8]int32) int32 {
	if hasAVX2 {
		qs, qh, a = qs[:128:128], qh[:32:32], a[:256:256]
		return q5kIsumAVX2(&qs[0], &qh[0], &a[0], sc)
	}
	return q5kIsumGeneric(qs, qh, a, sc)
}
