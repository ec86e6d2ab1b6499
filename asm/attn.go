package asm

// KeyBlock is the number of keys in a block of the channel-major key layout
// that DotF32T and DotF16T read: element d of key j of a block is at 16·d + j
// from the block's start, so channel d of the block's 16 keys is 16
// consecutive values (one AVX-512 register).
const KeyBlock = 16

// DotF32T sets out[r·ldo + 16·b + j] = DotF32(q[r·m : (r+1)·m], key) for
// r < len(q)/m, b < nb and j < 16, where element d of that key is
// kt[b·bstride + 16·d + j]: the attention scores of len(q)/m queries of m
// floats against nb blocks of 16 keys in the channel-major block layout,
// blocks bstride values apart. Each output has DotF32's bits.
func DotF32T(out []float32, ldo int, q []float32, m int, kt []float32, nb, bstride int) {
	nq := checkT("DotF32T", len(out), ldo, len(q), m, len(kt), nb, bstride)
	if nq > 0 {
		dotF32T(out, ldo, q, nq, m, kt, nb, bstride)
	}
}

// DotF16T is DotF32T over keys held in f16: element d of key j of block b is
// F16ToF32(kt[b·bstride + 16·d + j]).
func DotF16T(out []float32, ldo int, q []float32, m int, kt []uint16, nb, bstride int) {
	nq := checkT("DotF16T", len(out), ldo, len(q), m, len(kt), nb, bstride)
	if nq > 0 {
		dotF16T(out, ldo, q, nq, m, kt, nb, bstride)
	}
}

// checkT validates the arguments of DotF32T and DotF16T and returns the
// number of queries (0: nothing to do).
func checkT(name string, nout, ldo, nq, m, nkt, nb, bstride int) int {
	if m < 1 || nq%m != 0 {
		panic("asm: " + name + ": m < 1 or len(q) not a multiple of m")
	}
	if nb < 0 {
		panic("asm: " + name + ": nb < 0")
	}
	if nq == 0 || nb == 0 {
		return 0
	}
	nq /= m
	if ldo < KeyBlock*nb || (nq-1)*ldo+KeyBlock*nb > nout {
		panic("asm: " + name + ": out too short for len(q)/m rows of 16·nb scores at ldo")
	}
	if nb > 1 && bstride < KeyBlock*m || (nb-1)*bstride+KeyBlock*m > nkt {
		panic("asm: " + name + ": kt too short for nb blocks of 16 keys of m values at bstride")
	}
	return nq
}

func dotF32TGeneric(out []float32, ldo int, q []float32, nq, m int, kt []float32, nb, bstride int) {
	dotTGeneric(out, ldo, q, nq, m, kt, nb, bstride, func(x float32) float32 { return x })
}

func dotF16TGeneric(out []float32, ldo int, q []float32, nq, m int, kt []uint16, nb, bstride int) {
	dotTGeneric(out, ldo, q, nq, m, kt, nb, bstride, F16ToF32)
}

// dotTGeneric is DotF32T over keys of type T, widened exactly by widen:
// dotTRef's operations, in its order for every output, arranged for speed.
// A key block is widened once (f16) and serves every query; per query and
// key the 8 lane accumulators are locals (registers), each adding its
// products in increasing d as dotTRef's, 8 values of d per step.
func dotTGeneric[T float32 | uint16](out []float32, ldo int, q []float32, nq, m int, kt []T, nb, bstride int, widen func(T) float32) {
	var buf []float32
	m8 := m &^ 7
	for b := range nb {
		blk := kt[b*bstride : b*bstride+KeyBlock*m]
		kb, ok := any(blk).([]float32)
		if !ok {
			if buf == nil {
				buf = make([]float32, KeyBlock*m)
			}
			for i, v := range blk {
				buf[i] = widen(v)
			}
			kb = buf
		}
		kb = kb[:KeyBlock*m]
		for r := range nq {
			qr := q[r*m : (r+1)*m]
			o := (*[KeyBlock]float32)(out[r*ldo+KeyBlock*b:])
			for j := range KeyBlock {
				var a0, a1, a2, a3, a4, a5, a6, a7 float32
				for d := 0; d < m8; d += 8 {
					x := (*[8]float32)(qr[d:])
					k := (*[8 * KeyBlock]float32)(kb[KeyBlock*d:])
					a0 = a0 + float32(x[0]*k[j&15])
					a1 = a1 + float32(x[1]*k[KeyBlock+j&15])
					a2 = a2 + float32(x[2]*k[2*KeyBlock+j&15])
					a3 = a3 + float32(x[3]*k[3*KeyBlock+j&15])
					a4 = a4 + float32(x[4]*k[4*KeyBlock+j&15])
					a5 = a5 + float32(x[5]*k[5*KeyBlock+j&15])
					a6 = a6 + float32(x[6]*k[6*KeyBlock+j&15])
					a7 = a7 + float32(x[7]*k[7*KeyBlock+j&15])
				}
				acc := [8]float32{a0, a1, a2, a3, a4, a5, a6, a7}
				for d := m8; d < m; d++ {
					acc[d&7] = acc[d&7] + float32(qr[d]*kb[KeyBlock*d+j])
				}
				o[j] = reduce8(&acc)
			}
		}
	}
}

// dotTRef is the definition of dotTGeneric, written to be read: per query,
// key block and key, the 8-lane sum of DotF32.
func dotTRef[T float32 | uint16](out []float32, ldo int, q []float32, nq, m int, kt []T, nb, bstride int, widen func(T) float32) {
	for r := range nq {
		qr := q[r*m : (r+1)*m]
		for b := range nb {
			blk := kt[b*bstride : b*bstride+KeyBlock*m]
			o := out[r*ldo+KeyBlock*b : r*ldo+KeyBlock*(b+1)]
			for j := range o {
				var acc [8]float32
				for d, x := range qr {
					acc[d&7] = acc[d&7] + float32(x*widen(blk[KeyBlock*d+j]))
				}
				o[j] = reduce8(&acc)
			}
		}
	}
}

// AxpyF32StridedN does AxpyF32Strided(y[r·ldy : r·ldy+m], w[r·ldw : r·ldw+n],
// v, stride) for r < nq: the weighted sums of nq queries over the same n
// values (the heads of a KV group), each y with that call's bits. One load of
// a value serves several queries.
func AxpyF32StridedN(y []float32, ldy, m, nq int, w []float32, ldw, n int, v []float32, stride int) {
	if checkN("AxpyF32StridedN", len(y), ldy, m, nq, len(w), ldw, n, len(v), stride) {
		axpyF32StridedN(y, ldy, m, nq, w, ldw, n, v, stride)
	}
}

// AxpyF16StridedN is AxpyF32StridedN over values held in f16 (AxpyF16Strided
// for each query).
func AxpyF16StridedN(y []float32, ldy, m, nq int, w []float32, ldw, n int, v []uint16, stride int) {
	if checkN("AxpyF16StridedN", len(y), ldy, m, nq, len(w), ldw, n, len(v), stride) {
		axpyF16StridedN(y, ldy, m, nq, w, ldw, n, v, stride)
	}
}

// checkN validates the arguments of AxpyF32StridedN and AxpyF16StridedN and
// reports whether there is work.
func checkN(name string, ny, ldy, m, nq, nw, ldw, n, nv, stride int) bool {
	if m < 0 || nq < 0 || n < 0 || stride < 0 {
		panic("asm: " + name + ": negative m, nq, n or stride")
	}
	if m == 0 || nq == 0 || n == 0 {
		return false
	}
	if ldy < m || (nq-1)*ldy+m > ny {
		panic("asm: " + name + ": y too short for nq rows of m at ldy ≥ m")
	}
	if ldw < n || (nq-1)*ldw+n > nw {
		panic("asm: " + name + ": w too short for nq rows of n weights at ldw ≥ n")
	}
	if (n-1)*stride+m > nv {
		panic("asm: " + name + ": v too short for n values of m at stride")
	}
	return true
}

func axpyF32StridedNGeneric(y []float32, ldy, m, nq int, w []float32, ldw, n int, v []float32, stride int) {
	for r := range nq {
		axpyF32StridedGeneric(y[r*ldy:r*ldy+m], w[r*ldw:r*ldw+n], v, stride)
	}
}

func axpyF16StridedNGeneric(y []float32, ldy, m, nq int, w []float32, ldw, n int, v []uint16, stride int) {
	for r := range nq {
		axpyF16StridedGeneric(y[r*ldy:r*ldy+m], w[r*ldw:r*ldw+n], v, stride)
	}
}
