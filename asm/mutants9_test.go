package asm

import (
	"math"
	"math/rand"
	"testing"

	"github.com/x448/float16"
)

// Tests added from the mutants gremlins found alive in session 9 (issue 27
// item 5, NAME mutasm9). Expected values come from the definitions written
// out again here: the int64 block sums of dot_ggml32_kernel_test.go
// (q5_0SumsPlain, iq4nlSumsPlain, q4_1SumsPlain, element by element from
// docs/FORMATS.md's block table), binary16 scales decoded by
// github.com/x448/float16, and the float steps as the doc comments state
// them.

// x448At decodes the little-endian binary16 at b[0:2] with x448/float16.
func x448At(b []byte) float32 {
	return float16.Frombits(uint16(b[0]) | uint16(b[1])<<8).Float32()
}

// TestDotSums32Chunks: DotQ5_0, DotIQ4_NL and DotQ4_1 of rows longer than
// the block-sum chunk (sumChunk = 64 blocks: 1, 63, 64, 65, 128, 129 and
// 133 blocks), bit for bit the definition's steps over the blocks in order.
// TestDotGGMLDefinition's rows have 32 blocks, so a mistake in how the chunk
// loop of dotBlockSums or DotQ4_1 advances (the chunk's length, its offset in
// w, a or da) showed in no test.
func TestDotSums32Chunks(t *testing.T) {
	if sumChunk != 64 {
		t.Fatalf("sumChunk = %d: the block counts below assume 64", sumChunk)
	}
	r := rand.New(rand.NewSource(91))
	for _, nb := range []int{1, 63, 64, 65, 128, 129, 133} {
		cols := nb * BlockSize
		x := make([]float32, cols)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		a, da := make([]int8, cols), make([]float32, nb)
		QuantizeQ8_0(x, a, da)
		for _, c := range sums32Cases {
			w := make([]byte, nb*c.bb)
			r.Read(w)
			// Tame scales, each block's different (Q4_1: d and m).
			for b := range nb {
				for o := 0; o < 2*c.per; o += 2 {
					h := float16.Fromfloat32(float32(0.001 * (1 + r.Float64()))).Bits()
					w[b*c.bb+o], w[b*c.bb+o+1] = byte(h), byte(h>>8)
				}
			}
			p := c.plain(w, a, nb)
			var want float32
			for b := range nb {
				blk := w[b*c.bb:]
				want = want + float32(float32(p[c.per*b])*float32(x448At(blk)*da[b]))
				if c.per == 2 { // Q4_1: then t = Σ a times m·da
					want = want + float32(float32(p[2*b+1])*float32(x448At(blk[2:])*da[b]))
				}
			}
			var got float32
			switch c.name {
			case "Q5_0":
				got = DotQ5_0(w, a, da)
			case "IQ4_NL":
				got = DotIQ4_NL(w, a, da)
			case "Q4_1":
				got = DotQ4_1(w, a, da)
			default:
				t.Fatalf("unknown case %s", c.name)
			}
			if math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("%s nb=%d: %v (%#x), definition %v (%#x)", c.name, nb, got, math.Float32bits(got), want, math.Float32bits(want))
			}
		}
	}
}
