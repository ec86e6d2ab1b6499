package asm

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestQuantizeQ8_0Blocks (from the mutants gremlins found alive): several blocks
// at once, expectations from the rule d = amax/127, q = round(x/d). Block b holds
// k·2^-b with max |k| = 127, so d = 2^-b and the quants are k; the last block's
// maximum is exactly the tiny-block limit 1e-30, which still quantizes (only
// amax below it gives d = 0).
func TestQuantizeQ8_0Blocks(t *testing.T) {
	const nb = 4
	x := make([]float32, nb*BlockSize)
	want := make([]int8, len(x))
	for b := 0; b < nb-1; b++ {
		for i := 0; i < BlockSize; i++ {
			k := (i*37+b*11)%255 - 127
			if i == 3 {
				k = 127 - 254*(b%2)
			}
			x[b*BlockSize+i] = float32(math.Ldexp(float64(k), -b))
			want[b*BlockSize+i] = int8(k)
		}
	}
	last := (nb - 1) * BlockSize
	x[last] = q8Tiny
	want[last] = 127
	q := make([]int8, len(x))
	d := make([]float32, nb)
	QuantizeQ8_0(x, q, d)
	for b := 0; b < nb; b++ {
		wd := float32(math.Ldexp(1, -b))
		if b == nb-1 {
			wd = q8Tiny / 127
		}
		if d[b] != wd {
			t.Errorf("block %d: d = %v, want %v", b, d[b], wd)
		}
		for i := b * BlockSize; i < (b+1)*BlockSize; i++ {
			if q[i] != want[i] {
				t.Fatalf("block %d element %d: q = %d, want %d", b, i%BlockSize, q[i], want[i])
			}
		}
	}
}

// TestKernelNames: every variant's String is the name KRAFLA_KERNEL takes, as
// documented (generic included: dispatch.go's `k >= 0` → `k > 0` named it
// "Kernel(0)"), ParseKernel inverts it, Description is the documented human
// name, and a value outside the list prints as Kernel(N).
func TestKernelNames(t *testing.T) {
	for _, tc := range []struct {
		k          Kernel
		name, desc string
	}{
		{Generic, "generic", "pure Go"}, {AVX2, "avx2", "AVX2"}, {AVX512, "avx512", "AVX-512 VNNI"},
		{NEON, "neon", "NEON"}, {DotProd, "dotprod", "NEON dotprod"}, {I8MM, "i8mm", "NEON I8MM"},
	} {
		if got := tc.k.String(); got != tc.name {
			t.Errorf("Kernel(%d).String() = %q, want %q", int(tc.k), got, tc.name)
		}
		if got := tc.k.Description(); got != tc.desc {
			t.Errorf("Kernel(%d).Description() = %q, want %q", int(tc.k), got, tc.desc)
		}
		if k, err := ParseKernel(tc.name); err != nil || k != tc.k {
			t.Errorf("ParseKernel(%q) = %d, %v; want %d", tc.name, int(k), err, int(tc.k))
		}
	}
	for _, k := range []Kernel{-1, lastKernel + 1, 17} {
		want := "Kernel(" + strconv.Itoa(int(k)) + ")"
		if got := k.String(); got != want {
			t.Errorf("String() of %d = %q, want %q", int(k), got, want)
		}
		if got := k.Description(); got != want {
			t.Errorf("Description() of %d = %q, want %q", int(k), got, want)
		}
		if Available(k) {
			t.Errorf("Available(%d) = true for a value outside the list", int(k))
		}
	}
	// AvailableKernels lists exactly the available variants, generic first, in
	// increasing order (its loop's bound `k <= lastKernel` → `<` drops I8MM,
	// which only an arm64 build on an I8MM CPU can see).
	var want []Kernel
	for k := Generic; k <= I8MM; k++ {
		if Available(k) {
			want = append(want, k)
		}
	}
	if got := AvailableKernels(); !slices.Equal(got, want) || got[0] != Generic {
		t.Errorf("AvailableKernels() = %v, want %v", got, want)
	}
}

// TestShapeChecks: the Q8_0/Q4_0 products accept inputs of exactly the sizes
// they document and refuse, with their own panic naming the function (not a
// runtime bounds fault, and before an assembly kernel could read past a
// slice), every input one element or block short (dot.go's checks, whose
// comparisons and products gremlins mutated). rows = 3, cols = 64 (2 blocks),
// n = 2 activation rows.
func TestShapeChecks(t *testing.T) {
	const rows, cols, n, nb = 3, 64, 2, 2
	mustPanic := func(what, name string, f func()) {
		t.Helper()
		defer func() {
			t.Helper()
			r := recover()
			if r == nil {
				t.Errorf("%s: no panic", what)
				return
			}
			if s, ok := r.(string); !ok || !strings.HasPrefix(s, "asm: "+name+":") {
				t.Errorf("%s: panic %v, want asm's own for %s", what, r, name)
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
	w8 := make([]int8, rows*cols)
	w4 := make([]byte, rows*cols/2)
	dw := make([]float32, rows*nb)
	a := make([]int8, n*cols)
	da := make([]float32, n*nb)
	out := make([]float32, (n-1)*rows+rows)
	for _, tc := range []struct {
		name string
		call func(w8 []int8, w4 []byte, dw []float32, a []int8, da []float32, out []float32, ldo, rows, n int)
		wlen int // 8: the int8 weights are used, 4: the nibbles
	}{
		{"DotQ8_0", func(w8 []int8, _ []byte, dw []float32, a []int8, da []float32, _ []float32, _, _, _ int) {
			DotQ8_0(w8, dw, a, da)
		}, 8},
		{"DotQ4_0", func(_ []int8, w4 []byte, dw []float32, a []int8, da []float32, _ []float32, _, _, _ int) {
			DotQ4_0(w4, dw, a, da)
		}, 4},
	} {
		// One row, one activation row.
		noPanic(tc.name+" exact", func() { tc.call(w8[:cols], w4[:cols/2], dw[:nb], a[:cols], da[:nb], nil, 0, 0, 0) })
		mustPanic(tc.name+" len(a) not a multiple of 32", tc.name, func() { tc.call(w8, w4, dw, a[:cols-1], da, nil, 0, 0, 0) })
		if tc.wlen == 8 {
			mustPanic(tc.name+" w short", tc.name, func() { tc.call(w8[:cols-1], w4, dw, a[:cols], da, nil, 0, 0, 0) })
		} else {
			mustPanic(tc.name+" w short", tc.name, func() { tc.call(w8, w4[:cols/2-1], dw, a[:cols], da, nil, 0, 0, 0) })
		}
		mustPanic(tc.name+" dw short", tc.name, func() { tc.call(w8, w4, dw[:nb-1], a[:cols], da, nil, 0, 0, 0) })
		mustPanic(tc.name+" da short", tc.name, func() { tc.call(w8, w4, dw, a[:cols], da[:nb-1], nil, 0, 0, 0) })
	}

	for _, q4 := range []bool{false, true} {
		name, wlen := "MatVecQ8_0", rows*cols
		mv := func(out []float32, wl int, dw []float32, a []int8, da []float32) {
			MatVecQ8_0(out, w8[:wl], dw, a, da)
		}
		if q4 {
			name, wlen = "MatVecQ4_0", rows*cols/2
			mv = func(out []float32, wl int, dw []float32, a []int8, da []float32) {
				MatVecQ4_0(out, w4[:wl], dw, a, da)
			}
		}
		noPanic(name+" exact", func() { mv(out[:rows], wlen, dw, a[:cols], da[:nb]) })
		mustPanic(name+" len(a) not a multiple of 32", name, func() { mv(out[:rows], wlen, dw, a[:cols+1], da) })
		mustPanic(name+" w short", name, func() { mv(out[:rows], wlen-1, dw, a[:cols], da) })
		mustPanic(name+" dw short", name, func() { mv(out[:rows], wlen, dw[:rows*nb-1], a[:cols], da) })
		mustPanic(name+" da short", name, func() { mv(out[:rows], wlen, dw, a[:cols], da[:nb-1]) })
		// No columns: the outputs are zero, whatever w holds (none).
		o := []float32{1, 2, 3}
		noPanic(name+" no columns", func() { mv(o, 0, nil, nil, nil) })
		if o[0] != 0 || o[1] != 0 || o[2] != 0 {
			t.Errorf("%s of no columns: out %v, want zeros", name, o)
		}

		name = "MatMulQ8_0"
		mm := func(out []float32, ldo int, wl int, dw []float32, rows int, a []int8, da []float32, n int) {
			MatMulQ8_0(out, ldo, w8[:wl], dw, rows, a, da, n)
		}
		if q4 {
			name = "MatMulQ4_0"
			mm = func(out []float32, ldo int, wl int, dw []float32, rows int, a []int8, da []float32, n int) {
				MatMulQ4_0(out, ldo, w4[:wl], dw, rows, a, da, n)
			}
		}
		noPanic(name+" exact", func() { mm(out, rows, wlen, dw, rows, a, da, n) })
		noPanic(name+" ldo > rows", func() { mm(make([]float32, rows+4+rows), rows+4, wlen, dw, rows, a, da, n) })
		mustPanic(name+" n < 0", name, func() { mm(out, rows, wlen, dw, rows, a, da, -1) })
		mustPanic(name+" rows < 0", name, func() { mm(out, rows, wlen, dw, -1, a, da, n) })
		mustPanic(name+" len(a) not n × cols", name, func() { mm(out, rows, wlen, dw, rows, a[:len(a)-1], da, n) })
		mustPanic(name+" cols not a multiple of 32", name, func() { mm(out, rows, wlen, dw, rows, a[:2*(cols-2)], da, n) })
		mustPanic(name+" ldo < rows", name, func() { mm(out, rows-1, wlen, dw, rows, a, da, n) })
		mustPanic(name+" out short", name, func() { mm(out[:len(out)-1], rows, wlen, dw, rows, a, da, n) })
		mustPanic(name+" w short", name, func() { mm(out, rows, wlen-1, dw, rows, a, da, n) })
		mustPanic(name+" dw short", name, func() { mm(out, rows, wlen, dw[:rows*nb-1], rows, a, da, n) })
		mustPanic(name+" da short", name, func() { mm(out, rows, wlen, dw, rows, a, da[:n*nb-1], n) })
		// n = 0 or rows = 0: nothing to do and nothing written.
		o = []float32{7}
		noPanic(name+" n = 0", func() { mm(o, 1, 0, nil, 1, nil, nil, 0) })
		noPanic(name+" rows = 0", func() { mm(o, 0, 0, nil, 0, a, da, n) })
		if o[0] != 7 {
			t.Errorf("%s with nothing to do wrote out: %v", name, o)
		}
		// No columns: each activation row's outputs are zero, the gap of ldo kept.
		o = []float32{1, 1, 9, 1, 1}
		noPanic(name+" no columns", func() { mm(o, 3, 0, nil, 2, make([]int8, 0), nil, 2) })
		if want := []float32{0, 0, 9, 0, 0}; !slices.Equal(o, want) {
			t.Errorf("%s of no columns: out %v, want %v", name, o, want)
		}
	}
}

// TestStridedEdges: AxpyF32Strided and AxpyF16Strided equal len(w) successive
// AxpyF32 calls (over the widened f16 values) at stride 0 (every weight on the
// same values) and with v exactly (len(w)−1)·stride + len(y) long; one value
// short or a negative stride is their own panic; no weights or no outputs do
// nothing (float.go and f16.go's checks, whose comparisons gremlins mutated).
func TestStridedEdges(t *testing.T) {
	const m = 5
	w := []float32{0.5, -1.25, 3}
	for _, stride := range []int{0, 7} {
		nv := (len(w)-1)*stride + m
		v := make([]float32, nv)
		v16 := make([]uint16, nv)
		for i := range v {
			v[i] = float32(i%9) - 3.5 // exact in f16
			v16[i] = F32ToF16(v[i])
		}
		want := []float32{1, 2, 3, 4, 5}
		for j, a := range w {
			AxpyF32(want, a, v[j*stride:j*stride+m])
		}
		y := []float32{1, 2, 3, 4, 5}
		AxpyF32Strided(y, w, v, stride)
		if !slices.Equal(y, want) {
			t.Errorf("AxpyF32Strided stride %d: %v, want %v", stride, y, want)
		}
		y = []float32{1, 2, 3, 4, 5}
		AxpyF16Strided(y, w, v16, stride)
		if !slices.Equal(y, want) {
			t.Errorf("AxpyF16Strided stride %d: %v, want %v", stride, y, want)
		}
	}
	panics := func(name string, f func()) {
		t.Helper()
		defer func() {
			t.Helper()
			if r, ok := recover().(string); !ok || !strings.HasPrefix(r, "asm: "+name+":") {
				t.Errorf("%s: panic %q, want asm's own", name, r)
			}
		}()
		f()
	}
	y := make([]float32, m)
	short := (len(w)-1)*7 + m - 1
	panics("AxpyF32Strided", func() { AxpyF32Strided(y, w, make([]float32, short), 7) })
	panics("AxpyF16Strided", func() { AxpyF16Strided(y, w, make([]uint16, short), 7) })
	panics("AxpyF32Strided", func() { AxpyF32Strided(y, w, make([]float32, 100), -1) })
	panics("AxpyF16Strided", func() { AxpyF16Strided(y, w, make([]uint16, 100), -1) })
	y = []float32{1, 2}
	AxpyF32Strided(y, nil, nil, 3)
	AxpyF16Strided(y, nil, nil, 3)
	AxpyF32Strided(nil, w, nil, 3)
	AxpyF16Strided(nil, w, nil, 3)
	if y[0] != 1 || y[1] != 2 {
		t.Errorf("no weights changed y: %v", y)
	}
}
