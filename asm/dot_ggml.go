package asm

import (
	"encoding/binary"
	"math"
)

// The ggml block types of a mixed .mlb file (docs/FORMATS.md, "Mixed types"),
// as the runtime multiplies them. These pure-Go functions are the definitions
// (docs/FORMATS.md, "Runtime arithmetic": "ggml block types"); a SIMD kernel
// must reproduce them bit for bit. Each keeps every integer sum of a block
// exact and does a fixed, short sequence of rounded float32 operations per
// block, blocks in increasing order, so that any grouping of the integer
// products gives the same bits.
//
// The activations are quantized as llama.cpp quantizes them for the same
// types: Q8_K (QuantizeQ8_K: superblocks of 256, one float32 scale, int16 sums
// of each 16) for Q4_K, Q5_K, Q6_K and IQ4_XS; Q8_0 (QuantizeQ8_0) for Q4_1,
// Q5_0 and IQ4_NL.

// QK is the superblock size of the K-quants, IQ4_XS and Q8_K.
const QK = 256

// KValuesIQ4 is the IQ4_NL and IQ4_XS codebook (ggml's kvalues_iq4nl).
var KValuesIQ4 = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

func f16le(b []byte) float32 { return F16ToF32(binary.LittleEndian.Uint16(b)) }

// QuantizeQ8_K quantizes x (len a multiple of 256) into q (len(x) int8), d
// (one float32 per 256) and bs (the sum of each 16 consecutive q, len(x)/16)
// with ggml's quantize_row_q8_K_ref: per superblock, max is the element of
// largest magnitude (the first of equal ones); if it is 0, d = 0 and q = 0;
// else iscale = float32(−127/max), q = min(127, roundToEven(iscale·x)) and
// d = float32(1/iscale).
func QuantizeQ8_K(x []float32, q []int8, d []float32, bs []int16) {
	nb := len(x) / QK
	if len(x)%QK != 0 || len(q) != len(x) || len(d) != nb || len(bs) != nb*16 {
		panic("asm: QuantizeQ8_K: lengths")
	}
	if nb > 0 {
		quantizeQ8K(x, q, d, bs)
	}
}

// quantizeQ8KGeneric is the definition of QuantizeQ8_K (lengths checked).
func quantizeQ8KGeneric(x []float32, q []int8, d []float32, bs []int16) {
	nb := len(x) / QK
	for b := range nb {
		xb, qb := x[b*QK:(b+1)*QK], q[b*QK:(b+1)*QK]
		var mx, amax float32
		for _, v := range xb {
			if a := abs32(v); a > amax {
				amax, mx = a, v
			}
		}
		if amax == 0 {
			d[b] = 0
			clear(qb)
			clear(bs[b*16 : (b+1)*16])
			continue
		}
		iscale := -127 / mx
		for j, v := range xb {
			qb[j] = int8(min(127, roundEven32(float32(iscale*v))))
		}
		for j := range 16 {
			var s int16
			for _, v := range qb[16*j : 16*j+16] {
				s += int16(v)
			}
			bs[b*16+j] = s
		}
		d[b] = 1 / iscale
	}
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}

// roundEven32 is ggml's nearest_int: x rounded to the nearest integer, ties to
// even (|x| ≤ 2^22; here |x| ≤ 127·(1+2^−23)).
func roundEven32(x float32) int32 {
	// 1.5·2^23 puts the integer part in the low mantissa bits, as nearest_int does.
	v := float32(x + 12582912)
	return int32(math.Float32bits(v)&0x007fffff) - 0x00400000
}

// superStep adds one superblock's term to acc: acc + float32(float32(d·da)
// ·float32(isum)).
func superStep(acc float32, isum int32, d, da float32) float32 {
	s := float32(d * da)
	return acc + float32(s*float32(isum))
}

// DotQ4_K returns the dot product of a Q4_K row w (len(a)/256 blocks of 144
// bytes) and a Q8_K activation row (a, da, bs from QuantizeQ8_K):
//
//	acc = +0
//	for each superblock b, with d, dmin, sc_s, m_s, n as docs/FORMATS.md unpacks them:
//	    isum = Σ_s sc_s · Σ_{l<32} n_{32s+l} · a_{32s+l}   (exact int32)
//	    msum = Σ_s m_s · (bs_{2s} + bs_{2s+1})            (exact int32)
//	    acc = acc + float32(float32(d·da_b)·float32(isum))
//	    acc = acc − float32(float32(dmin·da_b)·float32(msum))
//
// every operation a rounded float32 one.
func DotQ4_K(w []byte, a []int8, da []float32, bs []int16) float32 {
	return dotQK(w, a, da, bs, false)
}

// DotQ5_K is DotQ4_K for Q5_K rows (176-byte blocks; n has its fifth bit from qh).
func DotQ5_K(w []byte, a []int8, da []float32, bs []int16) float32 {
	return dotQK(w, a, da, bs, true)
}

func dotQK(w []byte, a []int8, da []float32, bs []int16, five bool) float32 {
	bb := 144
	if five {
		bb = 176
	}
	nb := checkK(w, a, da, bs, bb)
	var acc float32
	for b := range nb {
		blk := w[b*bb : (b+1)*bb : (b+1)*bb]
		ab := a[b*QK : (b+1)*QK : (b+1)*QK]
		sc, qs := blk[4:16], blk[16:144]
		var qh []byte
		if five {
			qh, qs = blk[16:48], blk[48:176]
		}
		var isum, msum int32
		var scs [8]int32
		for s := range 8 {
			c, m := scaleMinK4(s, sc)
			scs[s] = int32(c)
			msum += int32(m) * (int32(bs[16*b+2*s]) + int32(bs[16*b+2*s+1]))
		}
		if five {
			isum = q5kIsum(qs, qh, ab, &scs)
		} else {
			isum = q4kIsum(qs, ab, &scs)
		}
		acc = superStep(acc, isum, f16le(blk), da[b])
		acc = acc - float32(float32(f16le(blk[2:])*da[b])*float32(msum))
	}
	return acc
}

// q4kIsumGeneric is the definition of a Q4_K superblock's integer sum: with
// qs its 128 bytes of nibbles, a its 256 activations and sc its 8 sub-block
// scales, Σ_s sc[s] · Σ_{l<32} n_{32s+l} · a_{32s+l}, sub-block s taking the
// low (even s) or high (odd s) nibbles of qs[32·(s/2) …]. Every partial sum
// fits in int32 for any bytes and any int8 activations (|Σ| ≤ 8·63·32·15·128),
// so the order of the additions does not matter.
func q4kIsumGeneric(qs []byte, a []int8, sc *[8]int32) int32 {
	qs, a = qs[:128:128], a[:256:256]
	var isum int32
	for s := range 8 {
		q := qs[32*(s/2) : 32*(s/2)+32]
		shift := 4 * uint(s%2)
		var p int32
		for l, v := range q {
			p += (int32(v>>shift) & 15) * int32(a[32*s+l])
		}
		isum += sc[s] * p
	}
	return isum
}

// q5kIsumGeneric is q4kIsumGeneric for Q5_K: n gains bit s of qh[l] as its
// fifth bit (qh the 32 high-bit bytes).
func q5kIsumGeneric(qs, qh []byte, a []int8, sc *[8]int32) int32 {
	qs, qh, a = qs[:128:128], qh[:32:32], a[:256:256]
	var isum int32
	for s := range 8 {
		q := qs[32*(s/2) : 32*(s/2)+32]
		shift := 4 * uint(s%2)
		var p int32
		for l, v := range q {
			n := int32(v>>shift)&15 | int32(qh[l]>>uint(s)&1)<<4
			p += n * int32(a[32*s+l])
		}
		isum += sc[s] * p
	}
	return isum
}

// scaleMinK4 is ggml's get_scale_min_k4: the 6-bit scale and min of
// sub-block j of the 12 scale bytes q.
func scaleMinK4(j int, q []byte) (sc, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0x0f | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// DotQ6_K returns the dot product of a Q6_K row (210-byte blocks) and a Q8_K
// activation row: per superblock isum = Σ_{s<16} sc_s · Σ_{l<16} (q−32)·a
// (exact), acc = acc + float32(float32(d·da_b)·float32(isum)). The sum is
// formed as Σ_s sc_s·Σ q·a − 32·Σ_s sc_s·bs_s (llama.cpp's way), the same
// integer when bs holds the sums of each 16 activations, as QuantizeQ8_K
// writes them.
func DotQ6_K(w []byte, a []int8, da []float32, bs []int16) float32 {
	nb := checkK(w, a, da, bs, 210)
	var acc float32
	for b := range nb {
		blk := w[b*210 : (b+1)*210 : (b+1)*210]
		ab := a[b*QK : (b+1)*QK : (b+1)*QK]
		var sc [16]int16
		var corr int32
		for s := range 16 {
			sc[s] = int16(int8(blk[192+s]))
			corr += int32(sc[s]) * int32(bs[16*b+s])
		}
		isum := q6kIsum(blk[0:128], blk[128:192], ab, &sc) - 32*corr
		acc = superStep(acc, isum, f16le(blk[208:]), da[b])
	}
	return acc
}

// q6kIsumGeneric is the definition of a Q6_K superblock's unsigned integer
// sum: Σ_{i<256} sc[i/16] · q_i · a_i with q_i in [0, 63] unpacked from ql
// (128 bytes) and qh (64 bytes) as docs/FORMATS.md says (before the −32).
// Every partial sum fits in int32 (|Σ| ≤ 256·128·63·128).
func q6kIsumGeneric(ql, qh []byte, a []int8, sc *[16]int16) int32 {
	ql, qh, a = ql[:128:128], qh[:64:64], a[:256:256]
	var isum int32
	for s := range 16 {
		var p int32
		for k := range 16 {
			i := 16*s + k
			h, j := i/128, i%128
			l, g := j%32, j/32
			q := int32(ql[64*h+32*(g%2)+l]>>(4*uint(g/2))) & 15
			q |= int32(qh[32*h+l]>>(2*uint(g))&3) << 4
			p += q * int32(a[i])
		}
		isum += int32(sc[s]) * p
	}
	return isum
}

// DotIQ4_XS returns the dot product of an IQ4_XS row (136-byte blocks) and a
// Q8_K activation row: per superblock isum = Σ_{s<8} (ls_s − 32) · Σ_{l<32}
// K[n]·a (exact), acc = acc + float32(float32(d·da_b)·float32(isum)). a must
// not hold −128 (QuantizeQ8_K never writes it; the AVX2 kernel negates
// activations by the codebook's signs).
func DotIQ4_XS(w []byte, a []int8, da []float32, bs []int16) float32 {
	nb := checkK(w, a, da, bs, 136)
	var acc float32
	for b := range nb {
		blk := w[b*136 : (b+1)*136 : (b+1)*136]
		ab := a[b*QK : (b+1)*QK : (b+1)*QK]
		sh, sl := binary.LittleEndian.Uint16(blk[2:]), blk[4:8]
		var sc [8]int16
		for s := range 8 {
			sc[s] = int16(sl[s/2]>>(4*uint(s%2))&15|byte(sh>>(2*uint(s))&3)<<4) - 32
		}
		acc = superStep(acc, iq4xsIsum(blk[8:136], ab, &sc), f16le(blk), da[b])
	}
	return acc
}

// iq4xsIsumGeneric is the definition of an IQ4_XS superblock's integer sum:
// Σ_s sc[s] · Σ_{j<16} (K[lo(qs[16s+j])]·a[32s+j] + K[hi(qs[16s+j])]·a[32s+j+16]).
func iq4xsIsumGeneric(qs []byte, a []int8, sc *[8]int16) int32 {
	qs, a = qs[:128:128], a[:256:256]
	var isum int32
	for s := range 8 {
		var p int32
		for j, v := range qs[16*s : 16*s+16] {
			p += int32(KValuesIQ4[v&15])*int32(a[32*s+j]) + int32(KValuesIQ4[v>>4])*int32(a[32*s+j+16])
		}
		isum += int32(sc[s]) * p
	}
	return isum
}

func checkK(w []byte, a []int8, da []float32, bs []int16, bb int) int {
	nb := len(a) / QK
	if len(a)%QK != 0 || len(w) != nb*bb || len(da) != nb || len(bs) != nb*16 {
		panic("asm: ggml dot product: lengths")
	}
	return nb
}

// sums32 checks the lengths of a block-sum call (nb blocks of bb bytes, per
// int32 outputs per block) and returns nb (the SIMD
// block-sum wrappers of dot_ggml_amd64.go and dot_ggml_arm64.go).
func sums32(w []byte, a []int8, p []int32, bb, per int) int {
	nb := len(p) / per
	if len(p)%per != 0 || len(w) != nb*bb || len(a) != nb*BlockSize {
		panic("asm: ggml block sums: lengths")
	}
	return nb
}

func check32(w []byte, a []int8, da []float32, bb int) int {
	nb := len(a) / BlockSize
	if len(a)%BlockSize != 0 || len(w) != nb*bb || len(da) != nb {
		panic("asm: ggml dot product: lengths")
	}
	return nb
}

// sumChunk is how many blocks of 32 the block-sum kernels do per call:
// their sums go to an array on the stack.
const sumChunk = 64

// DotQ5_0 returns the dot product of a Q5_0 row (22-byte blocks) and a Q8_0
// activation row (QuantizeQ8_0): per block p = Σ (n + 16·h − 16)·a (exact),
// then Q4_0's step: acc = acc + float32(float32(p)·float32(d·da_b)).
func DotQ5_0(w []byte, a []int8, da []float32) float32 {
	return dotBlockSums(w, a, da, 22, q5_0Sums)
}

// dotBlockSums is the dot product of a row of size-byte blocks of 32 that
// start with their f16 scale, whose exact block sums sums gives: Q4_0's
// step over the blocks in order (DotQ5_0, DotIQ4_NL).
func dotBlockSums(w []byte, a []int8, da []float32, size int, sums func(w []byte, a []int8, p []int32)) float32 {
	nb := check32(w, a, da, size)
	var acc float32
	var p [sumChunk]int32
	for b0 := 0; b0 < nb; b0 += sumChunk {
		n := min(sumChunk, nb-b0)
		sums(w[b0*size:(b0+n)*size], a[b0*BlockSize:(b0+n)*BlockSize], p[:n])
		for j := range n {
			acc = blockStep(acc, p[j], f16le(w[(b0+j)*size:]), da[b0+j])
		}
	}
	return acc
}

// q5_0SumsGeneric is the definition of a Q5_0 row's block sums: for the
// len(p) blocks of w (22 bytes each) and a (32 each), p[b] = Σ_j (n_j −
// 16)·a_j with n_j the nibble (low for j < 16, high for j ≥ 16, of qs[j%16])
// plus 16 times bit j of the block's qh.
func q5_0SumsGeneric(w []byte, a []int8, p []int32) {
	for b := range p {
		blk := w[b*22 : (b+1)*22 : (b+1)*22]
		ab := a[b*BlockSize : (b+1)*BlockSize : (b+1)*BlockSize]
		qh := binary.LittleEndian.Uint32(blk[2:])
		var s int32
		for j, v := range blk[6:22] {
			lo := int32(v&15) | int32(qh>>uint(j)&1)<<4
			hi := int32(v>>4) | int32(qh>>uint(j+16)&1)<<4
			s += (lo-16)*int32(ab[j]) + (hi-16)*int32(ab[j+16])
		}
		p[b] = s
	}
}

// DotIQ4_NL returns the dot product of an IQ4_NL row (18-byte blocks) and a
// Q8_0 activation row: per block p = Σ K[n]·a (exact), then Q4_0's step. a
// must not hold −128 (QuantizeQ8_0 never writes it; the AVX2 kernel negates
// activations by the codebook's signs).
func DotIQ4_NL(w []byte, a []int8, da []float32) float32 {
	return dotBlockSums(w, a, da, 18, iq4nlSums)
}

// iq4nlSumsGeneric is the definition of an IQ4_NL row's block sums: p[b] =
// Σ_{j<16} K[lo(qs_j)]·a_j + K[hi(qs_j)]·a_{j+16} for the len(p) blocks.
func iq4nlSumsGeneric(w []byte, a []int8, p []int32) {
	for b := range p {
		blk := w[b*18 : (b+1)*18 : (b+1)*18]
		ab := a[b*BlockSize : (b+1)*BlockSize : (b+1)*BlockSize]
		var s int32
		for j, v := range blk[2:18] {
			s += int32(KValuesIQ4[v&15])*int32(ab[j]) + int32(KValuesIQ4[v>>4])*int32(ab[j+16])
		}
		p[b] = s
	}
}

// DotQ4_1 returns the dot product of a Q4_1 row (20-byte blocks: w = d·n + m)
// and a Q8_0 activation row: per block p = Σ n·a and t = Σ a (exact), then
// acc = acc + float32(float32(p)·float32(d·da_b)), then
// acc = acc + float32(float32(t)·float32(m·da_b)).
func DotQ4_1(w []byte, a []int8, da []float32) float32 {
	nb := check32(w, a, da, 20)
	var acc float32
	var pt [2 * sumChunk]int32
	for b0 := 0; b0 < nb; b0 += sumChunk {
		n := min(sumChunk, nb-b0)
		q4_1Sums(w[b0*20:(b0+n)*20], a[b0*BlockSize:(b0+n)*BlockSize], pt[:2*n])
		for j := range n {
			blk := w[(b0+j)*20:]
			acc = blockStep(acc, pt[2*j], f16le(blk), da[b0+j])
			acc = blockStep(acc, pt[2*j+1], f16le(blk[2:]), da[b0+j])
		}
	}
	return acc
}

// q4_1SumsGeneric is the definition of a Q4_1 row's block sums: for the
// len(pt)/2 blocks, pt[2b] = Σ_j n_j·a_j (n the nibbles, low for j < 16)
// and pt[2b+1] = Σ_j a_j.
func q4_1SumsGeneric(w []byte, a []int8, pt []int32) {
	for b := range len(pt) / 2 {
		blk := w[b*20 : (b+1)*20 : (b+1)*20]
		ab := a[b*BlockSize : (b+1)*BlockSize : (b+1)*BlockSize]
		var p, t int32
		for j, v := range blk[4:20] {
			p += int32(v&15)*int32(ab[j]) + int32(v>>4)*int32(ab[j+16])
			t += int32(ab[j]) + int32(ab[j+16])
		}
		pt[2*b], pt[2*b+1] = p, t
	}
}

// Q5_0AsQ8_0 writes the Q5_0 blocks of w (22 bytes each) as Q8_0 weights q
// (n + 16·h − 16, in [−16, 15], 32 per block) and scales d (the binary16 d
// widened). The Q8_0 product of those (dotQ8_0Generic, and so the packed
// kernels) is DotQ5_0's bit for bit: both are, block by block, blockStep of
// the same exact integer sum with the same two float32 factors.
func Q5_0AsQ8_0(w []byte, q []int8, d []float32) {
	nb := len(d)
	if len(w) != nb*22 || len(q) != nb*BlockSize {
		panic("asm: Q5_0AsQ8_0: lengths")
	}
	for b := range nb {
		blk := w[b*22 : (b+1)*22 : (b+1)*22]
		qb := q[b*BlockSize : (b+1)*BlockSize : (b+1)*BlockSize]
		qh := binary.LittleEndian.Uint32(blk[2:])
		for j, v := range blk[6:22] {
			qb[j] = int8(int32(v&15)|int32(qh>>uint(j)&1)<<4) - 16
			qb[j+16] = int8(int32(v>>4)|int32(qh>>uint(j+16)&1)<<4) - 16
		}
		d[b] = f16le(blk)
	}
}

// IQ4_NLAsQ8_0 is Q5_0AsQ8_0 for IQ4_NL blocks (18 bytes; q = K[n]): the Q8_0
// product is DotIQ4_NL's bit for bit.
func IQ4_NLAsQ8_0(w []byte, q []int8, d []float32) {
	nb := len(d)
	if len(w) != nb*18 || len(q) != nb*BlockSize {
		panic("asm: IQ4_NLAsQ8_0: lengths")
	}
	for b := range nb {
		blk := w[b*18 : (b+1)*18 : (b+1)*18]
		qb := q[b*BlockSize : (b+1)*BlockSize : (b+1)*BlockSize]
		for j, v := range blk[2:18] {
			qb[j], qb[j+16] = KValuesIQ4[v&15], KValuesIQ4[v>>4]
		}
		d[b] = f16le(blk)
	}
}
