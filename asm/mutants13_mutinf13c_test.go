package asm

import "testing"

// TestAttnChecks13 pins the argument checks of DotF32T, DotF16T,
// AxpyF32StridedN and AxpyF16StridedN (attn.go) at their edges: an output,
// key or value slice one element short panics with the function's own
// message (not a slice bound error inside a kernel, or a write past the end
// in an assembly one); nb 1 takes any bstride (one block needs no stride);
// DotF16T with no queries leaves a too-short kt alone as DotF32T does; and
// AxpyF*StridedN with m, nq or n 0 does nothing, and stride 0 (every value at
// the same place) is allowed.
func TestAttnChecks13(t *testing.T) {
	variants(t, func(t *testing.T) {
		q := make([]float32, 16) // 2 queries of m = 8
		// nq 2, nb 2 at ldo 32: the last row ends at 32+32 = 64.
		mustPanic9(t, "DotF32T out 63", "asm: DotF32T: out too short", "", func() {
			DotF32T(make([]float32, 63), 32, q, 8, make([]float32, 256), 2, 128)
		})
		mustPanic9(t, "DotF16T out 63", "asm: DotF16T: out too short", "", func() {
			DotF16T(make([]float32, 63), 32, q, 8, make([]uint16, 256), 2, 128)
		})
		// nb 2 at bstride 128 of m = 8: the last block ends at 128+128 = 256.
		mustPanic9(t, "DotF32T kt 255", "asm: DotF32T: kt too short", "", func() {
			DotF32T(make([]float32, 64), 32, q, 8, make([]float32, 255), 2, 128)
		})
		mustPanic9(t, "DotF16T kt 255", "asm: DotF16T: kt too short", "", func() {
			DotF16T(make([]float32, 64), 32, q, 8, make([]uint16, 255), 2, 128)
		})
		// No queries: nothing is read, however short kt is.
		DotF16T(nil, 0, nil, 8, nil, 3, 0)
		// One block at bstride 0: key j's element d is kt[16d+j]; with
		// q = 1, 2 (m = 2) and kt[16d+j] = d+1, every score is 1·1 + 2·2 = 5.
		kt := make([]float32, 32)
		for i := range kt {
			kt[i] = float32(i/16 + 1)
		}
		out := make([]float32, 16)
		DotF32T(out, 16, []float32{1, 2}, 2, kt, 1, 0)
		for j, v := range out {
			if v != 5 {
				t.Fatalf("DotF32T nb 1, bstride 0: out[%d] = %v, want 5", j, v)
			}
		}

		// AxpyF*StridedN, nq 2, m 4 at ldy 4, n 2 at ldw 2, stride 4: y needs
		// 4+4, w 2+2, v (n-1)·stride+m = 4+4; each one short panics.
		mustPanic9(t, "AxpyF32StridedN y 7", "asm: AxpyF32StridedN: y too short", "", func() {
			AxpyF32StridedN(make([]float32, 7), 4, 4, 2, make([]float32, 4), 2, 2, make([]float32, 8), 4)
		})
		mustPanic9(t, "AxpyF16StridedN w 3", "asm: AxpyF16StridedN: w too short", "", func() {
			AxpyF16StridedN(make([]float32, 8), 4, 4, 2, make([]float32, 3), 2, 2, make([]uint16, 8), 4)
		})
		mustPanic9(t, "AxpyF32StridedN w 3", "asm: AxpyF32StridedN: w too short", "", func() {
			AxpyF32StridedN(make([]float32, 8), 4, 4, 2, make([]float32, 3), 2, 2, make([]float32, 8), 4)
		})
		mustPanic9(t, "AxpyF32StridedN v 7", "asm: AxpyF32StridedN: v too short", "", func() {
			AxpyF32StridedN(make([]float32, 4), 4, 4, 1, make([]float32, 2), 2, 2, make([]float32, 7), 4)
		})
		mustPanic9(t, "AxpyF16StridedN v 7", "asm: AxpyF16StridedN: v too short", "", func() {
			AxpyF16StridedN(make([]float32, 4), 4, 4, 1, make([]float32, 2), 2, 2, make([]uint16, 7), 4)
		})
		y := []float32{-1, -2}
		AxpyF32StridedN(y, 2, 0, 1, []float32{1}, 1, 1, []float32{1}, 1)
		AxpyF32StridedN(y, 2, 2, 0, []float32{1}, 1, 1, []float32{1, 1}, 1)
		AxpyF32StridedN(y, 2, 2, 1, nil, 0, 0, nil, 1)
		AxpyF16StridedN(y, 2, 2, 1, nil, 0, 0, nil, 1)
		if y[0] != -1 || y[1] != -2 {
			t.Fatalf("m, nq or n 0: y = %v, want untouched", y)
		}
		// Stride 0: y = 0 + 1·(3, 5) + 2·(3, 5) = (9, 15), for two queries
		// (ldy 2, ldw 2) with the same weights.
		y = make([]float32, 4)
		AxpyF32StridedN(y, 2, 2, 2, []float32{1, 2, 1, 2}, 2, 2, []float32{3, 5}, 0)
		if y[0] != 9 || y[1] != 15 || y[2] != 9 || y[3] != 15 {
			t.Fatalf("stride 0: y = %v, want [9 15 9 15]", y)
		}
	})
}
