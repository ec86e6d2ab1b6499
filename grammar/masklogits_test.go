package grammar

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMaskLogits: MaskLogits gives what the token-by-token rule gives (a
// token is kept when its mask bit is set and it is below n), for masks of
// every kind of word (none, all, some allowed) and n and logits lengths on
// and off word boundaries.
func TestMaskLogits(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, sz := range [][2]int{{0, 0}, {1, 1}, {64, 64}, {200, 130}, {200, 200}, {300, 256}, {201088, 200019}, {70, 100}} {
		nl, n := sz[0], sz[1]
		for range 20 {
			mask := make([]uint64, (n+63)/64)
			for w := range mask {
				switch r.IntN(4) {
				case 0:
				case 1:
					mask[w] = ^uint64(0)
				default:
					mask[w] = r.Uint64()
				}
			}
			got := make([]float32, nl)
			for i := range got {
				got[i] = float32(i)
			}
			MaskLogits(got, mask, n)
			for i, x := range got {
				keep := i < n && mask[i>>6]>>(i&63)&1 == 1
				if want := float32(i); keep && x != want || !keep && !math.IsInf(float64(x), -1) {
					t.Fatalf("len %d, n %d: logit %d = %v, want kept %v", nl, n, i, x, keep)
				}
			}
		}
	}
}
