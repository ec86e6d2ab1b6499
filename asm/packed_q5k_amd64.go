//go:build amd64 && gc && !purego

package asm

// The AVX-512 VNNI kernels of the packed Q5_K layout
// (packed_q5k_avx512_amd64.s, written by _gen): q5kGemmNAVX512 for N ≤ 8
// activation rows packed by packQ4KAct, as q4kGemmNAVX512.

//go:noescape
func q5kGemm1AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q5kGemm2AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q5kGemm3AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q5kGemm4AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q5kGemm5AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q5kGemm6AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q5kGemm7AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q5kGemm8AVX512(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

// q5kGemms[N] is the kernel for N activation rows.
var q5kGemms = [...]func(out *float32, ldo int, w *byte, ngroups, nb int, act *byte){
	nil, q5kGemm1AVX512, q5kGemm2AVX512, q5kGemm3AVX512, q5kGemm4AVX512,
	q5kGemm5AVX512, q5kGemm6AVX512, q5kGemm7AVX512, q5kGemm8AVX512,
}

// The AVX2 kernels of the packed Q5_K layout (packed_q5k_avx2_amd64.s):
// q5kGemmNAVX2 for N ≤ q5kTileAVX2 activation rows packed by packQ4KAct.

//go:noescape
func q5kGemm1AVX2(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q5kGemm2AVX2(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

//go:noescape
func q5kGemm3AVX2(out *float32, ldo int, w *byte, ngroups, nb int, act *byte)

var q5kGemmsAVX2 = [...]func(out *float32, ldo int, w *byte, ngroups, nb int, act *byte){
	nil, q5kGemm1AVX2, q5kGemm2AVX2, q5kGemm3AVX2,
}

// q5kTileAVX2 is the most activation rows one AVX2 Q5_K kernel call
// multiplies (16 YMM registers: 3 a row, and the masks 0x0F and 0x10).
const q5kTileAVX2 = 3

// PacksQ5_K is PacksQ4_K for PackQ5_K's layout (AVX-512, AVX2); the others
// multiply Q5_K fastest by the row products (DotsRowsQ5_K).
func PacksQ5_K() bool { return active == AVX512 || active == AVX2 }

func packedQ5KMatMul(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n, nb int) {
	kern, tile := q5kGemms[:], q4kTile
	if active == AVX2 {
		kern, tile = q5kGemmsAVX2[:], q5kTileAVX2
	}
	if !PacksQ5_K() {
		packedQ5KRef(out, ldo, w, rows, a, da, bs, n, nb)
		return
	}
	if !runQ4KAct(kern, tile, q5kSuper, out, ldo, w, rows, a, da, bs, n, nb) { // Q4_K's activation layout
		packedQ5KRef(out, ldo, w, rows, a, da, bs, n, nb)
	}
}
