package asm

import "fmt"

// The packed interleaved layout of an IQ4_XS matrix, as PackedQ4K's for
// Q4_K: rows in groups of GroupRows (the last padded with zero rows), per
// group, superblock by superblock, iq4xsSuper bytes:
//
//	  0  d    16 × binary16, row rr at 2·rr (the file's d)
//	 32  sc   8 × 16 bytes: sub-block s's scale ls_s − 32 (int8, −32..31)
//	          of row rr at 32 + 16·s + rr (unpacked from scales_h and
//	          scales_l at packing)
//	160  32 bytes of zeros (the quants start on a 64-byte line)
//	192  qs   32 chunks × 16 rows × 4 bytes: chunk c = 4·s + k of row rr at
//	          192 + 64·c + 4·rr holds the file's qs[4·c …+3], whose low
//	          nibbles index the codebook for elements 32·s + 4·k …+3 and
//	          high nibbles for elements 32·s + 16 + 4·k …+3 (sub-block s)
//
// The products are DotIQ4_XS's bits (packedIQ4XSRef is the definition read
// off this layout): the same exact integer sum isum per superblock and the
// same float32 step.

// iq4xsSuper is the bytes of one superblock of one group.
const iq4xsSuper = 192 + 2048

// iq4xsBlock is the bytes of one IQ4_XS superblock as the file holds it.
const iq4xsBlock = 136

// PackedIQ4XS is an IQ4_XS matrix in the packed interleaved layout
// (PackIQ4_XS).
type PackedIQ4XS struct {
	data       []byte
	rows, cols int
}

// PackedIQ4XSSize returns the bytes PackIQ4_XS writes for a rows × cols
// matrix (cols a multiple of 256).
func PackedIQ4XSSize(rows, cols int) int {
	return (rows + GroupRows - 1) / GroupRows * (cols / QK) * iq4xsSuper
}

// PackIQ4_XS writes the rows × cols IQ4_XS matrix w (rows·cols/256
// superblocks of 136 bytes, row by row, as the file holds them) into dst
// (PackedIQ4XSSize bytes) in the packed interleaved layout and returns it.
func PackIQ4_XS(dst []byte, w []byte, rows, cols int) PackedIQ4XS {
	if rows < 0 || cols < 0 || cols%QK != 0 || len(w) < rows*cols/QK*iq4xsBlock || len(dst) < PackedIQ4XSSize(rows, cols) {
		panic(fmt.Sprintf("asm: PackIQ4_XS: %d×%d: cols must be a multiple of 256, w hold the blocks and dst PackedIQ4XSSize bytes", rows, cols))
	}
	nb := cols / QK
	size := PackedIQ4XSSize(rows, cols)
	dst = dst[:size:size]
	clear(dst) // the padding rows: zero d, scales and quants
	for r := range rows {
		g, rr := r/GroupRows, r%GroupRows
		for b := range nb {
			blk := w[(r*nb+b)*iq4xsBlock : (r*nb+b+1)*iq4xsBlock]
			o := dst[(g*nb+b)*iq4xsSuper : (g*nb+b+1)*iq4xsSuper]
			o[2*rr], o[2*rr+1] = blk[0], blk[1]
			sh, sl := uint16(blk[2])|uint16(blk[3])<<8, blk[4:8]
			for s := range 8 {
				ls := sl[s/2]>>(4*uint(s%2))&15 | byte(sh>>(2*uint(s))&3)<<4
				o[32+16*s+rr] = byte(int8(ls) - 32)
			}
			qs := blk[8:136]
			for c := range 32 {
				copy(o[192+64*c+4*rr:][:4], qs[4*c:4*c+4])
			}
		}
	}
	return PackedIQ4XS{data: dst, rows: rows, cols: cols}
}

// Rows, Cols and Bytes describe the matrix and the size of its layout.
func (p *PackedIQ4XS) Rows() int  { return p.rows }
func (p *PackedIQ4XS) Cols() int  { return p.cols }
func (p *PackedIQ4XS) Bytes() int { return len(p.data) }

// MatMul sets out[i·ldo + r − lo] = DotIQ4_XS of weight row r and
// activation row i (a[i·cols:], da[i·cols/256:], bs[i·cols/16:], as
// QuantizeQ8_K writes them), for lo ≤ r < hi and i < n, bit for bit; lo and
// hi as PackedQ4K.MatMul's. As in DotIQ4_XS's definition, bs is not read
// (only its length is checked), and any int8 activations, −128 too, give
// the definition's result.
func (p *PackedIQ4XS) MatMul(out []float32, ldo, lo, hi int, a []int8, da []float32, bs []int16, n int) {
	if w, nb := packedKArgs("PackedIQ4XS", iq4xsSuper, p.data, p.rows, p.cols, out, ldo, lo, hi, a, da, bs, n); w != nil {
		packedIQ4XSMatMul(out, ldo, w, hi-lo, a[:n*p.cols], da[:n*nb], n, nb)
	}
}

// packedIQ4XSRef is the definition of the packed IQ4_XS product over the
// groups of w (rows rows, the last group possibly partial), written to be
// read: DotIQ4_XS's, per activation row i and weight row r, superblock by
// superblock, with d, the scales and the codebook indices read from the
// layout: isum = Σ_s sc_s · Σ_{j<16} (K[lo(q_16s+j)]·a_32s+j +
// K[hi(q_16s+j)]·a_32s+j+16) in int32, then superStep.
func packedIQ4XSRef(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, n, nb int) {
	cols := nb * QK
	for i := range n {
		for r := range rows {
			g, rr := r/GroupRows, r%GroupRows
			var acc float32
			for b := range nb {
				o := w[(g*nb+b)*iq4xsSuper : (g*nb+b+1)*iq4xsSuper]
				ab := a[i*cols+b*QK : i*cols+(b+1)*QK]
				var isum int32
				for s := range 8 {
					var p int32
					for j := range 16 {
						c := 4*s + j/4
						v := o[192+64*c+4*rr+j%4]
						p += int32(KValuesIQ4[v&15])*int32(ab[32*s+j]) + int32(KValuesIQ4[v>>4])*int32(ab[32*s+j+16])
					}
					isum += int32(int8(o[32+16*s+rr])) * p
				}
				acc = superStep(acc, isum, f16le(o[2*rr:]), da[i*nb+b])
			}
			out[i*ldo+r] = acc
		}
	}
}
