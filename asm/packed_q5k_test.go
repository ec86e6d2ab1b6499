package asm

import (
	"fmt"
	"math/rand"
	"testing"
)

// checkPackQ5K packs the rows × nb Q5_K superblocks w and compares, for
// every variant, the packed products of the n activation rows quantized
// from x (QuantizeQ8_K) with DotQ5_K of each row (the per-row definition,
// on the file's blocks), over the whole matrix and over a group-aligned
// part of it; and the definition read off the layout (packedQ5KRef) with
// DotQ5_K.
func checkPackQ5K(t *testing.T, w []byte, rows, nb, n int, x []float32) {
	t.Helper()
	cols := nb * QK
	a, da, bs := make([]int8, n*cols), make([]float32, n*nb), make([]int16, n*nb*16)
	QuantizeQ8_K(x, a, da, bs)
	checkPackQ5KAct(t, w, rows, nb, n, a, da, bs)
}

func checkPackQ5KAct(t *testing.T, w []byte, rows, nb, n int, a []int8, da []float32, bs []int16) {
	t.Helper()
	cols := nb * QK
	rb := nb * q5kBlock
	pk := PackQ5_K(make([]byte, PackedQ5KSize(rows, cols)), w, rows, cols)
	if pk.Rows() != rows || pk.Cols() != cols || pk.Bytes() != PackedQ5KSize(rows, cols) {
		t.Fatalf("PackQ5_K: %d×%d, %d bytes", pk.Rows(), pk.Cols(), pk.Bytes())
	}
	want := make([]float32, n*rows)
	func() { // the definition: the pure-Go variant
		defer func(v Kernel) { active = v }(active)
		active = Generic
		for i := range n {
			for r := range rows {
				want[i*rows+r] = DotQ5_K(w[r*rb:(r+1)*rb], a[i*cols:(i+1)*cols], da[i*nb:(i+1)*nb], bs[i*nb*16:(i+1)*nb*16])
			}
		}
	}()
	ref := make([]float32, n*rows)
	packedQ5KRef(ref, rows, pk.data, rows, a, da, bs, n, nb)
	for j := range ref {
		if !sameFloat(ref[j], want[j]) {
			t.Fatalf("packedQ5KRef act %d row %d: %v, DotQ5_K %v", j/rows, j%rows, ref[j], want[j])
		}
	}
	for _, kern := range ggmlKernels() {
		func() {
			defer func(v Kernel) { active = v }(active)
			active = kern
			out := make([]float32, n*rows)
			pk.MatMul(out, rows, 0, rows, a, da, bs, n)
			for j := range out {
				if !sameFloat(out[j], want[j]) {
					t.Fatalf("%v (packs %v) act %d row %d: packed %v, DotQ5_K %v", kern, PacksQ5_K(), j/rows, j%rows, out[j], want[j])
				}
			}
			if rows > GroupRows { // the groups from the second on, as a thread gets them
				lo := GroupRows
				part := make([]float32, n*(rows-lo)+3)
				pk.MatMul(part, rows-lo, lo, rows, a, da, bs, n)
				for i := range n {
					for r := lo; r < rows; r++ {
						if got := part[i*(rows-lo)+r-lo]; !sameFloat(got, want[i*rows+r]) {
							t.Fatalf("%v rows %d..%d act %d row %d: %v, DotQ5_K %v", kern, lo, rows, i, r, got, want[i*rows+r])
						}
					}
				}
			}
		}()
	}
}

// randQ5K returns rows × nb random Q5_K superblocks: random quants and
// scale bytes, d and dmin tame binary16 values, or with wild also
// subnormals, ±Inf, NaNs, −0 and any bits.
func randQ5K(r *rand.Rand, rows, nb int, wild bool) []byte {
	w := make([]byte, rows*nb*q5kBlock)
	r.Read(w)
	for b := range rows * nb {
		for j := range 2 {
			h := F32ToF16(0.01 * float32(r.NormFloat64()))
			if wild && r.Intn(3) == 0 {
				h = []uint16{0x0001, 0x7c00, 0xfe00, 0x8000, 0xfc00, 0x7c01, uint16(r.Uint32())}[r.Intn(7)]
			}
			w[b*q5kBlock+2*j], w[b*q5kBlock+2*j+1] = byte(h), byte(h>>8)
		}
	}
	return w
}

// TestPackQ5_K: Q5_K matrices in the packed interleaved layout multiply to
// DotQ5_K's bits with every variant (the AVX-512 kernels for 1 to 8
// activation rows at a time and more, and the definition's loop of the
// others), for partial groups, one to several superblocks, tame and wild
// d and dmin, and activations at ±127 (largest sums).
func TestPackQ5_K(t *testing.T) {
	r := rand.New(rand.NewSource(24))
	cases := []struct{ rows, nb, n int }{{16, 1, 1}, {19, 3, 9}, {33, 2, 1}, {48, 5, 17}, {5, 2, 8}, {32, 1, 7}, {16, 4, 3}, {64, 2, 24}}
	for n := 1; n <= 8; n++ { // every kernel (1..8 rows a call) on its own, partial last group
		cases = append(cases, struct{ rows, nb, n int }{35, 2, n})
	}
	for _, c := range cases {
		for _, wild := range []bool{false, true} {
			w := randQ5K(r, c.rows, c.nb, wild)
			x := make([]float32, c.n*c.nb*QK)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			if c.n > 1 { // one superblock of ±127 activations
				for j := range QK {
					x[j] = float32(1 - 2*(j&1))
				}
			}
			checkPackQ5K(t, w, c.rows, c.nb, c.n, x)
		}
	}
}

// TestPackQ5_KExtremes: the largest integer sums (all quants 31, scales
// and mins 63, activations −128 and 127), each fifth bit alone (qh
// patterns under quants of 0 and 15) and bs beyond what QuantizeQ8_K writes
// (the definition's loop takes those).
func TestPackQ5_KExtremes(t *testing.T) {
	const rows, nb = 17, 2
	for _, p := range []struct{ qh, qs byte }{{0xff, 0xff}, {0x00, 0xff}, {0x55, 0x0f}, {0xaa, 0xf0}, {0x01, 0x00}, {0x80, 0x00}, {0x24, 0xff}} {
		w := make([]byte, rows*nb*q5kBlock)
		for b := range rows * nb {
			blk := w[b*q5kBlock : (b+1)*q5kBlock]
			for j := range blk {
				blk[j] = 0xff
			}
			blk[0], blk[1], blk[2], blk[3] = 0x00, 0x3c, 0x00, 0x38 // d = 1, dmin = 0.5
			for j := 16; j < 48; j++ {
				blk[j] = p.qh
			}
			for j := 48; j < q5kBlock; j++ {
				blk[j] = p.qs
			}
		}
		for _, v := range []int8{127, -128} {
			for _, n := range []int{1, 8, 9} {
				a, da, bs := make([]int8, n*nb*QK), make([]float32, n*nb), make([]int16, n*nb*16)
				for i := range a {
					a[i] = v
				}
				for i := range da {
					da[i] = 1
				}
				for i := range bs {
					bs[i] = 16 * int16(v)
				}
				checkPackQ5KAct(t, w, rows, nb, n, a, da, bs)
				for i := range bs {
					bs[i] = int16(int(v) * 250)
				}
				checkPackQ5KAct(t, w, rows, nb, n, a, da, bs)
			}
		}
	}
	// Random quants and fifth bits against activations of one sign per
	// sub-block position, so that a fifth bit taken from the wrong element
	// changes the sum.
	r := rand.New(rand.NewSource(5))
	w := randQ5K(r, rows, nb, false)
	for _, n := range []int{1, 4, 11} {
		a, da, bs := make([]int8, n*nb*QK), make([]float32, n*nb), make([]int16, n*nb*16)
		for i := range a {
			a[i] = int8(r.Intn(255) - 127)
		}
		for i := range da {
			da[i] = 1
		}
		for i := range bs {
			var s int16
			for _, v := range a[16*i : 16*i+16] {
				s += int16(v)
			}
			bs[i] = s
		}
		checkPackQ5KAct(t, w, rows, nb, n, a, da, bs)
	}
}

// TestPackQ5_KPanics: bad shapes and ranges are programming errors that
// panic with a message, as Packed's do.
func TestPackQ5_KPanics(t *testing.T) {
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		f()
	}
	w := make([]byte, 20*q5kBlock)
	mustPanic("cols not a multiple of 256", func() { PackQ5_K(make([]byte, 1<<16), w, 2, 128) })
	mustPanic("w short", func() { PackQ5_K(make([]byte, 1<<16), w[:100], 2, 256) })
	mustPanic("dst short", func() { PackQ5_K(make([]byte, 10), w, 2, 256) })
	pk := PackQ5_K(make([]byte, PackedQ5KSize(20, 256)), w, 20, 256)
	a, da, bs := make([]int8, 256), make([]float32, 1), make([]int16, 16)
	mustPanic("lo not a group start", func() { pk.MatMul(make([]float32, 20), 20, 1, 20, a, da, bs, 1) })
	mustPanic("hi not a group end", func() { pk.MatMul(make([]float32, 20), 20, 0, 17, a, da, bs, 1) })
	mustPanic("a short", func() { pk.MatMul(make([]float32, 40), 20, 0, 20, a, da, bs, 2) })
	mustPanic("out short", func() { pk.MatMul(make([]float32, 19), 20, 0, 20, a, da, bs, 1) })
}

// FuzzPackQ5_K compares the packed Q5_K products of every variant with
// DotQ5_K on superblocks made of the fuzzer's bytes and activations of its
// seed.
func FuzzPackQ5_K(f *testing.F) {
	f.Add([]byte{0, 0x3c, 0, 0x38, 0xff}, int64(1), uint8(17), uint8(2), uint8(9))
	f.Add([]byte{0xff, 0x7b}, int64(2), uint8(16), uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, seed int64, rows8, nb8, n8 uint8) {
		rows, nb, n := int(rows8)%40+1, int(nb8)%3+1, int(n8)%20+1
		r := rand.New(rand.NewSource(seed))
		w := randQ5K(r, rows, nb, seed%2 == 0)
		copy(w, data)
		x := make([]float32, n*nb*QK)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		checkPackQ5K(t, w, rows, nb, n, x)
	})
}

// BenchmarkPackedQ5K times a Q5_K matrix's product with n activation rows
// with the active variant, in thread CPU time (cpuGOPS: multiply-adds): the
// row products infer used before (DotsRowsQ5_K, activation rows in chunks
// of 16 as infer hands them) against the packed layout (PackedQ5K.MatMul).
// The packed path of a variant without its kernels is the definition's
// loop, skipped.
func BenchmarkPackedQ5K(b *testing.B) {
	for _, sh := range []struct{ rows, cols int }{{2048, 2048}, {8192, 2048}} {
		rows, cols := sh.rows, sh.cols
		nb := cols / QK
		r := rand.New(rand.NewSource(1))
		w := randQ5K(r, rows, nb, false)
		pk := PackQ5_K(make([]byte, PackedQ5KSize(rows, cols)), w, rows, cols)
		for _, n := range []int{1, 16, 64} {
			x := make([]float32, n*cols)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			a, da, bs := make([]int8, n*cols), make([]float32, n*nb), make([]int16, n*nb*16)
			QuantizeQ8_K(x, a, da, bs)
			out := make([]float32, n*rows)
			b.Run(fmt.Sprintf("%dx%d/n=%d/rows", rows, cols, n), func(b *testing.B) {
				c := startCPU()
				for range b.N {
					for i0 := 0; i0 < n; i0 += 16 {
						m := min(16, n-i0)
						DotsRowsQ5_K(out[i0*rows:], rows, w, rows, a[i0*cols:(i0+m)*cols], da[i0*nb:(i0+m)*nb], bs[i0*nb*16:(i0+m)*nb*16], m)
					}
				}
				c.report(b, float64(len(w)), float64(rows*cols*n))
			})
			b.Run(fmt.Sprintf("%dx%d/n=%d/packed", rows, cols, n), func(b *testing.B) {
				if !PacksQ5_K() {
					b.Skipf("%v has no packed Q5_K kernels", active)
				}
				c := startCPU()
				for range b.N {
					pk.MatMul(out, rows, 0, rows, a, da, bs, n)
				}
				c.report(b, float64(pk.Bytes()), float64(rows*cols*n))
			})
		}
	}
}
