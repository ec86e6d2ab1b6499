//go:build !(amd64 || arm64) || !gc || purego

package asm

func q4kIsum(qs []byte, a []int8, sc *[8]int32) int32 { return q4kIsumGeneric(qs, a, sc) }

func q6kIsum(ql, qh []byte, a []int8, sc *[16]int16) int32 { return q6kIsumGeneric(ql, qh, a, sc) }

func iq4xsIsum(qs []byte, a []int8, sc *[8]int16) int32 { return iq4xsIsumGeneric(qs, a, sc) }

func q5kIsum(qs, qh []byte, a []int8, sc *[8]int32) int32 { return q5kIsumGeneric(qs, qh, a, sc) }

// The ...K forms: no SIMD variant here, every k is the twin.

func q4kIsumK(_ Kernel, qs []byte, a []int8, sc *[8]int32) int32 { return q4kIsumGeneric(qs, a, sc) }

func q6kIsumK(_ Kernel, ql, qh []byte, a []int8, sc *[16]int16) int32 {
	return q6kIsumGeneric(ql, qh, a, sc)
}

func iq4xsIsumK(_ Kernel, qs []byte, a []int8, sc *[8]int16) int32 {
	return iq4xsIsumGeneric(qs, a, sc)
}

func q5kIsumK(_ Kernel, qs, qh []byte, a []int8, sc *[8]int32) int32 {
	return q5kIsumGeneric(qs, qh, a, sc)
}

func q5_0Sums(w []byte, a []int8, p []int32)  { q5_0SumsGeneric(w, a, p) }
func iq4nlSums(w []byte, a []int8, p []int32) { iq4nlSumsGeneric(w, a, p) }
func q4_1Sums(w []byte, a []int8, pt []int32) { q4_1SumsGeneric(w, a, pt) }

func q5_0SumsK(_ Kernel, w []byte, a []int8, p []int32)  { q5_0SumsGeneric(w, a, p) }
func iq4nlSumsK(_ Kernel, w []byte, a []int8, p []int32) { iq4nlSumsGeneric(w, a, p) }
func q4_1SumsK(_ Kernel, w []byte, a []int8, pt []int32) { q4_1SumsGeneric(w, a, pt) }
