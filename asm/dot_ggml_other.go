//go:build !amd64 || !gc || purego

package asm

// dotsSIMD: no whole-product kernel here.
func dotsSIMD(_ Kernel, _ int, _ []float32, _ int, _ []byte, _ []int8, _ []float32, _ []int16, _, _ int) bool {
	return false
}

func dotsRowsSIMD(_ Kernel, _ int, _ []float32, _ int, _ []byte, _ int, _ []int8, _ []float32, _ []int16, _, _ int) bool {
	return false
}
