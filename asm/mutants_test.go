package asm

import (
	"math"
	"strconv"
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
}
