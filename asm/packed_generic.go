package asm

import (
	"encoding/binary"
	"math"
	"sync"
	"unsafe"
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
// For one activation row (generation) q4Vec makes the weight words from
// 64-bit loads instead, two rows at once (the comment above q4VecActWords).
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
	q4vec [][q4VecWords]uint64
	q8act [][q8Words]uint64
	ww    [][8 * GroupRows]uint64
	sc    []float32
	scb   []byte // one group's binary16 scales widened, as float32 bytes
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
		if n > 1 {
			sp.q4act = grow(sp.q4act, n*nb)
			for i := range n {
				q4ActWords(sp.q4act[i*nb:(i+1)*nb], a[i*cols:(i+1)*cols])
			}
			sp.ww = grow(sp.ww, nb)
		} else {
			sp.q4vec = grow(sp.q4vec, nb)
			q4VecActWords(sp.q4vec, a[:cols])
		}
	} else {
		sp.q8act = grow(sp.q8act, n*nb)
		for i := range n {
			q8ActWords(sp.q8act[i*nb:(i+1)*nb], a[i*cols:(i+1)*cols])
		}
	}
	for g := 0; g*GroupRows < rows; g++ {
		grp := w[g*gs : (g+1)*gs]
		switch {
		case q4 && n == 1:
			if f16 {
				sp.scb = grow(sp.scb, 4*GroupRows*nb)
				groupScaleBits(sp.scb, grp, l)
			}
		case f16 || q4: // else the kernel reads the scales as it goes
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
				q4Vec(o, grp, l, sp.scb, sp.q4vec, dai)
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

// groupScaleBits writes the binary16 scales of one group widened into scb
// block by block, as the float32 layout has them: block b's 16 scales as
// little-endian float32 bits at scb[64·b:], math.Float32bits(F16ToF32(h)).
// Written out, not calling F16ToF32 (which the compiler does not inline): a
// normal value (exponent field 1..30, the scales' case) is its sign and its
// exponent and fraction moved up 13 bits, with the exponent bias
// 127 − 15 = 112 added; zeros, subnormals, infinities and NaNs take
// F16ToF32 (TestGroupScaleBitsAll: every binary16 value).
func groupScaleBits(scb []byte, grp []byte, l layout) {
	for b := range l.nb {
		h := (*[2 * GroupRows]byte)(grp[32*b:])
		d := (*[4 * GroupRows]byte)(scb[4*GroupRows*b:])
		for rr := range GroupRows {
			x := uint32(h[(2*rr)&30]) | uint32(h[(2*rr+1)&31])<<8
			var v uint32
			if em := x & 0x7fff; em-0x0400 < 0x7c00-0x0400 {
				v = (x&0x8000)<<16 | (em<<13 + 112<<23)
			} else {
				v = math.Float32bits(F16ToF32(uint16(x)))
			}
			binary.LittleEndian.PutUint32(d[(4*rr)&63:], v)
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

// q4VecWords is the number of activation words per block of the Q4_0
// matrix-vector kernel (q4Vec): four per chunk (q4VecActWords), then the
// start word.
const q4VecWords = 17

// The matrix-vector kernel reads two rows at once: a 64-bit load of chunk k
// at rows p, p+1 (p even) holds bytes B0..B3 of row p and B4..B7 of row
// p+1, byte i holding element 4k+i (low nibble) and 16+4k+i (high). With
// M = 0x000F000F000F000F, the words x&M, x>>8&M, x>>4&M and x>>12&M have in
// their 16-bit lanes 0..3 the nibbles n_p(e), n_p(e'), n_(p+1)(e),
// n_(p+1)(e') of an element pair (e, e') = (4k, 4k+2), (4k+1, 4k+3),
// (16+4k, 18+4k) and (17+4k, 19+4k). Their activation word is
// A = a_e' + a_e·2¹⁶ (signed lanes: the integer value, wrapped mod 2⁶⁴).
// With the −8 of each nibble, W − 0x0008000800080008 is, as an integer,
// Σ_j (n_j − 8)·2^(16j), and (W − 8·0x0001000100010001)·A is Σ_m c_m·2^(16m)
// with c_0 = (n_p(e)−8)a_e', c_1 = (n_p(e)−8)a_e + (n_p(e')−8)a_e' (row p's
// dot product of the pair), c_2 = (n_p(e')−8)a_e + (n_(p+1)(e)−8)a_e',
// c_3 = row p+1's dot product of the pair, and c_4·2⁶⁴, which vanishes mod
// 2⁶⁴. Summed over a block's 16 words, S ≡ Σ_(m<4) C_m·2^(16m) (mod 2⁶⁴)
// where C_1 and C_3 are the block sums of rows p and p+1 and, each term
// being at most 8·127 = 1016 in magnitude, |C_0| ≤ 16·1016 = 16256 and
// |C_1|, |C_2|, |C_3| ≤ 32·1016 = 32512 < 2¹⁵. With B = 2¹⁵ + 2⁴⁷ added,
// D_0 = C_0 + 2¹⁵ and D_2 = C_2 + 2¹⁵ lie in [256, 65279]: S + B equals
// D_0 + C_1·2¹⁶ + D_2·2³² + C_3·2⁴⁸ mod 2⁶⁴, whose bits 16..31 are C_1 mod 2¹⁶
// (0 ≤ D_0 < 2¹⁶ borrows nothing), and since L = D_0 + C_1·2¹⁶ + D_2·2³²
// lies in [0, 2⁴⁸) (|D_0 + C_1·2¹⁶| < 2³² ≤ 256·2³²), bits 48..63 are C_3 mod
// 2¹⁶: int16 of each is the sum. The start word, B − 0x0008000800080008·ΣA
// (mod 2⁶⁴), holds the bias and the −8s and depends on the activations alone.
// The kernel saves the first mask: as integers x = N₀ + 16·N₁ + 256·N₂ +
// 4096·N₃ with N_j = x>>4j & M, so N₀·A₀ + N₂·A₁ + N₁·A₂ + N₃·A₃ equals
// x·A₀ + N₂·(A₁ − 256·A₀) + N₁·(A₂ − 16·A₀) + N₃·(A₃ − 4096·A₀) mod 2⁶⁴, and
// the words stored for a chunk are A₀ and those three differences: the same
// S exactly, with 3 ANDs instead of 4 per 16 weights. Where unalignedLE
// (unaligned_le.go: little-endian, unaligned 8-byte loads at full speed) the
// kernel loads y, the 8 bytes one byte further, instead of shifting x by 8:
// y and x>>8 differ in bits 56..63 alone (y's are the next byte, x>>8's are
// 0), which neither y&M nor y>>4&M = x>>12&M reads, so the words and S are
// the same; one shift and one register copy fewer per 16 weights. The last
// load of a block half (chunk 3, its fourth row pair) shifts: its y would
// read one byte past the half's quants, past the end of w in the last block
// of the last group.

// q4VecActWords writes the q4Vec words of one activation row (len(dst)
// blocks): chunk k's words 4k..4k+3 for the pairs (4k, 4k+2), (4k+1, 4k+3),
// (16+4k, 18+4k), (17+4k, 19+4k), then the start word.
func q4VecActWords(dst [][q4VecWords]uint64, a []int8) {
	for b := range dst {
		ab := (*[BlockSize]int8)(a[b*BlockSize:])
		d := &dst[b]
		var sum uint64
		for t := range 16 {
			e := 4*(t>>2) + [4]int{0, 1, 16, 17}[t&3]
			v := uint64(int64(ab[e&31])<<16 + int64(ab[(e+2)&31]))
			d[t] = v
			sum += v
		}
		d[16] = 1<<15 + 1<<47 - 0x0008000800080008*sum
		for k := range 4 { // x&M·A₀ + x>>4&M·A₂ + x>>8&M·A₁ + x>>12&M·A₃ as x·A₀ + …
			w := (*[4]uint64)(d[(4*k)&15:])
			w[1] -= 256 * w[0]
			w[2] -= 16 * w[0]
			w[3] -= 4096 * w[0]
		}
	}
}

// q4Vec sets out[rr] for the nr = len(out) rows of one group of Q4_0 quants
// with one activation row's q4Vec words, in two halves of 8 rows
// (q4VecHalf), with the float32 scales read as the quants are (they precede
// the block's quants) or the binary16 ones widened into scb
// (groupScaleBits): one compiled kernel for both layouts, so that they give
// the same bits, NaN payloads included (the Go compiler may order the
// operands of a float multiply or add, which pick the NaN that propagates,
// differently in two functions).
func q4Vec(out []float32, grp []byte, l layout, scb []byte, act [][q4VecWords]uint64, da []float32) {
	var acc [GroupRows]float32
	qs := grp[l.chunk(0, 0, 0):]
	step := l.chunk(1, 0, 0) - l.chunk(0, 0, 0) // bytes from one block's quants to the next
	fs, fstep := grp, step                      // the scales, block by block
	if l.f16 {
		fs, fstep = scb, 4*GroupRows
	}
	q4VecHalf((*[8]float32)(acc[:8]), qs, step, fs, fstep, 0, act, da)
	q4VecHalf((*[8]float32)(acc[8:]), qs, step, fs, fstep, 32, act, da)
	copy(out, acc[:])
}

// q4VecHalf sets acc to the sums of 8 rows of a group (the padding rows of
// a last group too, whose sums are never stored) over all blocks: rows
// o/4..o/4+7 (o 0 or 32), whose chunks start at byte o of the block's
// chunks and whose scales at byte o of its scales. Per block the exact
// integer sums, two rows per 64-bit load of the quants with the activation
// words (the comment above q4VecActWords), chunk by chunk, its four
// activation words and the four row pairs' sums in registers; then
// blockStep with the float32 scales and the activation scale, the 8 rows'
// accumulators in registers across the blocks. The block is written out,
// and the 64-bit loads of the quants byte by byte (the compiler makes each
// one load): the compiler orders a block's values by source line, with
// inlined code from another file (binary.LittleEndian) after all of the
// function's own, so that with binary.LittleEndian every activation word
// was loaded first and spilled. Each load's four products are added one
// statement each, y&M last: the AND then overwrites y, its last use, and
// not the register holding M, which the compiler otherwise rematerialized
// (a 10-byte MOVQ of the constant) twice per load.
func q4VecHalf(acc *[8]float32, qs []byte, step int, fs []byte, fstep, o int, act [][q4VecWords]uint64, da []float32) {
	const m = 0x000F000F000F000F
	var r0, r1, r2, r3, r4, r5, r6, r7 float32
	da = da[:len(act)]
	for b := range act {
		q := (*[7 * 32]byte)(qs[b*step+o&32:]) // chunk k's 8 rows at q[64·k:]
		f := (*[32]byte)(fs[b*fstep+o&32:])
		aw := &act[b]
		db := da[b]
		s0, s1, s2, s3 := aw[16], aw[16], aw[16], aw[16]
		c := (*[32]byte)(q[0:])
		a0, a1, a2, a3 := aw[0], aw[1], aw[2], aw[3]
		x := uint64(c[0]) | uint64(c[1])<<8 | uint64(c[2])<<16 | uint64(c[3])<<24 | uint64(c[4])<<32 | uint64(c[5])<<40 | uint64(c[6])<<48 | uint64(c[7])<<56
		y := x >> 8
		if unalignedLE {
			y = *(*uint64)(unsafe.Pointer(&c[1]))
		}
		s0 += x * a0
		s0 += x >> 4 & m * a2
		s0 += y >> 4 & m * a3
		s0 += y & m * a1
		x = uint64(c[8]) | uint64(c[9])<<8 | uint64(c[10])<<16 | uint64(c[11])<<24 | uint64(c[12])<<32 | uint64(c[13])<<40 | uint64(c[14])<<48 | uint64(c[15])<<56
		y = x >> 8
		if unalignedLE {
			y = *(*uint64)(unsafe.Pointer(&c[9]))
		}
		s1 += x * a0
		s1 += x >> 4 & m * a2
		s1 += y >> 4 & m * a3
		s1 += y & m * a1
		x = uint64(c[16]) | uint64(c[17])<<8 | uint64(c[18])<<16 | uint64(c[19])<<24 | uint64(c[20])<<32 | uint64(c[21])<<40 | uint64(c[22])<<48 | uint64(c[23])<<56
		y = x >> 8
		if unalignedLE {
			y = *(*uint64)(unsafe.Pointer(&c[17]))
		}
		s2 += x * a0
		s2 += x >> 4 & m * a2
		s2 += y >> 4 & m * a3
		s2 += y & m * a1
		x = uint64(c[24]) | uint64(c[25])<<8 | uint64(c[26])<<16 | uint64(c[27])<<24 | uint64(c[28])<<32 | uint64(c[29])<<40 | uint64(c[30])<<48 | uint64(c[31])<<56
		y = x >> 8
		if unalignedLE {
			y = *(*uint64)(unsafe.Pointer(&c[25]))
		}
		s3 += x * a0
		s3 += x >> 4 & m * a2
		s3 += y >> 4 & m * a3
		s3 += y & m * a1
		c = (*[32]byte)(q[64:])
		a0, a1, a2, a3 = aw[4], aw[5], aw[6], aw[7]
		x = uint64(c[0]) | uint64(c[1])<<8 | uint64(c[2])<<16 | uint64(c[3])<<24 | uint64(c[4])<<32 | uint64(c[5])<<40 | uint64(c[6])<<48 | uint64(c[7])<<56
		y = x >> 8
		if unalignedLE {
			y = *(*uint64)(unsafe.Pointer(&c[1]))
		}
		s0 += x * a0
		s0 += x >> 4 & m * a2
		s0 += y >> 4 & m * a3
		s0 += y & m * a1
		x = uint64(c[8]) | uint64(c[9])<<8 | uint64(c[10])<<16 | uint64(c[11])<<24 | uint64(c[12])<<32 | uint64(c[13])<<40 | uint64(c[14])<<48 | uint64(c[15])<<56
		y = x >> 8
		if unalignedLE {
			y = *(*uint64)(unsafe.Pointer(&c[9]))
		}
		s1 += x * a0
		s1 += x >> 4 & m * a2
		s1 += y >> 4 & m * a3
		s1 += y & m * a1
		x = uint64(c[16]) | uint64(c[17])<<8 | uint64(c[18])<<16 | uint64(c[19])<<24 | uint64(c[20])<<32 | uint64(c[21])<<40 | uint64(c[22])<<48 | uint64(c[23])<<56
		y = x >> 8
		if unalignedLE {
			y = *(*uint64)(unsafe.Pointer(&c[17]))
		}
		s2 += x * a0
		s2 += x >> 4 & m * a2
		s2 += y >> 4 & m * a3
		s2 += y & m * a1
		x = uint64(c[24]) | uint64(c[25])<<8 | uint64(c[26])<<16 | uint64(c[27])<<24 | uint64(c[28])<<32 | uint64(c[29])<<40 | uint64(c[30])<<48 | uint64(c[31])<<56
		y = x >> 8
		if unalignedLE {
			y = *(*uint64)(unsafe.Pointer(&c[25]))
		}
		s3 += x * a0
		s3 += x >> 4 & m * a2
		s3 += y >> 4 & m * a3
		s3 += y & m * a1
		c = (*[32]byte)(q[128:])
		a0, a1, a2, a3 = aw[8], aw[9], aw[10], aw[11]
		x = uint64(c[0]) | uint64(c[1])<<8 | uint64(c[2])<<16 | uint64(c[3])<<24 | uint64(c[4])<<32 | uint64(c[5])<<40 | uint64(c[6])<<48 | uint64(c[7])<<56
		y = x >> 8
		if unalignedLE {
			y = *(*uint64)(unsafe.Pointer(&c[1]))
		}
		s0 += x * a0
		s0 += x >> 4 & m * a2
		s0 += y >> 4 & m * a3
		s0 += y & m * a1
		x = uint64(c[8]) | uint64(c[9])<<8 | uint64(c[10])<<16 | uint64(c[11])<<24 | uint64(c[12])<<32 | uint64(c[13])<<40 | uint64(c[14])<<48 | uint64(c[15])<<56
		y = x >> 8
		if unalignedLE {
			y = *(*uint64)(unsafe.Pointer(&c[9]))
		}
		s1 += x * a0
		s1 += x >> 4 & m * a2
		s1 += y >> 4 & m * a3
		s1 += y & m * a1
		x = uint64(c[16]) | uint64(c[17])<<8 | uint64(c[18])<<16 | uint64(c[19])<<24 | uint64(c[20])<<32 | uint64(c[21])<<40 | uint64(c[22])<<48 | uint64(c[23])<<56
		y = x >> 8
		if unalignedLE {
			y = *(*uint64)(unsafe.Pointer(&c[17]))
		}
		s2 += x * a0
		s2 += x >> 4 & m * a2
		s2 += y >> 4 & m * a3
		s2 += y & m * a1
		x = uint64(c[24]) | uint64(c[25])<<8 | uint64(c[26])<<16 | uint64(c[27])<<24 | uint64(c[28])<<32 | uint64(c[29])<<40 | uint64(c[30])<<48 | uint64(c[31])<<56
		y = x >> 8
		if unalignedLE {
			y = *(*uint64)(unsafe.Pointer(&c[25]))
		}
		s3 += x * a0
		s3 += x >> 4 & m * a2
		s3 += y >> 4 & m * a3
		s3 += y & m * a1
		c = (*[32]byte)(q[192:])
		a0, a1, a2, a3 = aw[12], aw[13], aw[14], aw[15]
		x = uint64(c[0]) | uint64(c[1])<<8 | uint64(c[2])<<16 | uint64(c[3])<<24 | uint64(c[4])<<32 | uint64(c[5])<<40 | uint64(c[6])<<48 | uint64(c[7])<<56
		y = x >> 8
		if unalignedLE {
			y = *(*uint64)(unsafe.Pointer(&c[1]))
		}
		s0 += x * a0
		s0 += x >> 4 & m * a2
		s0 += y >> 4 & m * a3
		s0 += y & m * a1
		x = uint64(c[8]) | uint64(c[9])<<8 | uint64(c[10])<<16 | uint64(c[11])<<24 | uint64(c[12])<<32 | uint64(c[13])<<40 | uint64(c[14])<<48 | uint64(c[15])<<56
		y = x >> 8
		if unalignedLE {
			y = *(*uint64)(unsafe.Pointer(&c[9]))
		}
		s1 += x * a0
		s1 += x >> 4 & m * a2
		s1 += y >> 4 & m * a3
		s1 += y & m * a1
		x = uint64(c[16]) | uint64(c[17])<<8 | uint64(c[18])<<16 | uint64(c[19])<<24 | uint64(c[20])<<32 | uint64(c[21])<<40 | uint64(c[22])<<48 | uint64(c[23])<<56
		y = x >> 8
		if unalignedLE {
			y = *(*uint64)(unsafe.Pointer(&c[17]))
		}
		s2 += x * a0
		s2 += x >> 4 & m * a2
		s2 += y >> 4 & m * a3
		s2 += y & m * a1
		x = uint64(c[24]) | uint64(c[25])<<8 | uint64(c[26])<<16 | uint64(c[27])<<24 | uint64(c[28])<<32 | uint64(c[29])<<40 | uint64(c[30])<<48 | uint64(c[31])<<56
		y = x >> 8
		s3 += x * a0
		s3 += x >> 4 & m * a2
		s3 += y >> 4 & m * a3
		s3 += y & m * a1
		r0 = blockStep(r0, int32(int16(s0>>16)), math.Float32frombits(binary.LittleEndian.Uint32(f[0:])), db)
		r1 = blockStep(r1, int32(int16(s0>>48)), math.Float32frombits(binary.LittleEndian.Uint32(f[4:])), db)
		r2 = blockStep(r2, int32(int16(s1>>16)), math.Float32frombits(binary.LittleEndian.Uint32(f[8:])), db)
		r3 = blockStep(r3, int32(int16(s1>>48)), math.Float32frombits(binary.LittleEndian.Uint32(f[12:])), db)
		r4 = blockStep(r4, int32(int16(s2>>16)), math.Float32frombits(binary.LittleEndian.Uint32(f[16:])), db)
		r5 = blockStep(r5, int32(int16(s2>>48)), math.Float32frombits(binary.LittleEndian.Uint32(f[20:])), db)
		r6 = blockStep(r6, int32(int16(s3>>16)), math.Float32frombits(binary.LittleEndian.Uint32(f[24:])), db)
		r7 = blockStep(r7, int32(int16(s3>>48)), math.Float32frombits(binary.LittleEndian.Uint32(f[28:])), db)
	}
	acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7] = r0, r1, r2, r3, r4, r5, r6, r7
}

// q4Spread writes the weight words of one group (len(dst) blocks): block b,
// row rr, word t at dst[b][8·rr + t]: the word of bytes 2h, 2h+1 (h = t&1)
// of chunk t>>1, to meet q4ActWords' word t.
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

// q4GroupSpread sets out[rr] for the nr = len(out) rows of one group from
// its weight words (q4Spread), its scales sc (groupScales) and one
// activation row's q4ActWords: block by block, all 16 rows (q4SpreadBlock).
func q4GroupSpread(out []float32, ww [][8 * GroupRows]uint64, sc []float32, act [][q4Words]uint64, da []float32) {
	var acc [GroupRows]float32
	ww = ww[:len(act)]
	da = da[:len(act)]
	for b := range act {
		q4SpreadBlock(&acc, &ww[b], (*[GroupRows]float32)(sc[b*GroupRows:]), &act[b], da[b])
	}
	copy(out, acc[:])
}

// q4SpreadBlock adds one block of the 16 rows of a group to acc from the
// block's weight words wb, scales sb and activation words aw with the
// activation scale da. A function of its own, with the 8 activation words
// in locals, so that the compiler keeps them in registers across the rows.
func q4SpreadBlock(acc *[GroupRows]float32, wb *[8 * GroupRows]uint64, sb *[GroupRows]float32, aw *[q4Words]uint64, da float32) {
	a0, a1, a2, a3, a4, a5, a6, a7 := aw[0], aw[1], aw[2], aw[3], aw[4], aw[5], aw[6], aw[7]
	_, _, _ = acc[0], wb[0], sb[0] // the nil checks, once instead of per row
	for rr := range GroupRows {
		w := (*[8]uint64)(wb[(8*rr)&127:])
		s := aw[8] + w[0]*a0 + w[1]*a1 + w[2]*a2 + w[3]*a3 + w[4]*a4 + w[5]*a5 + w[6]*a6 + w[7]*a7
		acc[rr] = blockStep(acc[rr], int32(int16(s>>48)), sb[rr], da)
	}
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

// q8Group sets out[rr] for the nr = len(out) rows of one group of Q8_0
// quants with one activation row's q8ActWords: block by block, all 16 rows
// (the padding rows of a last group too), two rows per multiply.
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
