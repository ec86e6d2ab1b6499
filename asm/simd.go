//go:build (amd64 || arm64) && gc && !purego

package asm

import "sync"

// The Go side of the SIMD variants' quantized products, shared by amd64 and
// arm64: each architecture supplies kernelSets, packAct and packedMatMul.

// kernelSet is one variant's product kernels for one weight type: gemv, gemm
// over g activation rows, and the multiplier k of Σa in the activation's
// per-block correction. The AVX2 kernels subtract k·Σa (k = 8: Q4_0's
// nibble offset; 0 for Q8_0 under the sign trick); the AVX-512 ones start
// their sums at it (k = −8, or −128 for VPDPBUSD's offset of Q8_0 weights).
type kernelSet struct {
	gemv    func(out *float32, w *byte, ngroups int, nb int, act *byte)
	gemm    func(out *float32, ldo int, w *byte, ngroups int, nb int, act *byte)
	g       int
	corr    int32
	q4, f16 bool
}

var scratchPool sync.Pool // *[]byte

func getScratch(n int) *[]byte {
	if p, ok := scratchPool.Get().(*[]byte); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	b := make([]byte, n, n+n/4)
	return &b
}

// The plain-layout products of the SIMD variants pack the weights into
// scratch memory and run the packed kernels (the runtime packs once, at load).

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

func matVecQ8_0(out []float32, w []int8, dw []float32, a []int8, da []float32) {
	if active == Generic {
		matVecQ8_0Generic(out, w, dw, a, da)
		return
	}
	matMulQ8_0(out, len(out), w, dw, len(out), a, da, 1)
}

func matVecQ4_0(out []float32, w []byte, dw []float32, a []int8, da []float32) {
	if active == Generic {
		matVecQ4_0Generic(out, w, dw, a, da)
		return
	}
	matMulQ4_0(out, len(out), w, dw, len(out), a, da, 1)
}

func matMulQ8_0(out []float32, ldo int, w []int8, dw []float32, rows int, a []int8, da []float32, n int) {
	if active == Generic {
		matMulQ8_0Generic(out, ldo, w, dw, rows, a, da, n)
		return
	}
	cols := len(a) / n
	s := getScratch(PackedSize(false, false, rows, cols))
	p := PackQ8_0(*s, w, dw, rows, cols, false)
	p.MatMul(out, ldo, 0, rows, a, da, n)
	scratchPool.Put(s)
}

func matMulQ4_0(out []float32, ldo int, w []byte, dw []float32, rows int, a []int8, da []float32, n int) {
	if active == Generic {
		matMulQ4_0Generic(out, ldo, w, dw, rows, a, da, n)
		return
	}
	cols := len(a) / n
	s := getScratch(PackedSize(true, false, rows, cols))
	p := PackQ4_0(*s, w, dw, rows, cols, false)
	p.MatMul(out, ldo, 0, rows, a, da, n)
	scratchPool.Put(s)
}

// tileBytes is the size of the slice of packed weight groups that a matmul
// multiplies by every activation group before moving on, so that it stays in L2.
const tileBytes = 128 << 10

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// packActGeneric is packAct in pure Go.
func packActGeneric(dst []byte, a []int8, da []float32, nb, g int, k int32) {
	cols := nb * BlockSize
	st := g * 40
	for b := range nb {
		blk := dst[b*st : (b+1)*st]
		for i := range g {
			ab := a[i*cols+b*32 : i*cols+b*32+32]
			var sum int32
			for j, v := range ab {
				blk[32*i+j] = byte(v)
				sum += int32(v)
			}
			putF32(blk[32*g+4*i:], da[i*nb+b])
			u := uint32(k * sum)
			c := blk[36*g+4*i:]
			c[0], c[1], c[2], c[3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
		}
	}
}

// packedMatMulSIMD runs the kernels of ks: weight groups in tiles of about
// tileBytes, within a tile every group of ks.g activation rows, then the rest
// one by one; a partial last group goes through a small buffer.
func packedMatMulSIMD(ks *kernelSet, out []float32, ldo int, w []byte, rows int, a []int8, da []float32, n, nb int) {
	packedRunSIMD(ks, layout{ks.q4, ks.f16, nb}.group(), out, ldo, w, rows, a, da, n, nb)
}

// packedRunSIMD is packedMatMulSIMD over groups of gs bytes (a layout of
// its own: PackQ5_0's).
func packedRunSIMD(ks *kernelSet, gs int, out []float32, ldo int, w []byte, rows int, a []int8, da []float32, n, nb int) {
	cols := nb * BlockSize
	g := ks.g
	ng := n / g              // full groups of activation rows
	gb, ob := nb*40*g, nb*40 // packed bytes per activation group, per single row
	sp := getScratch(ng*gb + (n-g*ng)*ob)
	act := *sp
	single := func(i int) []byte { return act[ng*gb+(i-g*ng)*ob:] }
	for j := range ng {
		packAct(act[j*gb:], a[g*j*cols:], da[g*j*nb:], nb, g, ks.corr)
	}
	for i := g * ng; i < n; i++ {
		packAct(single(i), a[i*cols:], da[i*nb:], nb, 1, ks.corr)
	}
	full := rows / GroupRows
	tile := full
	if n > 1 {
		tile = max(1, tileBytes/gs)
	}
	for g0 := 0; g0 < full; g0 += tile {
		nt := min(tile, full-g0)
		wg := &w[g0*gs]
		for j := range ng {
			ks.gemm(&out[g*j*ldo+g0*GroupRows], ldo, wg, nt, nb, &act[j*gb])
		}
		for i := g * ng; i < n; i++ {
			ks.gemv(&out[i*ldo+g0*GroupRows], wg, nt, nb, &single(i)[0])
		}
	}
	if rest := rows - full*GroupRows; rest > 0 {
		var tmp [8 * GroupRows]float32
		wg := &w[full*gs]
		r0 := full * GroupRows
		for j := range ng {
			ks.gemm(&tmp[0], GroupRows, wg, 1, nb, &act[j*gb])
			for i := range g {
				copy(out[(g*j+i)*ldo+r0:(g*j+i)*ldo+rows], tmp[i*GroupRows:])
			}
		}
		for i := g * ng; i < n; i++ {
			ks.gemv(&tmp[0], wg, 1, nb, &single(i)[0])
			copy(out[i*ldo+r0:i*ldo+rows], tmp[:rest])
		}
	}
	scratchPool.Put(sp)
}
