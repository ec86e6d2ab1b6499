//go:build amd64 && gc && !purego

package asm

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestPackActMatchesGeneric compares the activation packing of the SIMD
// kernels with its pure-Go form, extreme quants and every correction factor.
func TestPackActMatchesGeneric(t *testing.T) {
	if !Available(AVX2) {
		t.Skip("no AVX2")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, nb := range []int{1, 2, 5, 18} {
		for _, g := range []int{1, 4} {
			for _, k := range []int32{0, 8, 128, -8, -128} {
				for _, extreme := range []bool{false, true} {
					a := make([]int8, g*nb*32)
					for i := range a {
						a[i] = genA(rng, extreme)
					}
					da := make([]float32, g*nb)
					for i := range da {
						da[i] = genScale(rng, "mixed")
					}
					want := make([]byte, nb*g*40)
					got := make([]byte, nb*g*40)
					packActGeneric(want, a, da, nb, g, k)
					packAct(got, a, da, nb, g, k)
					if !bytes.Equal(got, want) {
						t.Fatalf("nb=%d g=%d k=%d extreme=%v: packed activations differ", nb, g, k, extreme)
					}
				}
			}
		}
	}
}
