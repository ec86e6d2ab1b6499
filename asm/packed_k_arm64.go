//go:build arm64 && gc && !purego

package asm

// The arm64 kernels of the packed K-quant layouts (packed_k_arm64.s, written
// by _genarm64/packedk.py): q4kGemvV multiplies ngroups ≥ 1 groups of
// nb ≥ 1 superblocks of PackQ4_K's layout with one activation row packed by
// packQ4KAct, out[16·j + r] (ldo unused), in the DotProd (SDOT) and plain
// NEON variants; q6kGemvV the same for PackQ6_K's layout (packQ6KAct).

//go:noescape
func q4kGemvDotProd(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q4kGemvNEON(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

// q4kKernels returns the active variant's Q4_K kernels (index: activation
// rows a call), nil for Generic. I8MM CPUs have the dot product.
func q4kKernels() []func(out *float32, ldo int, w *byte, ngroups, nb int, act *byte) {
	switch active {
	case DotProd, I8MM:
		return []func(out *float32, ldo int, w *byte, ngroups, nb int, act *byte){nil, q4kGemvDotProd}
	case NEON:
		return []func(out *float32, ldo int, w *byte, ngroups, nb int, act *byte){nil, q4kGemvNEON}
	}
	return nil
}

// PacksQ4_K reports whether the active variant has kernels for PackQ4_K's
// layout (NEON, DotProd, I8MM); Generic multiplies Q4_K fastest by the row
// products (DotsRowsQ4_K), and a packed matrix by the definition's loop.
func PacksQ4_K() bool { return active >= NEON }

func packedQ4KMatMul(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n, nb int) {
	kern := q4kKernels()
	if kern == nil {
		packedQ4KRef(out, ldo, w, rows, a, da, bs, n, nb)
		return
	}
	tile := len(kern) - 1
	sp := getScratch(n * nb * q4kAct)
	act := *sp
	if !packQ4KAct(act, a, da, bs, n, nb, tile) {
		scratchPool.Put(sp)
		packedQ4KRef(out, ldo, w, rows, a, da, bs, n, nb)
		return
	}
	packedKRun(kern, tile, q4kAct, nb*q4kSuper, out, ldo, w, rows, act, n, nb)
	scratchPool.Put(sp)
}

//go:noescape
func q6kGemvDotProd(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q6kGemvNEON(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

// q6kKernels is q4kKernels for the Q6_K kernels (packQ6KAct's activations).
func q6kKernels() []func(out *float32, ldo int, w *byte, ngroups, nb int, act *byte) {
	switch active {
	case DotProd, I8MM:
		return []func(out *float32, ldo int, w *byte, ngroups, nb int, act *byte){nil, q6kGemvDotProd}
	case NEON:
		return []func(out *float32, ldo int, w *byte, ngroups, nb int, act *byte){nil, q6kGemvNEON}
	}
	return nil
}

// PacksQ6_K is PacksQ4_K for PackQ6_K's layout (NEON, DotProd, I8MM).
func PacksQ6_K() bool { return active >= NEON }

func packedQ6KMatMul(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n, nb int) {
	kern := q6kKernels()
	if kern == nil {
		packedQ6KRef(out, ldo, w, rows, a, da, bs, n, nb)
		return
	}
	tile := len(kern) - 1
	sp := getScratch(n * nb * q6kAct)
	act := *sp
	packQ6KAct(act, a, da, bs, n, nb, tile)
	packedKRun(kern, tile, q6kAct, nb*q6kSuper, out, ldo, w, rows, act, n, nb)
	scratchPool.Put(sp)
}
