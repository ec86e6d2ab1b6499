package asm

import (
	"math/rand"
	"testing"
)

// q4kIsumPlain is the Q4_K superblock sum written once more, element by
// element from docs/FORMATS.md's unpacking (weight i of sub-block i/32 is
// nibble i%32 of the 32 bytes at 32·(i/64), low for even sub-blocks), in
// int64, so that neither twin is its own oracle.
func q4kIsumPlain(qs []byte, a []int8, sc *[8]int32) int64 {
	var s int64
	for i := range 256 {
		sb := i / 32
		v := qs[32*(sb/2)+i%32]
		n := v & 15
		if sb%2 == 1 {
			n = v >> 4
		}
		s += int64(sc[sb]) * int64(n) * int64(a[i])
	}
	return s
}

// ggmlKernels lists the variants this CPU and build can run, generic first
// (the arch's SIMD ones it lacks are not compared, and say so once per test
// binary through TestGGMLKernelsListed).
func ggmlKernels() []Kernel { return AvailableKernels() }

// TestGGMLKernelsListed names the variants the ggml sum tests compare, and
// skips visibly if this CPU has none of the SIMD ones.
func TestGGMLKernelsListed(t *testing.T) {
	t.Logf("ggml sum kernels compared: %v", ggmlKernels())
	for _, k := range archVariants() {
		if !Available(k) {
			t.Logf("%v: not available on this CPU or build, not compared", k)
		}
	}
}

func checkQ4KIsum(t *testing.T, qs []byte, a []int8, sc *[8]int32) {
	t.Helper()
	want := q4kIsumPlain(qs, a, sc)
	if g := q4kIsumGeneric(qs, a, sc); int64(g) != want {
		t.Fatalf("generic %d, plain %d", g, want)
	}
	for _, k := range ggmlKernels() {
		if g := q4kIsumK(k, qs, a, sc); int64(g) != want {
			t.Fatalf("%v %d, plain %d", k, g, want)
		}
	}
	if g := q4kIsum(qs, a, sc); int64(g) != want {
		t.Fatalf("dispatched (%s) %d, plain %d", Features(), g, want)
	}
}

// TestQ4KIsumEquivalence: the dispatched Q4_K kernel (AVX2 where the CPU has
// it) equals the pure-Go twin and the int64 sum on random and extreme input.
func TestQ4KIsumEquivalence(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	qs, a := make([]byte, 128), make([]int8, 256)
	var sc [8]int32
	for it := 0; it < 2000; it++ {
		r.Read(qs)
		for i := range a {
			a[i] = int8(r.Intn(256) - 128)
		}
		for s := range sc {
			sc[s] = int32(r.Intn(64))
		}
		checkQ4KIsum(t, qs, a, &sc)
	}
	// Extremes: every nibble 15, activations all −128 or all 127, scales 63.
	for i := range qs {
		qs[i] = 0xff
	}
	for s := range sc {
		sc[s] = 63
	}
	for _, v := range []int8{-128, 127} {
		for i := range a {
			a[i] = v
		}
		checkQ4KIsum(t, qs, a, &sc)
	}
	// Each sub-block alone, to catch a swapped nibble half or scale.
	for s := range 8 {
		clear(sc[:])
		sc[s] = 1
		r.Read(qs)
		for i := range a {
			a[i] = int8(r.Intn(256) - 128)
		}
		checkQ4KIsum(t, qs, a, &sc)
	}
}

// FuzzQ4KIsum compares the dispatched kernel with the plain sum on any bytes
// and activations, with scales of 6 bits.
func FuzzQ4KIsum(f *testing.F) {
	f.Add([]byte{1, 2, 3, 0xff, 0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		qs, a := make([]byte, 128), make([]int8, 256)
		var sc [8]int32
		for i := range qs {
			qs[i] = fuzzByte(data, i)
		}
		for i := range a {
			a[i] = int8(fuzzByte(data, 128+i))
		}
		for s := range sc {
			sc[s] = int32(fuzzByte(data, 384+s) & 63)
		}
		checkQ4KIsum(t, qs, a, &sc)
	})
}

// BenchmarkQ4KIsum: one superblock's integer sum, dispatched and pure Go.
func BenchmarkQ4KIsum(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	qs, a := make([]byte, 128), make([]int8, 256)
	r.Read(qs)
	for i := range a {
		a[i] = int8(r.Intn(255) - 127)
	}
	sc := [8]int32{1, 2, 3, 4, 5, 6, 7, 8}
	for _, k := range ggmlKernels() {
		b.Run(k.String(), func(b *testing.B) {
			for range b.N {
				q4kIsumK(k, qs, a, &sc)
			}
		})
	}
}

// q6kIsumPlain is the unsigned Q6_K superblock sum from docs/FORMATS.md's
// table, in int64: q = (nibble of ql[64h + 32(g%2) + l], high for g ≥ 2) +
// 16·((qh[32h + l] >> 2g) & 3).
func q6kIsumPlain(ql, qh []byte, a []int8, sc *[16]int16) int64 {
	var s int64
	for i := range 256 {
		h, j := i/128, i%128
		l, g := j%32, j/32
		v := ql[64*h+32*(g%2)+l]
		n := int64(v & 15)
		if g >= 2 {
			n = int64(v >> 4)
		}
		n += 16 * int64((qh[32*h+l]>>(2*g))&3)
		s += int64(sc[i/16]) * n * int64(a[i])
	}
	return s
}

func checkQ6KIsum(t *testing.T, ql, qh []byte, a []int8, sc *[16]int16) {
	t.Helper()
	want := q6kIsumPlain(ql, qh, a, sc)
	if g := q6kIsumGeneric(ql, qh, a, sc); int64(g) != want {
		t.Fatalf("generic %d, plain %d", g, want)
	}
	for _, k := range ggmlKernels() {
		if g := q6kIsumK(k, ql, qh, a, sc); int64(g) != want {
			t.Fatalf("%v %d, plain %d", k, g, want)
		}
	}
	if g := q6kIsum(ql, qh, a, sc); int64(g) != want {
		t.Fatalf("dispatched (%s) %d, plain %d", Features(), g, want)
	}
}

// TestQ6KIsumEquivalence: the dispatched Q6_K kernel equals the pure-Go twin
// and the int64 sum on random and extreme input.
func TestQ6KIsumEquivalence(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	ql, qh, a := make([]byte, 128), make([]byte, 64), make([]int8, 256)
	var sc [16]int16
	for it := 0; it < 2000; it++ {
		r.Read(ql)
		r.Read(qh)
		for i := range a {
			a[i] = int8(r.Intn(256) - 128)
		}
		for s := range sc {
			sc[s] = int16(int8(r.Intn(256)))
		}
		checkQ6KIsum(t, ql, qh, a, &sc)
	}
	for i := range ql {
		ql[i] = 0xff
	}
	for i := range qh {
		qh[i] = 0xff
	}
	for _, v := range []int8{-128, 127} {
		for i := range a {
			a[i] = v
		}
		for _, scv := range []int16{-128, 127} {
			for s := range sc {
				sc[s] = scv
			}
			checkQ6KIsum(t, ql, qh, a, &sc)
		}
	}
	for s := range 16 { // each sub-block alone
		clear(sc[:])
		sc[s] = 1
		r.Read(ql)
		r.Read(qh)
		checkQ6KIsum(t, ql, qh, a, &sc)
	}
}

// FuzzQ6KIsum compares the dispatched kernel with the plain sum on any bytes,
// activations and int8 scales.
func FuzzQ6KIsum(f *testing.F) {
	f.Add([]byte{1, 2, 3, 0xff, 0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		ql, qh, a := make([]byte, 128), make([]byte, 64), make([]int8, 256)
		var sc [16]int16
		for i := range ql {
			ql[i] = fuzzByte(data, i)
		}
		for i := range qh {
			qh[i] = fuzzByte(data, 128+i)
		}
		for i := range a {
			a[i] = int8(fuzzByte(data, 192+i))
		}
		for s := range sc {
			sc[s] = int16(int8(fuzzByte(data, 448+s)))
		}
		checkQ6KIsum(t, ql, qh, a, &sc)
	})
}

// BenchmarkQ6KIsum: one superblock's integer sum, dispatched and pure Go.
func BenchmarkQ6KIsum(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	ql, qh, a := make([]byte, 128), make([]byte, 64), make([]int8, 256)
	r.Read(ql)
	r.Read(qh)
	var sc [16]int16
	for s := range sc {
		sc[s] = int16(s - 8)
	}
	for _, k := range ggmlKernels() {
		b.Run(k.String(), func(b *testing.B) {
			for range b.N {
				q6kIsumK(k, ql, qh, a, &sc)
			}
		})
	}
}

// iq4xsIsumPlain is the IQ4_XS superblock sum from docs/FORMATS.md's table
// in int64: weight i of sub-block s = i/32 is K[nibble i%32 of the 16 bytes
// at 16s] (low nibbles first).
func iq4xsIsumPlain(qs []byte, a []int8, sc *[8]int16) int64 {
	kv := []int64{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}
	var s int64
	for i := range 256 {
		sb, j := i/32, i%32
		v := qs[16*sb+j%16]
		n := v & 15
		if j >= 16 {
			n = v >> 4
		}
		s += int64(sc[sb]) * kv[n] * int64(a[i])
	}
	return s
}

func checkIQ4XSIsum(t *testing.T, qs []byte, a []int8, sc *[8]int16) {
	t.Helper()
	want := iq4xsIsumPlain(qs, a, sc)
	if g := iq4xsIsumGeneric(qs, a, sc); int64(g) != want {
		t.Fatalf("generic %d, plain %d", g, want)
	}
	for _, k := range ggmlKernels() {
		if g := iq4xsIsumK(k, qs, a, sc); int64(g) != want {
			t.Fatalf("%v %d, plain %d", k, g, want)
		}
	}
	if g := iq4xsIsum(qs, a, sc); int64(g) != want {
		t.Fatalf("dispatched (%s) %d, plain %d", Features(), g, want)
	}
}

// TestIQ4XSIsumEquivalence: the dispatched IQ4_XS kernel equals the pure-Go
// twin and the int64 sum, activations in [−127, 127] (its precondition).
func TestIQ4XSIsumEquivalence(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	qs, a := make([]byte, 128), make([]int8, 256)
	var sc [8]int16
	for it := 0; it < 2000; it++ {
		r.Read(qs)
		for i := range a {
			a[i] = int8(r.Intn(255) - 127)
		}
		for s := range sc {
			sc[s] = int16(r.Intn(64) - 32)
		}
		checkIQ4XSIsum(t, qs, a, &sc)
	}
	for _, q := range []byte{0x00, 0xff, 0x0f} { // K = −127, 113, mixed
		for i := range qs {
			qs[i] = q
		}
		for _, v := range []int8{-127, 127} {
			for i := range a {
				a[i] = v
			}
			for _, scv := range []int16{-32, 31} {
				for s := range sc {
					sc[s] = scv
				}
				checkIQ4XSIsum(t, qs, a, &sc)
			}
		}
	}
	for s := range 8 { // each sub-block alone
		clear(sc[:])
		sc[s] = 1
		r.Read(qs)
		checkIQ4XSIsum(t, qs, a, &sc)
	}
}

// iq4AnyActivation lists the IQ4_XS and IQ4_NL variants without the AVX2
// kernels' precondition on the activations: AVX-512 (VPDPBUSD with the codebook
// offset by 128, no sign trick) and the arm64 ones (signed products of the
// codebook values themselves).
var iq4AnyActivation = []Kernel{AVX512, NEON, DotProd, I8MM}

// TestIQ4XSIsumAnyActivation: the IQ4_XS variants in iq4AnyActivation have
// no precondition on the activations: with −128 among them (and all of them
// −128, every weight K = −127, scales −32: the largest products) they still
// equal the int64 sum.
func TestIQ4XSIsumAnyActivation(t *testing.T) {
	var ks []Kernel
	for _, k := range iq4AnyActivation {
		if Available(k) {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 {
		t.Skip("no IQ4_XS variant without the activation precondition on this CPU or build")
	}
	r := rand.New(rand.NewSource(5))
	qs, a := make([]byte, 128), make([]int8, 256)
	var sc [8]int16
	check := func() {
		t.Helper()
		want := iq4xsIsumPlain(qs, a, &sc)
		for _, k := range ks {
			if g := iq4xsIsumK(k, qs, a, &sc); int64(g) != want {
				t.Fatalf("%v %d, plain %d", k, g, want)
			}
		}
	}
	for it := 0; it < 500; it++ {
		r.Read(qs)
		for i := range a {
			a[i] = int8(r.Intn(256) - 128)
			if r.Intn(4) == 0 {
				a[i] = -128
			}
		}
		for s := range sc {
			sc[s] = int16(r.Intn(64) - 32)
		}
		check()
	}
	for _, q := range []byte{0x00, 0xff, 0x0f} {
		for i := range qs {
			qs[i] = q
		}
		for i := range a {
			a[i] = -128
		}
		for _, scv := range []int16{-32, 31} {
			for s := range sc {
				sc[s] = scv
			}
			check()
		}
	}
}

// TestGGMLIsumWrap: with scales far outside the formats' ranges, where the
// twins' int32 sums wrap, every variant still gives the twin's int32 (the
// sub-block sums are exact and the scaled sum is formed modulo 2^32; the
// AVX2/AVX-512 IQ4_XS and Q6_K kernels multiply int16 scales, so those stay
// int16 here).
func TestGGMLIsumWrap(t *testing.T) {
	r := rand.New(rand.NewSource(6))
	qs, qh, ql, qh6, a := make([]byte, 128), make([]byte, 32), make([]byte, 128), make([]byte, 64), make([]int8, 256)
	for it := 0; it < 200; it++ {
		r.Read(qs)
		r.Read(qh)
		r.Read(ql)
		r.Read(qh6)
		for i := range a {
			a[i] = int8(r.Intn(255) - 127)
		}
		var sc32 [8]int32
		var sc16 [16]int16
		var sc8 [8]int16
		for s := range sc32 {
			sc32[s] = int32(r.Uint32())
			sc8[s] = int16(r.Intn(1<<16) - 1<<15)
		}
		for s := range sc16 {
			sc16[s] = int16(r.Intn(1<<16) - 1<<15)
		}
		for _, k := range ggmlKernels() {
			if g, w := q4kIsumK(k, qs, a, &sc32), q4kIsumGeneric(qs, a, &sc32); g != w {
				t.Fatalf("Q4_K %v %d, generic %d", k, g, w)
			}
			if g, w := q5kIsumK(k, qs, qh, a, &sc32), q5kIsumGeneric(qs, qh, a, &sc32); g != w {
				t.Fatalf("Q5_K %v %d, generic %d", k, g, w)
			}
			if g, w := q6kIsumK(k, ql, qh6, a, &sc16), q6kIsumGeneric(ql, qh6, a, &sc16); g != w {
				t.Fatalf("Q6_K %v %d, generic %d", k, g, w)
			}
			if g, w := iq4xsIsumK(k, qs, a, &sc8), iq4xsIsumGeneric(qs, a, &sc8); g != w {
				t.Fatalf("IQ4_XS %v %d, generic %d", k, g, w)
			}
		}
	}
}

// FuzzIQ4XSIsum compares the dispatched kernel with the plain sum on any
// bytes, activations in [−127, 127] and 6-bit scales.
func FuzzIQ4XSIsum(f *testing.F) {
	f.Add([]byte{1, 2, 3, 0xff, 0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		qs, a := make([]byte, 128), make([]int8, 256)
		var sc [8]int16
		for i := range qs {
			qs[i] = fuzzByte(data, i)
		}
		for i := range a {
			a[i] = max(int8(fuzzByte(data, 128+i)), -127)
		}
		for s := range sc {
			sc[s] = int16(fuzzByte(data, 384+s)&63) - 32
		}
		checkIQ4XSIsum(t, qs, a, &sc)
	})
}

// q5kIsumPlain is q4kIsumPlain with Q5_K's fifth bit: bit s of qh[i%32].
func q5kIsumPlain(qs, qh []byte, a []int8, sc *[8]int32) int64 {
	var s int64
	for i := range 256 {
		sb := i / 32
		v := qs[32*(sb/2)+i%32]
		n := int64(v & 15)
		if sb%2 == 1 {
			n = int64(v >> 4)
		}
		n += 16 * int64((qh[i%32]>>sb)&1)
		s += int64(sc[sb]) * n * int64(a[i])
	}
	return s
}

func checkQ5KIsum(t *testing.T, qs, qh []byte, a []int8, sc *[8]int32) {
	t.Helper()
	want := q5kIsumPlain(qs, qh, a, sc)
	if g := q5kIsumGeneric(qs, qh, a, sc); int64(g) != want {
		t.Fatalf("generic %d, plain %d", g, want)
	}
	for _, k := range ggmlKernels() {
		if g := q5kIsumK(k, qs, qh, a, sc); int64(g) != want {
			t.Fatalf("%v %d, plain %d", k, g, want)
		}
	}
	if g := q5kIsum(qs, qh, a, sc); int64(g) != want {
		t.Fatalf("dispatched (%s) %d, plain %d", Features(), g, want)
	}
}

// TestQ5KIsumEquivalence: the dispatched Q5_K kernel equals the pure-Go twin
// and the int64 sum on random and extreme input.
func TestQ5KIsumEquivalence(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	qs, qh, a := make([]byte, 128), make([]byte, 32), make([]int8, 256)
	var sc [8]int32
	for it := 0; it < 2000; it++ {
		r.Read(qs)
		r.Read(qh)
		for i := range a {
			a[i] = int8(r.Intn(256) - 128)
		}
		for s := range sc {
			sc[s] = int32(r.Intn(64))
		}
		checkQ5KIsum(t, qs, qh, a, &sc)
	}
	for i := range qs {
		qs[i] = 0xff
	}
	for i := range qh {
		qh[i] = 0xff
	}
	for s := range sc {
		sc[s] = 63
	}
	for _, v := range []int8{-128, 127} {
		for i := range a {
			a[i] = v
		}
		checkQ5KIsum(t, qs, qh, a, &sc)
	}
	for s := range 8 { // each sub-block alone
		clear(sc[:])
		sc[s] = 1
		r.Read(qs)
		r.Read(qh)
		checkQ5KIsum(t, qs, qh, a, &sc)
	}
}

// FuzzQ5KIsum compares the dispatched kernel with the plain sum on any bytes
// and activations, with 6-bit scales.
func FuzzQ5KIsum(f *testing.F) {
	f.Add([]byte{1, 2, 3, 0xff, 0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		qs, qh, a := make([]byte, 128), make([]byte, 32), make([]int8, 256)
		var sc [8]int32
		for i := range qs {
			qs[i] = fuzzByte(data, i)
		}
		for i := range qh {
			qh[i] = fuzzByte(data, 128+i)
		}
		for i := range a {
			a[i] = int8(fuzzByte(data, 160+i))
		}
		for s := range sc {
			sc[s] = int32(fuzzByte(data, 416+s) & 63)
		}
		checkQ5KIsum(t, qs, qh, a, &sc)
	})
}

// BenchmarkIQ4XSIsum and BenchmarkQ5KIsum: one superblock's integer sum per
// variant.
func BenchmarkIQ4XSIsum(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	qs, a := make([]byte, 128), make([]int8, 256)
	r.Read(qs)
	for i := range a {
		a[i] = int8(r.Intn(255) - 127)
	}
	sc := [8]int16{-3, 2, 3, -4, 5, 6, 7, 8}
	for _, k := range ggmlKernels() {
		b.Run(k.String(), func(b *testing.B) {
			for range b.N {
				iq4xsIsumK(k, qs, a, &sc)
			}
		})
	}
}

func BenchmarkQ5KIsum(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	qs, qh, a := make([]byte, 128), make([]byte, 32), make([]int8, 256)
	r.Read(qs)
	r.Read(qh)
	for i := range a {
		a[i] = int8(r.Intn(255) - 127)
	}
	sc := [8]int32{1, 2, 3, 4, 5, 6, 7, 8}
	for _, k := range ggmlKernels() {
		b.Run(k.String(), func(b *testing.B) {
			for range b.N {
				q5kIsumK(k, qs, qh, a, &sc)
			}
		})
	}
}
