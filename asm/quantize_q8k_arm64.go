//go:build arm64 && gc && !purego

package asm

// quantizeQ8KNEON is quantizeQ8KGeneric over nb ≥ 1 superblocks
// (quantize_q8k_arm64.s, written by _genarm64/q8k.py: run
// `python3 _genarm64/q8k.py > quantize_q8k_arm64.s` in asm/). It needs only
// ARMv8.0 Advanced SIMD, so NEON, DotProd and I8MM all run it.
//
//go:noescape
func quantizeQ8KNEON(x *float32, q *int8, d *float32, bs *int16, nb int)

func quantizeQ8K(x []float32, q []int8, d []float32, bs []int16) { quantizeQ8KK(active, x, q, d, bs) }

func quantizeQ8KK(k Kernel, x []float32, q []int8, d []float32, bs []int16) {
	if k >= NEON && len(d) > 0 {
		quantizeQ8KNEON(&x[0], &q[0], &d[0], &bs[0], len(d))
		return
	}
	quantizeQ8KGeneric(x, q, d, bs)
}
