package mlb

import (
	"math"
	"testing"
)

// TestSizeArithmetic (from the mutants gremlins found alive): the overflow
// checks of the layout's size arithmetic, at their edges. With SPEC.md's
// limits no header reaches them, so only a direct test sees them. A size is
// valid from 0 to 2^62; negative operands are refused.
func TestSizeArithmetic(t *testing.T) {
	const lim = int64(1) << 62
	for _, c := range []struct {
		a, b int64
		want int64
		ok   bool
	}{
		{0, 5, 0, true}, {5, 0, 0, true}, {3, 7, 21, true},
		{1 << 31, 1 << 31, lim, true}, // exactly the limit
		{lim + 1, 1, 0, false}, {3, 1 << 61, 0, false},
		{1 << 40, 1 << 40, 0, false}, // 2^80: the high word is set
		{-1, 0, 0, false}, {0, -1, 0, false}, {-2, -3, 0, false},
	} {
		got, ok := mul64(c.a, c.b)
		if got != c.want || ok != c.ok {
			t.Errorf("mul64(%d, %d) got %d, %v, want %d, %v", c.a, c.b, got, ok, c.want, c.ok)
		}
	}
	for _, c := range []struct {
		a, b int64
		want int64
		ok   bool
	}{
		{0, 1, 1, true}, {1, 0, 1, true}, {5, 0, 5, true}, {0, 0, 0, true}, {2, 3, 5, true},
		{lim, 0, lim, true}, {lim - 1, 1, lim, true}, {0, lim, lim, true},
		{lim, 1, 0, false}, {1, lim, 0, false},
		{math.MaxInt64, math.MaxInt64, 0, false}, // wraps below a
		{-1, 1, 0, false}, {1, -1, 0, false}, {-1, -1, 0, false},
	} {
		got, ok := add64(c.a, c.b)
		if (ok && got != c.want) || ok != c.ok {
			t.Errorf("add64(%d, %d) got %d, %v, want %d, %v", c.a, c.b, got, ok, c.want, c.ok)
		}
	}
	for _, c := range []struct{ n, want int64 }{{0, 0}, {1, 64}, {63, 64}, {64, 64}, {65, 128}, {256, 256}, {257, 320}} {
		if got, ok := alignUp(c.n); got != c.want || !ok {
			t.Errorf("alignUp(%d) got %d, %v, want %d, true", c.n, got, ok, c.want)
		}
	}
}
