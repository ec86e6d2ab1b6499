package asm

import (
	"math"
	"math/rand"
	"testing"
)

// checkQuantizeQ8K compares every variant's QuantizeQ8_K with the pure-Go
// twin on x, bit for bit (q, d, bs), and the twin's q and bs with the rule
// written out once more.
func checkQuantizeQ8K(t *testing.T, x []float32) {
	t.Helper()
	nb := len(x) / QK
	wq, wd, wb := make([]int8, len(x)), make([]float32, nb), make([]int16, nb*16)
	quantizeQ8KGeneric(x, wq, wd, wb)
	for b := range nb {
		var s [16]int
		for j := range QK {
			s[j/16] += int(wq[b*QK+j])
		}
		for g := range 16 {
			if int(wb[b*16+g]) != s[g] {
				t.Fatalf("generic: bs[%d] = %d, the q sum %d", b*16+g, wb[b*16+g], s[g])
			}
		}
	}
	for _, k := range ggmlKernels() {
		q, d, bs := make([]int8, len(x)), make([]float32, nb), make([]int16, nb*16)
		for i := range q {
			q[i] = 99 // stale values must be overwritten
		}
		for i := range bs {
			bs[i] = 999
		}
		quantizeQ8KK(k, x, q, d, bs)
		for i := range q {
			if q[i] != wq[i] {
				t.Fatalf("%v: q[%d] = %d, generic %d (x %v, d %v)", k, i, q[i], wq[i], x[i], wd[i/QK])
			}
		}
		for b := range d {
			if math.Float32bits(d[b]) != math.Float32bits(wd[b]) {
				t.Fatalf("%v: d[%d] = %v, generic %v", k, b, d[b], wd[b])
			}
		}
		for i := range bs {
			if bs[i] != wb[i] {
				t.Fatalf("%v: bs[%d] = %d, generic %d", k, i, bs[i], wb[i])
			}
		}
	}
}

// TestQuantizeQ8KKernels: on random rows (normal, wide-ranging magnitudes),
// zero and negative-zero superblocks, ties of the largest magnitude with
// both signs (the first one wins: the sign of iscale), subnormals, and NaN
// and ±Inf elements, every variant equals the twin.
func TestQuantizeQ8KKernels(t *testing.T) {
	r := rand.New(rand.NewSource(31))
	for it := range 300 {
		nb := 1 + it%5
		x := make([]float32, nb*QK)
		for i := range x {
			x[i] = float32(r.NormFloat64() * math.Exp(3*r.NormFloat64()))
		}
		for b := range nb {
			xb := x[b*QK : (b+1)*QK]
			switch r.Intn(10) {
			case 0:
				clear(xb)
			case 1:
				for i := range xb {
					xb[i] = float32(math.Copysign(0, -1))
				}
			case 2: // tie: −m before +m, or the reverse
				m := float32(r.ExpFloat64())
				i, j := r.Intn(QK), r.Intn(QK)
				for i == j {
					j = r.Intn(QK)
				}
				for k := range xb {
					xb[k] = m * float32(r.Float64()) * 0.5
				}
				xb[i], xb[j] = -m, m
			case 3:
				for k := range xb {
					xb[k] = math.Float32frombits(uint32(r.Intn(1 << 23)))
				}
			case 4:
				xb[r.Intn(QK)] = float32(math.NaN())
				xb[r.Intn(QK)] = math.Float32frombits(0x7f812345) // a signalling NaN's bits
			case 5:
				xb[r.Intn(QK)] = float32(math.Inf(1 - 2*r.Intn(2)))
			case 6:
				for k := range xb {
					xb[k] = float32(math.NaN())
				}
			case 7: // every value at the largest magnitude: q = ±127 throughout
				for k := range xb {
					xb[k] = float32(1 - 2*(k&1))
				}
			}
		}
		checkQuantizeQ8K(t, x)
	}
}

// TestQuantizeQ8KEdges: fixed superblocks on each branch of the SIMD
// kernels' max and scale steps (issue 23: quantizeQ8KNEON's signed/unsigned
// maxima, NaN and tie paths): a single nonzero element of either sign at the
// first, a middle and the last place; huge values (MaxFloat32); a largest
// magnitude under 127/MaxFloat32 (iscale = ±Inf, d = ∓0) and a subnormal
// one; +Inf or −Inf as the largest (iscale = ∓0, d = ∓Inf), with NaNs of both
// signs (quiet and signalling bits) beside them; ties of opposite signs at
// the ends; −0 with NaNs only (amax = 0); each superblock alone and all of
// them in one call.
func TestQuantizeQ8KEdges(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	negNaN, sNaN := math.Float32frombits(0xffc01234), math.Float32frombits(0xff800001)
	var all []float32
	add := func(set func(xb []float32)) {
		xb := make([]float32, QK)
		set(xb)
		checkQuantizeQ8K(t, xb)
		all = append(all, xb...)
	}
	for _, i := range []int{0, 77, QK - 1} {
		for _, v := range []float32{1, -1, 3e38, -3e38, 1e-38, -1e-38, 1e-45, -1e-45, inf, -inf} {
			add(func(xb []float32) { xb[i] = v })
			add(func(xb []float32) {
				for k := range xb {
					xb[k] = v * float32(k%7) / 8
				}
				xb[i] = v
				xb[(i+5)%QK] = [4]float32{nan, negNaN, sNaN, -nan}[i%4]
			})
		}
	}
	add(func(xb []float32) {
		for k := range xb {
			xb[k] = math.MaxFloat32 * float32(1-2*(k%3&1)) * float32(k%5+1) / 5
		}
	})
	add(func(xb []float32) {
		for k := range xb {
			xb[k] = 3.7e-37 * float32(k%9-4) / 4
		}
	})
	add(func(xb []float32) { xb[3], xb[200], xb[201] = inf, -inf, nan })
	add(func(xb []float32) { xb[0], xb[QK-1] = -2, 2 })
	add(func(xb []float32) { xb[0], xb[QK-1] = 2, -2 })
	add(func(xb []float32) {
		for k := range xb {
			xb[k] = [4]float32{float32(math.Copysign(0, -1)), nan, negNaN, sNaN}[k%4]
		}
	})
	add(func(xb []float32) {
		for k := range xb {
			xb[k] = float32(k%255) - 127 // exact ties to even: k/127·127
		}
		xb[100] = 127.49
	})
	checkQuantizeQ8K(t, all)
}

// FuzzQuantizeQ8K compares every variant with the twin on any float bits.
func FuzzQuantizeQ8K(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x7f}, int64(1))
	f.Add(make([]byte, 1024), int64(2))
	f.Fuzz(func(t *testing.T, data []byte, seed int64) {
		r := rand.New(rand.NewSource(seed))
		x := make([]float32, (1+len(data)/1024)*QK)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		for i := 0; i+4 <= len(data); i += 4 {
			x[i/4] = math.Float32frombits(uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24)
		}
		checkQuantizeQ8K(t, x)
	})
}
