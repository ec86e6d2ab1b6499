package asm

import (
	"fmt"
	"math/rand"
	"testing"
)

// The block sums of Q5_0, IQ4_NL and Q4_1 written once more, element by
// element from docs/FORMATS.md's block table, in int64, so that neither
// twin is its own oracle: element j of a block is the low nibble of
// qs[j] for j < 16 and the high nibble of qs[j−16] otherwise.
func nib32(qs []byte, j int) int64 {
	if j < 16 {
		return int64(qs[j] & 15)
	}
	return int64(qs[j-16] >> 4)
}

func q5_0SumsPlain(w []byte, a []int8, nb int) []int64 {
	p := make([]int64, nb)
	for b := range nb {
		blk := w[22*b:]
		qh := uint32(blk[2]) | uint32(blk[3])<<8 | uint32(blk[4])<<16 | uint32(blk[5])<<24
		for j := range 32 {
			n := nib32(blk[6:22], j) + 16*int64(qh>>j&1) - 16
			p[b] += n * int64(a[32*b+j])
		}
	}
	return p
}

func iq4nlSumsPlain(w []byte, a []int8, nb int) []int64 {
	kv := []int64{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}
	p := make([]int64, nb)
	for b := range nb {
		for j := range 32 {
			p[b] += kv[nib32(w[18*b+2:18*b+18], j)] * int64(a[32*b+j])
		}
	}
	return p
}

func q4_1SumsPlain(w []byte, a []int8, nb int) []int64 {
	p := make([]int64, 2*nb)
	for b := range nb {
		for j := range 32 {
			p[2*b] += nib32(w[20*b+4:20*b+20], j) * int64(a[32*b+j])
			p[2*b+1] += int64(a[32*b+j])
		}
	}
	return p
}

// sums32Case is one block-sum function with its twin, oracle and shape.
type sums32Case struct {
	name  string
	bb    int // bytes per block
	per   int // outputs per block
	noNeg bool
	k     func(Kernel, []byte, []int8, []int32)
	gen   func([]byte, []int8, []int32)
	plain func([]byte, []int8, int) []int64
	negOK []Kernel // the variants that take −128 activations even when noNeg
}

var sums32Cases = []sums32Case{
	{name: "Q5_0", bb: 22, per: 1, k: q5_0SumsK, gen: q5_0SumsGeneric, plain: q5_0SumsPlain},
	{name: "IQ4_NL", bb: 18, per: 1, noNeg: true, k: iq4nlSumsK, gen: iq4nlSumsGeneric, plain: iq4nlSumsPlain, negOK: iq4AnyActivation},
	{name: "Q4_1", bb: 20, per: 2, k: q4_1SumsK, gen: q4_1SumsGeneric, plain: q4_1SumsPlain},
}

// checkSums32 compares every available variant (writing into a guarded p)
// and the twin with the plain sums. neg says a may hold −128: then only
// the variants without that precondition are compared.
func checkSums32(t *testing.T, c sums32Case, w []byte, a []int8, nb int, neg bool) {
	t.Helper()
	want := c.plain(w, a, nb)
	ks := ggmlKernels()
	if neg && c.noNeg {
		ks = []Kernel{Generic}
		for _, k := range c.negOK {
			if Available(k) {
				ks = append(ks, k)
			}
		}
	}
	for _, k := range ks {
		p, ok := guarded[int32](c.per*nb, nb%3, 0x5a5a5a5a)
		c.k(k, w, a, p)
		ok(t, fmt.Sprintf("%s %v nb=%d", c.name, k, nb))
		for i := range want {
			if int64(p[i]) != want[i] {
				t.Fatalf("%s %v nb=%d: output %d = %d, plain %d", c.name, k, nb, i, p[i], want[i])
			}
		}
	}
	p := make([]int32, c.per*nb)
	c.gen(w, a, p)
	for i := range want {
		if int64(p[i]) != want[i] {
			t.Fatalf("%s generic nb=%d: output %d = %d, plain %d", c.name, nb, i, p[i], want[i])
		}
	}
}

// TestSums32Equivalence: the block-sum kernels of every available variant
// equal the twins and the int64 sums, for block counts around the 4- and
// 2-block steps and their tails, on random and extreme input, without
// writing outside p.
func TestSums32Equivalence(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for _, c := range sums32Cases {
		for _, nb := range blockCounts {
			for it := range 20 {
				w, a := make([]byte, c.bb*nb), make([]int8, 32*nb)
				r.Read(w)
				for i := range a {
					a[i] = int8(r.Intn(255) - 127)
				}
				checkSums32(t, c, w, a, nb, false)
				if it == 0 { // −128 too, for the variants that take it
					for i := range a {
						if r.Intn(3) == 0 {
							a[i] = -128
						}
					}
					checkSums32(t, c, w, a, nb, true)
				}
			}
			w, a := make([]byte, c.bb*nb), make([]int8, 32*nb)
			for _, q := range []byte{0x00, 0xff, 0x0f, 0xf0} {
				for i := range w {
					w[i] = q
				}
				for _, v := range []int8{-127, 127, -128} {
					for i := range a {
						a[i] = v
					}
					checkSums32(t, c, w, a, nb, v == -128)
				}
			}
		}
		// Each element alone, in each position of a 5-block row, to catch a
		// misplaced nibble, high bit or block.
		nb := 5
		w, a := make([]byte, c.bb*nb), make([]int8, 32*nb)
		r.Read(w)
		for i := range a {
			clear(a)
			a[i] = 1 + int8(r.Intn(100))
			checkSums32(t, c, w, a, nb, false)
		}
	}
}

// FuzzSums32 compares the kernels with the plain sums on any bytes and
// activations (−128 clamped for the variants that need it, and compared
// unclamped with the ones that do not), 1–40 blocks.
func FuzzSums32(f *testing.F) {
	f.Add(uint8(0), uint8(3), []byte{1, 2, 3, 0xff, 0x80})
	f.Add(uint8(1), uint8(5), []byte{0x80})
	f.Add(uint8(2), uint8(1), []byte{0x0f, 0xf0, 0x7f})
	f.Fuzz(func(t *testing.T, which, nbb uint8, data []byte) {
		c := sums32Cases[int(which)%len(sums32Cases)]
		nb := 1 + int(nbb)%40
		w, a := make([]byte, c.bb*nb), make([]int8, 32*nb)
		for i := range w {
			w[i] = fuzzByte(data, i)
		}
		for i := range a {
			a[i] = int8(fuzzByte(data, len(w)+i))
		}
		checkSums32(t, c, w, a, nb, true)
		for i := range a {
			a[i] = max(a[i], -127)
		}
		checkSums32(t, c, w, a, nb, false)
	})
}

// BenchmarkSums32: a row of 64 blocks (2048 weights) per variant.
func BenchmarkSums32(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	const nb = 64
	for _, c := range sums32Cases {
		w, a, p := make([]byte, c.bb*nb), make([]int8, 32*nb), make([]int32, c.per*nb)
		r.Read(w)
		for i := range a {
			a[i] = int8(r.Intn(255) - 127)
		}
		for _, k := range ggmlKernels() {
			b.Run(c.name+"/"+k.String(), func(b *testing.B) {
				for range b.N {
					c.k(k, w, a, p)
				}
			})
		}
	}
}
