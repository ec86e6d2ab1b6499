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
// interleaved in 4-byte chunks: chunk k of row r at 4·(GroupRows·k + r) after
// the scales. With binary16 scales (possible when every scale of the matrix
// is one: ScalesFitF16) a group holds first every block's scales, 32 bytes a
// block, padded to a multiple of 64, then every block's chunks as above
// (layout has the offsets).
// A Q8_0 chunk holds elements 4k..4k+3 of the block (eight chunks); a Q4_0
// chunk holds bytes 4k..4k+3 of the block's 16, whose low nibbles are elements
// 4k..4k+3 and high nibbles elements 16+4k..16+4k+3 (four chunks). One 32-byte
// load (AVX2: 32 bytes) then feeds sixteen (eight) rows with the same four
// activation quants.
//
// An IQ4_NL matrix (PackIQ4_NL) takes the Q4_0 layout with its blocks'
// nibbles, which index the codebook KValuesIQ4 instead of meaning n − 8.
// A Q5_0 matrix (PackQ5_0) has a layout of its own (packed_q50.go).
type Packed struct {
	data       []byte
	rows, cols int
	q4, f16    bool
	iq4        bool
	q5         bool
}

// layout gives the offsets within one group of a packed matrix with nb
// blocks a row. Float32 scales: block by block, the 16 scales (64 bytes)
// then the quants. Binary16 scales: first every block's 16 scales (32 bytes
// a block, padded to a multiple of 64), then every block's quants, so that
// the quants stay 64-byte aligned.
type layout struct {
	q4, f16 bool
	nb      int
}

// quantBytes is the bytes of one block's quants of a group.
func (l layout) quantBytes() int {
	if l.q4 {
		return 16 * GroupRows
	}
	return 32 * GroupRows
}

// header is the bytes before the first block's quants with binary16 scales.
func (l layout) header() int { return (32*l.nb + 63) &^ 63 }

// group is the bytes of one group.
func (l layout) group() int {
	if l.f16 {
		return l.header() + l.nb*l.quantBytes()
	}
	return l.nb * (4*GroupRows + l.quantBytes())
}

// scale is the offset of row rr's scale of block b.
func (l layout) scale(b, rr int) int {
	if l.f16 {
		return 32*b + 2*rr
	}
	return b*(4*GroupRows+l.quantBytes()) + 4*rr
}

// chunk is the offset of chunk k of row rr of block b (4 quant bytes).
func (l layout) chunk(b, k, rr int) int {
	o := 4 * (GroupRows*k + rr)
	if l.f16 {
		return l.header() + b*l.quantBytes() + o
	}
	return b*(4*GroupRows+l.quantBytes()) + 4*GroupRows + o
}

// chunks is the number of 4-byte chunks of a block's row.
func (l layout) chunks() int { return l.quantBytes() / (4 * GroupRows) }

// putScale stores the scale d at grp[o:]; in the binary16 layout d must be
// a binary16 value (ScalesFitF16), checked here as each scale is stored.
func (l layout) putScale(grp []byte, o int, d float32) {
	if l.f16 {
		h, ok := f16Exact(d)
		if !ok {
			panic(fmt.Sprintf("asm: packing: f16 layout for a scale (%v) that is not a binary16 value", d))
		}
		grp[o], grp[o+1] = byte(h), byte(h>>8)
		return
	}
	putF32(grp[o:], d)
}

// getScale reads the scale at grp[o:].
func (l layout) getScale(grp []byte, o int) float32 {
	if l.f16 {
		return F16ToF32(uint16(grp[o]) | uint16(grp[o+1])<<8)
	}
	return getF32(grp[o:])
}

// PackedSize returns the bytes PackQ8_0 or PackQ4_0 (q4) write for a
// rows × cols matrix, with f16 or float32 scales.
func PackedSize(q4, f16 bool, rows, cols int) int {
	if cols/BlockSize == 0 {
		return 0
	}
	return (rows + GroupRows - 1) / GroupRows * layout{q4, f16, cols / BlockSize}.group()
}

// ScalesFitF16 reports whether every scale in dw is a binary16 value widened
// (F16ToF32): what the f16 layout stores exactly. Scales read from a file
// that holds them as f16 always are.
func ScalesFitF16(dw []float32) bool {
	for _, d := range dw {
		if _, ok := f16Exact(d); !ok {
			return false
		}
	}
	return true
}

// f16Exact returns the binary16 value that F16ToF32 widens to x, if there is
// one (signalling NaNs included, which F32ToF16 would quiet).
func f16Exact(x float32) (uint16, bool) {
	u := math.Float32bits(x)
	if u&0x7f800000 == 0x7f800000 && u&0x7fffff != 0 { // NaN
		h := uint16(u>>16&0x8000 | 0x7c00 | u&0x7fffff>>13)
		return h, u&0x1fff == 0
	}
	h := F32ToF16(x)
	return h, math.Float32bits(F16ToF32(h)) == u
}

func checkPack(name string, dst []byte, q4, f16 bool, wlen, wPerBlock int, dw []float32, rows, cols int) {
	if rows < 0 || cols < 0 || cols%BlockSize != 0 {
		panic(fmt.Sprintf("asm: %s: %d×%d: cols must be a multiple of 32", name, rows, cols))
	}
	nb := cols / BlockSize
	if wlen < rows*nb*wPerBlock || len(dw) < rows*nb || len(dst) < PackedSize(q4, f16, rows, cols) {
		panic("asm: " + name + ": w, dw or dst too short for rows×cols")
	}
}

// PackQ8_0 writes the rows × cols Q8_0 matrix (w row-major, dw one scale per
// block) into dst (PackedSize bytes) in the kernels' layout and returns it.
// With f16 the scales are stored as binary16, which must hold them exactly
// (ScalesFitF16); the products do not change.
func PackQ8_0(dst []byte, w []int8, dw []float32, rows, cols int, f16 bool) Packed {
	checkPack("PackQ8_0", dst, false, f16, len(w), 32, dw, rows, cols)
	nb := cols / BlockSize
	l := layout{false, f16, nb}
	for r := range rows {
		g, rr := r/GroupRows, r%GroupRows
		grp := dst[g*l.group() : (g+1)*l.group()]
		for b := range nb {
			l.putScale(grp, l.scale(b, rr), dw[r*nb+b])
			src := w[(r*nb+b)*32 : (r*nb+b+1)*32]
			for k := range 8 {
				o := l.chunk(b, k, rr)
				for j := range 4 {
					grp[o+j] = byte(src[4*k+j])
				}
			}
		}
	}
	clearPad(dst, rows, cols, false, f16)
	return Packed{data: dst[:PackedSize(false, f16, rows, cols)], rows: rows, cols: cols, f16: f16}
}

// PackQ4_0 is PackQ8_0 for Q4_0 (w: 16 bytes per block).
func PackQ4_0(dst []byte, w []byte, dw []float32, rows, cols int, f16 bool) Packed {
	checkPack("PackQ4_0", dst, true, f16, len(w), 16, dw, rows, cols)
	nb := cols / BlockSize
	l := layout{true, f16, nb}
	for r := range rows {
		g, rr := r/GroupRows, r%GroupRows
		grp := dst[g*l.group() : (g+1)*l.group()]
		for b := range nb {
			l.putScale(grp, l.scale(b, rr), dw[r*nb+b])
			src := w[(r*nb+b)*16 : (r*nb+b+1)*16]
			for k := range 4 {
				copy(grp[l.chunk(b, k, rr):][:4], src[4*k:4*k+4])
			}
		}
	}
	clearPad(dst, rows, cols, true, f16)
	return Packed{data: dst[:PackedSize(true, f16, rows, cols)], rows: rows, cols: cols, q4: true, f16: f16}
}

// PackIQ4_NL writes the rows × cols IQ4_NL matrix w (rows·cols/32 blocks of
// 18 bytes: binary16 d, 16 bytes of nibbles, as the file holds them) into dst
// (PackedSize(true, f16, rows, cols) bytes) in the Q4_0 layout, nibbles
// unchanged, and returns it. Its products are DotIQ4_NL's bits (Σ K[n]·a
// exact per block, then Q4_0's step), so the same as the Q8_0 matrix
// IQ4_NLAsQ8_0 writes; they read half the bytes. The kernels that multiply
// it natively are the AVX-512 and AVX2 ones (PacksIQ4_NL); the others take the
// definition's loop (packedIQ4Ref), correct but slow, which only a variant
// chosen after packing meets.
func PackIQ4_NL(dst []byte, w []byte, rows, cols int, f16 bool) Packed {
	if rows < 0 || cols < 0 || cols%BlockSize != 0 || len(w) < rows*cols/BlockSize*18 {
		panic(fmt.Sprintf("asm: PackIQ4_NL: %d×%d: cols must be a multiple of 32 and w hold the blocks", rows, cols))
	}
	nb := rows * cols / BlockSize
	qs, d := make([]byte, nb*16), make([]float32, nb)
	for b := range nb {
		copy(qs[b*16:b*16+16], w[b*18+2:b*18+18])
		d[b] = f16le(w[b*18:])
	}
	p := PackQ4_0(dst, qs, d, rows, cols, f16)
	p.iq4 = true
	return p
}

// clearPad zeroes the padding rows of the last group and, with binary16
// scales, the padding after the scales (scales and quants; a Q4_0 zero byte
// is the value -8, harmless under a zero scale, and the padding's outputs are
// never stored).
func clearPad(dst []byte, rows, cols int, q4, f16 bool) {
	nb := cols / BlockSize
	l := layout{q4, f16, nb}
	ngroups := (rows + GroupRows - 1) / GroupRows
	if f16 {
		for g := range ngroups {
			clear(dst[g*l.group()+32*nb : g*l.group()+l.header()])
		}
	}
	if rows%GroupRows == 0 {
		return
	}
	grp := dst[(ngroups-1)*l.group() : ngroups*l.group()]
	ss := 4
	if f16 {
		ss = 2
	}
	for b := range nb {
		for rr := rows % GroupRows; rr < GroupRows; rr++ {
			clear(grp[l.scale(b, rr):][:ss])
			for k := range l.chunks() {
				clear(grp[l.chunk(b, k, rr):][:4])
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

// Rows, Cols, Q4 and F16 (its scales binary16) describe the matrix; Bytes is
// the size of its layout.
func (p *Packed) Rows() int  { return p.rows }
func (p *Packed) Cols() int  { return p.cols }
func (p *Packed) Q4() bool   { return p.q4 }
func (p *Packed) F16() bool  { return p.f16 }
func (p *Packed) Bytes() int { return len(p.data) }

// IQ4 reports an IQ4_NL matrix (PackIQ4_NL).
func (p *Packed) IQ4() bool { return p.iq4 }

// Dequant writes row r dequantized into x (cols values): float32(q)·d, with
// q the int8 quant (Q8_0), nibble − 8 (Q4_0), codebook value (IQ4_NL) or
// n + 16·h − 16 (Q5_0) and d the block's scale.
func (p *Packed) Dequant(r int, x []float32) {
	if r < 0 || r >= p.rows || len(x) < p.cols {
		panic("asm: Packed.Dequant: row out of range or x too short")
	}
	if p.q5 {
		p.dequantQ5(r, x)
		return
	}
	nb := p.cols / BlockSize
	l := layout{p.q4, p.f16, nb}
	g, rr := r/GroupRows, r%GroupRows
	grp := p.data[g*l.group() : (g+1)*l.group()]
	for b := range nb {
		d := l.getScale(grp, l.scale(b, rr))
		xb := x[b*32 : b*32+32]
		if p.iq4 {
			for k := range 4 {
				c := grp[l.chunk(b, k, rr):][:4]
				for j, v := range c {
					xb[4*k+j] = float32(KValuesIQ4[v&15]) * d
					xb[16+4*k+j] = float32(KValuesIQ4[v>>4]) * d
				}
			}
			continue
		}
		if p.q4 {
			for k := range 4 {
				c := grp[l.chunk(b, k, rr):][:4]
				for j, v := range c {
					xb[4*k+j] = float32(int(v&15)-8) * d
					xb[16+4*k+j] = float32(int(v>>4)-8) * d
				}
			}
			continue
		}
		for k := range 8 {
			c := grp[l.chunk(b, k, rr):][:4]
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
	if p.q5 {
		gs := q5layout{p.f16, nb}.group()
		w := p.data[lo/GroupRows*gs : (hi+GroupRows-1)/GroupRows*gs]
		packedMatMulQ5(out, ldo, w, rows, p.f16, a[:n*p.cols], da[:n*nb], n, nb)
		return
	}
	gs := layout{p.q4, p.f16, nb}.group()
	w := p.data[lo/GroupRows*gs : (hi+GroupRows-1)/GroupRows*gs]
	if p.iq4 {
		packedMatMulIQ4(out, ldo, w, rows, p.f16, a[:n*p.cols], da[:n*nb], n, nb)
		return
	}
	packedMatMul(out, ldo, w, rows, p.q4, p.f16, a[:n*p.cols], da[:n*nb], n, nb)
}

// packedIQ4Ref is packedMatMulRef for an IQ4_NL matrix (PackIQ4_NL): per
// block the exact Σ K[n]·a, then blockStep.
func packedIQ4Ref(out []float32, ldo int, w []byte, rows int, f16 bool, a []int8, da []float32, n, nb int) {
	l := layout{true, f16, nb}
	cols := nb * BlockSize
	for i := range n {
		ai := a[i*cols : (i+1)*cols]
		dai := da[i*nb : (i+1)*nb]
		for r := range rows {
			g, rr := r/GroupRows, r%GroupRows
			grp := w[g*l.group() : (g+1)*l.group()]
			var acc float32
			for b := range nb {
				ab := ai[b*32 : b*32+32]
				var s int32
				for k := range 4 {
					c := grp[l.chunk(b, k, rr):][:4]
					for j, v := range c {
						s += int32(KValuesIQ4[v&15])*int32(ab[4*k+j]) + int32(KValuesIQ4[v>>4])*int32(ab[16+4*k+j])
					}
				}
				acc = blockStep(acc, s, l.getScale(grp, l.scale(b, rr)), dai[b])
			}
			out[i*ldo+r] = acc
		}
	}
}

// packedMatMulRef is the definition of the packed product over the groups of
// w (rows rows, the last group possibly partial), written to be read:
// per activation row i and weight row r, block by block, the exact integer
// sum of the 32 products, then blockStep. packedMatMulGeneric
// (packed_generic.go) is the fast pure-Go kernel, proven equal to it.
func packedMatMulRef(out []float32, ldo int, w []byte, rows int, q4, f16 bool, a []int8, da []float32, n, nb int) {
	l := layout{q4, f16, nb}
	cols := nb * BlockSize
	for i := range n {
		ai := a[i*cols : (i+1)*cols]
		dai := da[i*nb : (i+1)*nb]
		for r := range rows {
			g, rr := r/GroupRows, r%GroupRows
			var acc float32
			for b := range nb {
				grp := w[g*l.group() : (g+1)*l.group()]
				ab := ai[b*32 : b*32+32]
				var s int32
				if q4 {
					for k := range 4 {
						c := grp[l.chunk(b, k, rr):][:4]
						for j, v := range c {
							s += (int32(v&15)-8)*int32(ab[4*k+j]) + (int32(v>>4)-8)*int32(ab[16+4*k+j])
						}
					}
				} else {
					for k := range 8 {
						c := grp[l.chunk(b, k, rr):][:4]
						for j, v := range c {
							s += int32(int8(v)) * int32(ab[4*k+j])
						}
					}
				}
				acc = blockStep(acc, s, l.getScale(grp, l.scale(b, rr)), dai[b])
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
