//go:build amd64 && gc && !purego

package asm

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// AVX-512 VNNI declarations (kernels_avx512_amd64.s). nb is the number of
// blocks per row (≥ 1); nothing aliases out.

// packActAVX512 packs g = ng activation rows (a: g·nb·32 quants, da: g·nb scales)
// for the VNNI kernels into dst (packSize(nb, g) bytes): per pair of blocks p
// and row i, at (p·g+i)·192, the 64 quant bytes, the 16 int32 lane sums of a
// times -k, and the 16 lane-broadcast scales da. k is 128 for Q8_0 and 8 for
// Q4_0 weights; for Q4_0 the 128-bit lanes of each full pair are in the order
// of the Q4_0 weight unpacking (blocks 2p and 2p+1 alternating by half).
//
//go:noescape
func packActAVX512(dst *byte, a *int8, da *float32, nb int, ng int, k int)

// matVec1Q8_0AVX512 sets out[r] = dotQ8_0Generic(row r of w, the activation
// packed with g = 1 in act, whose scales are also da) for r < rows.
//
//go:noescape
func matVec1Q8_0AVX512(out *float32, w *int8, dw *float32, rows int, act *byte, da *float32, nb int)

// matVec1Q4_0AVX512 is matVec1Q8_0AVX512 for Q4_0 weights (act packed with k = 8).
//
//go:noescape
func matVec1Q4_0AVX512(out *float32, w *byte, dw *float32, rows int, act *byte, da *float32, nb int)

// matMul4Q8_0AVX512 sets out[i·ldo+r] = dotQ8_0Generic(row r of w, row i of
// the four activations packed with g = 4 in act) for r < rows, i < 4.
//
//go:noescape
func matMul4Q8_0AVX512(out *float32, ldo int, w *int8, dw *float32, rows int, act *byte, nb int)

// matMul4Q4_0AVX512 is matMul4Q8_0AVX512 for Q4_0 weights (act packed with k = 8).
//
//go:noescape
func matMul4Q4_0AVX512(out *float32, ldo int, w *byte, dw *float32, rows int, act *byte, nb int)

// AVX2 declarations (kernels_avx2_amd64.s).

// matVecQ8_0AVX2 sets out[r] = dotQ8_0Generic(row r of w, a) for r < rows;
// a has nb blocks (nb ≥ 1) with quants in [-127, 127].
//
//go:noescape
func matVecQ8_0AVX2(out *float32, w *int8, dw *float32, rows int, a *int8, da *float32, nb int)

// matVecQ4_0AVX2 is matVecQ8_0AVX2 for Q4_0 weights.
//
//go:noescape
func matVecQ4_0AVX2(out *float32, w *byte, dw *float32, rows int, a *int8, da *float32, nb int)

// packSize is the size of g activation rows of nb blocks packed by packActAVX512.
func packSize(nb, g int) int { return (nb + 1) / 2 * g * 192 }

var scratchPool sync.Pool // *[]byte

func getScratch(n int) *[]byte {
	if p, ok := scratchPool.Get().(*[]byte); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	b := make([]byte, n, n+n/4)
	return &b
}

// quantizeQ8_0AVX512 is quantizeQ8_0Generic over nb ≥ 1 blocks.
//
//go:noescape
func quantizeQ8_0AVX512(x *float32, q *int8, d *float32, nb int)

// quantizeQ8_0AVX2 is quantizeQ8_0Generic over nb ≥ 1 blocks.
//
//go:noescape
func quantizeQ8_0AVX2(x *float32, q *int8, d *float32, nb int)

func quantizeQ8_0(x []float32, q []int8, d []float32) {
	switch active {
	case AVX512:
		quantizeQ8_0AVX512(&x[0], &q[0], &d[0], len(x)/BlockSize)
	case AVX2:
		quantizeQ8_0AVX2(&x[0], &q[0], &d[0], len(x)/BlockSize)
	default:
		quantizeQ8_0Generic(x, q, d)
	}
}

func dotQ8_0(w []int8, dw []float32, a []int8, da []float32) float32 {
	var out [1]float32
	matVecQ8_0(out[:], w, dw, a, da)
	return out[0]
}

func dotQ4_0(w []byte, dw []float32, a []int8, da []float32) float32 {
	var out [1]float32
	matVecQ4_0(out[:], w, dw, a, da)
	return out[0]
}

// The wrappers below get checked, non-empty arguments (len(out) ≥ 1, nb ≥ 1).

func matVecQ8_0(out []float32, w []int8, dw []float32, a []int8, da []float32) {
	switch active {
	case AVX512:
		nb := len(a) / BlockSize
		p := getScratch(packSize(nb, 1))
		packActAVX512(&(*p)[0], &a[0], &da[0], nb, 1, 128)
		matVec1Q8_0AVX512(&out[0], &w[0], &dw[0], len(out), &(*p)[0], &da[0], nb)
		scratchPool.Put(p)
	case AVX2:
		matVecQ8_0AVX2(&out[0], &w[0], &dw[0], len(out), &a[0], &da[0], len(a)/BlockSize)
	default:
		matVecQ8_0Generic(out, w, dw, a, da)
	}
}

func matVecQ4_0(out []float32, w []byte, dw []float32, a []int8, da []float32) {
	switch active {
	case AVX512:
		nb := len(a) / BlockSize
		p := getScratch(packSize(nb, 1))
		packActAVX512(&(*p)[0], &a[0], &da[0], nb, 1, 8)
		matVec1Q4_0AVX512(&out[0], &w[0], &dw[0], len(out), &(*p)[0], &da[0], nb)
		scratchPool.Put(p)
	case AVX2:
		matVecQ4_0AVX2(&out[0], &w[0], &dw[0], len(out), &a[0], &da[0], len(a)/BlockSize)
	default:
		matVecQ4_0Generic(out, w, dw, a, da)
	}
}

// tileBytes is the size of the slice of weight rows that a matmul multiplies
// by every activation group before moving on, so that it stays in L2.
const tileBytes = 256 << 10

// matMulAVX512 runs the tiled product: weight rows in tiles of about
// tileBytes, and within a tile every group of 4 activation rows (the rest one
// by one). rowBytes is the weight bytes per row; k the packing constant.
func matMulAVX512(out []float32, ldo int, w unsafe.Pointer, rowBytes int, dw []float32, rows int, a []int8, da []float32, n int, k int, q4 bool) {
	nb := len(a) / n / BlockSize
	cols := nb * BlockSize
	n4 := n / 4
	g4 := packSize(nb, 4)
	g1 := packSize(nb, 1)
	p := getScratch(n4*g4 + (n-4*n4)*g1)
	buf := *p
	for j := range n4 {
		packActAVX512(&buf[j*g4], &a[4*j*cols], &da[4*j*nb], nb, 4, k)
	}
	for i := 4 * n4; i < n; i++ {
		packActAVX512(&buf[n4*g4+(i-4*n4)*g1], &a[i*cols], &da[i*nb], nb, 1, k)
	}
	tile := max(1, tileBytes/rowBytes)
	for r0 := 0; r0 < rows; r0 += tile {
		nr := min(tile, rows-r0)
		wr := unsafe.Add(w, r0*rowBytes)
		for j := range n4 {
			o := &out[4*j*ldo+r0]
			if q4 {
				matMul4Q4_0AVX512(o, ldo, (*byte)(wr), &dw[r0*nb], nr, &buf[j*g4], nb)
			} else {
				matMul4Q8_0AVX512(o, ldo, (*int8)(wr), &dw[r0*nb], nr, &buf[j*g4], nb)
			}
		}
		for i := 4 * n4; i < n; i++ {
			o := &out[i*ldo+r0]
			act := &buf[n4*g4+(i-4*n4)*g1]
			if q4 {
				matVec1Q4_0AVX512(o, (*byte)(wr), &dw[r0*nb], nr, act, &da[i*nb], nb)
			} else {
				matVec1Q8_0AVX512(o, (*int8)(wr), &dw[r0*nb], nr, act, &da[i*nb], nb)
			}
		}
	}
	scratchPool.Put(p)
}

func matMulQ8_0(out []float32, ldo int, w []int8, dw []float32, rows int, a []int8, da []float32, n int) {
	switch active {
	case AVX512:
		nb := len(a) / n / BlockSize
		matMulAVX512(out, ldo, unsafe.Pointer(&w[0]), nb*32, dw, rows, a, da, n, 128, false)
	case AVX2:
		matMulAVX2(out, ldo, unsafe.Pointer(&w[0]), len(a)/n/BlockSize*32, dw, rows, a, da, n, false)
	default:
		matMulQ8_0Generic(out, ldo, w, dw, rows, a, da, n)
	}
}

func matMulQ4_0(out []float32, ldo int, w []byte, dw []float32, rows int, a []int8, da []float32, n int) {
	switch active {
	case AVX512:
		nb := len(a) / n / BlockSize
		matMulAVX512(out, ldo, unsafe.Pointer(&w[0]), nb*16, dw, rows, a, da, n, 8, true)
	case AVX2:
		matMulAVX2(out, ldo, unsafe.Pointer(&w[0]), len(a)/n/BlockSize*16, dw, rows, a, da, n, true)
	default:
		matMulQ4_0Generic(out, ldo, w, dw, rows, a, da, n)
	}
}

// matMulAVX2 runs the AVX2 matvec per activation row over tiles of weight
// rows of about tileBytes, so that each tile is reused from L2.
func matMulAVX2(out []float32, ldo int, w unsafe.Pointer, rowBytes int, dw []float32, rows int, a []int8, da []float32, n int, q4 bool) {
	nb := len(a) / n / BlockSize
	cols := nb * BlockSize
	tile := max(1, tileBytes/rowBytes)
	for r0 := 0; r0 < rows; r0 += tile {
		nr := min(tile, rows-r0)
		wr := unsafe.Add(w, r0*rowBytes)
		for i := range n {
			if q4 {
				matVecQ4_0AVX2(&out[i*ldo+r0], (*byte)(wr), &dw[r0*nb], nr, &a[i*cols], &da[i*nb], nb)
			} else {
				matVecQ8_0AVX2(&out[i*ldo+r0], (*int8)(wr), &dw[r0*nb], nr, &a[i*cols], &da[i*nb], nb)
			}
		}
	}
}

// dotF32AVX2 is dotF32Generic over n ≥ 1 elements.
//
//go:noescape
func dotF32AVX2(a *float32, b *float32, n int) float32

// axpyF32AVX2 is axpyF32Generic over n ≥ 1 elements.
//
//go:noescape
func axpyF32AVX2(y *float32, a float32, x *float32, n int)

func dotF32(a, b []float32) float32 {
	if active >= AVX2 {
		return dotF32AVX2(&a[0], &b[0], len(a))
	}
	return dotF32Generic(a, b)
}

func axpyF32(y []float32, a float32, x []float32) {
	if active >= AVX2 {
		axpyF32AVX2(&y[0], a, &x[0], len(y))
		return
	}
	axpyF32Generic(y, a, x)
}

// dotF32StridedAVX2 is dotF32StridedGeneric for n ≥ 1 keys of m ≥ 1 floats
// at stride floats.
//
//go:noescape
func dotF32StridedAVX2(out *float32, q *float32, k *float32, n int, m int, stride int)

// axpyF32StridedAVX2 is axpyF32StridedGeneric for n ≥ 1 values of m ≥ 1
// floats at stride floats.
//
//go:noescape
func axpyF32StridedAVX2(y *float32, w *float32, v *float32, n int, m int, stride int)

func dotF32Strided(out, q, k []float32, stride int) {
	if active >= AVX2 {
		dotF32StridedAVX2(&out[0], &q[0], &k[0], len(out), len(q), stride)
		return
	}
	dotF32StridedGeneric(out, q, k, stride)
}

func axpyF32Strided(y, w, v []float32, stride int) {
	if active >= AVX2 {
		axpyF32StridedAVX2(&y[0], &w[0], &v[0], len(w), len(y), stride)
		return
	}
	axpyF32StridedGeneric(y, w, v, stride)
}

// hasExpFMA reports whether math.Exp takes its FMA path here (math's useFMA:
// AVX and FMA), the one expShiftF32AVX2 and siluMulF32AVX2 reproduce.
var hasExpFMA = cpu.X86.HasAVX && cpu.X86.HasFMA

// expShiftF32AVX2 is expShiftF32Generic over n elements, n a multiple of 4, ≥ 4.
//
//go:noescape
func expShiftF32AVX2(x *float32, m float32, n int)

// siluMulF32AVX2 is siluMulF32Generic over n elements, n a multiple of 4, ≥ 4.
//
//go:noescape
func siluMulF32AVX2(gate *float32, up *float32, n int)

func expShiftF32(x []float32, m float32) {
	if active >= AVX2 && hasExpFMA {
		if n := len(x) &^ 3; n > 0 {
			expShiftF32AVX2(&x[0], m, n)
			x = x[n:]
		}
	}
	expShiftF32Generic(x, m)
}

func siluMulF32(g, u []float32) {
	if active >= AVX2 && hasExpFMA {
		if n := len(g) &^ 3; n > 0 {
			siluMulF32AVX2(&g[0], &u[0], n)
			g, u = g[n:], u[n:]
		}
	}
	siluMulF32Generic(g, u)
}
