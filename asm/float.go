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

// SumF32 returns Σ x[i] in DotF32's order (lane i mod 8, then the same
// reduction).
func SumF32(x []float32) float32 {
	if len(x) == 0 {
		return 0
	}
	return sumF32(x)
}

// MaxF32 returns softmax's maximum of x (len(x) ≥ 1): m = x[0], then m = v
// for each later v > m. NaNs are skipped unless x[0] is one (then the result
// is NaN). Where the maximum is a zero, its sign may differ from that loop's
// (which keeps the first of +0 and -0): x − m is then the same for every x
// but ±0, whose exponential is 1 either way.
func MaxF32(x []float32) float32 {
	if len(x) == 0 {
		panic("asm: MaxF32 of nothing")
	}
	return maxF32(x)
}

func maxF32Generic(x []float32, m float32) float32 {
	for _, v := range x {
		if v > m {
			m = v
		}
	}
	return m
}

// ScaleF32 sets x[i] = x[i]·s.
func ScaleF32(x []float32, s float32) { scaleF32(x, s, false) }

// DivF32 sets x[i] = x[i] / s.
func DivF32(x []float32, s float32) { scaleF32(x, s, true) }

func sumF32Generic(x []float32) float32 {
	var acc [8]float32
	for i, v := range x {
		acc[i&7] = acc[i&7] + v
	}
	return reduce8(&acc)
}

func scaleF32Generic(x []float32, s float32, div bool) {
	if div {
		for i := range x {
			x[i] /= s
		}
		return
	}
	for i := range x {
		x[i] *= s
	}
}

func dotF32Generic(a, b []float32) float32 {
	var acc [8]float32
	b = b[:len(a)]
	for i := range a {
		acc[i&7] = acc[i&7] + float32(a[i]*b[i])
	}
	return reduce8(&acc)
}

func axpyF32Generic(y []float32, a float32, x []float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] = y[i] + float32(a*x[i])
	}
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

// axpyF32StridedGeneric keeps 8 elements of y in locals (registers) while
// the len(w) values go by, each element adding its products in increasing j
// as len(w) AxpyF32 calls would; the last len(y) mod 8 elements so.
func axpyF32StridedGeneric(y, w, v []float32, stride int) {
	m := len(y)
	m8 := m &^ 7
	for i := 0; i < m8; i += 8 {
		yv := (*[8]float32)(y[i:])
		y0, y1, y2, y3, y4, y5, y6, y7 := yv[0], yv[1], yv[2], yv[3], yv[4], yv[5], yv[6], yv[7]
		for j, a := range w {
			x := (*[8]float32)(v[j*stride+i:])
			y0 = y0 + float32(a*x[0])
			y1 = y1 + float32(a*x[1])
			y2 = y2 + float32(a*x[2])
			y3 = y3 + float32(a*x[3])
			y4 = y4 + float32(a*x[4])
			y5 = y5 + float32(a*x[5])
			y6 = y6 + float32(a*x[6])
			y7 = y7 + float32(a*x[7])
		}
		yv[0], yv[1], yv[2], yv[3], yv[4], yv[5], yv[6], yv[7] = y0, y1, y2, y3, y4, y5, y6, y7
	}
	if m8 < m {
		for j, a := range w {
			axpyF32Generic(y[m8:], a, v[j*stride+m8:j*stride+m])
		}
	}
}

// ExpShiftF32 sets x[i] = ExpF32(x[i] − m), the subtraction in float32: the
// exponentials of softmax.
func ExpShiftF32(x []float32, m float32) {
	if len(x) == 0 {
		return
	}
	expShiftF32(x, m)
}

// SiLUMulF32 sets g[i] = float32(g[i] / (1 + e)) · u[i] with e = ExpF32(−g[i]),
// every operation in float32 in that order (SiLU of the gate times the up
// projection); len(u) ≥ len(g).
func SiLUMulF32(g, u []float32) {
	if len(u) < len(g) {
		panic("asm: SiLUMulF32: len(u) < len(g)")
	}
	if len(g) == 0 {
		return
	}
	siluMulF32(g, u[:len(g)])
}

// The constants of ExpF32: Cody–Waite's split of ln 2 (c1 has 9 significant
// bits, so n·c1 is exact for |n| ≤ 2^15) and Cephes' expf polynomial.
const (
	expLog2e = float32(1.44269504088896341)
	expC1    = float32(0.693359375)
	expC2    = float32(-2.12194440e-4)
	expP0    = float32(1.9875691500e-4)
	expP1    = float32(1.3981999507e-3)
	expP2    = float32(8.3334519073e-3)
	expP3    = float32(4.1665795894e-2)
	expP4    = float32(1.6666665459e-1)
	expP5    = float32(5.0000001201e-1)
	expLo    = float32(-104) // e^-104 is below half the smallest subnormal
	expHi    = float32(89)   // e^89 is above the largest float32
)

// ExpF32 is the exponential of the SIMD kernels, defined by its float32
// operations (each rounded to nearest even, no FMA), within 2 ulp of e^x:
// NaN gives x + x (quieted); otherwise t = x clamped to [−104, 89],
// n = roundToEven(t·log2e), r = (t − n·c1) − n·c2, p = Cephes' degree-5
// polynomial in r by Horner's rule, y = (p·r² + r) + 1, and the result
// (y·2^⌊n/2⌋)·2^(n−⌊n/2⌋): two exact scalings, so that subnormal results
// round once and e^89 overflows to +Inf.
func ExpF32(x float32) float32 {
	if x != x {
		return x + x
	}
	t := min(max(x, expLo), expHi)
	n := float32(math.RoundToEven(float64(float32(t * expLog2e))))
	r := float32(t - float32(n*expC1))
	r = float32(r - float32(n*expC2))
	p := float32(expP0 * r)
	p = float32(p + expP1)
	p = float32(float32(p*r) + expP2)
	p = float32(float32(p*r) + expP3)
	p = float32(float32(p*r) + expP4)
	p = float32(float32(p*r) + expP5)
	r2 := float32(r * r)
	y := float32(float32(float32(p*r2)+r) + 1)
	e1 := int32(n) >> 1
	e2 := int32(n) - e1
	y = float32(y * math.Float32frombits(uint32(e1+127)<<23))
	return float32(y * math.Float32frombits(uint32(e2+127)<<23))
}

func expShiftF32Generic(x []float32, m float32) {
	for i, v := range x {
		x[i] = ExpF32(v - m)
	}
}

func siluMulF32Generic(g, u []float32) {
	u = u[:len(g)]
	for i, v := range g {
		e := ExpF32(-v)
		g[i] = v / (1 + e) * u[i]
	}
}

// reduce8 is DotF32's reduction of its 8 lane sums: v[l] = acc[l] + acc[l+4],
// then (v[0] + v[2]) + (v[1] + v[3]).
func reduce8(acc *[8]float32) float32 {
	v0 := acc[0] + acc[4]
	v1 := acc[1] + acc[5]
	v2 := acc[2] + acc[6]
	v3 := acc[3] + acc[7]
	return (v0 + v2) + (v1 + v3)
}
