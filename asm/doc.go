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
// (int8, from QuantizeQ8_0) over block b and lane l in 0..7 is the exact int32
//
//	p[b][l] = Σ_{i<4} w[32b+4l+i]·a[32b+4l+i]
//
// with scale s_b = float32(dw[b]·da[b]). Sixteen float32 accumulators, starting
// at +0, take the blocks in increasing order:
//
//	acc[8·(b%2)+l] = acc[8·(b%2)+l] + float32(float32(p[b][l])·s_b)   (no FMA)
//
// and the result is v[l] = acc[l]+acc[8+l] (l<8), u[l] = v[l]+v[l+4] (l<4),
// r = (u[0]+u[2]) + (u[1]+u[3]). MatVec and MatMul produce, for every output,
// exactly the Dot of that weight row and activation row, so batched prefill
// equals token-by-token decoding, whatever the thread count (callers split
// output rows between threads) and whichever variant runs.
//
// Preconditions shared by the products: cols is a multiple of 32, the
// activation quants lie in [-127, 127] (QuantizeQ8_0 never produces -128; the
// sign trick of the SIMD variants needs it), and out does not alias the inputs.
// Weight quants may take any value, -128 included, and scales any float32.
// Wrong lengths panic.
//
// DotF32 and AxpyF32 (and their Strided forms over a KV cache) are the
// attention's float kernels with package infer's definitions (8-lane dot
// product order, float32(a·x) rounded before the add); their AVX2 versions
// serve both SIMD variants. ExpShiftF32 (softmax's exponentials) and
// SiLUMulF32 (SwiGLU) are defined through math.Exp: float32(math.Exp(float64(x))).
// Their AVX2 versions run only where math.Exp takes its FMA path (amd64 with
// AVX and FMA) and repeat that path's double operations four lanes at a time,
// so every lane has math.Exp's bits; TestExpExhaustive (KRAFLA_EXHAUSTIVE=1)
// checks all 2^32 inputs.
//
// # Implementation notes
//
// AVX-512: a ZMM holds two blocks, so one accumulator register is exactly
// acc[0..15]. VPDPBUSD multiplies unsigned by signed bytes; Q8_0 weights are
// offset by 128 (XOR 0x80) and Q4_0 nibbles are unsigned already, and the
// accumulator starts at -128·Σa or -8·Σa per lane. Those corrections and the
// lane-broadcast activation scales are computed once per call (packActAVX512)
// into a pooled scratch buffer of about 2·cols bytes per activation row. The
// matvec takes one weight row at a time (a single sequential stream from
// memory, which the hardware prefetchers follow; two interleaved rows reached
// half the bandwidth), 16 blocks per step; the matmul takes four activation rows
// by two weight rows, over weight tiles of 256 KiB so that a tile is reused
// from L2 by every activation group.
//
// AVX2: one block per YMM, |w| and a·sign(w) into VPMADDUBSW then VPMADDWD;
// the matmul runs the matvec per activation row over the same weight tiles.
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
