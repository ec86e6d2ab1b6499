package asm

import "math"

// DotF32 returns Σ a[i]·b[i] over len(a) elements (len(b) ≥ len(a)) in the
// 8-lane order of package infer: lane l = i mod 8 accumulates
// acc[l] = acc[l] + float32(a[i]·b[i]) in increasing i (no FMA), then
// v[l] = acc[l] + acc[l+4] (l < 4) and r = (v[0] + v[2]) + (v[1] + v[3]).
func DotF32(a, b []float32) float32 {
	if len(b) < len(a) {
		panic("asm: DotF32: len(b) < len(a)")
	}
	if len(a) == 0 {
		return 0
	}
	return dotF32(a, b[:len(a)])
}

// AxpyF32 sets y[i] = y[i] + float32(a·x[i]) (no FMA) for i < len(y);
// len(x) ≥ len(y).
func AxpyF32(y []float32, a float32, x []float32) {
	if len(x) < len(y) {
		panic("asm: AxpyF32: len(x) < len(y)")
	}
	if len(y) == 0 {
		return
	}
	axpyF32(y, a, x[:len(y)])
}

func dotF32Generic(a, b []float32) float32 {
	var acc [8]float32
	b = b[:len(a)]
	for i := range a {
		acc[i&7] = acc[i&7] + float32(a[i]*b[i])
	}
	v0 := acc[0] + acc[4]
	v1 := acc[1] + acc[5]
	v2 := acc[2] + acc[6]
	v3 := acc[3] + acc[7]
	return (v0 + v2) + (v1 + v3)
}

func axpyF32Generic(y []float32, a float32, x []float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] = y[i] + float32(a*x[i])
	}
}

// DotF32Strided sets out[j] = DotF32(q, k[j·stride : j·stride+len(q)]) for
// j < len(out): the attention scores of one query against len(out) keys laid
// out stride floats apart. Each output has DotF32's bits.
func DotF32Strided(out, q, k []float32, stride int) {
	n := len(out)
	if n == 0 {
		return
	}
	if stride < 0 || (n-1)*stride+len(q) > len(k) || (n > 1 && stride < 1) {
		panic("asm: DotF32Strided: k too short for len(out) keys of len(q) at stride")
	}
	if len(q) == 0 {
		clear(out)
		return
	}
	dotF32Strided(out, q, k, stride)
}

// AxpyF32Strided adds, for j = 0, 1, …, len(w)−1 in that order,
// y[i] = y[i] + float32(w[j]·v[j·stride+i]) (i < len(y)): the attention's
// weighted sum of len(w) values laid out stride floats apart. Each y[i] has
// the bits of len(w) successive AxpyF32 calls.
func AxpyF32Strided(y, w, v []float32, stride int) {
	n := len(w)
	if n == 0 || len(y) == 0 {
		return
	}
	if stride < 0 || (n-1)*stride+len(y) > len(v) {
		panic("asm: AxpyF32Strided: v too short for len(w) values of len(y) at stride")
	}
	axpyF32Strided(y, w, v, stride)
}

func dotF32StridedGeneric(out, q, k []float32, stride int) {
	for j := range out {
		out[j] = dotF32Generic(q, k[j*stride:j*stride+len(q)])
	}
}

func axpyF32StridedGeneric(y, w, v []float32, stride int) {
	for j, a := range w {
		axpyF32Generic(y, a, v[j*stride:j*stride+len(y)])
	}
}

// ExpShiftF32 sets x[i] = float32(math.Exp(float64(x[i] − m))), the
// subtraction in float32: the exponentials of softmax. The SIMD version runs
// where math.Exp takes its FMA path (amd64 with AVX2 and FMA) and repeats that
// path's operations lane by lane, so the bits are math.Exp's.
func ExpShiftF32(x []float32, m float32) {
	if len(x) == 0 {
		return
	}
	expShiftF32(x, m)
}

// SiLUMulF32 sets g[i] = float32(g[i] / (1 + e)) · u[i] with
// e = float32(math.Exp(float64(−g[i]))), every operation in float32 in that
// order (SiLU of the gate times the up projection); len(u) ≥ len(g).
func SiLUMulF32(g, u []float32) {
	if len(u) < len(g) {
		panic("asm: SiLUMulF32: len(u) < len(g)")
	}
	if len(g) == 0 {
		return
	}
	siluMulF32(g, u[:len(g)])
}

func expShiftF32Generic(x []float32, m float32) {
	for i, v := range x {
		x[i] = float32(math.Exp(float64(v - m)))
	}
}

func siluMulF32Generic(g, u []float32) {
	u = u[:len(g)]
	for i, v := range g {
		e := float32(math.Exp(float64(-v)))
		g[i] = v / (1 + e) * u[i]
	}
}
