package infer

import (
	"math"
	"math/rand"
	"testing"

	"github.com/krafla/krafla/asm"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlb/mlbtest"
	"github.com/krafla/krafla/quantize"
)

// TestMixedQ5_0Packed: in a file of Q5_0 matrices, packing for a variant
// with Q5_0 kernels (AVX-512, AVX2) puts every Q5_0 matrix in asm.PackQ5_0's
// layout (fewer bytes than the Q8_0 form's), the others keep the Q8_0 form;
// the logits of each variant, batched and token by token, are the pure-Go
// kernels' bits on the Q8_0 form.
func TestMixedQ5_0Packed(t *testing.T) {
	orig := asm.Variant()
	defer asm.Use(orig)
	h := mlbtest.Mixed(mlb.Q5_0, mlb.Q5_0, mlb.Q8_0)
	tokens := randTokens(rand.New(rand.NewSource(8)), 17, int(h.Vocab))
	if err := asm.Use(asm.Generic); err != nil {
		t.Fatal(err)
	}
	m0, _ := openModel(t, h, 9)
	want := allLogits(t, m0, SessionOptions{Batch: 16}, tokens, 0)
	sawQ5 := false
	for _, k := range asm.AvailableKernels() {
		if err := asm.Use(k); err != nil {
			t.Fatal(err)
		}
		m, _ := openModel(t, h, 9)
		m.ensurePacked()
		n5 := 0
		for _, w := range m.mats() {
			if w.gt != quantize.GGMLQ5_0 {
				continue
			}
			n5++
			if (k == asm.AVX512 || k == asm.AVX2) && !w.pk.Q5() {
				t.Fatalf("%v: a Q5_0 %d×%d matrix kept in the Q8_0 form by a variant with Q5_0 kernels", k, w.rows, w.cols)
			}
			if w.pk.Q5() != asm.PacksQ5_0() {
				t.Fatalf("%v: a Q5_0 %d×%d matrix packed with Q5 %v, PacksQ5_0 %v", k, w.rows, w.cols, w.pk.Q5(), asm.PacksQ5_0())
			}
			if q8 := asm.PackedSize(false, w.f16, w.rows, w.cols); w.pk.Q5() && w.pk.Bytes() >= q8 {
				t.Fatalf("%v: packed Q5_0 %d×%d: %d bytes, the Q8_0 form %d", k, w.rows, w.cols, w.pk.Bytes(), q8)
			}
			sawQ5 = sawQ5 || w.pk.Q5()
		}
		if n5 == 0 {
			t.Fatal("no Q5_0 matrix in the file")
		}
		for _, o := range []SessionOptions{{Batch: 16, Threads: 2}, {Batch: 1}} {
			got := allLogits(t, m, o, tokens, 0)
			for i := range want {
				for l := range want[i] {
					if math.Float32bits(got[i][l]) != math.Float32bits(want[i][l]) {
						t.Fatalf("%v %+v: position %d logit %d: got %v, want %v (pure Go, Q8_0 form)", k, o, i, l, got[i][l], want[i][l])
					}
				}
			}
		}
	}
	if !sawQ5 {
		t.Log("no variant here has Q5_0 kernels (AVX-512, AVX2): the packed Q5_0 path was not run")
	}
}
