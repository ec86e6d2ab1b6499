package asm

import (
	"fmt"
	"math"
)

// GroupRows is the number of weight rows a packed matrix interleaves.
const GroupRows = 16

// Packed is a quantized weight matrix in the kernels' layout: rows in groups
// of GroupRows (the last group padded with zero rows of zero scale), and per
// group, block by block, the GroupRows float32 scales followed by the quants
// interleaved in 4-byte chunks: chunk k of row r at 4·(GroupRows·k + r).
// A Q8_0 chunk holds elements 4k..4k+3 of the block (eight chunks); a Q4_0
// chunk holds bytes 4k..4k+3 of the block's 16, whose low nibbles are elements
// 4k..4k+3 and high nibbles elements 16+4k..16+4k+3 (four chunks). One 32-byte
// load (AVX2: 32 bytes) then feeds sixteen (eight) rows with the same four
// activation quants.
type Packed struct {
	data       []byte
	rows, cols int
	q4         bool
}

// blockStride is the bytes of one block of one group.
func blockStride(q4 bool) int {
	if q4 {
		return 4*GroupRows + 16*GroupRows
	}
	return 4*GroupRows + 32*GroupRows
}

// PackedSize returns the bytes PackQ8_0 or PackQ4_0 (q4) write for a
// rows × cols matrix.
func PackedSize(q4 bool, rows, cols int) int {
	return (rows + GroupRows - 1) / GroupRows * (cols / BlockSize) * blockStride(q4)
}

func checkPack(name string, dst []byte, q4 bool, wlen, wPerBlock int, dw []float32, rows, cols int) {
	if rows < 0 || cols < 0 || cols%BlockSize != 0 {
		panic(fmt.Sprintf("asm: %s: %d×%d: cols must be a multiple of 32", name, rows, cols))
	}
	nb := cols / BlockSize
	if wlen < rows*nb*wPerBlock || len(dw) < rows*nb || len(dst) < PackedSize(q4, rows, cols) {
		panic("asm: " + name + ": w, dw or dst too short for rows×cols")
	}
}

// PackQ8_0 writes the rows × cols Q8_0 matrix (w row-major, dw one scale per
// block) into dst (PackedSize bytes) in the kernels' layout and returns it.
func PackQ8_0(dst []byte, w []int8, dw []float32, rows, cols int) Packed {
	checkPack("PackQ8_0", dst, false, len(w), 32, dw, rows, cols)
	nb := cols / BlockSize
	bs := blockStride(false)
	for r := range rows {
		g, rr := r/GroupRows, r%GroupRows
		for b := range nb {
			blk := dst[(g*nb+b)*bs : (g*nb+b+1)*bs]
			putF32(blk[4*rr:], dw[r*nb+b])
			src := w[(r*nb+b)*32 : (r*nb+b+1)*32]
			for k := range 8 {
				o := 4*GroupRows + 4*(GroupRows*k+rr)
				for j := range 4 {
					blk[o+j] = byte(src[4*k+j])
				}
			}
		}
	}
	clearPad(dst, rows, cols, false)
	return Packed{data: dst[:PackedSize(false, rows, cols)], rows: rows, cols: cols}
}

// PackQ4_0 is PackQ8_0 for Q4_0 (w: 16 bytes per block).
func PackQ4_0(dst []byte, w []byte, dw []float32, rows, cols int) Packed {
	checkPack("PackQ4_0", dst, true, len(w), 16, dw, rows, cols)
	nb := cols / BlockSize
	bs := blockStride(true)
	for r := range rows {
		g, rr := r/GroupRows, r%GroupRows
		for b := range nb {
			blk := dst[(g*nb+b)*bs : (g*nb+b+1)*bs]
			putF32(blk[4*rr:], dw[r*nb+b])
			src := w[(r*nb+b)*16 : (r*nb+b+1)*16]
			for k := range 4 {
				copy(blk[4*GroupRows+4*(GroupRows*k+rr):][:4], src[4*k:4*k+4])
			}
		}
	}
	clearPad(dst, rows, cols, true)
	return Packed{data: dst[:PackedSize(true, rows, cols)], rows: rows, cols: cols, q4: true}
}

// clearPad zeroes the padding rows of the last group (scales and quants; a
// Q4_0 zero byte is the value -8, harmless under a zero scale, and the
// padding's outputs are never stored).
func clearPad(dst []byte, rows, cols int, q4 bool) {
	if rows%GroupRows == 0 {
		return
	}
	nb := cols / BlockSize
	bs := blockStride(q4)
	g := rows / GroupRows
	chunks := 8
	if q4 {
		chunks = 4
	}
	for b := range nb {
		blk := dst[(g*nb+b)*bs : (g*nb+b+1)*bs]
		for rr := rows % GroupRows; rr < GroupRows; rr++ {
			clear(blk[4*rr : 4*rr+4])
			for k := range chunks {
				o := 4*GroupRows + 4*(GroupRows*k+rr)
				clear(blk[o : o+4])
			}
		}
	}
}

func putF32(b []byte, v float32) {
	u := math.Float32bits(v)
	b[0], b[1], b[2], b[3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
}

func getF32(b []byte) float32 {
	return math.Float32frombits(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
}

// Rows, Cols and Q4 describe the matrix; Bytes is the size of its layout.
func (p *Packed) Rows() int  { return p.rows }
func (p *Packed) Cols() int  { return p.cols }
func (p *Packed) Q4() bool   { return p.q4 }
func (p *Packed) Bytes() int { return len(p.data) }

// Dequant writes row r dequantized into x (cols values): float32(q)·d, with
// q the int8 quant (Q8_0) or nibble − 8 (Q4_0) and d the block's scale.
func (p *Packed) Dequant(r int, x []float32) {
	if r < 0 || r >= p.rows || len(x) < p.cols {
		panic("asm: Packed.Dequant: row out of range or x too short")
	}
	nb := p.cols / BlockSize
	bs := blockStride(p.q4)
	g, rr := r/GroupRows, r%GroupRows
	for b := range nb {
		blk := p.data[(g*nb+b)*bs : (g*nb+b+1)*bs]
		d := getF32(blk[4*rr:])
		xb := x[b*32 : b*32+32]
		if p.q4 {
			for k := range 4 {
				c := blk[4*GroupRows+4*(GroupRows*k+rr):][:4]
				for j, v := range c {
					xb[4*k+j] = float32(int(v&15)-8) * d
					xb[16+4*k+j] = float32(int(v>>4)-8) * d
				}
			}
			continue
		}
		for k := range 8 {
			c := blk[4*GroupRows+4*(GroupRows*k+rr):][:4]
			for j, v := range c {
				xb[4*k+j] = float32(int8(v)) * d
			}
		}
	}
}

// MatMul sets out[i·ldo + r − lo] = the block dot product (package comment)
// of weight row r and activation row i, for lo ≤ r < hi and i < n. The rows
// lo..hi−1 must start a group (lo a multiple of GroupRows) and end one or the
// matrix (hi a multiple of GroupRows or hi = Rows), so that threads split a
// matrix along groups. Activation row i is a[i·cols:], its scales da[i·cols/32:].
// n = 1 is the matrix-vector product of generation.
func (p *Packed) MatMul(out []float32, ldo, lo, hi int, a []int8, da []float32, n int) {
	if lo < 0 || hi > p.rows || lo > hi || lo%GroupRows != 0 || (hi%GroupRows != 0 && hi != p.rows) {
		panic(fmt.Sprintf("asm: Packed.MatMul: rows %d..%d of %d do not start and end groups", lo, hi, p.rows))
	}
	nb := p.cols / BlockSize
	if n < 0 || len(a) < n*p.cols || len(da) < n*nb {
		panic("asm: Packed.MatMul: a or da too short for n rows")
	}
	rows := hi - lo
	if n == 0 || rows == 0 {
		return
	}
	if ldo < rows || len(out) < (n-1)*ldo+rows {
		panic("asm: Packed.MatMul: out too short or ldo < hi−lo")
	}
	if nb == 0 {
		for i := range n {
			clear(out[i*ldo : i*ldo+rows])
		}
		return
	}
	bs := blockStride(p.q4)
	w := p.data[lo/GroupRows*nb*bs : (hi+GroupRows-1)/GroupRows*nb*bs]
	packedMatMul(out, ldo, w, rows, p.q4, a[:n*p.cols], da[:n*nb], n, nb)
}

// packedMatMulGeneric is the pure-Go kernel over the groups of w (rows rows,
// the last group possibly partial).
func packedMatMulGeneric(out []float32, ldo int, w []byte, rows int, q4 bool, a []int8, da []float32, n, nb int) {
	bs := blockStride(q4)
	cols := nb * BlockSize
	for i := range n {
		ai := a[i*cols : (i+1)*cols]
		dai := da[i*nb : (i+1)*nb]
		for r := range rows {
			g, rr := r/GroupRows, r%GroupRows
			var acc float32
			for b := range nb {
				blk := w[(g*nb+b)*bs : (g*nb+b+1)*bs]
				ab := ai[b*32 : b*32+32]
				var s int32
				if q4 {
					for k := range 4 {
						c := blk[4*GroupRows+4*(GroupRows*k+rr):][:4]
						for j, v := range c {
							s += (int32(v&15)-8)*int32(ab[4*k+j]) + (int32(v>>4)-8)*int32(ab[16+4*k+j])
						}
					}
				} else {
					for k := range 8 {
						c := blk[4*GroupRows+4*(GroupRows*k+rr):][:4]
						for j, v := range c {
							s += int32(int8(v)) * int32(ab[4*k+j])
						}
					}
				}
				acc = blockStep(acc, s, getF32(blk[4*rr:]), dai[b])
			}
			out[i*ldo+r] = acc
		}
	}
}

// blockStep is the float part of the definition: the block's exact integer
// sum s times its scale dw·da, rounded, then added (no FMA).
func blockStep(acc float32, s int32, dw, da float32) float32 {
	sc := float32(dw * da)
	return acc + float32(float32(s)*sc)
}
