package quantize_test

import (
	"fmt"

	"github.com/krafla/krafla/quantize"
)

// Quantize a 1×32 row to Q8_0 and decode it. The largest magnitude maps to ±127.
func ExampleMatrix() {
	w := make([]float32, 32)
	w[0], w[1], w[2] = 2.54, -1.27, 0.009 // ·127/2.54 = 127, −63.5 (half away: −64), 0.45
	q, scales, err := quantize.Matrix(quantize.TypeQ8_0, w, 1, 32, quantize.Options{Name: "demo"})
	if err != nil {
		panic(err)
	}
	d := quantize.DecodeScales(scales, false)
	fmt.Println(int8(q[0]), int8(q[1]), int8(q[2]), d[0])
	fmt.Println(quantize.Dequantize(quantize.TypeQ8_0, q, d, 1, 32)[:3])
	// Output:
	// 127 -64 0 0.02
	// [2.54 -1.28 0]
}

// The activation quantizer (Q8_0): one row of floats to int8 quants and f32 scales.
func Example_activation() {
	x := make([]float32, 32)
	x[0], x[1] = 0.5, -0.25
	q := make([]int8, len(x))
	d := make([]float32, len(x)/quantize.BlockSize)
	quantize.Q8_0(x, q, d)
	fmt.Println(q[0], q[1], d[0])
	// Output:
	// 127 -64 0.003937008
}
