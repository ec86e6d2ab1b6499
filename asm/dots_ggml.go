package asm

// Products of one ggml row with n activation rows (a prompt's batch), each
// out[i·ldo] bit for bit the Dot… of the row and activation row i: the
// row's sub-block scales are unpacked once per chunk of superblocks instead
// of once per activation row, and the chunk's blocks stay in cache while the
// activation rows go by. out[i·ldo] holds the running sum between chunks
// (a float32, so nothing changes).

// dotsChunk is how many superblocks are unpacked at a time.
const dotsChunk = 16

// kScales is a Q4_K or Q5_K superblock's unpacked scale data.
type kScales struct {
	sc, m   [8]int32
	d, dmin float32
}

func checkDots(out []float32, ldo int, w []byte, a []int8, da []float32, bs []int16, n, bb int) (nb, cols int) {
	nb = len(w) / bb
	cols = nb * QK
	if len(w)%bb != 0 || n < 0 || len(a) != n*cols || len(da) != n*nb || len(bs) != n*nb*16 ||
		n > 0 && (ldo < 1 || len(out) < (n-1)*ldo+1) {
		panic("asm: ggml row products: lengths")
	}
	return nb, cols
}

// zeroDots sets the n outputs of a product of rows with no superblocks: the
// Dot… of an empty row is 0 (the chunk loops below would not run and leave
// out as it was).
func zeroDots(out []float32, ldo, n int) {
	for i := range n {
		out[i*ldo] = 0
	}
}

// DotsQ4_K sets out[i·ldo] = DotQ4_K(w, a[i·cols:], da[i·nb:], bs[i·16nb:])
// for i < n, with cols = 256·nb the row width (len(a) = n·cols).
func DotsQ4_K(out []float32, ldo int, w []byte, a []int8, da []float32, bs []int16, n int) {
	dotsQK(active, out, ldo, w, a, da, bs, n, false)
}

// DotsQ5_K is DotsQ4_K for Q5_K rows.
func DotsQ5_K(out []float32, ldo int, w []byte, a []int8, da []float32, bs []int16, n int) {
	dotsQK(active, out, ldo, w, a, da, bs, n, true)
}

// dotsQK is DotsQ4_K (DotsQ5_K: five) with kernel variant k: the SIMD
// kernel of the whole product where dotsSIMD has one, else the superblock
// sums of k with the float steps here.
func dotsQK(kv Kernel, out []float32, ldo int, w []byte, a []int8, da []float32, bs []int16, n int, five bool) {
	bb := 144
	if five {
		bb = 176
	}
	nb, cols := checkDots(out, ldo, w, a, da, bs, n, bb)
	if dotsSIMD(kv, bb, out, ldo, w, a, da, bs, n, nb) {
		return
	}
	if nb == 0 {
		zeroDots(out, ldo, n)
		return
	}
	var ks [dotsChunk]kScales
	for b0 := 0; b0 < nb; b0 += dotsChunk {
		m := min(dotsChunk, nb-b0)
		for j := range m {
			blk := w[(b0+j)*bb:]
			for s := range 8 {
				c, mn := scaleMinK4(s, blk[4:16])
				ks[j].sc[s], ks[j].m[s] = int32(c), int32(mn)
			}
			ks[j].d, ks[j].dmin = f16le(blk), f16le(blk[2:])
		}
		for i := range n {
			var acc float32
			if b0 > 0 {
				acc = out[i*ldo]
			}
			for j := range m {
				b := b0 + j
				blk := w[b*bb : (b+1)*bb : (b+1)*bb]
				ab := a[i*cols+b*QK : i*cols+(b+1)*QK : i*cols+(b+1)*QK]
				bsb := bs[(i*nb+b)*16 : (i*nb+b+1)*16 : (i*nb+b+1)*16]
				k := &ks[j]
				var msum int32
				for s := range 8 {
					msum += k.m[s] * (int32(bsb[2*s]) + int32(bsb[2*s+1]))
				}
				var isum int32
				if five {
					isum = q5kIsumK(kv, blk[48:176], blk[16:48], ab, &k.sc)
				} else {
					isum = q4kIsumK(kv, blk[16:144], ab, &k.sc)
				}
				dab := da[i*nb+b]
				acc = superStep(acc, isum, k.d, dab)
				acc = acc - float32(float32(k.dmin*dab)*float32(msum))
			}
			out[i*ldo] = acc
		}
	}
}

// DotsQ6_K is DotsQ4_K for Q6_K rows (DotQ6_K).
func DotsQ6_K(out []float32, ldo int, w []byte, a []int8, da []float32, bs []int16, n int) {
	dotsQ6K(active, out, ldo, w, a, da, bs, n)
}

func dotsQ6K(kv Kernel, out []float32, ldo int, w []byte, a []int8, da []float32, bs []int16, n int) {
	nb, cols := checkDots(out, ldo, w, a, da, bs, n, 210)
	if dotsSIMD(kv, 210, out, ldo, w, a, da, bs, n, nb) {
		return
	}
	if nb == 0 {
		zeroDots(out, ldo, n)
		return
	}
	var sc [dotsChunk][16]int16
	var d [dotsChunk]float32
	for b0 := 0; b0 < nb; b0 += dotsChunk {
		m := min(dotsChunk, nb-b0)
		for j := range m {
			blk := w[(b0+j)*210:]
			for s := range 16 {
				sc[j][s] = int16(int8(blk[192+s]))
			}
			d[j] = f16le(blk[208:])
		}
		for i := range n {
			var acc float32
			if b0 > 0 {
				acc = out[i*ldo]
			}
			for j := range m {
				b := b0 + j
				blk := w[b*210 : (b+1)*210 : (b+1)*210]
				ab := a[i*cols+b*QK : i*cols+(b+1)*QK : i*cols+(b+1)*QK]
				bsb := bs[(i*nb+b)*16 : (i*nb+b+1)*16 : (i*nb+b+1)*16]
				var corr int32
				for s := range 16 {
					corr += int32(sc[j][s]) * int32(bsb[s])
				}
				isum := q6kIsumK(kv, blk[0:128], blk[128:192], ab, &sc[j]) - 32*corr
				acc = superStep(acc, isum, d[j], da[i*nb+b])
			}
			out[i*ldo] = acc
		}
	}
}

// DotsIQ4_XS is DotsQ4_K for IQ4_XS rows (DotIQ4_XS; a ≠ −128 as there),
// with bs the sums of each 16 activations as QuantizeQ8_K writes them (the
// AVX-512 kernel forms Σ K·a as Σ (K+128)·a − 128·Σ a from them).
func DotsIQ4_XS(out []float32, ldo int, w []byte, a []int8, da []float32, bs []int16, n int) {
	dotsIQ4XS(active, out, ldo, w, a, da, bs, n)
}

func dotsIQ4XS(kv Kernel, out []float32, ldo int, w []byte, a []int8, da []float32, bs []int16, n int) {
	nb, cols := checkDots(out, ldo, w, a, da, bs, n, 136)
	if dotsSIMD(kv, 136, out, ldo, w, a, da, bs, n, nb) {
		return
	}
	if nb == 0 {
		zeroDots(out, ldo, n)
		return
	}
	var sc [dotsChunk][8]int16
	var d [dotsChunk]float32
	for b0 := 0; b0 < nb; b0 += dotsChunk {
		m := min(dotsChunk, nb-b0)
		for j := range m {
			blk := w[(b0+j)*136:]
			sh, sl := uint16(blk[2])|uint16(blk[3])<<8, blk[4:8]
			for s := range 8 {
				sc[j][s] = int16(sl[s/2]>>(4*uint(s%2))&15|byte(sh>>(2*uint(s))&3)<<4) - 32
			}
			d[j] = f16le(blk)
		}
		for i := range n {
			var acc float32
			if b0 > 0 {
				acc = out[i*ldo]
			}
			for j := range m {
				b := b0 + j
				blk := w[b*136 : (b+1)*136 : (b+1)*136]
				ab := a[i*cols+b*QK : i*cols+(b+1)*QK : i*cols+(b+1)*QK]
				acc = superStep(acc, iq4xsIsumK(kv, blk[8:136], ab, &sc[j]), d[j], da[i*nb+b])
			}
			out[i*ldo] = acc
		}
	}
}

// DotsRowsQ4_K sets out[i·ldo + r] = DotsQ4_K's product of weight row r and
// activation row i for r < rows and i < n, w holding the rows one after the
// other (len(w)/rows bytes each): one call for a matrix's rows, which the
// AVX-512 kernel multiplies without returning between them.
func DotsRowsQ4_K(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n int) {
	dotsRows(active, 144, out, ldo, w, rows, a, da, bs, n)
}

// DotsRowsQ5_K is DotsRowsQ4_K for Q5_K rows.
func DotsRowsQ5_K(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n int) {
	dotsRows(active, 176, out, ldo, w, rows, a, da, bs, n)
}

// DotsRowsQ6_K is DotsRowsQ4_K for Q6_K rows.
func DotsRowsQ6_K(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n int) {
	dotsRows(active, 210, out, ldo, w, rows, a, da, bs, n)
}

// DotsRowsIQ4_XS is DotsRowsQ4_K for IQ4_XS rows (bs as DotsIQ4_XS needs).
func DotsRowsIQ4_XS(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n int) {
	dotsRows(active, 136, out, ldo, w, rows, a, da, bs, n)
}

// dotsRows is the DotsRows… of the type of bb-byte superblocks with kernel
// variant kv: the whole-matrix kernel where there is one, else the row's
// Dots… row by row.
func dotsRows(kv Kernel, bb int, out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n int) {
	if rows <= 0 || len(w)%rows != 0 || len(w)/rows%bb != 0 || n > 1 && ldo < rows || n > 0 && len(out) < (n-1)*ldo+rows {
		panic("asm: ggml rows products: lengths")
	}
	rb := len(w) / rows
	nb := rb / bb
	checkDots(out, ldo, w[:rb], a, da, bs, n, bb)
	if n == 0 {
		return // out may be shorter than rows: out[r:] below would fault
	}
	if dotsRowsSIMD(kv, bb, out, ldo, w, rows, a, da, bs, n, nb) {
		return
	}
	for r := range rows {
		o, wr := out[r:], w[r*rb:(r+1)*rb:(r+1)*rb]
		switch bb {
		case 144:
			dotsQK(kv, o, ldo, wr, a, da, bs, n, false)
		case 176:
			dotsQK(kv, o, ldo, wr, a, da, bs, n, true)
		case 210:
			dotsQ6K(kv, o, ldo, wr, a, da, bs, n)
		case 136:
			dotsIQ4XS(kv, o, ldo, wr, a, da, bs, n)
		}
	}
}
