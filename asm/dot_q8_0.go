package asm

// DotQ8_0 returns the block dot product of the package comment for the Q8_0
// weights w (len(a)/32 blocks of 32 bytes) with scales dw and the Q8_0
// activations a (len a multiple of 32, quants in [-127, 127]) with scales da.
func DotQ8_0(w []int8, dw []float32, a []int8, da []float32) float32 {
	nb := checkDot("DotQ8_0", len(w), 32, dw, a, da)
	if nb == 0 {
		return 0
	}
	return dotQ8_0(w[:nb*32], dw[:nb], a, da[:nb])
}

// MatVecQ8_0 sets out[r] = DotQ8_0(row r of w, a) for r < len(out), with
// cols = len(a): row r is w[r·cols·32/32:], its scales dw[r·cols/32:].
func MatVecQ8_0(out []float32, w []int8, dw []float32, a []int8, da []float32) {
	rows := len(out)
	nb := checkMatVec("MatVecQ8_0", rows, len(w), 32, dw, a, da)
	if rows == 0 {
		return
	}
	if nb == 0 {
		clear(out)
		return
	}
	matVecQ8_0(out, w[:rows*nb*32], dw[:rows*nb], a, da[:nb])
}

// MatMulQ8_0 multiplies the rows×cols weight matrix by n activation rows of
// cols = len(a)/n: out[i·ldo + r] = DotQ8_0(row r of w, row i of a), each
// bit-identical to MatVecQ8_0's. Activation row i is a[i·cols:], its scales
// da[i·cols/32:].
func MatMulQ8_0(out []float32, ldo int, w []int8, dw []float32, rows int, a []int8, da []float32, n int) {
	nb := checkMatMul("MatMulQ8_0", out, ldo, rows, len(w), 32, dw, a, da, n)
	if n == 0 || rows == 0 {
		return
	}
	if nb == 0 {
		for i := range n {
			clear(out[i*ldo : i*ldo+rows])
		}
		return
	}
	matMulQ8_0(out, ldo, w[:rows*nb*32], dw[:rows*nb], rows, a, da[:n*nb], n)
}

func matVecQ8_0Generic(out []float32, w []int8, dw []float32, a []int8, da []float32) {
	nb := len(a) / BlockSize
	for r := range out {
		out[r] = dotQ8_0Generic(w[r*nb*32:(r+1)*nb*32], dw[r*nb:(r+1)*nb], a, da)
	}
}

func matMulQ8_0Generic(out []float32, ldo int, w []int8, dw []float32, rows int, a []int8, da []float32, n int) {
	cols := len(a) / n
	nb := cols / BlockSize
	for i := range n {
		matVecQ8_0Generic(out[i*ldo:i*ldo+rows], w, dw, a[i*cols:(i+1)*cols], da[i*nb:(i+1)*nb])
	}
}

// dotQ8_0Generic is the definition (lengths checked, len(a) > 0): per block
// the exact int32 sum of the 32 products, then blockStep, blocks in order.
func dotQ8_0Generic(w []int8, dw []float32, a []int8, da []float32) float32 {
	var acc float32
	nb := len(a) / BlockSize
	for b := range nb {
		wb := w[b*BlockSize : (b+1)*BlockSize : (b+1)*BlockSize]
		ab := a[b*BlockSize : (b+1)*BlockSize : (b+1)*BlockSize]
		var p int32
		for j, v := range wb {
			p += int32(v) * int32(ab[j])
		}
		acc = blockStep(acc, p, dw[b], da[b])
	}
	return acc
}
