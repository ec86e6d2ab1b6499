package asm

import (
	"encoding/binary"
	"fmt"
	"sync"
)

// The packed layout of a Q5_0 matrix (PackQ5_0): the Q4_0 layout of the
// blocks' low four bits plus, per block and group, a bit-plane of the fifth
// bits, so that a kernel reads 5.5 bits a weight (binary16 scales; 6 with
// float32 ones) instead of the 8.5 of the Q8_0 layout that Q5_0AsQ8_0
// writes. Its products are that Q8_0 form's bit for bit: the same exact
// integer sum per block, Σ (n + 16·h − 16)·a, then the same blockStep.
//
// Per group, with float32 scales, block by block 384 bytes:
//
//	  0  the 16 float32 scales (row rr at 4·rr)
//	 64  the fifth bits: 8 words of 64 bits; bit 4·rr + j of word c is bit
//	     4c + j of row rr's qh, the fifth bit of element 4c + j (word c
//	     covers the elements of Q8_0's chunk c)
//	128  the nibbles in the Q4_0 layout: chunk k of row rr at 4·(16k + rr)
//	     holds qs[4k …4k+3], low nibbles elements 4k …+3, high ones 16+4k …+3
//
// With binary16 scales a group holds first every block's 16 scales (32
// bytes a block, padded to a multiple of 64), then every block's 320 bytes
// of fifth bits and nibbles, as the Q4_0 and Q8_0 layouts do. The padding
// rows of a last group have zero scales, zero nibbles and every fifth bit
// set: the value 0, as the Q8_0 layout's padding (q5ToQ8 gives PackQ8_0's
// bytes exactly).

// q5Quant is the bytes of one block's fifth bits and nibbles in a group.
const q5Quant = 64 + 16*GroupRows

// q5layout gives the offsets within one group of a packed Q5_0 matrix with
// nb blocks a row.
type q5layout struct {
	f16 bool
	nb  int
}

// header is the bytes of the binary16 scales before the first block's bits.
func (l q5layout) header() int { return (32*l.nb + 63) &^ 63 }

// group is the bytes of one group.
func (l q5layout) group() int {
	if l.f16 {
		return l.header() + l.nb*q5Quant
	}
	return l.nb * (4*GroupRows + q5Quant)
}

// scale is the offset of row rr's scale of block b.
func (l q5layout) scale(b, rr int) int {
	if l.f16 {
		return 32*b + 2*rr
	}
	return b*(4*GroupRows+q5Quant) + 4*rr
}

// bits is the offset of block b's fifth bits (8 words of 64 bits).
func (l q5layout) bits(b int) int {
	if l.f16 {
		return l.header() + b*q5Quant
	}
	return b*(4*GroupRows+q5Quant) + 4*GroupRows
}

// chunk is the offset of nibble chunk k of row rr of block b (4 bytes).
func (l q5layout) chunk(b, k, rr int) int { return l.bits(b) + 64 + 4*(GroupRows*k+rr) }

// fifth returns the fifth bit of element e of row rr of block b.
func (l q5layout) fifth(grp []byte, b, rr, e int) int {
	bit := 4*rr + e%4
	return int(grp[l.bits(b)+8*(e/4)+bit/8] >> (bit % 8) & 1)
}

// value returns the Q5_0 value n + 16·h − 16 of element e of row rr of block b.
func (l q5layout) value(grp []byte, b, rr, e int) int8 {
	v := grp[l.chunk(b, e%16/4, rr)+e%4]
	if e >= 16 {
		v >>= 4
	}
	return int8(int(v&15) + 16*l.fifth(grp, b, rr, e) - 16)
}

// PackedQ5Size returns the bytes PackQ5_0 writes for a rows × cols matrix
// with binary16 (f16) or float32 scales.
func PackedQ5Size(f16 bool, rows, cols int) int {
	if cols/BlockSize == 0 {
		return 0
	}
	return (rows + GroupRows - 1) / GroupRows * q5layout{f16, cols / BlockSize}.group()
}

// PackQ5_0 writes the rows × cols Q5_0 matrix w (rows·cols/32 blocks of 22
// bytes: binary16 d, 32 fifth bits qh, 16 bytes of nibbles, as the file
// holds them) into dst (PackedQ5Size bytes) in the packed Q5_0 layout and
// returns it. With f16 the scales are stored as binary16, which must hold
// the widened d exactly (ScalesFitF16), as PackQ8_0's. Its products are
// those of PackQ8_0 on Q5_0AsQ8_0's weights and scales, bit for bit (and
// so DotQ5_0's). The kernels that multiply it natively are the AVX-512 and
// AVX2 ones (PacksQ5_0); the others expand it to the Q8_0 layout at each product
// (packedQ5ViaQ8), correct but slow, which only a variant chosen after
// packing meets.
func PackQ5_0(dst []byte, w []byte, rows, cols int, f16 bool) Packed {
	if rows < 0 || cols < 0 || cols%BlockSize != 0 || len(w) < rows*cols/BlockSize*22 || len(dst) < PackedQ5Size(f16, rows, cols) {
		panic(fmt.Sprintf("asm: PackQ5_0: %d×%d: cols must be a multiple of 32, w hold the blocks and dst PackedQ5Size bytes", rows, cols))
	}
	nb := cols / BlockSize
	l := q5layout{f16, nb}
	sl := layout{f16: f16} // its putScale
	size := PackedQ5Size(f16, rows, cols)
	dst = dst[:size:size]
	clear(dst)
	ngroups := (rows + GroupRows - 1) / GroupRows
	for r := range ngroups * GroupRows {
		g, rr := r/GroupRows, r%GroupRows
		grp := dst[g*l.group() : (g+1)*l.group()]
		for b := range nb {
			qh := uint32(0xffffffff) // a padding row: the value 0
			if r < rows {
				blk := w[(r*nb+b)*22 : (r*nb+b+1)*22]
				sl.putScale(grp, l.scale(b, rr), f16le(blk))
				for k := range 4 {
					copy(grp[l.chunk(b, k, rr):][:4], blk[6+4*k:6+4*k+4])
				}
				qh = binary.LittleEndian.Uint32(blk[2:])
			}
			for c := range 8 {
				nib := byte(qh >> (4 * c) & 15)
				grp[l.bits(b)+8*c+rr/2] |= nib << (4 * (rr % 2))
			}
		}
	}
	return Packed{data: dst, rows: rows, cols: cols, f16: f16, q5: true}
}

// Q5 reports a Q5_0 matrix (PackQ5_0).
func (p *Packed) Q5() bool { return p.q5 }

// dequantQ5 is Dequant for a Q5_0 matrix: float32(n + 16·h − 16)·d.
func (p *Packed) dequantQ5(r int, x []float32) {
	nb := p.cols / BlockSize
	l := q5layout{p.f16, nb}
	sl := layout{f16: p.f16}
	g, rr := r/GroupRows, r%GroupRows
	grp := p.data[g*l.group() : (g+1)*l.group()]
	for b := range nb {
		d := sl.getScale(grp, l.scale(b, rr))
		for e := range BlockSize {
			x[b*BlockSize+e] = float32(l.value(grp, b, rr, e)) * d
		}
	}
}

// packedQ5Ref is the definition of the packed Q5_0 product over the groups
// of w (rows rows, the last group possibly partial), written to be read: the
// Q8_0 definition (packedMatMulRef) on the values n + 16·h − 16 read off the
// layout: per activation row i and weight row r, block by block, the exact
// integer sum of the 32 products, then blockStep.
func packedQ5Ref(out []float32, ldo int, w []byte, rows int, f16 bool, a []int8, da []float32, n, nb int) {
	l := q5layout{f16, nb}
	sl := layout{f16: f16}
	cols := nb * BlockSize
	for i := range n {
		ai := a[i*cols : (i+1)*cols]
		dai := da[i*nb : (i+1)*nb]
		for r := range rows {
			g, rr := r/GroupRows, r%GroupRows
			grp := w[g*l.group() : (g+1)*l.group()]
			var acc float32
			for b := range nb {
				var s int32
				for e := range BlockSize {
					s += int32(l.value(grp, b, rr, e)) * int32(ai[b*BlockSize+e])
				}
				acc = blockStep(acc, s, sl.getScale(grp, l.scale(b, rr)), dai[b])
			}
			out[i*ldo+r] = acc
		}
	}
}

// q5ToQ8 writes the ngroups groups of packed Q5_0 src (nb blocks a row) into
// dst in the Q8_0 layout with the same scales (PackedSize(false, f16, …)
// bytes a group): the bytes PackQ8_0 writes for Q5_0AsQ8_0's weights and
// scales, padding included.
func q5ToQ8(dst, src []byte, ngroups, nb int, f16 bool) {
	l5, l8 := q5layout{f16, nb}, layout{false, f16, nb}
	for g := range ngroups {
		s := src[g*l5.group() : (g+1)*l5.group()]
		d := dst[g*l8.group() : (g+1)*l8.group()]
		if f16 {
			copy(d[:l8.header()], s[:l5.header()]) // the same scale header
		}
		for b := range nb {
			if !f16 {
				copy(d[l8.scale(b, 0):][:4*GroupRows], s[l5.scale(b, 0):][:4*GroupRows])
			}
			bits := s[l5.bits(b):][:64]
			nib := s[l5.chunk(b, 0, 0):][:16*GroupRows]
			q := d[l8.chunk(b, 0, 0):][:32*GroupRows]
			for c := range 8 { // Q8_0 chunk c: elements 4c..4c+3
				word := binary.LittleEndian.Uint64(bits[8*c:])
				for rr := range GroupRows {
					for j := range 4 {
						v := nib[64*(c%4)+4*rr+j]
						if c >= 4 {
							v >>= 4
						}
						h := byte(word>>(4*rr+j)) & 1
						q[64*c+4*rr+j] = (v & 15) + 16*h - 16
					}
				}
			}
		}
	}
}

var q5Pool sync.Pool // *[]byte: q5ToQ8's output

// packedQ5ViaQ8 is the packed Q5_0 product of the variants without Q5_0
// kernels: the groups of w expanded to the Q8_0 layout (q5ToQ8), then that
// layout's product (packedMatMul), the same bits.
func packedQ5ViaQ8(out []float32, ldo int, w []byte, rows int, f16 bool, a []int8, da []float32, n, nb int) {
	ngroups := (rows + GroupRows - 1) / GroupRows
	size := ngroups * layout{false, f16, nb}.group()
	bp, _ := q5Pool.Get().(*[]byte)
	if bp == nil || cap(*bp) < size {
		b := make([]byte, size)
		bp = &b
	}
	buf := (*bp)[:size]
	q5ToQ8(buf, w, ngroups, nb, f16)
	packedMatMul(out, ldo, buf, rows, false, f16, a, da, n, nb)
	q5Pool.Put(bp)
}
