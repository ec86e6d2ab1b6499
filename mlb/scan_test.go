package mlb

import (
	"math/rand"
	"testing"
)

func naiveFind(b []byte) int {
	for i, c := range b {
		if c == 0x80 {
			return i
		}
	}
	return -1
}

// TestFindMinus128 compares the word-at-a-time scan with a byte loop on every
// length up to 200 and every position of a single -128, with neighbours chosen
// to provoke SWAR borrows (0x00, 0x01, 0x7f, 0x81, 0xff).
func TestFindMinus128(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	fills := []byte{0x00, 0x01, 0x7f, 0x81, 0xff}
	for n := 0; n <= 200; n++ {
		for _, fill := range fills {
			b := make([]byte, n)
			for i := range b {
				b[i] = fill
			}
			if got := findMinus128(b); got != -1 {
				t.Fatalf("n=%d fill %#x: got %d, want -1", n, fill, got)
			}
			for p := 0; p < n; p++ {
				b[p] = 0x80
				if got := findMinus128(b); got != p {
					t.Fatalf("n=%d fill %#x: got %d, want %d", n, fill, got, p)
				}
				b[p] = fill
			}
		}
	}
	// Random bytes avoiding 0x80, with 0, 1 or 2 planted.
	for k := 0; k < 2000; k++ {
		b := make([]byte, r.Intn(700))
		for i := range b {
			for b[i] = byte(r.Intn(256)); b[i] == 0x80; b[i] = byte(r.Intn(256)) {
			}
		}
		for j := r.Intn(3); j > 0 && len(b) > 0; j-- {
			b[r.Intn(len(b))] = 0x80
		}
		if got, want := findMinus128(b), naiveFind(b); got != want {
			t.Fatalf("len %d: got %d, want %d", len(b), got, want)
		}
	}
}

func BenchmarkFindMinus128(b *testing.B) {
	buf := make([]byte, benchLen)
	for i := range buf {
		buf[i] = byte(i % 127)
	}
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	for range b.N {
		if findMinus128(buf) != -1 {
			b.Fatal("found")
		}
	}
}

var benchLen = 1 << 20
