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
// |c| ≤ 32·8·127 = 32512 < 2¹⁵. Four nibbles n_0..n_3 of two bytes of a chunk
// (the low and high nibbles of each: elements e_0..e_3) are put in the 16-bit
// lanes of W = Σ_j n_j·2^(16j) by two table lookups (nib0, nib1); their
// activations go into the lanes of A = Σ_j a_(e_j)·2^(16(3−j)), reversed
// (signed lanes: the integer value, wrapped mod 2⁶⁴). The product W·A, as
// integers, is Σ_m c_m·2^(16m) with c_m = Σ_(j+k=m) n_j·a_(e_(3−k)), so
// c_3 = Σ_j n_j·a_(e_j), the dot product of the four. Summing the 8 products
// of a block (16 bytes) mod 2⁶⁴ and subtracting 0x0008000800080008·ΣA (the −8
// of every nibble: an activation-only word) gives S ≡ c·2⁴⁸ + L (mod 2⁶⁴)
// with L = c_0 + c_1·2¹⁶ + c_2·2³² of the signed weights: |c_m| ≤
// 8·(m+1)·1016, so |L| < 24385·2³² < 2⁴⁷. With 2⁴⁷ added (also folded into
// the activation word), (S + 2⁴⁷) >> 48 is c mod 2¹⁶, and int16 of it is c.
// The activation words are made once per call; for more than one activation
// row the weight words of a group are made once too (q4Spread) and reused.
//
// Q8_0: the lanes are two rows of 32 bits. A 64-bit load of a chunk reads
// rows r and r+1 (4 bytes each); xor 0x80 makes each quant q + 128 ∈ [0, 255];
// masking byte j of both rows gives W = (q_r + 128) + (q_(r+1) + 128)·2³², and
// W·a_e adds both rows' products at once. Per block, with 128·Σa·(1 + 2³²)
// subtracted, S ≡ c_r + c_(r+1)·2³² (mod 2⁶⁴) where |c| ≤ 32·128·127 < 2³¹:
// int32 of the low half is c_r, and int32 of (S − c_r) >> 32 is c_(r+1).

// genericScratch holds one call's activation words, one group's scales and
// one group's Q4_0 weight words.
type genericScratch struct {
	q4act [][q4Words]uint64
	q8act [][q8Words]uint64
	ww    [][8 * GroupRows]uint64
	sc    []float32
}

var genericPool sync.Pool // *genericScratch

// grow returns s with length n, reallocated if its capacity is short.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// packedMatMulGeneric is packedMatMulRef (same arguments, same bits).
func packedMatMulGeneric(out []float32, ldo int, w []byte, rows int, q4, f16 bool, a []int8, da []float32, n, nb int) {
	l := layout{q4, f16, nb}
	gs := l.group()
	cols := nb * BlockSize
	sp, _ := genericPool.Get().(*genericScratch)
	if sp == nil {
		sp = new(genericScratch)
	}
	sp.sc = grow(sp.sc, nb*GroupRows)
	sc := sp.sc // one group's scales, block by block
	if q4 {
		sp.q4act = grow(sp.q4act, n*nb)
		for i := range n {
			q4ActWords(sp.q4act[i*nb:(i+1)*nb], a[i*cols:(i+1)*cols])
		}
		if n > 1 {
			sp.ww = grow(sp.ww, nb)
		}
	} else {
		sp.q8act = grow(sp.q8act, n*nb)
		for i := range n {
			q8ActWords(sp.q8act[i*nb:(i+1)*nb], a[i*cols:(i+1)*cols])
		}
	}
	for g := 0; g*GroupRows < rows; g++ {
		grp := w[g*gs : (g+1)*gs]
		if f16 || q4 && n > 1 { // else the kernel reads the scales as it goes
			groupScales(sc, grp, l)
		}
		nr := min(GroupRows, rows-g*GroupRows)
		if q4 && n > 1 {
			q4Spread(sp.ww, grp, l)
		}
		for i := range n {
			o := out[i*ldo+g*GroupRows : i*ldo+g*GroupRows+nr]
			dai := da[i*nb : (i+1)*nb]
			switch {
			case q4 && n > 1:
				q4GroupSpread(o, sp.ww, sc, sp.q4act[i*nb:(i+1)*nb], dai)
			case q4:
				q4Group(o, grp, l, sc, sp.q4act[i*nb:(i+1)*nb], dai)
			default:
				q8Group(o, grp, l, sc, sp.q8act[i*nb:(i+1)*nb], dai)
			}
		}
	}
	genericPool.Put(sp)
}

// groupScales writes the scales of one group into sc block by block: block
// b's 16 scales at sc[16·b:].
func groupScales(sc []float32, grp []byte, l layout) {
	if l.f16 {
		for b := range l.nb {
			h := (*[2 * GroupRows]byte)(grp[32*b:])
			d := (*[GroupRows]float32)(sc[b*GroupRows:])
			for rr := range GroupRows {
				d[rr] = F16ToF32(binary.LittleEndian.Uint16(h[(2*rr)&30:]))
			}
		}
		return
	}
	step := 4*GroupRows + l.quantBytes()
	for b := range l.nb {
		f := (*[4 * GroupRows]byte)(grp[b*step:])
		d := (*[GroupRows]float32)(sc[b*GroupRows:])
		for rr := range GroupRows {
			d[rr] = math.Float32frombits(binary.LittleEndian.Uint32(f[(4*rr)&60:]))
		}
	}
}

// blockScales returns block b's 16 scales: from sc (groupScales) in the f16
// layout, else read into tmp from the group, where they precede the block's
// quants (one pass over the weights, in order).
func blockScales(tmp *[GroupRows]float32, sc []float32, grp []byte, l layout, b int) *[GroupRows]float32 {
	if l.f16 {
		return (*[GroupRows]float32)(sc[b*GroupRows:])
	}
	f := (*[4 * GroupRows]byte)(grp[b*(4*GroupRows+l.quantBytes()):])
	for rr := range GroupRows {
		tmp[rr] = math.Float32frombits(binary.LittleEndian.Uint32(f[(4*rr)&60:]))
	}
	return tmp
}

// q4Words is the number of activation words per block for Q4_0: two per
// chunk (q4ActWords), then the start word 2⁴⁷ − 0x0008000800080008·ΣA.
const q4Words = 9

// nib0[b] puts byte b's nibbles in lanes 0 (low) and 2 (high) of a word,
// nib1[b] in lanes 1 and 3: nib0[b0] + nib1[b1] is the weight word of two
// bytes, W = lo(b0) + lo(b1)·2¹⁶ + hi(b0)·2³² + hi(b1)·2⁴⁸.
var nib0, nib1 = nibTables()

func nibTables() (t0, t1 [256]uint64) {
	for b := range 256 {
		t0[b] = uint64(b&15) | uint64(b>>4)<<32
		t1[b] = t0[b] << 16
	}
	return
}

// q4ActWords writes the Q4_0 words of one activation row (len(dst) blocks).
// Chunk k's bytes 2h and 2h+1 (h = 0, 1) hold elements e = 4k+2h, e+1 (low
// nibbles) and 16+e, 17+e (high): their weight word has them in lanes 0..3,
// so word 2k+h has their activations reversed, in lanes 3..0.
func q4ActWords(dst [][q4Words]uint64, a []int8) {
	for b := range dst {
		ab := (*[BlockSize]int8)(a[b*BlockSize:])
		d := &dst[b]
		var sum uint64
		for t := range 8 {
			e := 4*(t>>1) + 2*(t&1)
			v := uint64(int64(ab[e&15])<<48 + int64(ab[(e+1)&15])<<32 + int64(ab[16+e&15])<<16 + int64(ab[16+(e+1)&15]))
			d[t] = v
			sum += v
		}
		d[8] = 1<<47 - 0x0008000800080008*sum
	}
}

// q4Group sets out[rr] for the nr = len(out) rows of one group of Q4_0
// quants (scales sc, block by block) with one row's activation words: block
// by block, all 16 rows (the padding rows of a last group too, whose sums
// are never stored), so that the block's activation words stay in registers.
func q4Group(out []float32, grp []byte, l layout, sc []float32, act [][q4Words]uint64, da []float32) {
	var acc, tmp [GroupRows]float32
	qs := grp[l.chunk(0, 0, 0):]
	step := l.chunk(1, 0, 0) - l.chunk(0, 0, 0) // bytes from one block's quants to the next
	da = da[:len(act)]
	for b := range act {
		aw := &act[b]
		q := (*[16 * GroupRows]byte)(qs[b*step:])
		sb := blockScales(&tmp, sc, grp, l, b)
		db := da[b]
		for rr := 0; rr < GroupRows; rr += 2 {
			s, u := aw[8], aw[8]
			c := (*[8]byte)(q[(4*rr)&248:])
			a0, a1 := aw[0], aw[1]
			s += (nib0[c[0]]+nib1[c[1]])*a0 + (nib0[c[2]]+nib1[c[3]])*a1
			u += (nib0[c[4]]+nib1[c[5]])*a0 + (nib0[c[6]]+nib1[c[7]])*a1
			c = (*[8]byte)(q[(64+4*rr)&248:])
			a0, a1 = aw[2], aw[3]
			s += (nib0[c[0]]+nib1[c[1]])*a0 + (nib0[c[2]]+nib1[c[3]])*a1
			u += (nib0[c[4]]+nib1[c[5]])*a0 + (nib0[c[6]]+nib1[c[7]])*a1
			c = (*[8]byte)(q[(128+4*rr)&248:])
			a0, a1 = aw[4], aw[5]
			s += (nib0[c[0]]+nib1[c[1]])*a0 + (nib0[c[2]]+nib1[c[3]])*a1
			u += (nib0[c[4]]+nib1[c[5]])*a0 + (nib0[c[6]]+nib1[c[7]])*a1
			c = (*[8]byte)(q[(192+4*rr)&248:])
			a0, a1 = aw[6], aw[7]
			s += (nib0[c[0]]+nib1[c[1]])*a0 + (nib0[c[2]]+nib1[c[3]])*a1
			u += (nib0[c[4]]+nib1[c[5]])*a0 + (nib0[c[6]]+nib1[c[7]])*a1
			acc[rr&15] = blockStep(acc[rr&15], int32(int16(s>>48)), sb[rr&15], db)
			acc[(rr+1)&15] = blockStep(acc[(rr+1)&15], int32(int16(u>>48)), sb[(rr+1)&15], db)
		}
	}
	copy(out, acc[:])
}

// q4Spread writes the weight words of one group (len(dst) blocks): block b,
// row rr, word t at dst[b][8·rr + t], as q4Group forms them.
func q4Spread(dst [][8 * GroupRows]uint64, grp []byte, l layout) {
	qs := grp[l.chunk(0, 0, 0):]
	step := l.chunk(1, 0, 0) - l.chunk(0, 0, 0)
	for b := range dst {
		q := (*[16 * GroupRows]byte)(qs[b*step:])
		d := &dst[b]
		for rr := range GroupRows {
			w := (*[8]uint64)(d[(8*rr)&127:])
			for k := range 4 {
				c := (*[4]byte)(q[(64*k+4*rr)&252:])
				w[(2*k)&7] = nib0[c[0]] + nib1[c[1]]
				w[(2*k+1)&7] = nib0[c[2]] + nib1[c[3]]
			}
		}
	}
}

// q4GroupSpread is q4Group over weight words written by q4Spread.
func q4GroupSpread(out []float32, ww [][8 * GroupRows]uint64, sc []float32, act [][q4Words]uint64, da []float32) {
	var acc [GroupRows]float32
	ww = ww[:len(act)]
	da = da[:len(act)]
	for b := range act {
		aw := &act[b]
		wb := &ww[b]
		sb := (*[GroupRows]float32)(sc[b*GroupRows:])
		db := da[b]
		for rr := range GroupRows {
			w := (*[8]uint64)(wb[(8*rr)&127:])
			s := aw[8] + w[0]*aw[0] + w[1]*aw[1] + w[2]*aw[2] + w[3]*aw[3] +
				w[4]*aw[4] + w[5]*aw[5] + w[6]*aw[6] + w[7]*aw[7]
			acc[rr] = blockStep(acc[rr], int32(int16(s>>48)), sb[rr], db)
		}
	}
	copy(out, acc[:])
}

// q8Words is the number of activation words per block for Q8_0: the 32
// quants sign-extended, then the start word −128·Σa·(1 + 2³²).
const q8Words = 33

// q8ActWords writes the Q8_0 words of one activation row.
func q8ActWords(dst [][q8Words]uint64, a []int8) {
	for b := range dst {
		ab := (*[BlockSize]int8)(a[b*BlockSize:])
		d := &dst[b]
		var sum int64
		for j, v := range ab {
			d[j] = uint64(int64(v))
			sum += int64(v)
		}
		d[32] = uint64(-128*sum) * (1 + 1<<32)
	}
}

// q8Group is q4Group for Q8_0 quants, two rows per multiply.
func q8Group(out []float32, grp []byte, l layout, sc []float32, act [][q8Words]uint64, da []float32) {
	var acc, tmp [GroupRows]float32
	qs := grp[l.chunk(0, 0, 0):]
	step := l.chunk(1, 0, 0) - l.chunk(0, 0, 0)
	da = da[:len(act)]
	for b := range act {
		aw := &act[b]
		q := (*[32 * GroupRows]byte)(qs[b*step:])
		sb := blockScales(&tmp, sc, grp, l, b)
		db := da[b]
		for p := 0; p < GroupRows; p += 2 {
			s := aw[32]
			for k := range 8 {
				x := binary.LittleEndian.Uint64(q[(64*k+4*p)&504:]) ^ 0x8080808080808080
				e := (*[4]uint64)(aw[(4*k)&31:])
				s += x&0x000000FF000000FF*e[0] + x>>8&0x000000FF000000FF*e[1] +
					x>>16&0x000000FF000000FF*e[2] + x>>24&0x000000FF000000FF*e[3]
			}
			lo := int32(uint32(s))
			hi := int32((s - uint64(int64(lo))) >> 32)
			acc[p&15] = blockStep(acc[p&15], lo, sb[p&15], db)
			acc[(p+1)&15] = blockStep(acc[(p+1)&15], hi, sb[(p+1)&15], db)
		}
	}
	copy(out, acc[:])
}
