package quantize

import (
	"strings"
	"testing"
)

// TestDequantizePanics: lengths that do not match the shape are a caller's
// bug and panic with a message naming what was given and what was wanted
// (the branch gremlins found no test reaching).
func TestDequantizePanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		t    Type
		q    int
		d    int
		rows int
		cols int
		want string
	}{
		// One Q8_0 row of 64: 2 blocks of 34 bytes → 2 scales and 64 quant bytes.
		{"short quants", TypeQ8_0, 63, 2, 1, 64, "63 quant bytes and 2 scales, want 64 and 2"},
		{"extra scale", TypeQ8_0, 64, 3, 1, 64, "64 quant bytes and 3 scales, want 64 and 2"},
		// Q4_0: 16 bytes a block.
		{"q4 short", TypeQ4_0, 16, 2, 2, 32, "16 quant bytes and 2 scales, want 32 and 2"},
		{"bad cols", TypeQ8_0, 0, 0, 1, 33, "bad type or shape"},
		{"negative rows", TypeQ4_0, 0, 0, -1, 32, "bad type or shape"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, tc.want) {
					t.Errorf("panic %v, want one containing %q", r, tc.want)
				}
			}()
			Dequantize(tc.t, make([]byte, tc.q), make([]float32, tc.d), tc.rows, tc.cols)
		})
	}
}
