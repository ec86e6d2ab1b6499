package asm

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// checkPackIQ4XS packs the rows × nb IQ4_XS superblocks w and compares, for
// every variant, the packed products of the n activation rows quantized
// from x (QuantizeQ8_K) with DotIQ4_XS of each row, as checkPackQ4K does.
func checkPackIQ4XS(t *testing.T, w []byte, rows, nb, n int, x []float32) {
	t.Helper()
	cols := nb * QK
	a, da, bs := make([]int8, n*cols), make([]float32, n*nb), make([]int16, n*nb*16)
	QuantizeQ8_K(x, a, da, bs)
	checkPackIQ4XSAct(t, w, rows, nb, n, a, da, bs)
}

// checkPackIQ4XSAct is checkPackIQ4XS for given activations. The expected
// products are DotIQ4_XS of each row on the file's blocks with the pure-Go
// variant (the definition; the AVX2 sums take no −128 activations).
func checkPackIQ4XSAct(t *testing.T, w []byte, rows, nb, n int, a []int8, da []float32, bs []int16) {
	t.Helper()
	cols := nb * QK
	rb := nb * iq4xsBlock
	pk := PackIQ4_XS(make([]byte, PackedIQ4XSSize(rows, cols)), w, rows, cols)
	if pk.Rows() != rows || pk.Cols() != cols || pk.Bytes() != PackedIQ4XSSize(rows, cols) {
		t.Fatalf("PackIQ4_XS: %d×%d, %d bytes", pk.Rows(), pk.Cols(), pk.Bytes())
	}
	want := make([]float32, n*rows)
	func() {
		defer func(v Kernel) { active = v }(active)
		active = Generic
		for i := range n {
			for r := range rows {
				want[i*rows+r] = DotIQ4_XS(w[r*rb:(r+1)*rb], a[i*cols:(i+1)*cols], da[i*nb:(i+1)*nb], bs[i*nb*16:(i+1)*nb*16])
			}
		}
	}()
	ref := make([]float32, n*rows)
	packedIQ4XSRef(ref, rows, pk.data, rows, a, da, n, nb)
	for j := range ref {
		if !sameFloat(ref[j], want[j]) {
			t.Fatalf("packedIQ4XSRef act %d row %d: %v, DotIQ4_XS %v", j/rows, j%rows, ref[j], want[j])
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
					t.Fatalf("%v (packs %v) act %d row %d: packed %v, DotIQ4_XS %v", kern, PacksIQ4_XS(), j/rows, j%rows, out[j], want[j])
				}
			}
			if rows > GroupRows { // the groups from the second on, as a thread gets them
				lo := GroupRows
				part := make([]float32, n*(rows-lo)+3)
				pk.MatMul(part, rows-lo, lo, rows, a, da, bs, n)
				for i := range n {
					for r := lo; r < rows; r++ {
						if got := part[i*(rows-lo)+r-lo]; !sameFloat(got, want[i*rows+r]) {
							t.Fatalf("%v rows %d..%d act %d row %d: %v, DotIQ4_XS %v", kern, lo, rows, i, r, got, want[i*rows+r])
						}
					}
				}
			}
		}()
	}
}

// randIQ4XS returns rows × nb random IQ4_XS superblocks: random indices and
// scale bits, d a tame binary16 value, or with wild also subnormals, ±Inf,
// NaNs, −0 and any bits.
func randIQ4XS(r *rand.Rand, rows, nb int, wild bool) []byte {
	w := make([]byte, rows*nb*iq4xsBlock)
	r.Read(w)
	for b := range rows * nb {
		h := F32ToF16(0.01 * float32(r.NormFloat64()))
		if wild && r.Intn(3) == 0 {
			h = []uint16{0x0001, 0x7c00, 0xfe00, 0x8000, 0xfc00, 0x7c01, uint16(r.Uint32())}[r.Intn(7)]
		}
		w[b*iq4xsBlock], w[b*iq4xsBlock+1] = byte(h), byte(h>>8)
	}
	return w
}

// TestPackIQ4_XS: IQ4_XS matrices in the packed interleaved layout multiply
// to DotIQ4_XS's bits with every variant (the AVX-512 kernels for 1 to 8
// activation rows at a time and more, the definition's loop of the
// others), for partial groups, one to several superblocks, tame and wild d,
// and activations at ±127.
func TestPackIQ4_XS(t *testing.T) {
	r := rand.New(rand.NewSource(24))
	for _, c := range []struct{ rows, nb, n int }{{16, 1, 1}, {19, 3, 9}, {33, 2, 1}, {48, 5, 17}, {5, 2, 8}, {32, 1, 7}, {16, 4, 3}, {64, 2, 24}, {40, 1, 2}, {17, 1, 4}, {31, 2, 5}, {16, 1, 6}} {
		for _, wild := range []bool{false, true} {
			w := randIQ4XS(r, c.rows, c.nb, wild)
			x := make([]float32, c.n*c.nb*QK)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			if c.n > 1 { // one superblock of ±127 activations
				for j := range QK {
					x[j] = float32(1 - 2*(j&1))
				}
			}
			checkPackIQ4XS(t, w, c.rows, c.nb, c.n, x)
		}
	}
}

// TestPackIQ4_XSExtremes: the largest integer sums (every index 0 or 15 —
// K = −127 or 113 —, every scale −32 or 31, activations −128 and 127, which
// DotIQ4_XS's definition takes though QuantizeQ8_K writes no −128), wild
// activation scales (subnormal, ±Inf, NaN, −0, huge) and bs that are not
// the activations' sums (no product reads them).
func TestPackIQ4_XSExtremes(t *testing.T) {
	const rows, nb = 17, 2
	for _, q := range []byte{0x00, 0xff, 0x0f, 0xf0} {
		for _, ls := range []byte{0, 63} {
			w := make([]byte, rows*nb*iq4xsBlock)
			for b := range rows * nb {
				blk := w[b*iq4xsBlock : (b+1)*iq4xsBlock]
				blk[0], blk[1] = 0x00, 0x3c // d = 1
				sh := uint16(0)
				for s := range 8 {
					sh |= uint16(ls>>4) << (2 * s)
				}
				blk[2], blk[3] = byte(sh), byte(sh>>8)
				for j := 4; j < 8; j++ {
					blk[j] = ls&15 | ls&15<<4
				}
				for j := 8; j < iq4xsBlock; j++ {
					blk[j] = q
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
						bs[i] = int16(i*977 + 3)
					}
					checkPackIQ4XSAct(t, w, rows, nb, n, a, da, bs)
				}
			}
		}
	}
	// Activation scales of every kind, mixed signs, on random blocks.
	r := rand.New(rand.NewSource(7))
	w := randIQ4XS(r, rows, nb, true)
	for _, n := range []int{1, 3, 10} {
		a, da, bs := make([]int8, n*nb*QK), make([]float32, n*nb), make([]int16, n*nb*16)
		for i := range a {
			a[i] = int8(r.Intn(256) - 128)
		}
		kinds := []float32{1e-40, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), float32(math.Copysign(0, -1)), 3e38, -0.5, 2}
		for i := range da {
			da[i] = kinds[r.Intn(len(kinds))]
		}
		checkPackIQ4XSAct(t, w, rows, nb, n, a, da, bs)
	}
}

// TestPackIQ4_XSPanics: bad shapes and ranges panic with a message, as
// PackQ4_K's do.
func TestPackIQ4_XSPanics(t *testing.T) {
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		f()
	}
	w := make([]byte, 20*iq4xsBlock)
	mustPanic("cols not a multiple of 256", func() { PackIQ4_XS(make([]byte, 1<<16), w, 2, 128) })
	mustPanic("w short", func() { PackIQ4_XS(make([]byte, 1<<16), w[:100], 2, 256) })
	mustPanic("dst short", func() { PackIQ4_XS(make([]byte, 10), w, 2, 256) })
	pk := PackIQ4_XS(make([]byte, PackedIQ4XSSize(20, 256)), w, 20, 256)
	a, da, bs := make([]int8, 256), make([]float32, 1), make([]int16, 16)
	mustPanic("lo not a group start", func() { pk.MatMul(make([]float32, 20), 20, 1, 20, a, da, bs, 1) })
	mustPanic("hi not a group end", func() { pk.MatMul(make([]float32, 20), 20, 0, 17, a, da, bs, 1) })
	mustPanic("a short", func() { pk.MatMul(make([]float32, 40), 20, 0, 20, a, da, bs, 2) })
	mustPanic("bs short", func() { pk.MatMul(make([]float32, 20), 20, 0, 20, a, da, bs[:15], 1) })
	mustPanic("out short", func() { pk.MatMul(make([]float32, 19), 20, 0, 20, a, da, bs, 1) })
	// Nothing to multiply: no panic, out untouched; no superblocks: zeros.
	out := []float32{7, 7}
	pk.MatMul(out, 20, 0, 0, a, da, bs, 1)
	pk.MatMul(out, 20, 0, 20, a, da, bs, 0)
	if out[0] != 7 || out[1] != 7 {
		t.Errorf("empty products wrote %v", out)
	}
	p0 := PackIQ4_XS(nil, nil, 3, 0)
	out = []float32{7, 7, 7, 7, 7, 7}
	p0.MatMul(out, 3, 0, 3, nil, nil, nil, 2)
	for j, v := range out {
		if v != 0 || math.Signbit(float64(v)) {
			t.Errorf("0 columns: out[%d] = %v, want +0", j, v)
		}
	}
}

// FuzzPackIQ4_XS compares the packed IQ4_XS products of every variant with
// DotIQ4_XS on superblocks made of the fuzzer's bytes and activations of
// its seed.
func FuzzPackIQ4_XS(f *testing.F) {
	f.Add([]byte{0, 0x3c, 0xff, 0xff, 0xff}, int64(1), uint8(17), uint8(2), uint8(9))
	f.Add([]byte{0xff, 0x7b}, int64(2), uint8(16), uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, seed int64, rows8, nb8, n8 uint8) {
		rows, nb, n := int(rows8)%40+1, int(nb8)%3+1, int(n8)%20+1
		r := rand.New(rand.NewSource(seed))
		w := randIQ4XS(r, rows, nb, seed%2 == 0)
		copy(w, data)
		x := make([]float32, n*nb*QK)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		checkPackIQ4XS(t, w, rows, nb, n, x)
	})
}

// BenchmarkPackedIQ4XS is BenchmarkPackedQ4K for IQ4_XS: the row products
// (DotsRowsIQ4_XS, activation rows in chunks of 16 as infer hands them)
// against the packed layout (PackedIQ4XS.MatMul), thread CPU time.
func BenchmarkPackedIQ4XS(b *testing.B) {
	for _, sh := range []struct{ rows, cols int }{{2048, 2048}, {8192, 2048}} {
		rows, cols := sh.rows, sh.cols
		nb := cols / QK
		r := rand.New(rand.NewSource(1))
		w := randIQ4XS(r, rows, nb, false)
		pk := PackIQ4_XS(make([]byte, PackedIQ4XSSize(rows, cols)), w, rows, cols)
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
						DotsRowsIQ4_XS(out[i0*rows:], rows, w, rows, a[i0*cols:(i0+m)*cols], da[i0*nb:(i0+m)*nb], bs[i0*nb*16:(i0+m)*nb*16], m)
					}
				}
				c.report(b, float64(len(w)), float64(rows*cols*n))
			})
			b.Run(fmt.Sprintf("%dx%d/n=%d/packed", rows, cols, n), func(b *testing.B) {
				if !PacksIQ4_XS() {
					b.Skipf("%v has no packed IQ4_XS kernels", active)
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
