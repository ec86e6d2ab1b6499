package asm

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// q5Value decodes element e of a Q5_0 block (22 bytes) as ggml does:
// n + 16·h − 16, n the low (e < 16) or high nibble of qs[e%16], h bit e of qh.
func q5Value(blk []byte, e int) int {
	v := blk[6+e%16]
	if e >= 16 {
		v >>= 4
	}
	h := binary.LittleEndian.Uint32(blk[2:]) >> uint(e) & 1
	return int(v&15) + 16*int(h) - 16
}

// checkPackQ5 packs the rows × nb Q5_0 blocks w (binary16 scales when they
// fit, and float32 ones) and compares, for every variant, the packed
// products of the n activation rows a, da, over all rows and from the second
// group on, with those of the Q8_0 layout of Q5_0AsQ8_0's weights (today's
// path; bit for bit, NaN payloads included), with packedQ5Ref and, when dot
// (activations as QuantizeQ8_0 writes them), with DotQ5_0 of each row;
// Dequant with the blocks decoded here; and the Q8_0 form of the layout
// (q5ToQ8) with PackQ8_0's bytes.
func checkPackQ5(t *testing.T, w []byte, rows, nb, n int, a []int8, da []float32, dot bool) {
	t.Helper()
	cols := nb * BlockSize
	q, d := make([]int8, rows*cols), make([]float32, rows*nb)
	Q5_0AsQ8_0(w, q, d)
	for _, f16 := range []bool{true, false} {
		if f16 && !ScalesFitF16(d) {
			continue
		}
		pk := PackQ5_0(make([]byte, PackedQ5Size(f16, rows, cols)), w, rows, cols, f16)
		if !pk.Q5() || pk.Q4() || pk.IQ4() || pk.F16() != f16 || pk.Rows() != rows || pk.Cols() != cols || pk.Bytes() != PackedQ5Size(f16, rows, cols) {
			t.Fatalf("PackQ5_0: Q5 %v Q4 %v F16 %v, %d×%d, %d bytes", pk.Q5(), pk.Q4(), pk.F16(), pk.Rows(), pk.Cols(), pk.Bytes())
		}
		p8 := PackQ8_0(make([]byte, PackedSize(false, f16, rows, cols)), q, d, rows, cols, f16)
		ngroups := (rows + GroupRows - 1) / GroupRows
		exp := make([]byte, PackedSize(false, f16, rows, cols))
		q5ToQ8(exp, pk.data, ngroups, nb, f16)
		if !bytes.Equal(exp, p8.data) {
			t.Fatalf("f16=%v: q5ToQ8 differs from PackQ8_0 of Q5_0AsQ8_0", f16)
		}
		deq := make([]float32, cols)
		for r := range rows {
			pk.Dequant(r, deq)
			for j := range cols {
				blk := w[(r*nb+j/32)*22:]
				if want := float32(q5Value(blk, j%32)) * f16le(blk); !sameFloat(deq[j], want) {
					t.Fatalf("f16=%v Dequant row %d col %d: %v, want %v", f16, r, j, deq[j], want)
				}
			}
		}
		ref := make([]float32, n*rows)
		packedQ5Ref(ref, rows, pk.data, rows, f16, a, da, n, nb)
		for i := range n {
			for r := range rows {
				blk := w[r*nb*22 : (r+1)*nb*22]
				var want float32 // the definition, on the file's blocks
				for b := range nb {
					var s int32
					for e := range 32 {
						s += int32(q5Value(blk[b*22:], e)) * int32(a[i*cols+b*32+e])
					}
					want = blockStep(want, s, f16le(blk[b*22:]), da[i*nb+b])
				}
				if got := ref[i*rows+r]; !sameFloat(got, want) {
					t.Fatalf("f16=%v packedQ5Ref act %d row %d: %v, want %v", f16, i, r, got, want)
				}
				if dot {
					if want := DotQ5_0(blk, a[i*cols:(i+1)*cols], da[i*nb:(i+1)*nb]); !sameFloat(ref[i*rows+r], want) {
						t.Fatalf("f16=%v packedQ5Ref act %d row %d: %v, DotQ5_0 %v", f16, i, r, ref[i*rows+r], want)
					}
				}
			}
		}
		for _, kern := range AvailableKernels() {
			withKernel(kern, func() {
				for _, lo := range []int{0, GroupRows} {
					if lo >= rows {
						continue
					}
					m := rows - lo
					got, want := make([]float32, n*m), make([]float32, n*m)
					pk.MatMul(got, m, lo, rows, a, da, n)
					p8.MatMul(want, m, lo, rows, a, da, n)
					for i := range n {
						for r := range m {
							g, w8 := got[i*m+r], want[i*m+r]
							if math.Float32bits(g) != math.Float32bits(w8) {
								t.Fatalf("f16=%v %v rows %d.. act %d row %d: packed Q5_0 %v (%#x), Q8_0 form %v (%#x)", f16, kern, lo, i, lo+r, g, math.Float32bits(g), w8, math.Float32bits(w8))
							}
							if !sameFloat(g, ref[i*rows+lo+r]) {
								t.Fatalf("f16=%v %v rows %d.. act %d row %d: %v, packedQ5Ref %v", f16, kern, lo, i, lo+r, g, ref[i*rows+lo+r])
							}
						}
					}
				}
			})
		}
	}
}

// q5Blocks returns rows·nb random Q5_0 blocks with tame scales, or (wild)
// a third of them special: subnormal, ±Inf, NaNs, −0, the largest.
func q5Blocks(r *rand.Rand, rows, nb int, wild bool) []byte {
	w := make([]byte, rows*nb*22)
	r.Read(w)
	for b := range rows * nb {
		h := F32ToF16(0.01 * float32(r.NormFloat64()))
		if wild && r.Intn(3) == 0 {
			h = []uint16{0x0001, 0x83ff, 0x7c00, 0xfc00, 0x7e00, 0xfe01, 0x8000, 0x7bff, uint16(r.Uint32())}[r.Intn(9)]
		}
		w[b*22], w[b*22+1] = byte(h), byte(h>>8)
	}
	return w
}

// q5Acts quantizes n rows of random activations (QuantizeQ8_0), the first
// block of the first row ±127 when n > 1 (ones of alternating sign).
func q5Acts(r *rand.Rand, n, nb int) ([]int8, []float32) {
	x := make([]float32, n*nb*BlockSize)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	if n > 1 {
		for j := range BlockSize {
			x[j] = float32(1 - 2*(j&1))
		}
	}
	a, da := make([]int8, len(x)), make([]float32, n*nb)
	QuantizeQ8_0(x, a, da)
	return a, da
}

// TestPackQ5_0: Q5_0 matrices in the packed Q5_0 layout multiply to the
// bits of their Q8_0 form (and DotQ5_0's) with every variant (the AVX-512
// Q5_0 kernels, gemv and gemm8 with a remainder, the AVX2 ones, gemv and
// gemm4 with a remainder, and the Q8_0 form of the others), for partial groups and from the second group on, tame and wild
// scales, with the extreme values −16 and 15 against activations ±127, and
// activations uniform over −127..127 (not −128, which QuantizeQ8_0 never
// writes and the AVX2 Q8_0 kernels do not take).
func TestPackQ5_0(t *testing.T) {
	r := rand.New(rand.NewSource(51))
	for _, c := range []struct{ rows, nb, n int }{{16, 1, 1}, {19, 7, 9}, {33, 3, 1}, {48, 5, 17}, {5, 2, 8}, {37, 18, 3}} {
		for _, wild := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d×%d,n=%d,wild=%v", c.rows, c.nb, c.n, wild), func(t *testing.T) {
				w := q5Blocks(r, c.rows, c.nb, wild)
				// Row 0's first block all 15, row 1's (or row 0's second) all −16.
				for j := 2; j < 22; j++ {
					w[j] = 0xff
				}
				o := 22 * c.nb
				if c.rows == 1 {
					o = 22
				}
				if o < len(w) {
					clear(w[o+2 : o+22])
				}
				a, da := q5Acts(r, c.n, c.nb)
				checkPackQ5(t, w, c.rows, c.nb, c.n, a, da, true)
				for i := range a { // uniform over what QuantizeQ8_0 writes
					a[i] = int8(r.Intn(255) - 127)
				}
				a[0], a[1] = -127, 127
				checkPackQ5(t, w, c.rows, c.nb, c.n, a, da, true)
			})
		}
	}
}

// TestPackQ5_0Size: 5.5 bits a weight with binary16 scales (6 with float32
// ones, the Q4_0 layout's 4.5 and 5 plus the fifth bit), against the Q8_0
// layout's 8.5, for the 135M model's shapes.
func TestPackQ5_0Size(t *testing.T) {
	for _, s := range [][2]int{{1536, 576}, {576, 1536}, {16, 64}} {
		w := s[0] * s[1]
		if got := PackedQ5Size(true, s[0], s[1]); got*16 != w*11 {
			t.Errorf("%v f16: %d bytes, want 5.5 bits × %d = %d", s, got, w, w*11/16)
		}
		if got := PackedQ5Size(false, s[0], s[1]); got*8 != w*6 {
			t.Errorf("%v f32: %d bytes, want 6 bits × %d = %d", s, got, w, w*6/8)
		}
		if got, q8 := PackedQ5Size(true, s[0], s[1]), PackedSize(false, true, s[0], s[1]); got*17 != q8*11 {
			t.Errorf("%v: %d bytes against the Q8_0 layout's %d, want 11/17", s, got, q8)
		}
	}
	// One block: its 32 bytes of binary16 scales padded to 64.
	if PackedQ5Size(true, 5, 0) != 0 || PackedQ5Size(true, 17, 32) != 2*(64+320) {
		t.Errorf("PackedQ5Size: %d for 5×0, %d for 17×32 (two groups of one block)", PackedQ5Size(true, 5, 0), PackedQ5Size(true, 17, 32))
	}
}

// TestPackQ5_0Panics: PackQ5_0 and MatMul reject what does not fit.
func TestPackQ5_0Panics(t *testing.T) {
	w := make([]byte, 16*2*22)
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"cols", func() { PackQ5_0(make([]byte, 1<<14), w, 16, 48, false) }},
		{"short w", func() { PackQ5_0(make([]byte, 1<<14), w[:len(w)-1], 16, 64, false) }},
		{"short dst", func() { PackQ5_0(make([]byte, PackedQ5Size(false, 16, 64)-1), w, 16, 64, false) }},
		{"split group", func() {
			pk := PackQ5_0(make([]byte, PackedQ5Size(false, 16, 64)), w, 16, 64, false)
			pk.MatMul(make([]float32, 16), 16, 8, 16, make([]int8, 64), make([]float32, 2), 1)
		}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", c.name)
				}
			}()
			c.f()
		}()
	}
}

// FuzzPackQ5_0 compares the packed Q5_0 products of every variant with
// the Q8_0 form's and DotQ5_0 on blocks made of the fuzzer's bytes.
func FuzzPackQ5_0(f *testing.F) {
	f.Add([]byte{0, 0x3c, 0xff, 0xff, 0xff, 0xff, 0x0f}, int64(1), uint8(17), uint8(2), uint8(9))
	f.Add([]byte{0x00, 0x7c, 0, 0, 0, 0x80}, int64(2), uint8(33), uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, seed int64, rows8, nb8, n8 uint8) {
		rows, nb, n := int(rows8)%40+1, int(nb8)%5+1, int(n8)%12+1
		r := rand.New(rand.NewSource(seed))
		w := q5Blocks(r, rows, nb, false)
		copy(w, data)
		a, da := q5Acts(r, n, nb)
		checkPackQ5(t, w, rows, nb, n, a, da, true)
	})
}

// BenchmarkPackedQ5_0 times a Q5_0 matrix's product in the packed Q5_0
// layout against its Q8_0 form (Q5_0AsQ8_0, today's path) with the active
// variant, binary16 scales (what the runtime has for a Q5_0 file), for the
// 135M model's FFN shapes, gemv (n = 1) and 64 activation rows. cpuns/op is
// the thread's CPU time per product (the machine is shared).
func BenchmarkPackedQ5_0(b *testing.B) {
	for _, s := range [][2]int{{1536, 576}, {576, 1536}} {
		rows, cols := s[0], s[1]
		r := rand.New(rand.NewSource(3))
		w := q5Blocks(r, rows, cols/32, false)
		q, d := make([]int8, rows*cols), make([]float32, rows*cols/32)
		Q5_0AsQ8_0(w, q, d)
		p5 := PackQ5_0(make([]byte, PackedQ5Size(true, rows, cols)), w, rows, cols, true)
		p8 := PackQ8_0(make([]byte, PackedSize(false, true, rows, cols)), q, d, rows, cols, true)
		for _, n := range []int{1, 64} {
			a, da := q5Acts(r, n, cols/32)
			out := make([]float32, n*rows)
			for _, c := range []struct {
				name string
				p    *Packed
			}{{"Q8_0-via", &p8}, {"Q5_0", &p5}} {
				b.Run(fmt.Sprintf("%dx%d/n=%d/%s", rows, cols, n, c.name), func(b *testing.B) {
					b.SetBytes(int64(c.p.Bytes()))
					clk := startCPU()
					for b.Loop() {
						c.p.MatMul(out, rows, 0, rows, a, da, n)
					}
					ns := float64((threadCPU() - clk.t0).Nanoseconds())
					clk.report(b, float64(c.p.Bytes()), 0)
					b.ReportMetric(ns/float64(b.N), "cpuns/op")
				})
			}
		}
	}
}
