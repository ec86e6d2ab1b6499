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
// asm.DotF32 has this definition (and SIMD versions of it).
func dotF32(a, b []float32) float32 { return asm.DotF32(a, b[:len(a)]) }

// sumF32 returns Σ x[i] in the same 8-lane order as dotF32 (asm.SumF32).
func sumF32(x []float32) float32 { return asm.SumF32(x) }

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
	m := asm.MaxF32(x)       // the first maximum (a zero's sign aside, which changes no x − m)
	asm.ExpShiftF32(x, m)    // x[i] = asm.ExpF32(x[i] − m)
	asm.DivF32(x, sumF32(x)) // x[i] /= s
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
