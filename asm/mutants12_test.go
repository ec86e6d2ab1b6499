package asm

import "testing"

// TestPackQ5_0Empty: a matrix with no rows or no columns is a valid, empty
// Q5_0 matrix (a model may hold one), as for the other packers; only
// negative sizes, columns that are not whole blocks and short buffers are
// refused. PackQ5_0 must not panic on 0×64 or 16×0, and must on −1×32 and
// 16×−32.
func TestPackQ5_0Empty(t *testing.T) {
	for _, s := range [][2]int{{0, 64}, {16, 0}, {0, 0}} {
		for _, f16 := range []bool{false, true} {
			pk := PackQ5_0(nil, nil, s[0], s[1], f16)
			if pk.Rows() != s[0] || pk.Cols() != s[1] || pk.Bytes() != 0 || !pk.Q5() || pk.F16() != f16 {
				t.Errorf("%v f16=%v: rows %d cols %d bytes %d q5 %v f16 %v, want the shape, 0 bytes, Q5",
					s, f16, pk.Rows(), pk.Cols(), pk.Bytes(), pk.Q5(), pk.F16())
			}
		}
	}
	for _, s := range [][2]int{{-1, 32}, {16, -32}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("PackQ5_0 %v: no panic", s)
				}
			}()
			PackQ5_0(make([]byte, 1<<12), make([]byte, 1<<12), s[0], s[1], false)
		}()
	}
}
