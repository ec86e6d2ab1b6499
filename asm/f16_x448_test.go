package asm

import (
	"math"
	"testing"

	"github.com/x448/float16"
)

// TestF16MatchesX448 checks F32ToF16 against an independent implementation,
// github.com/x448/float16 (round to nearest even, overflow to infinity), on
// every 257th float32 bit pattern and the edges of the binary16 range; NaNs
// are left to TestF16Table (x448 keeps a payload that F32ToF16 quiets). The
// sweep of TestF16Sweep compares the kernels with F32ToF16 itself, and
// TestF16Nearest stops below 65520, so without this test F32ToF16's overflow
// rule could change unseen.
func TestF16MatchesX448(t *testing.T) {
	check := func(u uint32) {
		x := math.Float32frombits(u)
		if x != x {
			return
		}
		if got, want := F32ToF16(x), uint16(float16.Fromfloat32(x)); got != want {
			t.Fatalf("F32ToF16(%v = %#08x) = %#04x, x448/float16 gives %#04x", x, u, got, want)
		}
	}
	for u := uint64(0); u < 1<<32; u += 257 {
		check(uint32(u))
	}
	for _, x := range []float32{65504, 65519.996, 65520, 65536, 100000, 131071, 131072, 1e38, math.MaxFloat32,
		6.1035156e-05, 6.097555e-05, 5.9604645e-08, 2.9802322e-08, 2.9802326e-08} {
		check(math.Float32bits(x))
		check(math.Float32bits(-x))
	}
	if got := F32ToF16(100000); got != 0x7c00 {
		t.Fatalf("F32ToF16(100000) = %#04x, want +Inf 0x7c00", got)
	}
}
