package asm

import (
	"fmt"
	"math/rand"
	"testing"
)

// checkPackQ6K is checkPackQ4KAct for Q6_K: the packed products of every
// variant, whole and from the second group on, and packedQ6KRef, against
// DotQ6_K of each row.
func checkPackQ6K(t *testing.T, w []byte, rows, nb, n int, a []int8, da []float32, bs []int16) {
	t.Helper()
	cols := nb * QK
	rb := nb * q6kBlock
	pk := PackQ6_K(make([]byte, PackedQ6KSize(rows, cols)), w, rows, cols)
	if pk.Rows() != rows || pk.Cols() != cols || pk.Bytes() != PackedQ6KSize(rows, cols) {
		t.Fatalf("PackQ6_K: %d×%d, %d bytes", pk.Rows(), pk.Cols(), pk.Bytes())
	}
	want := make([]float32, n*rows)
	for i := range n {
		for r := range rows {
			want[i*rows+r] = DotQ6_K(w[r*rb:(r+1)*rb], a[i*cols:(i+1)*cols], da[i*nb:(i+1)*nb], bs[i*nb*16:(i+1)*nb*16])
		}
	}
	ref := make([]float32, n*rows)
	packedQ6KRef(ref, rows, pk.data, rows, a, da, bs, n, nb)
	for j := range ref {
		if !sameFloat(ref[j], want[j]) {
			t.Fatalf("packedQ6KRef act %d row %d: %v, DotQ6_K %v", j/rows, j%rows, ref[j], want[j])
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
					t.Fatalf("%v (packs %v) act %d row %d: packed %v, DotQ6_K %v", kern, PacksQ6_K(), j/rows, j%rows, out[j], want[j])
				}
			}
			if rows > GroupRows {
				lo := GroupRows
				part := make([]float32, n*(rows-lo)+3)
				pk.MatMul(part, rows-lo, lo, rows, a, da, bs, n)
				for i := range n {
					for r := lo; r < rows; r++ {
						if got := part[i*(rows-lo)+r-lo]; !sameFloat(got, want[i*rows+r]) {
							t.Fatalf("%v rows %d..%d act %d row %d: %v, DotQ6_K %v", kern, lo, rows, i, r, got, want[i*rows+r])
						}
					}
				}
			}
		}()
	}
}

// randQ6K returns rows × nb random Q6_K superblocks: random quants and
// int8 scales, d a tame binary16 value or, with wild, also subnormals,
// ±Inf, NaNs, −0 and any bits.
func randQ6K(r *rand.Rand, rows, nb int, wild bool) []byte {
	w := make([]byte, rows*nb*q6kBlock)
	r.Read(w)
	for b := range rows * nb {
		h := F32ToF16(0.01 * float32(r.NormFloat64()))
		if wild && r.Intn(3) == 0 {
			h = []uint16{0x0001, 0x7c00, 0xfe00, 0x8000, 0xfc00, 0x7c01, uint16(r.Uint32())}[r.Intn(7)]
		}
		w[b*q6kBlock+208], w[b*q6kBlock+209] = byte(h), byte(h>>8)
	}
	return w
}

func q8kAct(r *rand.Rand, n, nb int, edge bool) ([]int8, []float32, []int16) {
	x := make([]float32, n*nb*QK)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	if edge && n > 1 {
		for j := range QK {
			x[j] = float32(1 - 2*(j&1))
		}
	}
	a, da, bs := make([]int8, n*nb*QK), make([]float32, n*nb), make([]int16, n*nb*16)
	QuantizeQ8_K(x, a, da, bs)
	return a, da, bs
}

// TestPackQ6_K: Q6_K matrices in the packed layout multiply to DotQ6_K's
// bits with every variant, for partial groups, several superblocks, tame
// and wild d, activations at ±127, and any int16 bs and int8 activations
// (−128 included: the sums wrap alike in int32).
func TestPackQ6_K(t *testing.T) {
	r := rand.New(rand.NewSource(26))
	cases := []struct{ rows, nb, n int }{{16, 1, 1}, {19, 3, 9}, {33, 2, 1}, {48, 5, 17}, {5, 2, 8}, {32, 1, 7}, {16, 4, 3}, {64, 2, 24}}
	for n := 1; n <= 8; n++ { // every kernel (1..4 rows a call) on its own, partial last group
		cases = append(cases, struct{ rows, nb, n int }{35, 2, n})
	}
	for _, c := range cases {
		for _, wild := range []bool{false, true} {
			w := randQ6K(r, c.rows, c.nb, wild)
			a, da, bs := q8kAct(r, c.n, c.nb, true)
			checkPackQ6K(t, w, c.rows, c.nb, c.n, a, da, bs)
		}
	}
	w := randQ6K(r, 17, 2, false)
	a, da, bs := q8kAct(r, 5, 2, false)
	for i := range a {
		a[i] = int8(r.Uint32())
	}
	for i := range bs {
		bs[i] = int16(r.Uint32())
	}
	checkPackQ6K(t, w, 17, 2, 5, a, da, bs)
}

// FuzzPackQ6_K compares the packed Q6_K products of every variant with
// DotQ6_K on superblocks made of the fuzzer's bytes.
func FuzzPackQ6_K(f *testing.F) {
	f.Add([]byte{0xff, 0x7b}, int64(1), uint8(17), uint8(2), uint8(9))
	f.Fuzz(func(t *testing.T, data []byte, seed int64, rows8, nb8, n8 uint8) {
		rows, nb, n := int(rows8)%40+1, int(nb8)%3+1, int(n8)%12+1
		r := rand.New(rand.NewSource(seed))
		w := randQ6K(r, rows, nb, seed%2 == 0)
		copy(w, data)
		a, da, bs := q8kAct(r, n, nb, false)
		checkPackQ6K(t, w, rows, nb, n, a, da, bs)
	})
}

// BenchmarkPackedQ6K is BenchmarkPackedQ4K for Q6_K.
func BenchmarkPackedQ6K(b *testing.B) {
	for _, sh := range []struct{ rows, cols int }{{2048, 2048}, {8192, 2048}} {
		rows, cols := sh.rows, sh.cols
		nb := cols / QK
		r := rand.New(rand.NewSource(1))
		w := randQ6K(r, rows, nb, false)
		pk := PackQ6_K(make([]byte, PackedQ6KSize(rows, cols)), w, rows, cols)
		for _, n := range []int{1, 16, 64} {
			a, da, bs := q8kAct(r, n, nb, false)
			out := make([]float32, n*rows)
			b.Run(fmt.Sprintf("%dx%d/n=%d/rows", rows, cols, n), func(b *testing.B) {
				c := startCPU()
				for range b.N {
					for i0 := 0; i0 < n; i0 += 16 {
						m := min(16, n-i0)
						DotsRowsQ6_K(out[i0*rows:], rows, w, rows, a[i0*cols:(i0+m)*cols], da[i0*nb:(i0+m)*nb], bs[i0*nb*16:(i0+m)*nb*16], m)
					}
				}
				c.report(b, float64(len(w)), float64(rows*cols*n))
			})
			b.Run(fmt.Sprintf("%dx%d/n=%d/packed", rows, cols, n), func(b *testing.B) {
				if !PacksQ6_K() {
					b.Skipf("%v has no packed Q6_K kernels", active)
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
