package asm

import (
	"math"
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
