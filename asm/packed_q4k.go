package asm

import "fmt"

// The packed interleaved layout of a Q4_K matrix: as Packed does for Q4_0
// and Q8_0, rows in groups of GroupRows (the last group padded with zero
// rows), so that a kernel has the 16 rows of a group in the 16 lanes of a
// vector and does the float steps of the definition (DotQ4_K's) as vector
// operations, instead of a horizontal reduction and scalar float steps per
// superblock, weight row and activation row.
//
// Per group, superblock by superblock, q4kSuper bytes:
//
//	  0  d    16 × binary16, row rr at 2·rr (the file's d)
//	 32  dmin 16 × binary16 (the file's dmin)
//	 64  sc   8 × 16 bytes: sub-block s's 6-bit scale of row rr at 16·s + rr
//	192  m    4 × 32 bytes: the 6-bit mins of sub-blocks 2j and 2j+1 of row rr
//	          at 32·j + 2·rr and 32·j + 2·rr + 1
//	320  qs   32 chunks × 16 rows × 4 bytes: chunk c = 8·t + k of row rr at
//	          64·c + 4·rr holds the file's qs[32·t + 4·k …+3], whose low
//	          nibbles are elements 64·t + 4·k …+3 (sub-block 2t) and high
//	          nibbles elements 64·t + 32 + 4·k …+3 (sub-block 2t + 1)
//
// (scaleMinK4 unpacks sc and m at packing). The products are DotQ4_K's bits
// (packedQ4KRef is the definition, read off this layout): the same exact
// integer sums isum and msum per superblock, and the same float32 steps in
// the same order.

// q4kSuper is the bytes of one superblock of one group.
const q4kSuper = 320 + 2048

// q4kBlock is the bytes of one Q4_K superblock as the file holds it.
const q4kBlock = 144

// PackedQ4K is a Q4_K matrix in the packed interleaved layout (PackQ4_K).
type PackedQ4K struct {
	data       []byte
	rows, cols int
}

// PackedQ4KSize returns the bytes PackQ4_K writes for a rows × cols matrix
// (cols a multiple of 256).
func PackedQ4KSize(rows, cols int) int {
	return (rows + GroupRows - 1) / GroupRows * (cols / QK) * q4kSuper
}

// PackQ4_K writes the rows × cols Q4_K matrix w (rows·cols/256 superblocks
// of 144 bytes, row by row, as the file holds them) into dst
// (PackedQ4KSize bytes) in the packed interleaved layout and returns it.
func PackQ4_K(dst []byte, w []byte, rows, cols int) PackedQ4K {
	if rows < 0 || cols < 0 || cols%QK != 0 || len(w) < rows*cols/QK*q4kBlock || len(dst) < PackedQ4KSize(rows, cols) {
		panic(fmt.Sprintf("asm: PackQ4_K: %d×%d: cols must be a multiple of 256, w hold the blocks and dst PackedQ4KSize bytes", rows, cols))
	}
	nb := cols / QK
	size := PackedQ4KSize(rows, cols)
	dst = dst[:size:size]
	clear(dst) // the padding rows: zero scales, mins and quants
	for r := range rows {
		g, rr := r/GroupRows, r%GroupRows
		for b := range nb {
			blk := w[(r*nb+b)*q4kBlock : (r*nb+b+1)*q4kBlock]
			o := dst[(g*nb+b)*q4kSuper : (g*nb+b+1)*q4kSuper]
			o[2*rr], o[2*rr+1] = blk[0], blk[1]
			o[32+2*rr], o[32+2*rr+1] = blk[2], blk[3]
			for s := range 8 {
				sc, m := scaleMinK4(s, blk[4:16])
				o[64+16*s+rr] = sc
				o[192+32*(s/2)+2*rr+s%2] = m
			}
			qs := blk[16:144]
			for c := range 32 {
				t, k := c/8, c%8
				copy(o[320+64*c+4*rr:][:4], qs[32*t+4*k:32*t+4*k+4])
			}
		}
	}
	return PackedQ4K{data: dst, rows: rows, cols: cols}
}

// Rows, Cols and Bytes describe the matrix and the size of its layout.
func (p *PackedQ4K) Rows() int  { return p.rows }
func (p *PackedQ4K) Cols() int  { return p.cols }
func (p *PackedQ4K) Bytes() int { return len(p.data) }

// MatMul sets out[i·ldo + r − lo] = DotQ4_K of weight row r and activation
// row i (a[i·cols:], da[i·cols/256:], bs[i·cols/16:], as QuantizeQ8_K writes
// them), for lo ≤ r < hi and i < n, bit for bit. The rows lo..hi−1 must start
// a group (lo a multiple of GroupRows) and end one or the matrix, so that
// threads split a matrix along groups. bs must be the sums of each 16
// activations (|bs| ≤ 2048, as QuantizeQ8_K's are); other values are
// multiplied by the definition's loop, with the same result.
func (p *PackedQ4K) MatMul(out []float32, ldo, lo, hi int, a []int8, da []float32, bs []int16, n int) {
	if w, nb := packedKArgs("PackedQ4K", q4kSuper, p.data, p.rows, p.cols, out, ldo, lo, hi, a, da, bs, n); w != nil {
		packedQ4KMatMul(out, ldo, w, hi-lo, a[:n*p.cols], da[:n*nb], bs[:n*nb*16], n, nb)
	}
}

// packedKArgs checks the arguments of the MatMul of a packed layout of
// superblocks of 256 (name the type, for the panics; super the bytes of one
// superblock of one group; data, rows, cols the layout) as PackedQ4K.MatMul
// states them, panicking on a bad range or a short slice. It returns the
// groups of data that hold the rows lo..hi−1, and nb = cols/256; or nil
// when there is nothing to multiply (n = 0 or lo = hi), or nothing more
// (nb = 0: the n output rows are cleared, the empty sums).
func packedKArgs(name string, super int, data []byte, rows, cols int, out []float32, ldo, lo, hi int, a []int8, da []float32, bs []int16, n int) ([]byte, int) {
	if lo < 0 || hi > rows || lo > hi || lo%GroupRows != 0 || (hi%GroupRows != 0 && hi != rows) {
		panic(fmt.Sprintf("asm: %s.MatMul: rows %d..%d of %d do not start and end groups", name, lo, hi, rows))
	}
	nb := cols / QK
	if n < 0 || len(a) < n*cols || len(da) < n*nb || len(bs) < n*nb*16 {
		panic("asm: " + name + ".MatMul: a, da or bs too short for n rows")
	}
	nr := hi - lo
	if n == 0 || nr == 0 {
		return nil, nb
	}
	if ldo < nr || len(out) < (n-1)*ldo+nr {
		panic("asm: " + name + ".MatMul: out too short or ldo < hi−lo")
	}
	if nb == 0 {
		for i := range n {
			clear(out[i*ldo : i*ldo+nr])
		}
		return nil, nb
	}
	gs := nb * super
	return data[lo/GroupRows*gs : (hi+GroupRows-1)/GroupRows*gs], nb
}

// packedQ4KRef is the definition of the packed Q4_K product over the groups
// of w (rows rows, the last group possibly partial), written to be read:
// DotQ4_K's, per activation row i and weight row r, superblock by
// superblock, with d, dmin, the scales, mins and quants read from the
// layout.
func packedQ4KRef(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n, nb int) {
	cols := nb * QK
	for i := range n {
		for r := range rows {
			g, rr := r/GroupRows, r%GroupRows
			var acc float32
			for b := range nb {
				o := w[(g*nb+b)*q4kSuper : (g*nb+b+1)*q4kSuper]
				ab := a[i*cols+b*QK : i*cols+(b+1)*QK]
				bsb := bs[(i*nb+b)*16 : (i*nb+b+1)*16]
				var isum, msum int32
				for s := range 8 {
					t, shift := s/2, 4*uint(s%2)
					var p int32
					for l := range 32 {
						v := o[320+64*(8*t+l/4)+4*rr+l%4]
						p += int32(v>>shift&15) * int32(ab[32*s+l])
					}
					isum += int32(o[64+16*s+rr]) * p
					msum += int32(o[192+32*(s/2)+2*rr+s%2]) * (int32(bsb[2*s]) + int32(bsb[2*s+1]))
				}
				dab := da[i*nb+b]
				acc = superStep(acc, isum, f16le(o[2*rr:]), dab)
				acc = acc - float32(float32(f16le(o[32+2*rr:])*dab)*float32(msum))
			}
			out[i*ldo+r] = acc
		}
	}
}
