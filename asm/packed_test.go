package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestPacked checks the packed layout, with float32 and with binary16
// scales, against the plain one: Dequant gives float32(q)·d of the plain row,
// MatMul over a group-aligned range of rows gives the plain MatMul's outputs
// of those rows in every variant, and a range that splits a group panics.
func TestPacked(t *testing.T) {
	for _, f16 := range []bool{false, true} {
		sk := "normal"
		if f16 {
			sk = "f16special"
		}
		t.Run(fmt.Sprintf("f16=%v", f16), func(t *testing.T) { testPacked(t, sk, f16) })
	}
}

func testPacked(t *testing.T, sk string, f16 bool) {
	rng := rand.New(rand.NewPCG(41, 42))
	const rows, nb, n = 37, 3, 5 // two full groups and a partial one
	cols := nb * 32
	p := genProblem(rng, nb, rows, n, false, sk, "normal")
	want8, want4 := p.want()
	for _, q4 := range []bool{false, true} {
		buf := make([]byte, PackedSize(q4, f16, rows, cols))
		pk := pack(buf, q4, f16, p.w8, p.w4, p.dw, rows, cols)
		if pk.F16() != f16 || pk.Bytes() != len(buf) {
			t.Fatalf("q4=%v f16=%v: F16() %v, Bytes() %d of %d", q4, f16, pk.F16(), pk.Bytes(), len(buf))
		}
		x := make([]float32, cols)
		for r := range rows {
			pk.Dequant(r, x)
			for j, v := range x {
				b := j / 32
				var q int
				if q4 {
					byt := p.w4[(r*nb+b)*16+j%16]
					if j%32 < 16 {
						q = int(byt&15) - 8
					} else {
						q = int(byt>>4) - 8
					}
				} else {
					q = int(p.w8[r*cols+j])
				}
				if want := float32(q) * p.dw[r*nb+b]; !sameFloat(v, want) {
					t.Fatalf("q4=%v Dequant row %d [%d] = %v, want %v", q4, r, j, v, want)
				}
			}
		}
		want := want8
		if q4 {
			want = want4
		}
		for _, k := range AvailableKernels() {
			withKernel(k, func() {
				for _, rg := range [][2]int{{0, 37}, {16, 37}, {16, 32}, {32, 37}, {0, 16}} {
					lo, hi := rg[0], rg[1]
					out := make([]float32, n*(hi-lo))
					pk.MatMul(out, hi-lo, lo, hi, p.a, p.da, n)
					for i := range n {
						for r := lo; r < hi; r++ {
							if got := out[i*(hi-lo)+r-lo]; !sameFloat(got, want[i*rows+r]) {
								t.Fatalf("%s q4=%v rows %d..%d: act %d row %d = %v, want %v", k, q4, lo, hi, i, r, got, want[i*rows+r])
							}
						}
					}
				}
			})
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("q4=%v MatMul over rows 5..37: no panic", q4)
				}
			}()
			pk.MatMul(make([]float32, n*32), 32, 5, 37, p.a, p.da, n)
		}()
	}
}

// TestPackedF16MatchesF32 checks that a matrix packed with binary16 scales
// gives bit for bit the products and dequantized rows of the same matrix
// packed with float32 scales, in every variant, 1 to 17 activation rows
// (gemv, gemm and the rows left over), scales of every binary16 kind, and
// that its layout is smaller by 2 bytes a scale (less the padding of each
// group's scales to 64 bytes).
func TestPackedF16MatchesF32(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	for _, rows := range []int{1, 16, 40} {
		for _, nb := range []int{1, 5, 16} {
			cols := nb * 32
			p := genProblem(rng, nb, rows, 17, false, "f16special", "mixed")
			if !ScalesFitF16(p.dw) {
				t.Fatal("f16special scales do not fit binary16")
			}
			for _, q4 := range []bool{false, true} {
				b32 := make([]byte, PackedSize(q4, false, rows, cols))
				b16 := make([]byte, PackedSize(q4, true, rows, cols))
				p32 := pack(b32, q4, false, p.w8, p.w4, p.dw, rows, cols)
				p16 := pack(b16, q4, true, p.w8, p.w4, p.dw, rows, cols)
				// Per group: 64 bytes of scales a block against 32, padded to 64.
				groups := (rows + GroupRows - 1) / GroupRows
				if d, want := len(b32)-len(b16), groups*(64*nb-(32*nb+63)/64*64); d != want {
					t.Fatalf("rows=%d nb=%d q4=%v: f16 layout %d bytes smaller, want %d", rows, nb, q4, d, want)
				}
				x32, x16 := make([]float32, cols), make([]float32, cols)
				for r := range rows {
					p32.Dequant(r, x32)
					p16.Dequant(r, x16)
					if !slices.EqualFunc(x32, x16, bitsEqual) {
						t.Fatalf("rows=%d nb=%d q4=%v: Dequant row %d differs", rows, nb, q4, r)
					}
				}
				for _, k := range AvailableKernels() {
					withKernel(k, func() {
						for _, n := range []int{1, 2, 4, 8, 9, 17} {
							o32, o16 := make([]float32, n*rows), make([]float32, n*rows)
							p32.MatMul(o32, rows, 0, rows, p.a, p.da, n)
							p16.MatMul(o16, rows, 0, rows, p.a, p.da, n)
							if !slices.EqualFunc(o32, o16, bitsEqual) {
								t.Fatalf("%s rows=%d nb=%d q4=%v n=%d: f16 and f32 layouts' products differ", k, rows, nb, q4, n)
							}
						}
					})
				}
			}
		}
	}
}

// bitsEqual compares float32 bits, NaN payloads included.
func bitsEqual(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }

// TestPackF16Refuses: the binary16 layout refuses a scale it cannot hold
// exactly (here 0.1, which no binary16 value widens to).
func TestPackF16Refuses(t *testing.T) {
	dw := []float32{F16ToF32(0x3c00), 0.1}
	for _, q4 := range []bool{false, true} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "not a binary16 value") {
					t.Errorf("q4=%v: recovered %v, want a panic naming the scale that is not a binary16 value", q4, r)
				}
			}()
			dst := make([]byte, PackedSize(q4, true, 1, 64))
			if q4 {
				PackQ4_0(dst, make([]byte, 32), dw, 1, 64, true)
			} else {
				PackQ8_0(dst, make([]int8, 64), dw, 1, 64, true)
			}
		}()
	}
}
