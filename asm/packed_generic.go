package asm

import (
	"encoding/binary"
	"math"
	"sync"
)

// The fast pure-Go packed product: the kernel of KRAFLA_KERNEL=generic, of
// `-tags purego` builds and of every architecture without assembly.
// packedMatMulRef (packed.go) is its definition, written plainly; this one
// gives the same bits (TestPackedGenericMatchesRef, FuzzPackedGeneric) but
// gets each block's exact integer sum from a few 64-bit multiplications
// (SIMD within a register), the float part being blockStep, blocks in
// order, as in the definition. Only the integer sums are computed another
// way, and integer sums are exact whatever the order.
//
// Q4_0: a block's sum of one row is c = Σ_e (n_e − 8)·a_e over 32 elements,
// |c| ≤ 32·8·127 = 32512 < 2¹⁵. Four nibbles of a chunk, n_0..n_3 (elements
// e_0..e_3), are spread into the 16-bit lanes of W = Σ_j n_j·2^(16j); the
// activations of those elements into the lanes of A = Σ_j a_(e_j)·2^(16(3−j)),
// reversed (signed lanes: the integer value, wrapped mod 2⁶⁴). The product
// W·A, as integers, is Σ_m c_m·2^(16m) with c_m = Σ_(j+k=m) n_j·a_(e_(3−k)),
// so c_3 = Σ_j n_j·a_(e_j), the chunk's dot product. Summing the 8 products of
// a block (4 chunks, low and high nibbles) mod 2⁶⁴ and subtracting
// 8·Σ_j 2^(16j)·ΣA (the −8 of every nibble, an activation-only word) gives
// S ≡ c·2⁴⁸ + L (mod 2⁶⁴), L = c_0 + c_1·2¹⁶ + c_2·2³² of the signed weights:
// |c_m| ≤ 8·(m+1)·1016, so |L| < 24385·2³² < 2⁴⁷. With 2⁴⁷ added (also in the
// activation word), (S + 2⁴⁷) >> 48 is c mod 2¹⁶, and int16 of it is c.
//
// Q8_0: the lanes are two rows of 32 bits. A 64-bit load of a chunk reads
// rows r and r+1 (4 bytes each); xor 0x80 makes each quant q + 128 ∈ [0, 255];
// masking byte j of both rows gives W = (q_r + 128) + (q_(r+1) + 128)·2³², and
// W·a_e adds both rows' products at once. Per block, with 128·Σa·(1 + 2³²)
// subtracted, S ≡ c_r + c_(r+1)·2³² (mod 2⁶⁴) where |c| ≤ 32·128·127 < 2³¹:
// int32 of the low half is c_r, and int32 of (S − c_r) >> 32 is c_(r+1).

// genericScratch holds one call's activation words and one group's scales.
type genericScratch struct {
	words []uint64
	sc    []float32
}

var genericPool sync.Pool // *genericScratch

// packedMatMulGeneric is packedMatMulRef (same arguments, same bits).
func packedMatMulGeneric(out []float32, ldo int, w []byte, rows int, q4, f16 bool, a []int8, da []float32, n, nb int) {
	l := layout{q4, f16, nb}
	gs := l.group()
	cols := nb * BlockSize
	per := q8Words // activation words per block
	if q4 {
		per = q4Words
	}
	sp, _ := genericPool.Get().(*genericScratch)
	if sp == nil {
		sp = new(genericScratch)
	}
	if cap(sp.words) < n*nb*per {
		sp.words = make([]uint64, n*nb*per)
	}
	if cap(sp.sc) < nb*GroupRows {
		sp.sc = make([]float32, nb*GroupRows)
	}
	act := sp.words[:n*nb*per]
	sc := sp.sc[:nb*GroupRows] // one group's scales, row by row
	for i := range n {
		ai := a[i*cols : (i+1)*cols]
		if q4 {
			q4ActWords(act[i*nb*per:(i+1)*nb*per], ai)
		} else {
			q8ActWords(act[i*nb*per:(i+1)*nb*per], ai)
		}
	}
	for g := 0; g*GroupRows < rows; g++ {
		grp := w[g*gs : (g+1)*gs]
		groupScales(sc, grp, l)
		nr := min(GroupRows, rows-g*GroupRows)
		for i := range n {
			o := out[i*ldo+g*GroupRows : i*ldo+g*GroupRows+nr]
			ai := act[i*nb*per : (i+1)*nb*per]
			dai := da[i*nb : (i+1)*nb]
			if q4 {
				q4Group(o, grp, l, sc, ai, dai)
			} else {
				q8Group(o, grp, l, sc, ai, dai)
			}
		}
	}
	genericPool.Put(sp)
}

// groupScales writes the scales of one group into sc row by row: row rr's
// nb scales at sc[rr·nb:].
func groupScales(sc []float32, grp []byte, l layout) {
	nb := l.nb
	if l.f16 {
		for b := range nb {
			h := (*[2 * GroupRows]byte)(grp[32*b:])
			for rr := range GroupRows {
				sc[rr*nb+b] = F16ToF32(binary.LittleEndian.Uint16(h[(2*rr)&30:]))
			}
		}
		return
	}
	step := 4*GroupRows + l.quantBytes()
	for b := range nb {
		f := (*[4 * GroupRows]byte)(grp[b*step:])
		for rr := range GroupRows {
			sc[rr*nb+b] = math.Float32frombits(binary.LittleEndian.Uint32(f[(4*rr)&60:]))
		}
	}
}

// q4Words is the number of activation words per block for Q4_0: A of the
// four low-nibble chunks, of the four high-nibble ones, then the start word
// 2⁴⁷ − 0x0008000800080008·ΣA.
const q4Words = 9

// q4ActWords writes the Q4_0 words of one activation row (len(a)/32 blocks).
func q4ActWords(dst []uint64, a []int8) {
	for b := range len(a) / BlockSize {
		ab := (*[BlockSize]int8)(a[b*BlockSize:])
		d := (*[q4Words]uint64)(dst[b*q4Words:])
		var sum uint64
		for t := range 8 {
			e := 4*(t&3) + 16*(t>>2) // first element of the chunk
			v := uint64(int64(ab[e&31])<<48 + int64(ab[(e+1)&31])<<32 + int64(ab[(e+2)&31])<<16 + int64(ab[(e+3)&31]))
			d[t] = v
			sum += v
		}
		d[8] = 1<<47 - 0x0008000800080008*sum
	}
}

// q4Group sets out[rr] for the nr = len(out) rows of one group of Q4_0
// quants (scales sc, block by block) with one row's activation words.
func q4Group(out []float32, grp []byte, l layout, sc []float32, act []uint64, da []float32) {
	nb := l.nb
	qs := grp[l.chunk(0, 0, 0):]
	step := l.chunk(1, 0, 0) - l.chunk(0, 0, 0) // bytes from one block's quants to the next
	for rr := range out {
		var acc float32
		off := (4 * rr) & 60
		sr := sc[rr*nb : (rr+1)*nb]
		da := da[:len(sr)]
		for b, d := range sr {
			q := (*[16 * GroupRows]byte)(qs[b*step:])
			aw := (*[q4Words]uint64)(act[b*q4Words:])
			s := aw[8]
			x := spread16(binary.LittleEndian.Uint32(q[off:]))
			s += x&0x000F000F000F000F*aw[0] + x>>4&0x000F000F000F000F*aw[4]
			x = spread16(binary.LittleEndian.Uint32(q[64+off:]))
			s += x&0x000F000F000F000F*aw[1] + x>>4&0x000F000F000F000F*aw[5]
			x = spread16(binary.LittleEndian.Uint32(q[128+off:]))
			s += x&0x000F000F000F000F*aw[2] + x>>4&0x000F000F000F000F*aw[6]
			x = spread16(binary.LittleEndian.Uint32(q[192+off:]))
			s += x&0x000F000F000F000F*aw[3] + x>>4&0x000F000F000F000F*aw[7]
			acc = blockStep(acc, int32(int16(s>>48)), d, da[b])
		}
		out[rr] = acc
	}
}

// spread16 moves byte j of u to bits 16j..16j+7.
func spread16(u uint32) uint64 {
	x := uint64(u)
	x = (x | x<<16) & 0x0000FFFF0000FFFF
	return (x | x<<8) & 0x00FF00FF00FF00FF
}

// q8Words is the number of activation words per block for Q8_0: the 32
// quants sign-extended, then the start word −128·Σa·(1 + 2³²).
const q8Words = 33

// q8ActWords writes the Q8_0 words of one activation row.
func q8ActWords(dst []uint64, a []int8) {
	for b := range len(a) / BlockSize {
		ab := (*[BlockSize]int8)(a[b*BlockSize:])
		d := (*[q8Words]uint64)(dst[b*q8Words:])
		var sum int64
		for j, v := range ab {
			d[j] = uint64(int64(v))
			sum += int64(v)
		}
		d[32] = uint64(-128*sum) * (1 + 1<<32)
	}
}

// q8Group is q4Group for Q8_0 quants, two rows at a time.
func q8Group(out []float32, grp []byte, l layout, sc []float32, act []uint64, da []float32) {
	nb := l.nb
	qs := grp[l.chunk(0, 0, 0):]
	step := l.chunk(1, 0, 0) - l.chunk(0, 0, 0)
	var acc [GroupRows]float32
	for p := 0; 2*p < len(out); p++ {
		off := (8 * p) & 56
		var a0, a1 float32
		s0 := sc[(2*p)*nb : (2*p+1)*nb]
		s1 := sc[(2*p+1)*nb : (2*p+2)*nb]
		s1 = s1[:len(s0)]
		da := da[:len(s0)]
		for b := range s0 {
			q := (*[32 * GroupRows]byte)(qs[b*step:])
			aw := (*[q8Words]uint64)(act[b*q8Words:])
			s := aw[32]
			for k := range 8 {
				x := binary.LittleEndian.Uint64(q[(64*k+off)&504:]) ^ 0x8080808080808080
				e := (*[4]uint64)(aw[(4*k)&31:])
				s += x&0x000000FF000000FF*e[0] + x>>8&0x000000FF000000FF*e[1] +
					x>>16&0x000000FF000000FF*e[2] + x>>24&0x000000FF000000FF*e[3]
			}
			lo := int32(uint32(s))
			hi := int32((s - uint64(int64(lo))) >> 32)
			a0 = blockStep(a0, lo, s0[b], da[b])
			a1 = blockStep(a1, hi, s1[b], da[b])
		}
		acc[(2*p)&15], acc[(2*p+1)&15] = a0, a1
	}
	copy(out, acc[:])
}
