package asm

import (
	"math/rand"
	"testing"
)

// Tests of session 14's mutation pass (mutrest14) over packed_k_simd.go.

// TestPackedKChunks14: with more activation rows than one kernel call takes
// (n > tile), packedKRun walks the weight groups in chunks of
// tileBytes/(nb·super) groups (13 for Q4_K, 11 for Q5_K and 9 for Q6_K at
// nb = 4), so that a chunk stays in cache while every tile of activations
// passes over it. 229 rows are 14 full groups and a partial one: two chunks,
// the second shorter (Q4_K 13 + 1, Q5_K 11 + 3, Q6_K 9 + 5), then the
// partial group. The older cases have at most 4 groups, one chunk, so a
// wrong chunk offset (out, w) or a last chunk run at full length went
// unseen. Every variant's products must equal DotQ4_K's, DotQ5_K's and
// DotQ6_K's of each row (the per-row definition) bit for bit.
// chunkBytes14 is simd.go's tileBytes (default build only; checked there by
// TestTileBytes14).
const chunkBytes14 = 128 << 10

func TestPackedKChunks14(t *testing.T) {
	const rows, nb, n = 16*14 + 5, 4, 9
	for _, s := range []struct {
		name  string
		super int
		want  int
	}{{"Q4_K", q4kSuper, 13}, {"Q5_K", q5kSuper, 11}, {"Q6_K", q6kSuper, 9}} {
		// the shape must give two chunks, the second shorter
		if gt := chunkBytes14 / (nb * s.super); gt != s.want || rows/GroupRows <= gt || rows/GroupRows%gt == 0 {
			t.Fatalf("%s: %d groups a chunk (want %d) for %d full groups: not two unequal chunks", s.name, gt, s.want, rows/GroupRows)
		}
	}
	r := rand.New(rand.NewSource(1414))
	x := make([]float32, n*nb*QK)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	checkPackQ4K(t, randQ4K(r, rows, nb, false), rows, nb, n, x)
	checkPackQ5K(t, randQ5K(r, rows, nb, false), rows, nb, n, x)
	a, da, bs := q8kAct(r, n, nb, true)
	checkPackQ6K(t, randQ6K(r, rows, nb, false), rows, nb, n, a, da, bs)
}
