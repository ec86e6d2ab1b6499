//go:build !(amd64 || arm64) || !gc || purego

package asm

func quantizeQ8K(x []float32, q []int8, d []float32, bs []int16) { quantizeQ8KGeneric(x, q, d, bs) }

func quantizeQ8KK(_ Kernel, x []float32, q []int8, d []float32, bs []int16) {
	quantizeQ8KGeneric(x, q, d, bs)
}
