// Package asm holds the runtime's hot integer kernels: the Q8_0 activation
// quantizer and the Q8_0·Q8_0 and Q4_0·Q8_0 dot, matrix-vector and
// matrix-matrix products. Each kernel has a pure-Go twin that is always compiled
// and defines the exact bits; the AVX2 (VPMADDUBSW + VPMADDWD) and AVX-512 VNNI
// (VPDPBUSD) versions in Go assembly reproduce them bit for bit.
//
// # Exact definition
//
// QuantizeQ8_0 is SPEC.md's rule in float32 (see quantize.Q8_0, which it equals).
//
// A block dot product of weights w (Q8_0: int8; Q4_0: nibble−8) and activations a
// (int8, from QuantizeQ8_0) takes, for each block b, the exact int32 sum of
// its 32 products
//
//	p[b] = Σ_{j<32} w[32b+j]·a[32b+j]
//
// and its scale s_b = float32(dw[b]·da[b]); one float32 accumulator, starting
// at +0, takes the blocks in increasing order:
//
//	acc = acc + float32(float32(p[b])·s_b)   (multiply rounded, then add: no FMA)
//
// and the result is acc. MatVec, MatMul and Packed.MatMul produce, for every
// output, exactly the Dot of that weight row and activation row, so batched
// prefill equals token-by-token decoding, whatever the thread count (callers
// split output rows between threads, along groups of the packed layout) and
// whichever variant runs.
//
// Preconditions shared by the products: cols is a multiple of 32, the
// activation quants lie in [-127, 127] (QuantizeQ8_0 never produces -128; the
// sign trick of the SIMD variants needs it), and out does not alias the inputs.
// Weight quants may take any value, -128 included, and scales any float32.
// Wrong lengths panic.
//
// DotF32 and AxpyF32 are the float kernels with package infer's definitions
// (8-lane dot product order, float32(a·x) rounded before the add); the
// attention's forms over a KV cache are DotF32T / DotF16T (scores against
// keys in blocks of KeyBlock, each DotF32's bits) and AxpyF32Strided(N) /
// AxpyF16Strided(N) (weighted sums of values). ExpShiftF32 (softmax's exponentials) and
// SiLUMulF32 (SwiGLU) are defined through ExpF32, a float32 exponential
// (Cody–Waite reduction, Cephes' polynomial, two exact scalings) within 1 ulp
// of e^x; their AVX2 versions repeat its float32 operations eight lanes at a
// time, and TestExpExhaustive (KRAFLA_EXHAUSTIVE=1) checks all 2^32 inputs.
//
// # Implementation notes
//
// The runtime repacks each matrix once (PackQ8_0, PackQ4_0: see Packed) so
// that rows come in groups of 16 with their scales beside them and their
// quants interleaved in 4-byte chunks: one load of chunk k feeds the rows
// with the same four activation quants, the int32 lane r of the products
// belongs to row r, and the block's exact sum lands in its lane without a
// horizontal reduction. A float32 vector then accumulates the rows (16 per
// ZMM, 8 per YMM). A matrix whose scales are all binary16 values (a file
// with f16 scales) keeps them in 2 bytes (the F16 kernels widen them with
// VCVTPH2PS, exactly), so generation reads 16 bytes fewer per 32 weights of
// a row; the results are the same bits. The plain-layout functions (Dot, MatVec, MatMul) of the
// SIMD variants pack into scratch memory first; they serve tests and tools,
// not the runtime.
//
// AVX-512: VPDPBUSD with the activation's four quants broadcast from memory
// (EVEX .BCST) into one ZMM of 16 row sums; Q8_0 weights are offset by 128
// (XOR 0x80) and Q4_0 nibbles are unsigned, the offsets coming off exactly:
// the integer sums start at −128·Σa or −8·Σa per block, computed when the
// activation is packed.
//
// AVX2: a group is two halves of 8 rows (32 bytes of each 64). |w| and
// a·sign(w) into VPMADDUBSW then VPMADDWD (Q8_0); Q4_0 nibbles are unsigned
// already, their eight int16 products of a block are summed as int16 (at
// most 30480) and widened once, and the offset −8 comes off as 8·Σa.
//
// Both: the matrix-vector kernel takes one group at a time, a single
// sequential stream with software prefetch; the matrix-matrix kernel takes
// eight (AVX-512) or four (AVX2) activation rows per group, so each unpacked
// weight register feeds 8 or 4 × 16 rows, over tiles of 128 KiB of weights
// reused from L2 by every activation group.
//
// # Variants and dispatch
//
// The variant is chosen once at start-up from golang.org/x/sys/cpu: "avx512"
// (AVX-512 F/BW/VL with VNNI), else "avx2", else "generic" (pure Go, also the
// only variant under the purego build tag or on other architectures). The
// environment variable KRAFLA_KERNEL=generic|avx2|avx512 forces one. An unknown
// or unavailable value does not stop the program at init: the best available
// variant runs and Init returns an error naming the value, which the CLI should
// report and refuse. Variant reports the active variant, Features a description
// for `krafla run -v`, and Use switches variants (tests and benchmarks; it must
// not race with running kernels).
package asm
