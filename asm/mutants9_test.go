package asm

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/x448/float16"
)

// Tests added from the mutants gremlins found alive in session 9 (issue 27
// item 5, NAME mutasm9). Expected values come from the definitions written
// out again here: the int64 block sums of dot_ggml32_kernel_test.go
// (q5_0SumsPlain, iq4nlSumsPlain, q4_1SumsPlain, element by element from
// docs/FORMATS.md's block table), binary16 scales decoded by
// github.com/x448/float16, and the float steps as the doc comments state
// them.

// x448At decodes the little-endian binary16 at b[0:2] with x448/float16.
func x448At(b []byte) float32 {
	return float16.Frombits(uint16(b[0]) | uint16(b[1])<<8).Float32()
}

// TestDotSums32Chunks: DotQ5_0, DotIQ4_NL and DotQ4_1 of rows longer than
// the block-sum chunk (sumChunk = 64 blocks: 1, 63, 64, 65, 128, 129 and
// 133 blocks), bit for bit the definition's steps over the blocks in order.
// TestDotGGMLDefinition's rows have 32 blocks, so a mistake in how the chunk
// loop of dotBlockSums or DotQ4_1 advances (the chunk's length, its offset in
// w, a or da) showed in no test.
func TestDotSums32Chunks(t *testing.T) {
	if sumChunk != 64 {
		t.Fatalf("sumChunk = %d: the block counts below assume 64", sumChunk)
	}
	r := rand.New(rand.NewSource(91))
	for _, nb := range []int{1, 63, 64, 65, 128, 129, 133} {
		cols := nb * BlockSize
		x := make([]float32, cols)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		a, da := make([]int8, cols), make([]float32, nb)
		QuantizeQ8_0(x, a, da)
		for _, c := range sums32Cases {
			w := make([]byte, nb*c.bb)
			r.Read(w)
			// Tame scales, each block's different (Q4_1: d and m).
			for b := range nb {
				for o := 0; o < 2*c.per; o += 2 {
					h := float16.Fromfloat32(float32(0.001 * (1 + r.Float64()))).Bits()
					w[b*c.bb+o], w[b*c.bb+o+1] = byte(h), byte(h>>8)
				}
			}
			p := c.plain(w, a, nb)
			var want float32
			for b := range nb {
				blk := w[b*c.bb:]
				want = want + float32(float32(p[c.per*b])*float32(x448At(blk)*da[b]))
				if c.per == 2 { // Q4_1: then t = Σ a times m·da
					want = want + float32(float32(p[2*b+1])*float32(x448At(blk[2:])*da[b]))
				}
			}
			var got float32
			switch c.name {
			case "Q5_0":
				got = DotQ5_0(w, a, da)
			case "IQ4_NL":
				got = DotIQ4_NL(w, a, da)
			case "Q4_1":
				got = DotQ4_1(w, a, da)
			default:
				t.Fatalf("unknown case %s", c.name)
			}
			if math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("%s nb=%d: %v (%#x), definition %v (%#x)", c.name, nb, got, math.Float32bits(got), want, math.Float32bits(want))
			}
		}
	}
}

// mustPanic9 runs f and fails unless it panics with a string that starts
// with prefix and contains sub: asm's own message, not a runtime bounds
// fault or another check's.
func mustPanic9(t *testing.T, what, prefix, sub string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Errorf("%s: no panic, want %q…%q", what, prefix, sub)
			return
		}
		if s, ok := r.(string); !ok || !strings.HasPrefix(s, prefix) || !strings.Contains(s, sub) {
			t.Errorf("%s: panic %v, want %q…%q", what, r, prefix, sub)
		}
	}()
	f()
}

func noPanic9(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		if r := recover(); r != nil {
			t.Errorf("%s: panic %v", what, r)
		}
	}()
	f()
}

// TestPackShapeEdges: PackQ8_0, PackQ4_0, PackIQ4_NL, PackQ4_K, PackQ6_K,
// PackQ5_K and PackIQ4_XS accept inputs of exactly the sizes they document, an empty matrix (0 rows
// or 0 columns) included, and refuse a negative shape, columns that are not
// a multiple of the block, and every input one element short, with their
// own panic.
func TestPackShapeEdges(t *testing.T) {
	const rows, nb = 37, 2 // two full groups and a partial one
	type packer struct {
		name  string
		block int                      // columns per block
		size  func(rows, cols int) int // dst bytes
		wlen  func(rows, cols int) int // w elements
		dlen  func(rows, cols int) int // dw elements, 0: none
		pack  func(dst []byte, w []byte, dw []float32, rows, cols int)
	}
	q8 := func(f16 bool) packer {
		return packer{"PackQ8_0", BlockSize,
			func(r, c int) int { return PackedSize(false, f16, r, c) },
			func(r, c int) int { return r * c },
			func(r, c int) int { return r * c / BlockSize },
			func(dst, w []byte, dw []float32, r, c int) {
				w8 := make([]int8, len(w))
				for i, v := range w {
					w8[i] = int8(v)
				}
				PackQ8_0(dst, w8, dw, r, c, f16)
			}}
	}
	q4 := func(f16 bool) packer {
		return packer{"PackQ4_0", BlockSize,
			func(r, c int) int { return PackedSize(true, f16, r, c) },
			func(r, c int) int { return r * c / 2 },
			func(r, c int) int { return r * c / BlockSize },
			func(dst, w []byte, dw []float32, r, c int) { PackQ4_0(dst, w, dw, r, c, f16) }}
	}
	iq4 := func(f16 bool) packer {
		return packer{"PackIQ4_NL", BlockSize,
			func(r, c int) int { return PackedSize(true, f16, r, c) },
			func(r, c int) int { return r * c / BlockSize * 18 },
			func(r, c int) int { return 0 },
			func(dst, w []byte, _ []float32, r, c int) { PackIQ4_NL(dst, w, r, c, f16) }}
	}
	packers := []packer{q8(false), q8(true), q4(false), q4(true), iq4(false), iq4(true),
		{"PackQ4_K", QK, PackedQ4KSize, func(r, c int) int { return r * c / QK * q4kBlock }, func(r, c int) int { return 0 },
			func(dst, w []byte, _ []float32, r, c int) { PackQ4_K(dst, w, r, c) }},
		{"PackQ6_K", QK, PackedQ6KSize, func(r, c int) int { return r * c / QK * q6kBlock }, func(r, c int) int { return 0 },
			func(dst, w []byte, _ []float32, r, c int) { PackQ6_K(dst, w, r, c) }},
		{"PackQ5_K", QK, PackedQ5KSize, func(r, c int) int { return r * c / QK * q5kBlock }, func(r, c int) int { return 0 },
			func(dst, w []byte, _ []float32, r, c int) { PackQ5_K(dst, w, r, c) }},
		{"PackIQ4_XS", QK, PackedIQ4XSSize, func(r, c int) int { return r * c / QK * iq4xsBlock }, func(r, c int) int { return 0 },
			func(dst, w []byte, _ []float32, r, c int) { PackIQ4_XS(dst, w, r, c) }},
	}
	for _, p := range packers {
		cols := nb * p.block
		prefix := "asm: " + p.name + ":"
		args := func(r, c int) ([]byte, []byte, []float32) {
			dw := make([]float32, p.dlen(r, c))
			for i := range dw {
				dw[i] = 1
			}
			// IQ4_NL: every block's binary16 d is 0x0000, fine for packing.
			return make([]byte, p.size(r, c)), make([]byte, p.wlen(r, c)), dw
		}
		dst, w, dw := args(rows, cols)
		noPanic9(t, p.name+" exact", func() { p.pack(dst, w, dw, rows, cols) })
		for _, rc := range [][2]int{{0, cols}, {rows, 0}, {0, 0}} {
			d0, w0, dw0 := args(rc[0], rc[1])
			noPanic9(t, fmt.Sprintf("%s %d×%d", p.name, rc[0], rc[1]), func() { p.pack(d0, w0, dw0, rc[0], rc[1]) })
		}
		mustPanic9(t, p.name+" rows −1", prefix, "", func() { p.pack(dst, w, dw, -1, cols) })
		mustPanic9(t, p.name+" cols −block", prefix, "", func() { p.pack(dst, w, dw, rows, -p.block) })
		mustPanic9(t, p.name+" cols not a multiple", prefix, "", func() { p.pack(dst, w, dw, rows, cols-BlockSize/2) })
		mustPanic9(t, p.name+" w short", prefix, "", func() { p.pack(dst, w[:len(w)-1], dw, rows, cols) })
		if len(dw) > 0 {
			mustPanic9(t, p.name+" dw short", prefix, "", func() { p.pack(dst, w, dw[:len(dw)-1], rows, cols) })
		}
		dprefix := prefix
		if p.name == "PackIQ4_NL" { // it packs through PackQ4_0
			dprefix = "asm: PackQ4_0:"
		}
		mustPanic9(t, p.name+" dst short", dprefix, "", func() { p.pack(dst[:len(dst)-1], w, dw, rows, cols) })
	}
}

// TestPackedMatMulEdges: the MatMul of Packed (Q8_0, Q4_0 with binary16
// scales, IQ4_NL), PackedQ4K, PackedQ6K, PackedQ5K and PackedIQ4XS accepts exactly the inputs it
// documents: a, da, bs and out of exactly the lengths used, n = 0 and an
// empty row range lo = hi with nothing else (nil slices), a range ending at
// a group that is not the matrix's end; it refuses each of them one element
// short, ldo < hi − lo, n < 0 and ranges that do not start and end groups
// with its own panic; it writes only out[i·ldo + r − lo] for r < hi − lo;
// and a matrix of no columns (an empty product) gives zeros there.
func TestPackedMatMulEdges(t *testing.T) {
	const rows, nb, n = 37, 2, 2
	r := rand.New(rand.NewSource(92))
	type mat struct {
		name  string
		block int // columns per block of a (32, or 256 with bs)
		k     bool
		mm    func(out []float32, ldo, lo, hi int, a []int8, da []float32, bs []int16, n int)
	}
	mats := func(cols int) []mat {
		w8 := make([]int8, rows*cols)
		for i := range w8 {
			w8[i] = int8(r.Intn(255) - 127)
		}
		w4 := make([]byte, rows*cols/2)
		r.Read(w4)
		dw := make([]float32, rows*cols/BlockSize)
		for i := range dw {
			dw[i] = F16ToF32(F32ToF16(0.01 * float32(1+r.Float64())))
		}
		wi := make([]byte, rows*cols/BlockSize*18)
		r.Read(wi)
		for b := range rows * cols / BlockSize {
			h := F32ToF16(0.01 * float32(1+r.Float64()))
			wi[18*b], wi[18*b+1] = byte(h), byte(h>>8)
		}
		pq8 := PackQ8_0(make([]byte, PackedSize(false, false, rows, cols)), w8, dw, rows, cols, false)
		pq4 := PackQ4_0(make([]byte, PackedSize(true, true, rows, cols)), w4, dw, rows, cols, true)
		piq := PackIQ4_NL(make([]byte, PackedSize(true, false, rows, cols)), wi, rows, cols, false)
		kc := cols / BlockSize * QK // the K types: as many superblocks as the others have blocks
		wk4, wk6 := randQ4K(r, rows, kc/QK, false), make([]byte, rows*kc/QK*q6kBlock)
		r.Read(wk6)
		for b := range rows * kc / QK {
			h := F32ToF16(0.01 * float32(1+r.Float64()))
			wk6[b*q6kBlock+208], wk6[b*q6kBlock+209] = byte(h), byte(h>>8)
		}
		pk4 := PackQ4_K(make([]byte, PackedQ4KSize(rows, kc)), wk4, rows, kc)
		pk6 := PackQ6_K(make([]byte, PackedQ6KSize(rows, kc)), wk6, rows, kc)
		wk5, wx := make([]byte, rows*kc/QK*q5kBlock), make([]byte, rows*kc/QK*iq4xsBlock)
		r.Read(wk5)
		r.Read(wx)
		tame := func(b []byte) { // a tame binary16 scale at b[0:2]
			h := F32ToF16(0.01 * float32(1+r.Float64()))
			b[0], b[1] = byte(h), byte(h>>8)
		}
		for b := range rows * kc / QK {
			tame(wk5[b*q5kBlock:])   // d
			tame(wk5[b*q5kBlock+2:]) // dmin
			tame(wx[b*iq4xsBlock:])  // d
		}
		pk5 := PackQ5_K(make([]byte, PackedQ5KSize(rows, kc)), wk5, rows, kc)
		pkx := PackIQ4_XS(make([]byte, PackedIQ4XSSize(rows, kc)), wx, rows, kc)
		plain := func(p Packed) func([]float32, int, int, int, []int8, []float32, []int16, int) {
			return func(out []float32, ldo, lo, hi int, a []int8, da []float32, _ []int16, n int) {
				p.MatMul(out, ldo, lo, hi, a, da, n)
			}
		}
		return []mat{
			{"Packed", BlockSize, false, plain(pq8)},
			{"Packed", BlockSize, false, plain(pq4)},
			{"Packed", BlockSize, false, plain(piq)},
			{"PackedQ4K", QK, true, pk4.MatMul},
			{"PackedQ6K", QK, true, pk6.MatMul},
			{"PackedQ5K", QK, true, pk5.MatMul},
			{"PackedIQ4XS", QK, true, pkx.MatMul},
		}
	}
	for _, cnb := range []int{nb, 0} {
		for mi, m := range mats(cnb * BlockSize) {
			cols := cnb * m.block
			name := fmt.Sprintf("%s#%d nb=%d", m.name, mi, cnb)
			prefix := "asm: " + m.name + ".MatMul:"
			x := make([]float32, n*cols)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			var a []int8
			var da []float32
			var bs []int16
			if m.k {
				a, da, bs = make([]int8, n*cols), make([]float32, n*cnb), make([]int16, n*cnb*16)
				QuantizeQ8_K(x, a, da, bs)
			} else {
				a, da = make([]int8, n*cols), make([]float32, n*cnb)
				QuantizeQ8_0(x, a, da)
			}
			for _, rg := range [][2]int{{0, rows}, {16, rows}, {16, 32}} {
				lo, hi := rg[0], rg[1]
				nr := hi - lo
				ldo := nr + 3
				// The outputs, from out of generous length; then out of
				// exactly (n−1)·ldo + nr, filled with a sentinel that
				// only the outputs replace.
				full := make([]float32, n*ldo)
				m.mm(full, ldo, lo, hi, a, da, bs, n)
				const sentinel = 7.5
				out := make([]float32, (n-1)*ldo+nr)
				for i := range out {
					out[i] = sentinel
				}
				noPanic9(t, name+" exact", func() { m.mm(out, ldo, lo, hi, a, da, bs, n) })
				for j, v := range out {
					i, rr := j/ldo, j%ldo
					if rr >= nr {
						if v != sentinel {
							t.Fatalf("%s rows %d..%d: out[%d] (between rows of outputs) = %v, want it left %v", name, lo, hi, j, v, sentinel)
						}
						continue
					}
					want := full[j]
					if cnb == 0 {
						want = 0 // the empty product
					}
					if !sameFloat(v, want) || v == sentinel {
						t.Fatalf("%s rows %d..%d: act %d row %d = %v, want %v", name, lo, hi, i, lo+rr, v, want)
					}
				}
				if cnb > 0 {
					mustPanic9(t, name+" a short", prefix, "too short for n rows", func() { m.mm(full, ldo, lo, hi, a[:len(a)-1], da, bs, n) })
					mustPanic9(t, name+" da short", prefix, "too short for n rows", func() { m.mm(full, ldo, lo, hi, a, da[:len(da)-1], bs, n) })
					if m.k {
						mustPanic9(t, name+" bs short", prefix, "too short for n rows", func() { m.mm(full, ldo, lo, hi, a, da, bs[:len(bs)-1], n) })
					}
				}
				mustPanic9(t, name+" out short", prefix, "out too short", func() { m.mm(out[:len(out)-1], ldo, lo, hi, a, da, bs, n) })
				mustPanic9(t, name+" ldo < hi−lo", prefix, "out too short", func() { m.mm(full, nr-1, lo, hi, a, da, bs, n) })
				mustPanic9(t, name+" ldo < hi−lo, one row", prefix, "out too short", func() { m.mm(full, nr-1, lo, hi, a, da, bs, 1) })
			}
			noPanic9(t, name+" n = 0", func() { m.mm(nil, 0, 0, rows, nil, nil, nil, 0) })
			noPanic9(t, name+" lo = hi", func() { m.mm(nil, 0, 16, 16, a, da, bs, n) })
			noPanic9(t, name+" lo = hi = 0", func() { m.mm(nil, 0, 0, 0, a, da, bs, n) })
			mustPanic9(t, name+" n < 0", prefix, "too short for n rows", func() { m.mm(nil, 0, 0, rows, a, da, bs, -1) })
			for _, rg := range [][2]int{{-16, 16}, {32, 16}, {5, rows}, {0, 17}, {0, rows + 1}, {16, rows + 11}} {
				mustPanic9(t, fmt.Sprintf("%s rows %d..%d", name, rg[0], rg[1]), prefix, "do not start and end groups", func() {
					m.mm(make([]float32, n*64), 64, rg[0], rg[1], a, da, bs, n)
				})
			}
		}
	}
}

// TestDequantEdges: Packed.Dequant takes rows 0..Rows−1 and an x of exactly
// Cols values (the last row, in the partial group, included) and refuses
// row −1, row Rows (a padding row of the last group, which the layout
// holds) and an x one short with its own panic.
func TestDequantEdges(t *testing.T) {
	const rows, cols = 37, 64
	w4 := make([]byte, rows*cols/2)
	for i := range w4 {
		w4[i] = byte(i)
	}
	dw := make([]float32, rows*cols/BlockSize)
	for i := range dw {
		dw[i] = 1
	}
	for _, f16 := range []bool{false, true} {
		p := PackQ4_0(make([]byte, PackedSize(true, f16, rows, cols)), w4, dw, rows, cols, f16)
		x := make([]float32, cols)
		noPanic9(t, "Dequant row 0", func() { p.Dequant(0, x) })
		noPanic9(t, "Dequant last row", func() { p.Dequant(rows-1, x) })
		for j, v := range x { // row 36's bytes: 16·(2·36 + j/32) + j%16, nibble by j%32 < 16
			byt := byte(16*(2*(rows-1)+j/32) + j%16)
			q := int(byt & 15)
			if j%32 >= 16 {
				q = int(byt >> 4)
			}
			if v != float32(q-8) {
				t.Fatalf("f16=%v Dequant row %d [%d] = %v, want %d", f16, rows-1, j, v, q-8)
			}
		}
		const msg = "asm: Packed.Dequant:"
		mustPanic9(t, "Dequant row −1", msg, "out of range", func() { p.Dequant(-1, x) })
		mustPanic9(t, "Dequant row Rows", msg, "out of range", func() { p.Dequant(rows, x) })
		mustPanic9(t, "Dequant x short", msg, "x too short", func() { p.Dequant(0, x[:cols-1]) })
	}
}

// TestPackDirtyBuffer: PackQ8_0 and PackQ4_0 (float32 and binary16
// scales) write the same bytes into a buffer full of garbage as into a
// zeroed one, and nothing past PackedSize: the padding rows of the last
// group and the padding after each group's binary16 scales are zeroed
// (clearPad), as Packed's doc states, whatever the buffer held. (Every other
// test packs into a fresh zeroed buffer, where a padding left unwritten
// cannot show; the padding's outputs are never stored.)
func TestPackDirtyBuffer(t *testing.T) {
	rng := rand.New(rand.NewSource(93))
	const garbage = 0xa5
	for _, q4 := range []bool{false, true} {
		for _, f16 := range []bool{false, true} {
			for _, rows := range []int{1, 5, 16, 37} {
				for _, nb := range []int{1, 3} {
					cols := nb * BlockSize
					w8 := make([]int8, rows*cols)
					w4 := make([]byte, rows*cols/2)
					for i := range w8 {
						w8[i] = int8(rng.Intn(256) - 128)
					}
					rng.Read(w4)
					dw := make([]float32, rows*nb)
					for i := range dw {
						dw[i] = F16ToF32(F32ToF16(0.02 * float32(rng.NormFloat64())))
					}
					size := PackedSize(q4, f16, rows, cols)
					clean := pack(make([]byte, size), q4, f16, w8, w4, dw, rows, cols)
					buf := make([]byte, size+100)
					for i := range buf {
						buf[i] = garbage
					}
					dirty := pack(buf, q4, f16, w8, w4, dw, rows, cols)
					name := fmt.Sprintf("q4=%v f16=%v %d×%d", q4, f16, rows, cols)
					if len(dirty.data) != size || len(clean.data) != size {
						t.Fatalf("%s: %d and %d bytes, want %d", name, len(clean.data), len(dirty.data), size)
					}
					for i := range size {
						if clean.data[i] != dirty.data[i] {
							t.Fatalf("%s: byte %d of %d (group %d, offset %d) = %#x packed into garbage, %#x into zeros",
								name, i, size, i/(size/((rows+GroupRows-1)/GroupRows)), i%(size/((rows+GroupRows-1)/GroupRows)), dirty.data[i], clean.data[i])
						}
					}
					for i := size; i < len(buf); i++ {
						if buf[i] != garbage {
							t.Fatalf("%s: byte %d past PackedSize %d written", name, i, size)
						}
					}
				}
			}
		}
	}
}

// widen16 is the exact widening of the binary16 h to float32 bits, written
// from IEEE 754: ±0, subnormals m·2^−24, normals with the exponent rebiased,
// Inf and NaN with the payload shifted up (a signalling NaN stays one, as
// F16ToF32 keeps it; x448/float16 quiets it).
func widen16(h uint16) uint32 {
	s, e, m := uint32(h>>15)<<31, uint32(h>>10&31), uint32(h&1023)
	switch {
	case e == 0:
		return s | math.Float32bits(float32(math.Ldexp(float64(m), -24)))
	case e == 31:
		return s | 0xff<<23 | m<<13
	}
	return s | (e-15+127)<<23 | m<<13
}

// TestScalesFitF16Exhaustive: ScalesFitF16 is true exactly for the float32
// values that some binary16 value widens to, bit for bit (signalling and
// quiet NaNs with their payloads included): the set of all 65536 widened
// (widen16), against every one of them and its neighbours
// (±1, ±2^12, ±2^13 in the bit pattern: the last bits a binary16 mantissa
// does not hold), random bit patterns and NaNs; and a slice fits only if
// every element does.
func TestScalesFitF16Exhaustive(t *testing.T) {
	widened := make(map[uint32]bool, 1<<16)
	for h := range 1 << 16 {
		widened[widen16(uint16(h))] = true
	}
	check := func(u uint32) {
		t.Helper()
		x := math.Float32frombits(u)
		if got := ScalesFitF16([]float32{x}); got != widened[u] {
			t.Fatalf("ScalesFitF16(%#08x) = %v, want %v", u, got, widened[u])
		}
	}
	for u := range widened {
		for _, d := range []uint32{0, 1, 1 << 12, 1 << 13} {
			check(u + d)
			check(u - d)
		}
	}
	rng := rand.New(rand.NewSource(94))
	for range 1 << 16 {
		check(rng.Uint32())
		check(0x7f800000 | rng.Uint32()&0x807fffff) // a NaN or ±Inf
	}
	fit, misfit := float32(1), float32(0.1) // 0.1 is no binary16 value
	if !ScalesFitF16(nil) {
		t.Error("ScalesFitF16 of no scales: false")
	}
	for _, s := range [][]float32{{misfit, fit, fit}, {fit, misfit, fit}, {fit, fit, misfit}} {
		if ScalesFitF16(s) {
			t.Errorf("ScalesFitF16(%v) = true", s)
		}
	}
	if !ScalesFitF16([]float32{fit, fit, fit}) {
		t.Error("ScalesFitF16 of three binary16 values: false")
	}
}
