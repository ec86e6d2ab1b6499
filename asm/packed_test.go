package asm

import (
	"math/rand/v2"
	"testing"
)

// TestPacked checks the packed layout against the plain one: Dequant gives
// float32(q)·d of the plain row, MatMul over a group-aligned range of rows
// gives the plain MatMul's outputs of those rows in every variant, and a
// range that splits a group panics.
func TestPacked(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	const rows, nb, n = 37, 3, 5 // two full groups and a partial one
	cols := nb * 32
	p := genProblem(rng, nb, rows, n, false, "normal", "normal")
	want8, want4 := p.want()
	for _, q4 := range []bool{false, true} {
		var pk Packed
		buf := make([]byte, PackedSize(q4, rows, cols))
		if q4 {
			pk = PackQ4_0(buf, p.w4, p.dw, rows, cols)
		} else {
			pk = PackQ8_0(buf, p.w8, p.dw, rows, cols)
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
