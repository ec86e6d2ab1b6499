//go:build amd64 && gc && !purego

package asm

// The AVX-512 VNNI kernels of the packed Q4_K layout
// (packed_q4k_avx512_amd64.s, written by _gen): q4kGemmNAVX512 multiplies
// ngroups ≥ 1 groups of nb ≥ 1 superblocks with N activation rows packed by
// packQ4KAct, out[i·ldo + 16·j + r].

//go:noescape
func q4kGemm1AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q4kGemm2AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q4kGemm3AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q4kGemm4AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q4kGemm5AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q4kGemm6AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q4kGemm7AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q4kGemm8AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

// q4kGemms[N] is the kernel for N activation rows.
var q4kGemms = [...]func(out *float32, ldo int, w *byte, ngroups, nb int, act *byte){
	nil, q4kGemm1AVX512, q4kGemm2AVX512, q4kGemm3AVX512, q4kGemm4AVX512,
	q4kGemm5AVX512, q4kGemm6AVX512, q4kGemm7AVX512, q4kGemm8AVX512,
}

// q4kTile is the most activation rows one kernel call multiplies.
const q4kTile = 8

// The AVX2 kernels of the packed Q4_K layout (packed_q4k_avx2_amd64.s):
// q4kGemmNAVX2, as q4kGemmNAVX512 for N ≤ q4kTileAVX2 activation rows.

//go:noescape
func q4kGemm1AVX2(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q4kGemm2AVX2(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q4kGemm3AVX2(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q4kGemm4AVX2(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

var q4kGemmsAVX2 = [...]func(out *float32, ldo int, w *byte, ngroups, nb int, act *byte){
	nil, q4kGemm1AVX2, q4kGemm2AVX2, q4kGemm3AVX2, q4kGemm4AVX2,
}

// q4kTileAVX2 is the most activation rows one AVX2 kernel call multiplies
// (16 YMM registers: 3 a row).
const q4kTileAVX2 = 4

// PacksQ4_K reports whether the active variant has kernels for PackQ4_K's
// layout (AVX-512, AVX2); the others multiply Q4_K fastest by the row
// products (DotsRowsQ4_K), and a packed matrix by the definition's loop.
func PacksQ4_K() bool { return active == AVX512 || active == AVX2 }

func packedQ4KMatMul(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n, nb int) {
	kern, tile := q4kGemms[:], q4kTile
	if active == AVX2 {
		kern, tile = q4kGemmsAVX2[:], q4kTileAVX2
	}
	if !PacksQ4_K() {
		packedQ4KRef(out, ldo, w, rows, a, da, bs, n, nb)
		return
	}
	if !runQ4KAct(kern, tile, q4kSuper, out, ldo, w, rows, a, da, bs, n, nb) {
		packedQ4KRef(out, ldo, w, rows, a, da, bs, n, nb)
	}
}

// The kernels of the packed Q6_K layout (packed_q6k_avx512_amd64.s):
// q6kGemmNAVX512 for N ≤ 4 activation rows packed by packQ6KAct.

//go:noescape
func q6kGemm1AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q6kGemm2AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q6kGemm3AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q6kGemm4AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

var q6kGemms = [...]func(out *float32, ldo int, w *byte, ngroups, nb int, act *byte){
	nil, q6kGemm1AVX512, q6kGemm2AVX512, q6kGemm3AVX512, q6kGemm4AVX512,
}

// q6kTile is the most activation rows one Q6_K kernel call multiplies.
const q6kTile = 4

// The AVX2 kernels of the packed Q6_K layout (packed_q6k_avx2_amd64.s):
// q6kGemmNAVX2, as q6kGemmNAVX512 (the same tile and activations).

//go:noescape
func q6kGemm1AVX2(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q6kGemm2AVX2(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q6kGemm3AVX2(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q6kGemm4AVX2(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

var q6kGemmsAVX2 = [...]func(out *float32, ldo int, w *byte, ngroups, nb int, act *byte){
	nil, q6kGemm1AVX2, q6kGemm2AVX2, q6kGemm3AVX2, q6kGemm4AVX2,
}

// PacksQ6_K is PacksQ4_K for PackQ6_K's layout (AVX-512, AVX2).
func PacksQ6_K() bool { return active == AVX512 || active == AVX2 }

func packedQ6KMatMul(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n, nb int) {
	if !PacksQ6_K() {
		packedQ6KRef(out, ldo, w, rows, a, da, bs, n, nb)
		return
	}
	kern := q6kGemms[:]
	if active == AVX2 {
		kern = q6kGemmsAVX2[:]
	}
	runQ6KAct(kern, q6kTile, out, ldo, w, rows, a, da, bs, n, nb)
}
