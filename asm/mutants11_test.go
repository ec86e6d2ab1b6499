package asm

import "testing"

// TestPackedKSizesLiteral checks the packed K-quant sizes against the byte
// counts of the layouts as their comments lay them out, written as numbers
// here: per group of 16 rows and superblock of 256, Q4_K 320 + 16·128 = 2368
// (16 d, 16 dmin, the 12-byte scales of 16 rows, then 16 rows of 128 quant
// bytes), Q5_K 832 + 2048 = 2880, Q6_K 288 + 16·192 = 3360, IQ4_XS 192 +
// 2048 = 2240; groups ⌈rows/16⌉. Tests that compare Bytes() with the size
// function itself cannot see a size that is too large.
func TestPackedKSizesLiteral(t *testing.T) {
	shapes := []struct{ rows, cols, units int }{
		{0, 256, 0}, {16, 0, 0}, {1, 256, 1}, {15, 256, 1}, {16, 256, 1},
		{17, 512, 4}, {31, 768, 6}, {33, 768, 9}, {48, 2048, 24},
	}
	for _, k := range []struct {
		name  string
		size  func(rows, cols int) int
		super int
	}{
		{"Q4_K", PackedQ4KSize, 2368},
		{"Q5_K", PackedQ5KSize, 2880},
		{"Q6_K", PackedQ6KSize, 3360},
		{"IQ4_XS", PackedIQ4XSSize, 2240},
	} {
		for _, s := range shapes {
			if got, want := k.size(s.rows, s.cols), s.units*k.super; got != want {
				t.Errorf("%s size %d×%d = %d, want %d", k.name, s.rows, s.cols, got, want)
			}
		}
	}
}
