package asm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// tProblem is a DotF32T / DotF16T call: nq queries of m floats, nb blocks of
// keys bstride apart, outputs ldo apart.
type tProblem struct {
	q         []float32
	nq, m, nb int
	ldo, bstr int
	kt        []float32
	kt16      []uint16
	name      string
}

func newTProblem(nq, m, nb, pad, ldoPad int, gen func(i int) float32) tProblem {
	p := tProblem{m: m, nb: nb, nq: nq, ldo: KeyBlock*nb + ldoPad, bstr: KeyBlock*m + pad}
	p.q = make([]float32, nq*m)
	for i := range p.q {
		p.q[i] = gen(i)
	}
	p.kt = make([]float32, (nb-1)*p.bstr+KeyBlock*m)
	for i := range p.kt {
		p.kt[i] = gen(len(p.q) + i)
	}
	p.kt16 = make([]uint16, len(p.kt))
	PutF16(p.kt16, p.kt)
	p.name = fmt.Sprintf("nq=%d/m=%d/nb=%d/pad=%d/ldo=%d", nq, m, nb, pad, p.ldo)
	return p
}

// key returns key j of block b (f16: widened), position-major.
func (p tProblem) key(b, j int, f16 bool) []float32 {
	k := make([]float32, p.m)
	for d := range k {
		i := b*p.bstr + KeyBlock*d + j
		k[d] = p.kt[i]
		if f16 {
			k[d] = F16ToF32(p.kt16[i])
		}
	}
	return k
}

// check compares the active variant's DotF32T and DotF16T with DotF32 of
// each query and key (the definition) and with the generic twin.
func (p tProblem) check(t *testing.T, off int) {
	t.Helper()
	nout := (p.nq-1)*p.ldo + KeyBlock*p.nb
	for _, f16 := range []bool{false, true} {
		name := p.name + map[bool]string{false: "/f32", true: "/f16"}[f16]
		run := func(out []float32) {
			if f16 {
				DotF16T(out, p.ldo, p.q, p.m, p.kt16, p.nb, p.bstr)
			} else {
				DotF32T(out, p.ldo, p.q, p.m, p.kt, p.nb, p.bstr)
			}
		}
		want := make([]float32, nout)
		generic(func() { run(want) })
		got, checkGot := guarded(nout, off, float32(-7))
		run(got)
		checkGot(t, name)
		for r := range p.nq {
			for b := range p.nb {
				for j := range KeyBlock {
					i := r*p.ldo + KeyBlock*b + j
					def := dotF32Generic(p.q[r*p.m:(r+1)*p.m], p.key(b, j, f16))
					if !sameFloat(want[i], def) {
						t.Fatalf("%s: generic out[q %d, block %d, key %d] = %v, DotF32 = %v", name, r, b, j, want[i], def)
					}
					if !sameFloat(got[i], def) {
						t.Fatalf("%s: out[q %d, block %d, key %d] = %v, want %v", name, r, b, j, got[i], def)
					}
				}
			}
			// Between rows (ldo > 16·nb) nothing is written.
			for i := r*p.ldo + KeyBlock*p.nb; r < p.nq-1 && i < (r+1)*p.ldo; i++ {
				if got[i] != -7 {
					t.Fatalf("%s: out[%d] between rows written", name, i)
				}
			}
		}
	}
}

func TestDotTMatchesDefinition(t *testing.T) {
	variants(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(15, 16))
		for _, m := range []int{1, 3, 8, 12, 16, 24, 64, 72, 128} {
			for _, nq := range []int{1, 2, 3, 4, 5, 6, 7} {
				for _, nb := range []int{1, 2, 3} {
					kind := xKinds[rng.IntN(len(xKinds))]
					p := newTProblem(nq, m, nb, rng.IntN(3)*8, rng.IntN(2)*5, func(int) float32 { return genX(rng, kind) })
					p.name += "/" + kind
					p.check(t, rng.IntN(3))
				}
			}
		}
	})
}

// panicCase is a call that must panic.
type panicCase struct {
	name string
	f    func()
}

func expectPanics(t *testing.T, cases []panicCase) {
	t.Helper()
	for _, c := range cases {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", c.name)
				}
			}()
			c.f()
		}()
	}
}

func TestDotTPanics(t *testing.T) {
	q := make([]float32, 16)
	kt := make([]float32, 16*8)
	expectPanics(t, []panicCase{
		{"m=0", func() { DotF32T(make([]float32, 16), 16, q, 0, kt, 1, 128) }},
		{"len(q) not a multiple of m", func() { DotF32T(make([]float32, 16), 16, q[:12], 8, kt, 1, 128) }},
		{"out too short", func() { DotF32T(make([]float32, 31), 16, q, 8, kt, 1, 128) }},
		{"ldo < 16·nb", func() { DotF32T(make([]float32, 64), 16, q, 8, make([]float32, 256), 2, 128) }},
		{"kt too short", func() { DotF16T(make([]float32, 32), 16, q, 8, make([]uint16, 127), 1, 128) }},
		{"bstride too small", func() { DotF32T(make([]float32, 64), 32, q[:8], 8, make([]float32, 256), 2, 64) }},
		{"nb < 0", func() { DotF32T(make([]float32, 16), 16, q, 8, kt, -1, 128) }},
	})
}

// TestDotTEmpty: no blocks (nb = 0) or no queries is nothing to do, whatever
// the other lengths, and writes nothing.
func TestDotTEmpty(t *testing.T) {
	out := []float32{-7, -7}
	variants(t, func(t *testing.T) {
		DotF32T(out, 0, make([]float32, 16), 8, nil, 0, 0)
		DotF16T(out, 0, make([]float32, 16), 8, nil, 0, 0)
		DotF32T(out, 0, nil, 8, nil, 3, 0)
		if out[0] != -7 || out[1] != -7 {
			t.Fatalf("out = %v, want untouched", out)
		}
	})
}

// FuzzDotT compares every variant's DotF32T and DotF16T with DotF32 on
// queries and keys from the fuzzer.
func FuzzDotT(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f, 0, 0, 0xc0, 0x7f, 1, 0, 0, 0x80}, uint8(64), uint8(3), uint8(2), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, mSel, nqSel, nbSel, pad uint8) {
		m := 1 + int(mSel)%136
		nq := 1 + int(nqSel)%7
		nb := 1 + int(nbSel)%4
		p := newTProblem(nq, m, nb, int(pad)%3*8, int(pad)%2*3, func(i int) float32 { return fuzzScale(data, i) })
		variants(t, func(t *testing.T) { p.check(t, int(pad)%3) })
	})
}

// checkAxpyN compares the active variant's AxpyF32StridedN and
// AxpyF16StridedN with AxpyF32Strided / AxpyF16Strided of each query in
// generic (the definition).
func checkAxpyN(t *testing.T, name string, y0 []float32, ldy, m, nq int, w []float32, ldw, n int, v []float32, stride, off int) {
	t.Helper()
	v16 := make([]uint16, len(v))
	PutF16(v16, v)
	for _, f16 := range []bool{false, true} {
		name := name + map[bool]string{false: "/f32", true: "/f16"}[f16]
		want := append([]float32(nil), y0...)
		generic(func() {
			for r := range nq {
				if f16 {
					AxpyF16Strided(want[r*ldy:r*ldy+m], w[r*ldw:r*ldw+n], v16, stride)
				} else {
					AxpyF32Strided(want[r*ldy:r*ldy+m], w[r*ldw:r*ldw+n], v, stride)
				}
			}
		})
		got, checkGot := guarded(len(y0), off, float32(-3))
		copy(got, y0)
		if f16 {
			AxpyF16StridedN(got, ldy, m, nq, w, ldw, n, v16, stride)
		} else {
			AxpyF32StridedN(got, ldy, m, nq, w, ldw, n, v, stride)
		}
		checkGot(t, name)
		for i := range got {
			if !sameFloat(got[i], want[i]) {
				t.Fatalf("%s: y[%d] = %v, want %v", name, i, got[i], want[i])
			}
		}
	}
}

func genAxpyN(nq, m, n, pad int, gen func(i int) float32) (y []float32, ldy int, w []float32, ldw int, v []float32, stride int) {
	ldy, ldw, stride = m+pad, n+pad, m+2*pad
	y = make([]float32, (nq-1)*ldy+m)
	w = make([]float32, (nq-1)*ldw+n)
	v = make([]float32, (n-1)*stride+m)
	for i := range y {
		y[i] = gen(i)
	}
	for i := range w {
		w[i] = gen(len(y) + i)
	}
	for i := range v {
		v[i] = gen(len(y) + len(w) + i)
	}
	return
}

func TestAxpyNMatchesGeneric(t *testing.T) {
	variants(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(17, 18))
		for _, m := range []int{1, 8, 16, 32, 64, 80, 128, 136} {
			for _, nq := range []int{1, 2, 3, 4, 6, 7} {
				for _, n := range []int{1, 2, 5, 17} {
					kind := xKinds[rng.IntN(len(xKinds))]
					pad := rng.IntN(2) * 16
					y, ldy, w, ldw, v, stride := genAxpyN(nq, m, n, pad, func(int) float32 { return genX(rng, kind) })
					name := fmt.Sprintf("m=%d/nq=%d/n=%d/pad=%d/%s", m, nq, n, pad, kind)
					checkAxpyN(t, name, y, ldy, m, nq, w, ldw, n, v, stride, rng.IntN(3))
				}
			}
		}
	})
}

func TestAxpyNPanics(t *testing.T) {
	y, w, v := make([]float32, 64), make([]float32, 8), make([]float32, 64)
	expectPanics(t, []panicCase{
		{"negative n", func() { AxpyF32StridedN(y, 16, 16, 1, w, 8, -1, v, 16) }},
		{"ldy < m", func() { AxpyF32StridedN(y, 8, 16, 2, w, 4, 4, v, 16) }},
		{"y too short", func() { AxpyF32StridedN(y, 32, 16, 3, w, 2, 2, v, 16) }},
		{"w too short", func() { AxpyF32StridedN(y, 16, 16, 2, w, 5, 4, v, 16) }},
		{"v too short", func() { AxpyF16StridedN(y, 16, 16, 1, w, 8, 5, make([]uint16, 64), 16) }},
	})
}

// FuzzAxpyN compares every variant's AxpyF32StridedN and AxpyF16StridedN
// with the per-query generic weighted sums on values from the fuzzer.
func FuzzAxpyN(f *testing.F) {
	f.Add([]byte{0, 0, 0x80, 0x3f, 0, 0, 0xc0, 0x7f, 1, 0, 0, 0x80}, uint8(64), uint8(3), uint8(5), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, mSel, nqSel, nSel, pad uint8) {
		m := 1 + int(mSel)%144
		nq := 1 + int(nqSel)%7
		n := 1 + int(nSel)%20
		y, ldy, w, ldw, v, stride := genAxpyN(nq, m, n, int(pad)%3*4, func(i int) float32 { return fuzzScale(data, i) })
		variants(t, func(t *testing.T) { checkAxpyN(t, "fuzz", y, ldy, m, nq, w, ldw, n, v, stride, int(pad)%3) })
	})
}

// BenchmarkScores: 3 queries of one 64-wide KV group against 256 keys, the
// per-key kernel over the position-major cache (135M shape: stride 192)
// against DotF32T / DotF16T over the channel-major block layout; then the
// weighted sums over as many values, query by query and three at once; then
// the softmax exponentials.
func BenchmarkScores(b *testing.B) {
	const m, n, stride, nq = 64, 256, 192, 3
	rng := rand.New(rand.NewPCG(1, 4))
	q := make([]float32, nq*m)
	kv := make([]float32, (n-1)*stride+m)
	kt := make([]float32, n*stride) // blocks of 16 positions × 192 channels
	for i := range q {
		q[i] = float32(rng.NormFloat64())
	}
	for i := range kv {
		kv[i] = float32(rng.NormFloat64())
	}
	for s := range n {
		for c := range stride {
			if s*stride+c < len(kv) {
				kt[s/KeyBlock*stride*KeyBlock+c*KeyBlock+s%KeyBlock] = kv[s*stride+c]
			}
		}
	}
	kv16, kt16 := make([]uint16, len(kv)), make([]uint16, len(kt))
	PutF16(kv16, kv)
	PutF16(kt16, kt)
	w := make([]float32, nq*n)
	bench := func(name string, f func()) {
		b.Run(name, func(b *testing.B) {
			benchVariants(b, func(b *testing.B) {
				c := startCPU()
				for b.Loop() {
					f()
				}
				c.report(b, 0, 2*m*n*nq)
			})
		})
	}
	// The baseline: each score its own DotF32 (what the key-by-key layout
	// allowed, and the definition each DotF32T lane reproduces).
	bench("DotF32", func() {
		for r := range nq {
			for j := range n {
				w[r*n+j] = DotF32(q[r*m:(r+1)*m], kv[j*stride:])
			}
		}
	})
	bench("DotF32T", func() { DotF32T(w, n, q, m, kt, n/KeyBlock, stride*KeyBlock) })
	bench("DotF16T", func() { DotF16T(w, n, q, m, kt16, n/KeyBlock, stride*KeyBlock) })
	y := make([]float32, nq*m)
	bench("AxpyF16Strided", func() {
		for r := range nq {
			AxpyF16Strided(y[r*m:(r+1)*m], w[r*n:(r+1)*n], kv16, stride)
		}
	})
	bench("AxpyF16StridedN", func() { AxpyF16StridedN(y, m, m, nq, w, n, n, kv16, stride) })
	bench("AxpyF32Strided", func() {
		for r := range nq {
			AxpyF32Strided(y[r*m:(r+1)*m], w[r*n:(r+1)*n], kv, stride)
		}
	})
	bench("AxpyF32StridedN", func() { AxpyF32StridedN(y, m, m, nq, w, n, n, kv, stride) })
	// The softmax exponentials of the same scores (ops: 2 per score, so that
	// the figures compare across variants only).
	e := make([]float32, nq*n)
	bench("ExpShiftF32", func() {
		copy(e, w)
		ExpShiftF32(e, 1)
	})
}

// TestDotTGenericMatchesRef: the fast pure-Go DotF32T and DotF16T equal
// their plain definition (dotTRef) bit for bit, on every kind of value.
func TestDotTGenericMatchesRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	for _, m := range []int{1, 7, 8, 64, 72} {
		for _, nq := range []int{1, 3, 6} {
			nb, bstr := 3, KeyBlock*m+8
			q := make([]float32, nq*m)
			k32 := make([]float32, nb*bstr)
			k16 := make([]uint16, nb*bstr)
			for i := range q {
				q[i] = genX(rng, xKinds[rng.IntN(len(xKinds))])
			}
			for i := range k32 {
				k32[i] = genX(rng, xKinds[rng.IntN(len(xKinds))])
				k16[i] = uint16(rng.Uint32())
			}
			ldo := KeyBlock*nb + 5
			want, got := make([]float32, nq*ldo), make([]float32, nq*ldo)
			dotTRef(want, ldo, q, nq, m, k32, nb, bstr, func(x float32) float32 { return x })
			dotF32TGeneric(got, ldo, q, nq, m, k32, nb, bstr)
			want16, got16 := make([]float32, nq*ldo), make([]float32, nq*ldo)
			dotTRef(want16, ldo, q, nq, m, k16, nb, bstr, F16ToF32)
			dotF16TGeneric(got16, ldo, q, nq, m, k16, nb, bstr)
			for i := range want {
				if !sameFloat(got[i], want[i]) || !sameFloat(got16[i], want16[i]) {
					t.Fatalf("m=%d nq=%d out[%d]: f32 %v want %v, f16 %v want %v", m, nq, i, got[i], want[i], got16[i], want16[i])
				}
			}
		}
	}
}
