package asm

import "fmt"

// The packed interleaved layout of a Q6_K matrix, as PackedQ4K's for Q4_K:
// rows in groups of GroupRows (the last padded with zero rows), per group,
// superblock by superblock, q6kSuper bytes (the file's 210 per row, 16 rows):
//
//	  0  d    16 × binary16, row rr at 2·rr
//	 32  sc   8 × 32 bytes: the int8 scales of sub-blocks 2j and 2j+1 of
//	          row rr at 32·j + 2·rr and 32·j + 2·rr + 1
//	288  qs   16 units u = 8·h + k (h < 2, k < 8) of 192 bytes: A, B, C, 64
//	          bytes each, row rr's 4 bytes at 4·rr: A = ql[64h + 4k …+3],
//	          B = ql[64h + 32 + 4k …+3], C = qh[32h + 4k …+3], which hold the
//	          6-bit quants of elements 128h + 32g + 4k …+3 for g = 0..3 (low
//	          nibbles of A, B, then high nibbles of A, B; bits 2g, 2g+1 of C)
//
// The products are DotQ6_K's bits (packedQ6KRef is the definition read off
// this layout).

// q6kSuper is the bytes of one superblock of one group.
const q6kSuper = 288 + 16*192

// q6kBlock is the bytes of one Q6_K superblock as the file holds it.
const q6kBlock = 210

// PackedQ6K is a Q6_K matrix in the packed interleaved layout (PackQ6_K).
type PackedQ6K struct {
	data       []byte
	rows, cols int
}

// PackedQ6KSize returns the bytes PackQ6_K writes for a rows × cols matrix
// (cols a multiple of 256).
func PackedQ6KSize(rows, cols int) int {
	return (rows + GroupRows - 1) / GroupRows * (cols / QK) * q6kSuper
}

// PackQ6_K writes the rows × cols Q6_K matrix w (rows·cols/256 superblocks
// of 210 bytes, row by row) into dst (PackedQ6KSize bytes) in the packed
// interleaved layout and returns it.
func PackQ6_K(dst []byte, w []byte, rows, cols int) PackedQ6K {
	if rows < 0 || cols < 0 || cols%QK != 0 || len(w) < rows*cols/QK*q6kBlock || len(dst) < PackedQ6KSize(rows, cols) {
		panic(fmt.Sprintf("asm: PackQ6_K: %d×%d: cols must be a multiple of 256, w hold the blocks and dst PackedQ6KSize bytes", rows, cols))
	}
	nb := cols / QK
	size := PackedQ6KSize(rows, cols)
	dst = dst[:size:size]
	clear(dst)
	for r := range rows {
		g, rr := r/GroupRows, r%GroupRows
		for b := range nb {
			blk := w[(r*nb+b)*q6kBlock : (r*nb+b+1)*q6kBlock]
			o := dst[(g*nb+b)*q6kSuper : (g*nb+b+1)*q6kSuper]
			o[2*rr], o[2*rr+1] = blk[208], blk[209]
			for s := range 16 {
				o[32+32*(s/2)+2*rr+s%2] = blk[192+s]
			}
			ql, qh := blk[0:128], blk[128:192]
			for u := range 16 {
				h, k := u/8, u%8
				p := o[288+192*u:]
				copy(p[4*rr:][:4], ql[64*h+4*k:])
				copy(p[64+4*rr:][:4], ql[64*h+32+4*k:])
				copy(p[128+4*rr:][:4], qh[32*h+4*k:])
			}
		}
	}
	return PackedQ6K{data: dst, rows: rows, cols: cols}
}

// Rows, Cols and Bytes describe the matrix and the size of its layout.
func (p *PackedQ6K) Rows() int  { return p.rows }
func (p *PackedQ6K) Cols() int  { return p.cols }
func (p *PackedQ6K) Bytes() int { return len(p.data) }

// MatMul sets out[i·ldo + r − lo] = DotQ6_K of weight row r and activation
// row i (a[i·cols:], da[i·cols/256:], bs[i·cols/16:], as QuantizeQ8_K writes
// them), for lo ≤ r < hi and i < n, bit for bit; lo and hi as
// PackedQ4K.MatMul's.
func (p *PackedQ6K) MatMul(out []float32, ldo, lo, hi int, a []int8, da []float32, bs []int16, n int) {
	if w, nb := packedKArgs("PackedQ6K", q6kSuper, p.data, p.rows, p.cols, out, ldo, lo, hi, a, da, bs, n); w != nil {
		packedQ6KMatMul(out, ldo, w, hi-lo, a[:n*p.cols], da[:n*nb], bs[:n*nb*16], n, nb)
	}
}

// packedQ6KRef is the definition of the packed Q6_K product: DotQ6_K's, per
// activation row i and weight row r, superblock by superblock, read off the
// layout: isum = Σ_s sc_s·Σ q·a − 32·Σ_s sc_s·bs_s in int32, then
// superStep.
func packedQ6KRef(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n, nb int) {
	cols := nb * QK
	for i := range n {
		for r := range rows {
			g, rr := r/GroupRows, r%GroupRows
			var acc float32
			for b := range nb {
				o := w[(g*nb+b)*q6kSuper : (g*nb+b+1)*q6kSuper]
				ab := a[i*cols+b*QK : i*cols+(b+1)*QK]
				bsb := bs[(i*nb+b)*16 : (i*nb+b+1)*16]
				var isum, corr int32
				for s := range 16 {
					sc := int32(int8(o[32+32*(s/2)+2*rr+s%2]))
					var p int32
					for l := range 16 {
						e := 16*s + l
						h, gg, ll := e/128, e%128/32, e%32
						u := o[288+192*(8*h+ll/4):]
						var q int32
						switch gg {
						case 0:
							q = int32(u[4*rr+ll%4] & 15)
						case 1:
							q = int32(u[64+4*rr+ll%4] & 15)
						case 2:
							q = int32(u[4*rr+ll%4] >> 4)
						case 3:
							q = int32(u[64+4*rr+ll%4] >> 4)
						}
						q |= int32(u[128+4*rr+ll%4]>>(2*uint(gg))&3) << 4
						p += q * int32(ab[e])
					}
					isum += sc * p
					corr += sc * int32(bsb[s])
				}
				acc = superStep(acc, isum-32*corr, f16le(o[2*rr:]), da[i*nb+b])
			}
			out[i*ldo+r] = acc
		}
	}
}
