package main

const q50Doc = `// AVX-512 kernels over the packed Q5_0 layout (packed_q50.go): the Q4_0
// kernels of kernels_avx512_amd64.s (the same code, the same float steps),
// with per block, before the nibbles, 8 words of fifth bits: word c holds
// bit 4·r + j for element 4c + j of row r, so that the word of chunk k's
// low nibbles (elements 4k..4k+3) is word k and that of its high nibbles
// (16+4k..16+4k+3) word 4 + k. Loaded into a mask register (KMOVQ), it adds
// 16 to the bytes whose fifth bit is set (merge-masked VPADDB): the
// unsigned n + 16·h in [0, 31], whose VPDPBUSD sums start at the
// correction −16·Σa, giving the exact Σ (n + 16·h − 16)·a of the Q8_0
// form's quants (Q5_0AsQ8_0).
`

// q5Bits is the bytes of one block's fifth bits in a group: 8 words.
const q5Bits = 64

// consts5Q5 is consts5 plus 0x10 in every byte of Z29, the fifth bit's 16.
func consts5Q5(a *asmFile) {
	consts5(a)
	a.e("\tMOVL $0x10101010, AX")
	a.e("\tVPBROADCASTD AX, Z29")
}

// nibbles is the offset of a block's nibbles (or Q8_0 quants) from the
// weight pointer: after the fifth bits of a Q5_0 layout.
func (l layout) nibbles() int {
	if l.q5 {
		return l.quants() + q5Bits
	}
	return l.quants()
}

// addFifth adds 16 to the bytes of lo (chunk k's low nibbles) and hi (its
// high nibbles) whose fifth bit is set (Q5_0): words k and 4 + k of the
// block's fifth bits as masks K1 and K2.
func (l layout) addFifth(a *asmFile, k int, lo, hi string) {
	if !l.q5 {
		return
	}
	a.e("\tKMOVQ %d(SI), K1", l.quants()+8*k)
	a.e("\tKMOVQ %d(SI), K2", l.quants()+8*(4+k))
	a.e("\tVPADDB Z29, %s, K1, %s", lo, lo)
	a.e("\tVPADDB Z29, %s, K2, %s", hi, hi)
}

// q50Kernels lists the Q5_0 kernels: gemv and gemm8, float32 then binary16
// scales.
func q50Kernels() []kernel {
	return []kernel{
		{avx512Gemv, "gemvQ5_0AVX512", layout{q4: true, q5: true}},
		{avx512Gemm, "gemm8Q5_0AVX512", layout{q4: true, q5: true}},
		{avx512Gemv, "gemvQ5_0F16AVX512", layout{q4: true, f16: true, q5: true}},
		{avx512Gemm, "gemm8Q5_0F16AVX512", layout{q4: true, f16: true, q5: true}},
	}
}
