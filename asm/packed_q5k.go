package asm

import "fmt"

// The packed interleaved layout of a Q5_K matrix: Q4_K's (PackedQ4K) with
// the fifth bits, the file's qh, in 4-byte chunks between the mins and the
// quants. Per group, superblock by superblock, q5kSuper bytes:
//
//	  0  d, dmin, sc, m as PackedQ4K's (320 bytes)
//	320  qh   8 chunks × 16 rows × 4 bytes: chunk k of row rr at
//	          320 + 64·k + 4·rr holds the file's qh[4·k …+3], whose bit s is
//	          the fifth bit of elements 32·s + 4·k …+3 (sub-block s)
//	832  qs   as PackedQ4K's at 320: chunk c = 8·t + k of row rr at
//	          832 + 64·c + 4·rr holds qs[4·c …+3] (low nibbles sub-block 2t,
//	          high nibbles 2t + 1, elements 4·k …+3 of each)
//
// The products are DotQ5_K's bits (packedQ5KRef is the definition read off
// this layout).

// q5kSuper is the bytes of one superblock of one group.
const q5kSuper = 832 + 2048

// q5kBlock is the bytes of one Q5_K superblock as the file holds it.
const q5kBlock = 176

// PackedQ5K is a Q5_K matrix in the packed interleaved layout (PackQ5_K).
type PackedQ5K struct {
	data       []byte
	rows, cols int
}

// PackedQ5KSize returns the bytes PackQ5_K writes for a rows × cols matrix
// (cols a multiple of 256).
func PackedQ5KSize(rows, cols int) int {
	return (rows + GroupRows - 1) / GroupRows * (cols / QK) * q5kSuper
}

// PackQ5_K writes the rows × cols Q5_K matrix w (rows·cols/256 superblocks
// of 176 bytes, row by row, as the file holds them) into dst
// (PackedQ5KSize bytes) in the packed interleaved layout and returns it.
func PackQ5_K(dst []byte, w []byte, rows, cols int) PackedQ5K {
	if rows < 0 || cols < 0 || cols%QK != 0 || len(w) < rows*cols/QK*q5kBlock || len(dst) < PackedQ5KSize(rows, cols) {
		panic(fmt.Sprintf("asm: PackQ5_K: %d×%d: cols must be a multiple of 256, w hold the blocks and dst PackedQ5KSize bytes", rows, cols))
	}
	nb := cols / QK
	size := PackedQ5KSize(rows, cols)
	dst = dst[:size:size]
	clear(dst) // the padding rows: zero scales, mins and quants
	for r := range rows {
		g, rr := r/GroupRows, r%GroupRows
		for b := range nb {
			blk := w[(r*nb+b)*q5kBlock : (r*nb+b+1)*q5kBlock]
			o := dst[(g*nb+b)*q5kSuper : (g*nb+b+1)*q5kSuper]
			o[2*rr], o[2*rr+1] = blk[0], blk[1]
			o[32+2*rr], o[32+2*rr+1] = blk[2], blk[3]
			for s := range 8 {
				sc, m := scaleMinK4(s, blk[4:16])
				o[64+16*s+rr] = sc
				o[192+32*(s/2)+2*rr+s%2] = m
			}
			qh, qs := blk[16:48], blk[48:176]
			for k := range 8 {
				copy(o[320+64*k+4*rr:][:4], qh[4*k:4*k+4])
			}
			for c := range 32 {
				copy(o[832+64*c+4*rr:][:4], qs[4*c:4*c+4])
			}
		}
	}
	return PackedQ5K{data: dst, rows: rows, cols: cols}
}

// Rows, Cols and Bytes describe the matrix and the size of its layout.
func (p *PackedQ5K) Rows() int  { return p.rows }
func (p *PackedQ5K) Cols() int  { return p.cols }
func (p *PackedQ5K) Bytes() int { return len(p.data) }

// MatMul sets out[i·ldo + r − lo] = DotQ5_K of weight row r and activation
// row i (a[i·cols:], da[i·cols/256:], bs[i·cols/16:], as QuantizeQ8_K writes
// them), for lo ≤ r < hi and i < n, bit for bit; lo, hi and bs as
// PackedQ4K.MatMul's.
func (p *PackedQ5K) MatMul(out []float32, ldo, lo, hi int, a []int8, da []float32, bs []int16, n int) {
	if w, nb := packedKArgs("PackedQ5K", q5kSuper, p.data, p.rows, p.cols, out, ldo, lo, hi, a, da, bs, n); w != nil {
		packedQ5KMatMul(out, ldo, w, hi-lo, a[:n*p.cols], da[:n*nb], bs[:n*nb*16], n, nb)
	}
}

// packedQ5KRef is the definition of the packed Q5_K product over the groups
// of w (rows rows, the last group possibly partial), written to be read:
// DotQ5_K's, per activation row i and weight row r, superblock by
// superblock, with d, dmin, the scales, mins, fifth bits and quants read
// from the layout.
func packedQ5KRef(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n, nb int) {
	cols := nb * QK
	for i := range n {
		for r := range rows {
			g, rr := r/GroupRows, r%GroupRows
			var acc float32
			for b := range nb {
				o := w[(g*nb+b)*q5kSuper : (g*nb+b+1)*q5kSuper]
				ab := a[i*cols+b*QK : i*cols+(b+1)*QK]
				bsb := bs[(i*nb+b)*16 : (i*nb+b+1)*16]
				var isum, msum int32
				for s := range 8 {
					t, shift := s/2, 4*uint(s%2)
					var p int32
					for l := range 32 {
						v := o[832+64*(8*t+l/4)+4*rr+l%4]
						h := o[320+64*(l/4)+4*rr+l%4]
						q := int32(v>>shift&15) | int32(h>>uint(s)&1)<<4
						p += q * int32(ab[32*s+l])
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
