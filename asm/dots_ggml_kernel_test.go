package asm

import (
	"math"
	"math/rand"
	"testing"
)

// dotsKind is one ggml type's row-times-batch product with a kernel variant.
type dotsKind struct {
	name string
	bb   int
	dots func(Kernel, []float32, int, []byte, []int8, []float32, []int16, int)
}

var dotsKinds = []dotsKind{
	{"Q4_K", 144, func(k Kernel, out []float32, ldo int, w []byte, a []int8, da []float32, bs []int16, n int) {
		dotsQK(k, out, ldo, w, a, da, bs, n, false)
	}},
	{"Q5_K", 176, func(k Kernel, out []float32, ldo int, w []byte, a []int8, da []float32, bs []int16, n int) {
		dotsQK(k, out, ldo, w, a, da, bs, n, true)
	}},
	{"Q6_K", 210, dotsQ6K},
	{"IQ4_XS", 136, dotsIQ4XS},
}

// dotsActs returns n activation rows of nb superblocks: QuantizeQ8_K of
// random floats, with some superblocks all zero (d = 0) and some pinned at
// ±127 (the extremes QuantizeQ8_K writes), bs always a's sums.
func dotsActs(r *rand.Rand, n, nb int) ([]int8, []float32, []int16) {
	cols := n * nb * QK
	x := make([]float32, cols)
	for i := range x {
		x[i] = float32(r.NormFloat64()) * float32(math.Exp(r.NormFloat64()))
	}
	for b := range n * nb {
		switch r.Intn(8) {
		case 0:
			clear(x[b*QK : (b+1)*QK])
		case 1:
			for j := range QK {
				x[b*QK+j] = float32(1 - 2*(j&1))
			}
		case 2:
			for j := range QK {
				x[b*QK+j] = -1
			}
		}
	}
	a, da, bs := make([]int8, cols), make([]float32, n*nb), make([]int16, n*nb*16)
	QuantizeQ8_K(x, a, da, bs)
	return a, da, bs
}

// dotsWeights returns nb random superblocks of a kind; wild puts special
// binary16 values (subnormal, Inf, NaN, −0, any bits) into the scales.
func dotsWeights(r *rand.Rand, k dotsKind, nb int, wild bool) []byte {
	w := make([]byte, nb*k.bb)
	r.Read(w)
	put := func(b []byte) {
		h := F32ToF16(0.02 * float32(r.NormFloat64()))
		if wild && r.Intn(3) == 0 {
			h = []uint16{0x0001, 0x7c00, 0xfe00, 0x8000, 0x7bff, uint16(r.Uint32())}[r.Intn(6)]
		}
		b[0], b[1] = byte(h), byte(h>>8)
	}
	for b := range nb {
		blk := w[b*k.bb : (b+1)*k.bb]
		switch k.name {
		case "Q4_K", "Q5_K":
			put(blk)
			put(blk[2:])
		case "Q6_K":
			put(blk[208:])
		case "IQ4_XS":
			put(blk)
		}
	}
	return w
}

// TestDotsGGMLKernels: every variant's row-times-batch product (the AVX-512
// kernels of the whole product; the superblock sums of the others) equals
// the pure-Go twin's bits, and the twin equals the single Dot… per
// activation row, for widths of 1 to 17 superblocks, batches of 1 to 9, a
// strided output, tame and wild scales, and activation superblocks that are
// zero or at ±127. A stale value in out must not leak into the sums.
func TestDotsGGMLKernels(t *testing.T) {
	r := rand.New(rand.NewSource(24))
	dot := map[string]func([]byte, []int8, []float32, []int16) float32{
		"Q4_K": DotQ4_K, "Q5_K": DotQ5_K, "Q6_K": DotQ6_K, "IQ4_XS": DotIQ4_XS,
	}
	for _, k := range dotsKinds {
		nonzero, total := 0, 0
		for _, nb := range []int{1, 2, 3, 6, 17} {
			for _, n := range []int{1, 2, 3, 9} {
				for _, wild := range []bool{false, true} {
					w := dotsWeights(r, k, nb, wild)
					a, da, bs := dotsActs(r, n, nb)
					const ldo = 5
					want := make([]float32, (n-1)*ldo+1)
					k.dots(Generic, want, ldo, w, a, da, bs, n)
					cols := nb * QK
					for i := range n {
						d := dot[k.name](w, a[i*cols:(i+1)*cols], da[i*nb:(i+1)*nb], bs[i*nb*16:(i+1)*nb*16])
						if !sameFloat(d, want[i*ldo]) {
							t.Fatalf("%s nb=%d n=%d row %d: generic Dots %v, Dot %v", k.name, nb, n, i, want[i*ldo], d)
						}
						if d != 0 && !wild {
							nonzero++
						}
						if !wild {
							total++
						}
					}
					for _, kern := range ggmlKernels() {
						got := make([]float32, len(want))
						for i := range got {
							got[i] = 12345 // stale: must be overwritten, not added to
						}
						k.dots(kern, got, ldo, w, a, da, bs, n)
						for i := range n {
							if !sameFloat(got[i*ldo], want[i*ldo]) {
								t.Fatalf("%s %v nb=%d n=%d wild=%v row %d: %v, generic %v", k.name, kern, nb, n, wild, i, got[i*ldo], want[i*ldo])
							}
						}
						for i := range got {
							if i%ldo != 0 && got[i] != 12345 {
								t.Fatalf("%s %v: wrote out[%d] between rows", k.name, kern, i)
							}
						}
					}
				}
			}
		}
		if nonzero < total*3/4 {
			t.Fatalf("%s: only %d of %d products nonzero", k.name, nonzero, total)
		}
	}
}

// TestDotsGGMLSubBlocks: one sub-block scale (Q6_K: one of 16; IQ4_XS and
// Q4_K: one of 8) set, the others zero, so that a kernel mixing up which
// lanes a scale multiplies fails even where random sums would hide it.
func TestDotsGGMLSubBlocks(t *testing.T) {
	r := rand.New(rand.NewSource(25))
	for _, k := range dotsKinds {
		nsub := 8
		if k.name == "Q6_K" {
			nsub = 16
		}
		for s := range nsub {
			w := dotsWeights(r, k, 2, false)
			for b := range 2 {
				blk := w[b*k.bb : (b+1)*k.bb]
				switch k.name {
				case "Q4_K", "Q5_K":
					clear(blk[4:16]) // sc and m of every sub-block 0
					if s < 4 {
						blk[4+s] = 37
						blk[8+s] = 5
					} else {
						blk[8+s] = 0x5b // sc 11, m 5
					}
				case "Q6_K":
					clear(blk[192:208])
					blk[192+s] = 0x9d // −99
				case "IQ4_XS":
					// ls = 32 everywhere (sc 0) but s, which gets ls 7 (sc −25).
					blk[2], blk[3] = 0xaa, 0xaa
					for j := range 4 {
						blk[4+j] = 0
					}
					sh := uint16(0xaaaa) &^ (3 << (2 * s))
					blk[2], blk[3] = byte(sh), byte(sh>>8)
					blk[4+s/2] = 7 << (4 * (s % 2))
				}
			}
			a, da, bs := dotsActs(r, 3, 2)
			want := make([]float32, 3)
			k.dots(Generic, want, 1, w, a, da, bs, 3)
			if want[0] == 0 && want[1] == 0 && want[2] == 0 {
				t.Fatalf("%s sub-block %d: zero products test nothing", k.name, s)
			}
			for _, kern := range ggmlKernels() {
				got := make([]float32, 3)
				k.dots(kern, got, 1, w, a, da, bs, 3)
				for i := range 3 {
					if !sameFloat(got[i], want[i]) {
						t.Fatalf("%s %v sub-block %d row %d: %v, generic %v", k.name, kern, s, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// FuzzDotsGGML compares every variant's row-times-batch product with the
// pure-Go twin on weights made of the fuzzer's bytes (any scale bits) and
// activations quantized from floats it picks.
func FuzzDotsGGML(f *testing.F) {
	f.Add([]byte{1, 2, 3}, int64(1), uint8(0), uint8(1), uint8(1))
	f.Add(make([]byte, 400), int64(7), uint8(2), uint8(3), uint8(4))
	f.Fuzz(func(t *testing.T, data []byte, seed int64, kind, nb8, n8 uint8) {
		k := dotsKinds[int(kind)%len(dotsKinds)]
		nb, n := int(nb8)%7+1, int(n8)%6+1
		r := rand.New(rand.NewSource(seed))
		w := make([]byte, nb*k.bb)
		r.Read(w)
		copy(w, data)
		a, da, bs := dotsActs(r, n, nb)
		want := make([]float32, n)
		k.dots(Generic, want, 1, w, a, da, bs, n)
		for _, kern := range ggmlKernels() {
			got := make([]float32, n)
			k.dots(kern, got, 1, w, a, da, bs, n)
			for i := range n {
				if !sameFloat(got[i], want[i]) {
					t.Fatalf("%s %v nb=%d n=%d row %d: %v, generic %v", k.name, kern, nb, n, i, got[i], want[i])
				}
			}
		}
	})
}

// TestDotsRowsGGML: the whole-matrix products (DotsRows…, one kernel call
// for every row) equal the pure-Go twin row by row, for every variant, with
// 1 to 37 rows, strided outputs and batches of 1 to 5.
func TestDotsRowsGGML(t *testing.T) {
	r := rand.New(rand.NewSource(26))
	for _, k := range dotsKinds {
		for _, c := range []struct{ rows, nb, n int }{{1, 1, 1}, {3, 2, 1}, {37, 3, 5}, {16, 8, 2}} {
			w := dotsWeights(r, k, c.rows*c.nb, false)
			a, da, bs := dotsActs(r, c.n, c.nb)
			ldo := c.rows + 3
			rb := c.nb * k.bb
			want := make([]float32, (c.n-1)*ldo+c.rows)
			for row := range c.rows {
				k.dots(Generic, want[row:], ldo, w[row*rb:(row+1)*rb], a, da, bs, c.n)
			}
			for _, kern := range ggmlKernels() {
				got := make([]float32, len(want))
				for i := range got {
					got[i] = 777
				}
				dotsRows(kern, k.bb, got, ldo, w, c.rows, a, da, bs, c.n)
				for i := range c.n {
					for row := range c.rows {
						if g, wt := got[i*ldo+row], want[i*ldo+row]; !sameFloat(g, wt) {
							t.Fatalf("%s %v %+v: act %d row %d: %v, generic %v", k.name, kern, c, i, row, g, wt)
						}
					}
					for row := c.rows; row < ldo && i*ldo+row < len(got); row++ {
						if got[i*ldo+row] != 777 {
							t.Fatalf("%s %v: wrote out[%d] past the rows", k.name, kern, i*ldo+row)
						}
					}
				}
			}
		}
	}
}
