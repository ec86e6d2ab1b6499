package asm

import (
	"math/rand"
	"slices"
	"testing"
)

// TestDotsShapeEdges (from the mutants gremlins found alive in dots_ggml.go):
// the row-times-batch products (Dots…) and the whole-matrix products
// (DotsRows…) accept inputs of exactly the sizes they document, with the
// freedoms they document (n = 0 needs no out, one activation row needs no
// ldo ≥ rows (ldo ≥ 1 still), ldo = rows packs the outputs), and refuse every input one
// element short with their own panic, not a runtime bounds fault or the
// other function's message. A row of no superblocks is an empty product: its
// outputs are 0, as DotQ4_K of an empty row is (the chunk loops left them as
// they were).
func TestDotsShapeEdges(t *testing.T) {
	const (
		rowsMsg  = "asm: ggml rows products: lengths"
		dotsMsg  = "asm: ggml row products: lengths"
		nb, rows = 2, 3
	)
	mustPanic := func(what, want string, f func()) {
		t.Helper()
		defer func() {
			t.Helper()
			if r := recover(); r == nil {
				t.Errorf("%s: no panic, want %q", what, want)
			} else if s, ok := r.(string); !ok || s != want {
				t.Errorf("%s: panic %v, want %q", what, r, want)
			}
		}()
		f()
	}
	noPanic := func(what string, f func()) {
		t.Helper()
		defer func() {
			t.Helper()
			if r := recover(); r != nil {
				t.Errorf("%s: panic %v", what, r)
			}
		}()
		f()
	}
	for ki, k := range dotsKinds {
		for _, kern := range ggmlKernels() {
			// a stream per kind and variant: the draws do not depend on
			// which variants this build has (under purego only Generic)
			r := rand.New(rand.NewSource(41 + 16*int64(ki) + int64(kern)))
			name := k.name + " " + kern.String()
			dots := func(out []float32, ldo int, w []byte, a []int8, da []float32, bs []int16, n int) {
				k.dots(kern, out, ldo, w, a, da, bs, n)
			}
			rowsOf := func(out []float32, ldo int, w []byte, rows int, a []int8, da []float32, bs []int16, n int) {
				dotsRows(kern, k.bb, out, ldo, w, rows, a, da, bs, n)
			}
			w := dotsWeights(r, k, rows*nb, false)
			w1 := w[:nb*k.bb]
			d := DotQ4_K
			switch k.name {
			case "Q5_K":
				d = DotQ5_K
			case "Q6_K":
				d = DotQ6_K
			case "IQ4_XS":
				d = DotIQ4_XS
			}
			// activations whose products with w1 are not 0 (dotsActs draws
			// zero superblocks), so that an output left 0 is seen
			dot := func(a []int8, da []float32, bs []int16, i int) float32 {
				return d(w1, a[i*nb*QK:(i+1)*nb*QK], da[i*nb:(i+1)*nb], bs[i*nb*16:(i+1)*nb*16])
			}
			a, da, bs := dotsActs(r, 2, nb)
			for try := 0; dot(a, da, bs, 0) == 0 || dot(a, da, bs, 1) == 0; try++ {
				if try == 100 {
					t.Fatalf("%s: no activations with nonzero products in 100 draws", name)
				}
				a, da, bs = dotsActs(r, 2, nb)
			}
			a1, da1, bs1 := a[:nb*QK], da[:nb], bs[:nb*16]

			// Dots…: n = 0 is nothing to do, whatever out and ldo are.
			noPanic(name+" Dots n = 0", func() { dots(nil, 0, w1, nil, nil, nil, 0) })
			// Two activation rows, ldo 3: out of exactly 4 is enough, 3 is short.
			want := make([]float32, 4)
			dots(want, 3, w1, a, da, bs, 2)
			for i := range 2 {
				if g, e := want[3*i], dot(a, da, bs, i); !sameFloat(g, e) || g == 0 {
					t.Fatalf("%s Dots row %d: %v, Dot %v (nonzero)", name, i, g, e)
				}
			}
			mustPanic(name+" Dots out short", dotsMsg, func() { dots(make([]float32, 3), 3, w1, a, da, bs, 2) })
			mustPanic(name+" Dots ldo 0", dotsMsg, func() { dots(make([]float32, 4), 0, w1, a, da, bs, 2) })
			mustPanic(name+" Dots n < 0", dotsMsg, func() { dots(make([]float32, 4), 3, w1, nil, nil, nil, -1) })
			// No superblocks: every output 0, the gaps of ldo kept.
			o := []float32{5, 9, 5}
			noPanic(name+" Dots no superblocks", func() { dots(o, 2, nil, nil, nil, nil, 2) })
			if !slices.Equal(o, []float32{0, 9, 0}) {
				t.Errorf("%s Dots of no superblocks: out %v, want [0 9 0]", name, o)
			}

			// DotsRows…: reference, the single-row products row by row.
			rb := nb * k.bb
			ref := func(ldo, n int) []float32 {
				out := make([]float32, (n-1)*ldo+rows)
				for row := range rows {
					k.dots(Generic, out[row:], ldo, w[row*rb:(row+1)*rb], a[:n*nb*QK], da[:n*nb], bs[:n*nb*16], n)
				}
				return out
			}
			// ldo = rows with two activation rows: packed, out exactly 2·rows.
			got := make([]float32, 2*rows)
			noPanic(name+" DotsRows ldo = rows", func() { rowsOf(got, rows, w, rows, a, da, bs, 2) })
			if e := ref(rows, 2); !slices.EqualFunc(got, e, sameFloat) {
				t.Errorf("%s DotsRows ldo = rows: %v, want %v", name, got, e)
			}
			// One activation row: ldo may be below rows (not below 1, which
			// the single-row products refuse).
			got = make([]float32, rows)
			noPanic(name+" DotsRows n = 1, ldo 1", func() { rowsOf(got, 1, w, rows, a1, da1, bs1, 1) })
			if e := ref(1, 1); !slices.EqualFunc(got, e, sameFloat) {
				t.Errorf("%s DotsRows n = 1: %v, want %v", name, got, e)
			}
			noPanic(name+" DotsRows n = 0", func() { rowsOf(nil, 0, w, rows, nil, nil, nil, 0) })
			mustPanic(name+" DotsRows rows = 0", rowsMsg, func() { rowsOf(got, rows, w, 0, a, da, bs, 2) })
			mustPanic(name+" DotsRows rows < 0", rowsMsg, func() { rowsOf(got, rows, w, -1, a, da, bs, 2) })
			mustPanic(name+" DotsRows ldo < rows", rowsMsg, func() { rowsOf(make([]float32, 3*rows), rows-1, w, rows, a, da, bs, 2) })
			mustPanic(name+" DotsRows out short", rowsMsg, func() { rowsOf(make([]float32, 2*rows-1), rows, w, rows, a, da, bs, 2) })
			mustPanic(name+" DotsRows w not rows of whole rows", rowsMsg, func() { rowsOf(got, rows, w[:len(w)-1], rows, a, da, bs, 2) })
			// bb rows of one byte each: len(w)·rows is a multiple of bb, a
			// row's length is not.
			mustPanic(name+" DotsRows rows of one byte", rowsMsg, func() {
				rowsOf(make([]float32, k.bb*2), k.bb, make([]byte, k.bb), k.bb, a, da, bs, 2)
			})
			// No superblocks: every row's outputs 0, the gaps of ldo kept.
			o = []float32{5, 5, 9, 5, 5}
			noPanic(name+" DotsRows no superblocks", func() { rowsOf(o, 3, nil, 2, nil, nil, nil, 2) })
			if !slices.Equal(o, []float32{0, 0, 9, 0, 0}) {
				t.Errorf("%s DotsRows of no superblocks: out %v, want [0 0 9 0 0]", name, o)
			}
		}
	}
}
