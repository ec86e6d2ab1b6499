//go:build !(amd64 || arm64) || !gc || purego

package asm

func quantizeQ8_0(x []float32, q []int8, d []float32) { quantizeQ8_0Generic(x, q, d) }

func dotQ8_0(w []int8, dw []float32, a []int8, da []float32) float32 {
	return dotQ8_0Generic(w, dw, a, da)
}

func dotQ4_0(w []byte, dw []float32, a []int8, da []float32) float32 {
	return dotQ4_0Generic(w, dw, a, da)
}

func matVecQ8_0(out []float32, w []int8, dw []float32, a []int8, da []float32) {
	matVecQ8_0Generic(out, w, dw, a, da)
}

func matVecQ4_0(out []float32, w []byte, dw []float32, a []int8, da []float32) {
	matVecQ4_0Generic(out, w, dw, a, da)
}

func matMulQ8_0(out []float32, ldo int, w []int8, dw []float32, rows int, a []int8, da []float32, n int) {
	matMulQ8_0Generic(out, ldo, w, dw, rows, a, da, n)
}

func matMulQ4_0(out []float32, ldo int, w []byte, dw []float32, rows int, a []int8, da []float32, n int) {
	matMulQ4_0Generic(out, ldo, w, dw, rows, a, da, n)
}

func dotF32(a, b []float32) float32 { return dotF32Generic(a, b) }

func axpyF32(y []float32, a float32, x []float32) { axpyF32Generic(y, a, x) }

func axpyF32Strided(y, w, v []float32, stride int) { axpyF32StridedGeneric(y, w, v, stride) }

func expShiftF32(x []float32, m float32) { expShiftF32Generic(x, m) }

func siluMulF32(g, u []float32) { siluMulF32Generic(g, u) }

func packedMatMul(out []float32, ldo int, w []byte, rows int, q4, f16 bool, a []int8, da []float32, n, nb int) {
	packedMatMulGeneric(out, ldo, w, rows, q4, f16, a, da, n, nb)
}

func putF16(dst []uint16, x []float32) { putF16Generic(dst, x) }

func roundF16(x []float32) { roundF16Generic(x) }

func axpyF16Strided(y, w []float32, v []uint16, stride int) { axpyF16StridedGeneric(y, w, v, stride) }

func sumF32(x []float32) float32 { return sumF32Generic(x) }

func scaleF32(x []float32, s float32, div bool) { scaleF32Generic(x, s, div) }

func maxF32(x []float32) float32 { return maxF32Generic(x[1:], x[0]) }

// PacksIQ4_NL reports whether the active variant multiplies PackIQ4_NL's
// layout natively: none here (IQ4_NLAsQ8_0 is the fast way).
func PacksIQ4_NL() bool { return false }

func packedMatMulIQ4(out []float32, ldo int, w []byte, rows int, f16 bool, a []int8, da []float32, n, nb int) {
	packedIQ4Ref(out, ldo, w, rows, f16, a, da, n, nb)
}
