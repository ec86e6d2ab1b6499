package quantize

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/x448/float16"
)

// Quantizers for the IQ4 types (IQ4_NL: blocks of 32 with one binary16
// scale; IQ4_XS: superblocks of 256, a binary16 scale and 6-bit sub-scales),
// both on ggml's non-linear 16-level codebook KValues.
//
// The error they minimize is llama.cpp's: Σ w_j·(x_j − y_j)² over a block,
// with y the dequantized weights (DequantizeGGML, bit for bit) and w_j =
// qw_j·sqrt(σ² + x_j²), σ² = 2·Σx²/n over the superblock, with importance qw,
// or x_j² without. Each block is fitted in two ways: llama.cpp's own search
// (quantize_row_iq4_nl_impl, ported) and a wider one: scale candidates every
// half step of llama.cpp's, each refined by alternating least-squares scale
// and nearest levels, then the binary16 scale and its neighbours (and, for
// IQ4_XS, each sub-scale ±1) tried with the levels re-chosen for the
// rounded scale, as the file will hold it. The fit with the smaller error is
// kept (llama.cpp's on ties), so no block is worse than llama.cpp's
// algorithm makes it. Everything is sequential float arithmetic on one
// block: the bytes do not depend on the thread count.

// iq4Index is ggml's best_index_int8 over KValues: the nearest level to v
// (the upper one at a midpoint). Between two consecutive integers there is
// at most one midpoint of neighbouring levels (they are at least 11 apart),
// so a table over ⌊v⌋ and that midpoint decide it.
func iq4Index(v float32) uint8 {
	if v <= -127 {
		return 0
	}
	if !(v < 113) { // NaN too, as ggml's search ends there
		return 15
	}
	k := int(math.Floor(float64(v))) + 127 // exact: v + 127 in float32 could round up
	i := iq4Lo[k]
	if v >= iq4Th[k] {
		i++
	}
	return i
}

var (
	iq4Lo [240]uint8   // the level nearest to ⌊v⌋ = k − 127
	iq4Th [240]float32 // the midpoint inside [k−127, k−126), or +Inf
)

func init() {
	for k := range 240 {
		v := float32(k - 127)
		iq4Lo[k] = iq4IndexSearch(v)
		iq4Th[k] = float32(math.Inf(1))
		if i := iq4Lo[k]; i < 15 {
			if m := (float32(KValues[i]) + float32(KValues[i+1])) / 2; m > v && m < v+1 {
				iq4Th[k] = m
			}
		}
	}
}

// iq4IndexSearch is best_index_int8 as ggml writes it (binary search).
func iq4IndexSearch(v float32) uint8 {
	if v <= -127 {
		return 0
	}
	if v >= 113 {
		return 15
	}
	ml, mu := 0, 15
	for mu-ml > 1 {
		mav := (ml + mu) / 2
		if v < float32(KValues[mav]) {
			mu = mav
		} else {
			ml = mav
		}
	}
	if v-float32(KValues[mu-1]) < float32(KValues[mu])-v {
		return uint8(mu - 1)
	}
	return uint8(mu)
}

// iq4Weights writes the error weights of superblock x into w.
func iq4Weights(x, qw, w []float32) {
	var sigma2 float32
	for _, v := range x {
		sigma2 += float32(v * v)
	}
	sigma2 = float32(sigma2 * float32(2/float32(len(x))))
	for j, v := range x {
		if qw != nil {
			w[j] = float32(qw[j] * float32(math.Sqrt(float64(float32(sigma2+float32(v*v))))))
		} else {
			w[j] = float32(v * v)
		}
	}
}

// lsq returns Σw·q·x and Σw·q² for levels L of x.
func lsq(x, w []float32, L []uint8) (sqx, sq2 float32) {
	for j, v := range x {
		q := float32(KValues[L[j]])
		sqx += float32(float32(w[j]*q) * v)
		sq2 += float32(float32(w[j]*q) * q)
	}
	return sqx, sq2
}

// assign sets L to the nearest levels of x·id.
func assign(x []float32, id float32, L []uint8) {
	for j, v := range x {
		L[j] = iq4Index(float32(id * v))
	}
}

// llamaSubScale is llama.cpp's scale search for one sub-block of 32 (ntry
// 7): the least-squares scale of the best of 15 candidate level sets (0 for
// an all-zero block). L gets the first candidate's levels.
func llamaSubScale(x, w []float32, L []uint8) float32 {
	amax, mx := absMaxSigned(x)
	if amax < 1e-15 {
		return 0
	}
	d := float32(-mx / float32(KValues[0]))
	id := 1 / d
	assign(x, id, L)
	sqx, sq2 := lsq(x, w, L)
	d = 0
	if sq2 > 0 {
		d = sqx / sq2
	}
	best := float32(d * sqx)
	var tmp [32]uint8
	for itry := -7; itry <= 7; itry++ {
		id = float32(float32(itry)+float32(KValues[0])) / mx
		assign(x, id, tmp[:len(x)])
		sqx, sq2 = lsq(x, w, tmp[:len(x)])
		if sq2 > 0 && float32(sqx*sqx) > float32(best*sq2) {
			d = sqx / sq2
			best = float32(d * sqx)
		}
	}
	return d
}

// wideSubScale is the wider search: candidates every half step from −14 to
// 14 around llama.cpp's, each refined (levels for the least-squares scale,
// then the scale for those levels, up to 4 times); it returns the scale of
// the smallest error Σw(x − d·K)² in float64 (0 for an all-zero block).
func wideSubScale(x, w []float32) float32 {
	amax, mx := absMaxSigned(x)
	if amax < 1e-15 {
		return 0
	}
	var L [32]uint8
	bestErr, bestD := math.Inf(1), float32(0)
	for h := -28; h <= 28; h++ {
		id := float32(float32(float32(h)/2)+float32(KValues[0])) / mx
		assign(x, id, L[:len(x)])
		for range 4 {
			sqx, sq2 := lsq(x, w, L[:len(x)])
			if !(sq2 > 0) {
				break
			}
			d := sqx / sq2
			e := subErr(x, w, d, L[:len(x)])
			if e < bestErr {
				bestErr, bestD = e, d
			}
			var nl [32]uint8
			assign(x, 1/d, nl[:len(x)])
			if nl == L {
				break
			}
			L = nl
		}
	}
	return bestD
}

// subErr is Σ w·(x − dl·K[L])² with the float32 products DequantizeGGML
// forms, in float64.
func subErr(x, w []float32, dl float32, L []uint8) float64 {
	var e float64
	for j, v := range x {
		r := float64(v) - float64(float32(dl*float32(KValues[L[j]])))
		e += float64(float64(w[j]) * r * r)
	}
	return e
}

// bestLevels sets L to the nearest levels of x/dl and returns the error of
// dl·K[L] as dequantization forms it.
func bestLevels(x, w []float32, dl float32, L []uint8) float64 {
	if dl == 0 {
		clear(L)
		return subErr(x, w, 0, L)
	}
	id := 1 / dl
	for j, v := range x {
		L[j] = iq4Index(float32(v * id))
	}
	return subErr(x, w, dl, L)
}

func f16Round(d float32) float32 { return float16.Fromfloat32(d).Float32() }

// f16Neighbours returns d rounded to binary16 and the binary16 values just
// below and above it.
func f16Neighbours(d float32) [3]float32 {
	h := float16.Fromfloat32(d).Bits()
	c := [3]float32{float16.Frombits(h).Float32(), float16.Frombits(h).Float32(), float16.Frombits(h).Float32()}
	if h&0x7fff != 0x7c00 && h&0x7fff < 0x7c00 {
		if h&0x7fff != 0 {
			c[1] = float16.Frombits(h - 1).Float32()
		}
		if h&0x7fff < 0x7bff {
			c[2] = float16.Frombits(h + 1).Float32()
		}
	}
	return c
}

func putIQ4Levels(qs []byte, L []uint8) {
	for i := range len(L) / 32 {
		for j := range 16 {
			qs[16*i+j] = L[32*i+j] | L[32*i+16+j]<<4
		}
	}
}

// blockErr is Σ w·(x − y)² in float64, y the block dequantized as the
// runtime and DequantizeGGML do.
func blockErr(t GGMLType, blk []byte, x, w []float32) float64 {
	var y [256]float32
	if err := DequantizeGGML(t, blk, y[:len(x)]); err != nil {
		panic(err) // lengths are ours
	}
	var e float64
	for j, v := range x {
		r := float64(v) - float64(y[j])
		e += float64(float64(w[j]) * r * r)
	}
	return e
}

// iq4nlBlock quantizes one block of 32 into blk (18 bytes): the better of
// llama.cpp's fit and the wider one.
func iq4nlBlock(x, qw []float32, blk []byte) {
	var w [32]float32
	iq4Weights(x, qw, w[:])
	iq4nlLlama(x, w[:], blk)
	var c [18]byte
	iq4nlWide(x, w[:], c[:])
	if blockErr(GGMLIQ4_NL, c[:], x, w[:]) < blockErr(GGMLIQ4_NL, blk, x, w[:]) {
		copy(blk, c[:])
	}
}

// iq4nlLlama is llama.cpp's IQ4_NL fit: its scale stored rounded to
// binary16, the levels chosen for the unrounded one.
func iq4nlLlama(x, w []float32, blk []byte) {
	var L [32]uint8
	d := llamaSubScale(x, w, L[:])
	if d != 0 {
		assign(x, 1/d, L[:])
	}
	binary.LittleEndian.PutUint16(blk, float16.Fromfloat32(d).Bits())
	putIQ4Levels(blk[2:18], L[:])
}

// iq4nlWide tries llama.cpp's scale and the wide search's, each rounded to
// binary16 and its two neighbours, with the levels chosen for the rounded
// scale.
func iq4nlWide(x, w []float32, blk []byte) {
	var L, bestL [32]uint8
	bestE, bestD := math.Inf(1), float32(0)
	for _, d := range []float32{llamaSubScale(x, w, L[:]), wideSubScale(x, w)} {
		for _, c := range f16Neighbours(d) {
			if e := bestLevels(x, w, c, L[:]); e < bestE {
				bestE, bestD, bestL = e, c, L
			}
		}
	}
	binary.LittleEndian.PutUint16(blk, float16.Fromfloat32(bestD).Bits())
	putIQ4Levels(blk[2:18], bestL[:])
}

// xsFit is an IQ4_XS superblock fit: binary16 d, sub-scales l (−32…31),
// levels.
type xsFit struct {
	d float32
	l [8]int
	L [256]uint8
}

func (f *xsFit) put(blk []byte) {
	binary.LittleEndian.PutUint16(blk, float16.Fromfloat32(f.d).Bits())
	var sh uint16
	sl := blk[4:8]
	clear(sl)
	for ib, l := range f.l {
		u := uint8(l + 32)
		sl[ib/2] |= (u & 15) << (4 * (ib % 2))
		sh |= uint16(u>>4) << (2 * ib)
	}
	binary.LittleEndian.PutUint16(blk[2:], sh)
	putIQ4Levels(blk[8:136], f.L[:])
}

func maxScale(s *[8]float32) float32 {
	var m, am float32
	for _, v := range s {
		if a := abs32(v); a > am {
			am, m = a, v
		}
	}
	return m
}

// iq4xsBlock quantizes one superblock of 256 into blk (136 bytes): the
// better of llama.cpp's fit and the wider one.
func iq4xsBlock(x, qw []float32, blk []byte) {
	var w [256]float32
	iq4Weights(x, qw, w[:])
	var llamaS, wideS [8]float32
	var L [32]uint8
	for ib := range 8 {
		xb, wb := x[32*ib:32*ib+32], w[32*ib:32*ib+32]
		llamaS[ib] = llamaSubScale(xb, wb, L[:])
		wideS[ib] = wideSubScale(xb, wb)
	}
	iq4xsLlama(x, &llamaS, blk)
	var c [136]byte
	iq4xsWide(x, w[:], &llamaS, &wideS, c[:])
	if blockErr(GGMLIQ4_XS, c[:], x, w[:]) < blockErr(GGMLIQ4_XS, blk, x, w[:]) {
		copy(blk, c[:])
	}
}

// iq4xsLlama is llama.cpp's IQ4_XS fit from its sub-block scales s: d =
// −max/32 stored rounded, l = nearest(s/d), levels for the unrounded d·l.
func iq4xsLlama(x []float32, s *[8]float32, blk []byte) {
	var f xsFit
	d := -maxScale(s) / 32
	f.d = f16Round(d)
	id := float32(0)
	if d != 0 {
		id = 1 / d
	}
	for ib := range 8 {
		l := max(-32, min(31, int(roundEven32(float32(id*s[ib])))))
		f.l[ib] = l
		dl := float32(d * float32(l))
		idl := float32(0)
		if dl != 0 {
			idl = 1 / dl
		}
		assign(x[32*ib:32*ib+32], idl, f.L[32*ib:32*ib+32])
	}
	f.put(blk)
}

// iq4xsWide tries super-scales from both sets of sub-block scales and a few
// stretches of them (binary16 and its neighbours), and for each sub-block
// the nearest sub-scale and its two neighbours with the levels chosen for
// the scale as stored.
func iq4xsWide(x, w []float32, llamaS, wideS *[8]float32, blk []byte) {
	var best, cand xsFit
	bestErr := math.Inf(1)
	var Lb [32]uint8
	for _, s := range []*[8]float32{llamaS, wideS} {
		m := maxScale(s)
		for _, div := range []float32{32, 31, 33} {
			for _, d := range f16Neighbours(-m / div) {
				cand.d = d
				var total float64
				for ib := range 8 {
					xb, wb := x[32*ib:32*ib+32], w[32*ib:32*ib+32]
					l0 := 0
					if d != 0 {
						l0 = int(roundEven32(float32(s[ib] / d)))
					}
					bestE := math.Inf(1)
					for _, l := range [3]int{l0 - 1, l0, l0 + 1} {
						l = max(-32, min(31, l))
						dl := float32(d * float32(l))
						if e := bestLevels(xb, wb, dl, Lb[:]); e < bestE {
							bestE, cand.l[ib] = e, l
							copy(cand.L[32*ib:32*ib+32], Lb[:])
						}
					}
					total += bestE
				}
				if total < bestErr {
					bestErr, best = total, cand
				}
			}
		}
	}
	best.put(blk)
}

// roundEven32 is ggml's nearest_int (round half to even).
func roundEven32(v float32) int32 {
	return int32(math.RoundToEven(float64(v)))
}

// QuantizeGGML quantizes a row-major rows×cols matrix to ggml blocks of
// type t (IQ4_NL, IQ4_XS, Q5_0, Q4_K, Q5_K or Q6_K), row by row, as the
// file stores them.
// opt.Importance (per column, len cols) weights the error as llama.cpp's
// imatrix does; opt.Threads splits the rows (the bytes do not change).
// NaN or Inf weights are refused, naming the row and column.
func QuantizeGGML(t GGMLType, w []float32, rows, cols int, opt Options) ([]byte, error) {
	var block func(x, qw []float32, blk []byte)
	switch t {
	case GGMLIQ4_NL:
		block = iq4nlBlock
	case GGMLIQ4_XS:
		block = iq4xsBlock
	case GGMLQ6_K:
		block = q6kBlock
	case GGMLQ5_0:
		block = q50Block
	case GGMLQ4_K:
		block = q4kBlock
	case GGMLQ5_K:
		block = q5kBlock
	default:
		return nil, fmt.Errorf("%w: %s: no quantizer for %v", ErrShape, opt.name(), t)
	}
	n, bb := t.BlockElems(), t.BlockBytes()
	if rows < 0 || cols < 0 || cols%n != 0 {
		return nil, fmt.Errorf("%w: %s: %d×%d: %v needs cols a non-negative multiple of %d", ErrShape, opt.name(), rows, cols, t, n)
	}
	if cols != 0 && rows > math.MaxInt/cols || rows*cols != len(w) {
		return nil, fmt.Errorf("%w: %s: %d×%d does not match %d weights", ErrShape, opt.name(), rows, cols, len(w))
	}
	imp := opt.Importance
	if len(imp) != 0 {
		if len(imp) != cols {
			return nil, fmt.Errorf("%w: %s: importance has %d values for %d columns", ErrShape, opt.name(), len(imp), cols)
		}
		for c, v := range imp {
			if !(v >= 0) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("%w: %s: importance of column %d is %v, want finite and ≥ 0", ErrNonFinite, opt.name(), c, v)
			}
		}
	} else {
		imp = nil
	}
	rb := cols / n * bb
	out := make([]byte, rows*rb)
	doRows := func(r0, r1 int) error {
		for r := r0; r < r1; r++ {
			x := w[r*cols : (r+1)*cols]
			if c := firstNonFinite(x); c >= 0 {
				return fmt.Errorf("%w: %s row %d, column %d: %v", ErrNonFinite, opt.name(), r, c, x[c])
			}
			for b := range cols / n {
				var qw []float32
				if imp != nil {
					qw = imp[b*n : (b+1)*n]
				}
				block(x[b*n:(b+1)*n], qw, out[r*rb+b*bb:r*rb+(b+1)*bb])
			}
		}
		return nil
	}
	threads := max(1, min(opt.Threads, rows))
	errs := make([]error, threads)
	var wg sync.WaitGroup
	for i := range threads {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = doRows(rows*i/threads, rows*(i+1)/threads)
		}(i)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
