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

// mixedCases are mixed files (wtype 3) covering every ggml block type.
var mixedCases = []struct {
	name  string
	types []mlb.DType
}{
	{"k_quants", []mlb.DType{mlb.Q4_K, mlb.Q5_K, mlb.Q6_K, mlb.IQ4_XS}},
	{"blocks_of_32", []mlb.DType{mlb.Q4_1, mlb.Q5_0, mlb.IQ4_NL, mlb.Q8_0, mlb.Q4_0}},
	{"q4_k_m_like", []mlb.DType{mlb.Q4_K, mlb.Q4_K, mlb.Q6_K, mlb.Q4_K, mlb.Q4_K, mlb.Q6_K, mlb.Q4_K}},
}

// TestMixedMatchesReference runs mixed models through the forward pass and
// compares every position's logits with the float64 reference of
// ref_test.go, which dequantizes the blocks with quantize.DequantizeGGML
// (checked against gguf-py) and, in refQ, rounds each matrix input as the
// runtime does (Q8_K for the 256-blocks, Q8_0 for the others). Tolerances as
// TestForwardMatchesReference's.
func TestMixedMatchesReference(t *testing.T) {
	for _, c := range mixedCases {
		t.Run(c.name, func(t *testing.T) {
			h := mlbtest.Mixed(c.types...)
			m, f := openModel(t, h, 1)
			r := rand.New(rand.NewSource(2))
			tokens := randTokens(r, 24, int(h.Vocab))
			got := allLogits(t, m, SessionOptions{Threads: 2, Batch: 16}, tokens, 0)
			refQ := newRef(f, true).logits(tokens)
			refF := newRef(f, false).logits(tokens)
			quantEffect := maxDiff64(refQ, refF)
			dq, rms := maxDiff(got, refQ)
			df, _ := maxDiff(got, refF)
			if d, _ := maxDiff(got[:1], refQ[:1]); d > 1e-4*rms {
				t.Errorf("position 0: max |fast − refQ| = %.3g, want ≤ %.3g", d, 1e-4*rms)
			}
			t.Logf("rms %.3g; |fast−refQ| %.3g; |fast−ref| %.3g; activation rounding moves the reference by %.3g", rms, dq, df, quantEffect)
			if tol := 0.5*quantEffect + 1e-4*rms; dq > tol {
				t.Errorf("max |fast − reference with activation rounding| = %.4g, want ≤ %.4g", dq, tol)
			}
			if tol := 1.5*quantEffect + 1e-4*rms; df > tol {
				t.Errorf("max |fast − float64 reference| = %.4g, want ≤ %.4g", df, tol)
			}
			if !(rms > 0) || math.IsInf(rms, 0) {
				t.Errorf("logit rms %v", rms)
			}
		})
	}
}

// TestMixedBatchingAndThreads: for mixed files too, token-by-token decoding,
// any batch size and any thread count give the same bits.
func TestMixedBatchingAndThreads(t *testing.T) {
	for _, c := range mixedCases {
		t.Run(c.name, func(t *testing.T) {
			h := mlbtest.Mixed(c.types...)
			m, _ := openModel(t, h, 3)
			r := rand.New(rand.NewSource(4))
			tokens := randTokens(r, 21, int(h.Vocab))
			want := allLogits(t, m, SessionOptions{Threads: 1, Batch: 64}, tokens, 0)
			for _, o := range []SessionOptions{{Threads: 3, Batch: 1}, {Threads: 2, Batch: 5}} {
				got := allLogits(t, m, o, tokens, 0)
				for i := range want {
					for j := range want[i] {
						if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
							t.Fatalf("%+v: position %d logit %d = %v, want %v", o, i, j, got[i][j], want[i][j])
						}
					}
				}
			}
		})
	}
}

// TestMixedKernelVariants: for mixed files, every kernel variant this CPU
// runs (the AVX-512 whole-row K-quant products and IQ4_NL layout among them)
// gives the pure-Go kernels' logits bit for bit, batched with two threads,
// token by token, and batched with the activation rows chunked one by one
// (dotsChunkRows); on a model packed for that variant (the layout is chosen
// at packing: IQ4_NL as Q4_0 nibbles for AVX-512, as Q8_0 otherwise) and on
// one packed for the best variant.
func TestMixedKernelVariants(t *testing.T) {
	orig, chunk := asm.Variant(), dotsChunkRows
	defer asm.Use(orig)
	for _, c := range mixedCases {
		h := mlbtest.Mixed(c.types...)
		tokens := randTokens(rand.New(rand.NewSource(6)), 19, int(h.Vocab))
		if err := asm.Use(asm.Generic); err != nil {
			t.Fatal(err)
		}
		m, _ := openModel(t, h, 5)
		want := allLogits(t, m, SessionOptions{Batch: 16}, tokens, 0)
		if err := asm.Use(orig); err != nil {
			t.Fatal(err)
		}
		best, _ := openModel(t, h, 5)
		allLogits(t, best, SessionOptions{Batch: 1}, tokens[:1], 0) // packs it
		for _, k := range asm.AvailableKernels() {
			if err := asm.Use(k); err != nil {
				t.Fatal(err)
			}
			mk, _ := openModel(t, h, 5)
			for j, o := range []SessionOptions{{Batch: 16, Threads: 2}, {Batch: 1}, {Batch: 16}, {Batch: 7}} {
				mm := mk
				if j == 3 {
					mm = best
				}
				if j == 2 { // activation rows one at a time through each weight row
					dotsChunkRows = 1
				}
				got := allLogits(t, mm, o, tokens, 0)
				dotsChunkRows = chunk
				for i := range want {
					for l := range want[i] {
						if math.Float32bits(got[i][l]) != math.Float32bits(want[i][l]) {
							t.Fatalf("%s, %s run %d %+v: position %d logit %d: got %v, want %v (pure Go)", c.name, k, j, o, i, l, got[i][l], want[i][l])
						}
					}
				}
			}
		}
	}
}

// TestMixedPacksKQuants: with a variant that has the packed Q4_K, Q5_K,
// Q6_K and IQ4_XS kernels (AVX-512, AVX2; NEON, DotProd, I8MM on arm64),
// every Q4_K, Q5_K, Q6_K and IQ4_XS matrix of a mix is multiplied in the
// packed interleaved layout (so the tests above run those kernels), and with
// another variant none is.
func TestMixedPacksKQuants(t *testing.T) {
	orig := asm.Variant()
	defer asm.Use(orig)
	h := mlbtest.Mixed(mlb.Q4_K, mlb.Q6_K, mlb.IQ4_XS, mlb.Q4_K, mlb.Q5_K)
	tokens := randTokens(rand.New(rand.NewSource(8)), 3, int(h.Vocab))
	for _, k := range asm.AvailableKernels() {
		if err := asm.Use(k); err != nil {
			t.Fatal(err)
		}
		m, _ := openModel(t, h, 1)
		allLogits(t, m, SessionOptions{Batch: 4}, tokens, 0) // packs it
		n4, n5, n6, nx := 0, 0, 0, 0
		for _, w := range m.mats() {
			switch w.gt {
			case quantize.GGMLQ4_K:
				n4++
				if w.k4 != asm.PacksQ4_K() {
					t.Errorf("%v: Q4_K matrix %d×%d packed %v, variant packs %v", k, w.rows, w.cols, w.k4, asm.PacksQ4_K())
				}
			case quantize.GGMLQ5_K:
				n5++
				if w.k5 != asm.PacksQ5_K() {
					t.Errorf("%v: Q5_K matrix %d×%d packed %v, variant packs %v", k, w.rows, w.cols, w.k5, asm.PacksQ5_K())
				}
			case quantize.GGMLQ6_K:
				n6++
				if w.k6 != asm.PacksQ6_K() {
					t.Errorf("%v: Q6_K matrix %d×%d packed %v, variant packs %v", k, w.rows, w.cols, w.k6, asm.PacksQ6_K())
				}
			case quantize.GGMLIQ4_XS:
				nx++
				if w.kx != asm.PacksIQ4_XS() {
					t.Errorf("%v: IQ4_XS matrix %d×%d packed %v, variant packs %v", k, w.rows, w.cols, w.kx, asm.PacksIQ4_XS())
				}
			}
		}
		if n4 == 0 || n5 == 0 || n6 == 0 || nx == 0 {
			t.Fatalf("the mix has %d Q4_K, %d Q5_K, %d Q6_K and %d IQ4_XS matrices, want some of each", n4, n5, n6, nx)
		}
		t.Logf("%v: %d Q4_K, %d Q5_K, %d Q6_K, %d IQ4_XS matrices, packed %v / %v / %v / %v", k, n4, n5, n6, nx, asm.PacksQ4_K(), asm.PacksQ5_K(), asm.PacksQ6_K(), asm.PacksIQ4_XS())
	}
}
