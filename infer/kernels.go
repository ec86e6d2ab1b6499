package infer

import (
	"math"

	"github.com/krafla/krafla/asm"
)

// The float kernels. Each reduction has the order written in its comment; a
// product is always rounded to float32 before it is added (float32(a*b) + c),
// which forbids FMA fusion, so that SIMD versions can reproduce the bits.

// dotF32 returns Σ a[i]·b[i] over len(a) elements in the 8-lane order: lane
// l = i mod 8 accumulates acc[l] = acc[l] + float32(a[i]*b[i]) in increasing i;
// then v[l] = acc[l] + acc[l+4] (l < 4) and r = (v[0] + v[2]) + (v[1] + v[3]).
// An 8-wide SIMD loop with a masked tail produces the same lanes.
func dotF32(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var a0, a1, a2, a3, a4, a5, a6, a7 float32
	for len(a) >= 8 && len(b) >= 8 {
		a0 = a0 + float32(a[0]*b[0])
		a1 = a1 + float32(a[1]*b[1])
		a2 = a2 + float32(a[2]*b[2])
		a3 = a3 + float32(a[3]*b[3])
		a4 = a4 + float32(a[4]*b[4])
		a5 = a5 + float32(a[5]*b[5])
		a6 = a6 + float32(a[6]*b[6])
		a7 = a7 + float32(a[7]*b[7])
		a, b = a[8:], b[8:]
	}
	if len(a) == 0 {
		v0, v1, v2, v3 := a0+a4, a1+a5, a2+a6, a3+a7
		return (v0 + v2) + (v1 + v3)
	}
	acc := [8]float32{a0, a1, a2, a3, a4, a5, a6, a7}
	for l := range a {
		acc[l] = acc[l] + float32(a[l]*b[l])
	}
	return reduce8(&acc)
}

// sumF32 returns Σ x[i] in the same 8-lane order as dotF32.
func sumF32(x []float32) float32 {
	var acc [8]float32
	n := len(x)
	i := 0
	for ; i+8 <= n; i += 8 {
		acc[0] += x[i]
		acc[1] += x[i+1]
		acc[2] += x[i+2]
		acc[3] += x[i+3]
		acc[4] += x[i+4]
		acc[5] += x[i+5]
		acc[6] += x[i+6]
		acc[7] += x[i+7]
	}
	for l := 0; i < n; i, l = i+1, l+1 {
		acc[l] += x[i]
	}
	return reduce8(&acc)
}

func reduce8(acc *[8]float32) float32 {
	v0 := acc[0] + acc[4]
	v1 := acc[1] + acc[5]
	v2 := acc[2] + acc[6]
	v3 := acc[3] + acc[7]
	return (v0 + v2) + (v1 + v3)
}

// rmsNorm writes out[i] = float32(x[i]·s)·g[i] with s = 1/sqrt(Σx²/n + eps)
// (Σx² by dotF32, the square root in float64 rounded once to float32).
// out may alias x.
func rmsNorm(out, x, g []float32, eps float32) {
	ms := dotF32(x, x) / float32(len(x))
	s := float32(1 / math.Sqrt(float64(ms+eps)))
	g = g[:len(x)]
	out = out[:len(x)]
	for i, v := range x {
		out[i] = float32(v*s) * g[i]
	}
}

func expF32(x float32) float32 { return float32(math.Exp(float64(x))) }

// silu returns x·sigmoid(x) = x / (1 + e^-x).
func silu(x float32) float32 { return x / (1 + expF32(-x)) }

func sigmoid(x float32) float32 { return 1 / (1 + expF32(-x)) }

// softplus returns ln(1 + e^x), as torch does with threshold 20.
func softplus(x float32) float32 {
	if x > 20 {
		return x
	}
	return float32(math.Log1p(math.Exp(float64(x))))
}

// gelu is the tanh approximation 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))),
// evaluated in float64 and rounded once.
func gelu(x float32) float32 {
	v := float64(x)
	return float32(0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v))))
}

// softcap returns c·tanh(x/c), evaluated in float64 and rounded once.
func softcap(x, c float32) float32 {
	return float32(float64(c) * math.Tanh(float64(x)/float64(c)))
}

// softmax replaces x by its softmax: m = max x; e[i] = exp(x[i] − m);
// s = sumF32(e); x[i] = e[i] / s.
func softmax(x []float32) {
	if len(x) == 0 {
		return
	}
	m := x[0]
	for _, v := range x[1:] {
		if v > m {
			m = v
		}
	}
	asm.ExpShiftF32(x, m) // x[i] = asm.ExpF32(x[i] − m)
	s := sumF32(x)
	for i := range x {
		x[i] /= s
	}
}

// swiGLU writes g[i] = act(g[i])·u[i] (SiLU or GELU-tanh on the gate).
func swiGLU(g, u []float32, act int) {
	u = u[:len(g)]
	if act == actGELU {
		for i, v := range g {
			g[i] = gelu(v) * u[i]
		}
		return
	}
	asm.SiLUMulF32(g, u) // g[i] = g[i]/(1 + asm.ExpF32(−g[i]))·u[i]
}

// axpy adds y[i] = y[i] + float32(a·x[i]).
func axpy(y []float32, a float32, x []float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] = y[i] + float32(a*x[i])
	}
}

// add adds y[i] += x[i].
func add(y, x []float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] += x[i]
	}
}
