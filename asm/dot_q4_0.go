package asm

// DotQ4_0 returns the block dot product of the package comment for the Q4_0
// weights w (len(a)/32 blocks of 16 bytes) with scales dw and the Q8_0
// activations a (len a multiple of 32, quants in [-127, 127]) with scales da.
func DotQ4_0(w []byte, dw []float32, a []int8, da []float32) float32 {
	nb := checkDot("DotQ4_0", len(w), 16, dw, a, da)
	if nb == 0 {
		return 0
	}
	return dotQ4_0(w[:nb*16], dw[:nb], a, da[:nb])
}

// MatVecQ4_0 sets out[r] = DotQ4_0(row r of w, a) for r < len(out), with
// cols = len(a): row r is w[r·cols·16/32:], its scales dw[r·cols/32:].
func MatVecQ4_0(out []float32, w []byte, dw []float32, a []int8, da []float32) {
	rows := len(out)
	nb := checkMatVec("MatVecQ4_0", rows, len(w), 16, dw, a, da)
	if rows == 0 {
		return
	}
	if nb == 0 {
		clear(out)
		return
	}
	matVecQ4_0(out, w[:rows*nb*16], dw[:rows*nb], a, da[:nb])
}

// MatMulQ4_0 multiplies the rows×cols weight matrix by n activation rows of
// cols = len(a)/n: out[i·ldo + r] = DotQ4_0(row r of w, row i of a), each
// bit-identical to MatVecQ4_0's. Activation row i is a[i·cols:], its scales
// da[i·cols/32:].
func MatMulQ4_0(out []float32, ldo int, w []byte, dw []float32, rows int, a []int8, da []float32, n int) {
	nb := checkMatMul("MatMulQ4_0", out, ldo, rows, len(w), 16, dw, a, da, n)
	if n == 0 || rows == 0 {
		return
	}
	if nb == 0 {
		for i := range n {
			clear(out[i*ldo : i*ldo+rows])
		}
		return
	}
	matMulQ4_0(out, ldo, w[:rows*nb*16], dw[:rows*nb], rows, a, da[:n*nb], n)
}

func matVecQ4_0Generic(out []float32, w []byte, dw []float32, a []int8, da []float32) {
	nb := len(a) / BlockSize
	for r := range out {
		out[r] = dotQ4_0Generic(w[r*nb*16:(r+1)*nb*16], dw[r*nb:(r+1)*nb], a, da)
	}
}

func matMulQ4_0Generic(out []float32, ldo int, w []byte, dw []float32, rows int, a []int8, da []float32, n int) {
	cols := len(a) / n
	nb := cols / BlockSize
	for i := range n {
		matVecQ4_0Generic(out[i*ldo:i*ldo+rows], w, dw, a[i*cols:(i+1)*cols], da[i*nb:(i+1)*nb])
	}
}

// dotQ4_0Generic is the definition (lengths checked, len(a) > 0). Byte j of a
// block holds element j in its low nibble and element j+16 in its high one;
// per block the exact int32 sum of the 32 products, then blockStep.
func dotQ4_0Generic(w []byte, dw []float32, a []int8, da []float32) float32 {
	var acc float32
	nb := len(a) / BlockSize
	for b := range nb {
		wb := w[b*16 : (b+1)*16 : (b+1)*16]
		ab := a[b*BlockSize : (b+1)*BlockSize : (b+1)*BlockSize]
		var p int32
		for j, v := range wb {
			p += (int32(v&15)-8)*int32(ab[j]) + (int32(v>>4)-8)*int32(ab[j+16])
		}
		acc = blockStep(acc, p, dw[b], da[b])
	}
	return acc
}
