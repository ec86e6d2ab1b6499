package infer

import "testing"

// TestRoundUp13: roundUp is the next multiple of a at or above n (the
// packed matrices' offsets in the huge-page buffer): exact multiples stay,
// anything above one goes to the next.
func TestRoundUp13(t *testing.T) {
	for _, c := range []struct{ n, a, want int }{
		{0, 64, 0}, {1, 64, 64}, {63, 64, 64}, {64, 64, 64}, {65, 64, 128},
		{4096, 4096, 4096}, {4097, 4096, 8192}, {5, 1, 5}, {0, 1, 0},
	} {
		if got := roundUp(c.n, c.a); got != c.want {
			t.Errorf("roundUp(%d, %d) = %d, want %d", c.n, c.a, got, c.want)
		}
	}
}
