package asm

import (
	"math/rand"
	"testing"
)

// checkPackIQ4 packs the rows × nb IQ4_NL blocks w (f16 and float32 scales)
// and compares, for every variant, the packed products of n activation rows
// with DotIQ4_NL of each row (the definition, on the file's blocks), and
// Dequant with K[n]·d.
func checkPackIQ4(t *testing.T, w []byte, rows, nb, n int, x []float32) {
	t.Helper()
	cols := nb * BlockSize
	a, da := make([]int8, n*cols), make([]float32, n*nb)
	QuantizeQ8_0(x, a, da)
	for _, f16 := range []bool{true, false} {
		pk := PackIQ4_NL(make([]byte, PackedSize(true, f16, rows, cols)), w, rows, cols, f16)
		if !pk.IQ4() || pk.Rows() != rows || pk.Cols() != cols {
			t.Fatalf("PackIQ4_NL: IQ4 %v, %d×%d", pk.IQ4(), pk.Rows(), pk.Cols())
		}
		deq := make([]float32, cols)
		for r := range rows {
			pk.Dequant(r, deq)
			for j := range cols {
				blk := w[(r*nb+j/32)*18:]
				v := blk[2+j%16]
				if j%32 >= 16 {
					v >>= 4
				}
				if want := float32(KValuesIQ4[v&15]) * f16le(blk); !sameFloat(deq[j], want) {
					t.Fatalf("f16=%v Dequant row %d col %d: %v, want %v", f16, r, j, deq[j], want)
				}
			}
		}
		for _, kern := range ggmlKernels() {
			func() {
				defer func(v Kernel) { active = v }(active)
				active = kern
				out := make([]float32, n*rows)
				pk.MatMul(out, rows, 0, rows, a, da, n)
				for i := range n {
					for r := range rows {
						want := DotIQ4_NL(w[r*nb*18:(r+1)*nb*18], a[i*cols:(i+1)*cols], da[i*nb:(i+1)*nb])
						if got := out[i*rows+r]; !sameFloat(got, want) {
							t.Fatalf("f16=%v %v act %d row %d: packed %v, DotIQ4_NL %v", f16, kern, i, r, got, want)
						}
					}
				}
			}()
		}
	}
}

// TestPackIQ4_NL: IQ4_NL matrices in the Q4_0 layout multiply to
// DotIQ4_NL's bits with every variant (the AVX-512 codebook kernels, gemv
// and gemm8 with a remainder, and the definition's loop of the others), for
// partial groups, tame and wild scales (subnormal, Inf, NaN, −0) and
// activations at ±127.
func TestPackIQ4_NL(t *testing.T) {
	r := rand.New(rand.NewSource(41))
	for _, c := range []struct{ rows, nb, n int }{{16, 1, 1}, {19, 7, 9}, {33, 3, 1}, {48, 5, 17}, {5, 2, 8}} {
		for _, wild := range []bool{false, true} {
			w := make([]byte, c.rows*c.nb*18)
			r.Read(w)
			for b := range c.rows * c.nb {
				h := F32ToF16(0.01 * float32(r.NormFloat64()))
				if wild && r.Intn(3) == 0 {
					h = []uint16{0x0001, 0x7c00, 0xfe00, 0x8000, uint16(r.Uint32())}[r.Intn(5)]
				}
				w[b*18], w[b*18+1] = byte(h), byte(h>>8)
			}
			x := make([]float32, c.n*c.nb*BlockSize)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			if c.n > 1 { // one block of ±127 activations
				for j := range BlockSize {
					x[j] = float32(1 - 2*(j&1))
				}
			}
			checkPackIQ4(t, w, c.rows, c.nb, c.n, x)
		}
	}
}

// FuzzPackIQ4_NL compares the packed IQ4_NL products of every variant with
// DotIQ4_NL on blocks made of the fuzzer's bytes.
func FuzzPackIQ4_NL(f *testing.F) {
	f.Add([]byte{0, 0x3c, 0xff}, int64(1), uint8(17), uint8(2), uint8(9))
	f.Fuzz(func(t *testing.T, data []byte, seed int64, rows8, nb8, n8 uint8) {
		rows, nb, n := int(rows8)%40+1, int(nb8)%5+1, int(n8)%12+1
		r := rand.New(rand.NewSource(seed))
		w := make([]byte, rows*nb*18)
		r.Read(w)
		for b := range rows * nb {
			h := F32ToF16(0.01 * float32(r.NormFloat64()))
			w[b*18], w[b*18+1] = byte(h), byte(h>>8)
		}
		copy(w, data)
		x := make([]float32, n*nb*BlockSize)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		checkPackIQ4(t, w, rows, nb, n, x)
	})
}
