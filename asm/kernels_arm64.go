//go:build arm64 && gc && !purego

package asm

// The product kernels (kernels_arm64.s, written by _genarm64/gen.py; run
// `python3 _genarm64/gen.py > kernels_arm64.s` in asm/): gemv over ngroups ≥ 1
// groups of 16 rows of the packed layout from w, nb ≥ 1 blocks, one
// activation row packed by packAct (g = 1) with the correction k·Σa, k = −8
// for Q4_0 (the sums start at it) and 0 for Q8_0. DotProd kernels use SDOT,
// NEON ones SMULL + ADDP + SADALP (exact: a pair of products fits int16).

//go:noescape
func gemvQ8_0DotProd(out *float32, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemvQ4_0DotProd(out *float32, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemvQ8_0F16DotProd(out *float32, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemvQ4_0F16DotProd(out *float32, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemvQ8_0NEON(out *float32, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemvQ4_0NEON(out *float32, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemvQ8_0F16NEON(out *float32, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemvQ4_0F16NEON(out *float32, w *byte, ngroups int, nb int, act *byte)

// gemmRows makes a gemm of one activation row (g = 1) from a gemv: the
// matrix-matrix product runs the gemv row by row.
func gemmRows(gemv func(out *float32, w *byte, ngroups int, nb int, act *byte)) func(out *float32, ldo int, w *byte, ngroups int, nb int, act *byte) {
	return func(out *float32, _ int, w *byte, ngroups int, nb int, act *byte) { gemv(out, w, ngroups, nb, act) }
}

// gemm2…I8MM multiply two activation rows (g = 2) with SMMLA; an odd last
// row goes through the dotprod gemv.

//go:noescape
func gemm2Q8_0I8MM(out *float32, ldo int, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemm2Q4_0I8MM(out *float32, ldo int, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemm2Q8_0F16I8MM(out *float32, ldo int, w *byte, ngroups int, nb int, act *byte)

//go:noescape
func gemm2Q4_0F16I8MM(out *float32, ldo int, w *byte, ngroups int, nb int, act *byte)

var kernelSets = [2][3][2]kernelSet{ // [f16?][neon, dotprod, i8mm][q4?]
	{
		{{gemvQ8_0NEON, gemmRows(gemvQ8_0NEON), 1, 0, false, false}, {gemvQ4_0NEON, gemmRows(gemvQ4_0NEON), 1, -8, true, false}},
		{{gemvQ8_0DotProd, gemmRows(gemvQ8_0DotProd), 1, 0, false, false}, {gemvQ4_0DotProd, gemmRows(gemvQ4_0DotProd), 1, -8, true, false}},
		{{gemvQ8_0DotProd, gemm2Q8_0I8MM, 2, 0, false, false}, {gemvQ4_0DotProd, gemm2Q4_0I8MM, 2, -8, true, false}},
	},
	{
		{{gemvQ8_0F16NEON, gemmRows(gemvQ8_0F16NEON), 1, 0, false, true}, {gemvQ4_0F16NEON, gemmRows(gemvQ4_0F16NEON), 1, -8, true, true}},
		{{gemvQ8_0F16DotProd, gemmRows(gemvQ8_0F16DotProd), 1, 0, false, true}, {gemvQ4_0F16DotProd, gemmRows(gemvQ4_0F16DotProd), 1, -8, true, true}},
		{{gemvQ8_0F16DotProd, gemm2Q8_0F16I8MM, 2, 0, false, true}, {gemvQ4_0F16DotProd, gemm2Q4_0F16I8MM, 2, -8, true, true}},
	},
}

func packedMatMul(out []float32, ldo int, w []byte, rows int, q4, f16 bool, a []int8, da []float32, n, nb int) {
	if active == Generic {
		packedMatMulGeneric(out, ldo, w, rows, q4, f16, a, da, n, nb)
		return
	}
	packedMatMulSIMD(&kernelSets[b2i(f16)][active-NEON][b2i(q4)], out, ldo, w, rows, a, da, n, nb)
}

// packAct is packActGeneric (kernels_amd64.go has the layout).
func packAct(dst []byte, a []int8, da []float32, nb, g int, k int32) {
	packActGeneric(dst, a, da, nb, g, k)
}

// quantizeQ8_0NEON is quantizeQ8_0Generic over nb ≥ 1 blocks.
//
//go:noescape
func quantizeQ8_0NEON(x *float32, q *int8, d *float32, nb int)

func quantizeQ8_0(x []float32, q []int8, d []float32) {
	if active >= NEON {
		quantizeQ8_0NEON(&x[0], &q[0], &d[0], len(x)/BlockSize)
		return
	}
	quantizeQ8_0Generic(x, q, d)
}

// The f32 kernels (float_arm64.s); the 8-lane sums leave their lanes in acc
// for the Go tail and reduce8, so that every element goes to the twin's lane.

//go:noescape
func dotF32NEON(acc *[8]float32, a *float32, b *float32, n int)

//go:noescape
func sumF32NEON(acc *[8]float32, x *float32, n int)

//go:noescape
func axpyF32NEON(y *float32, a float32, x *float32, n int)

//go:noescape
func scaleF32NEON(x *float32, s float32, n int, div bool)

func dotF32(a, b []float32) float32 {
	var acc [8]float32
	n := 0
	if active >= NEON {
		if n = len(a) &^ 7; n > 0 {
			dotF32NEON(&acc, &a[0], &b[0], n)
		}
	}
	b = b[:len(a)]
	for i := n; i < len(a); i++ {
		acc[i&7] = acc[i&7] + float32(a[i]*b[i])
	}
	return reduce8(&acc)
}

func sumF32(x []float32) float32 {
	var acc [8]float32
	n := 0
	if active >= NEON {
		if n = len(x) &^ 7; n > 0 {
			sumF32NEON(&acc, &x[0], n)
		}
	}
	for i := n; i < len(x); i++ {
		acc[i&7] = acc[i&7] + x[i]
	}
	return reduce8(&acc)
}

func axpyF32(y []float32, a float32, x []float32) {
	if active >= NEON {
		if n := len(y) &^ 3; n > 0 {
			axpyF32NEON(&y[0], a, &x[0], n)
			y, x = y[n:], x[n:]
		}
	}
	axpyF32Generic(y, a, x)
}

func axpyF32Strided(y, w, v []float32, stride int) {
	if active < NEON {
		axpyF32StridedGeneric(y, w, v, stride)
		return
	}
	for j, a := range w {
		axpyF32(y, a, v[j*stride:j*stride+len(y)])
	}
}

func scaleF32(x []float32, s float32, div bool) {
	if active >= NEON {
		if n := len(x) &^ 3; n > 0 {
			scaleF32NEON(&x[0], s, n, div)
			x = x[n:]
		}
	}
	scaleF32Generic(x, s, div)
}

//go:noescape
func putF16NEON(dst *uint16, x *float32, n int)

//go:noescape
func roundF16NEON(x *float32, n int)

func putF16(dst []uint16, x []float32) {
	if active >= NEON {
		if n := len(x) &^ 7; n > 0 {
			putF16NEON(&dst[0], &x[0], n)
			dst, x = dst[n:], x[n:]
		}
	}
	putF16Generic(dst, x)
}

func roundF16(x []float32) {
	if active >= NEON {
		if n := len(x) &^ 7; n > 0 {
			roundF16NEON(&x[0], n)
			x = x[n:]
		}
	}
	roundF16Generic(x)
}

// The exponentials (exp_arm64.s).

//go:noescape
func expShiftF32NEON(x *float32, m float32, n int)

//go:noescape
func siluMulF32NEON(gate *float32, up *float32, n int)

func expShiftF32(x []float32, m float32) {
	if active >= NEON {
		if n := len(x) &^ 3; n > 0 {
			expShiftF32NEON(&x[0], m, n)
			x = x[n:]
		}
	}
	expShiftF32Generic(x, m)
}

func siluMulF32(g, u []float32) {
	if active >= NEON {
		if n := len(g) &^ 3; n > 0 {
			siluMulF32NEON(&g[0], &u[0], n)
			g, u = g[n:], u[n:]
		}
	}
	siluMulF32Generic(g, u)
}

//go:noescape
func maxF32NEON(lanes *[4]float32, x *float32, n int)

func maxF32(x []float32) float32 {
	if active >= NEON {
		if n := len(x) &^ 3; n > 0 {
			var lanes [4]float32
			maxF32NEON(&lanes, &x[0], n)
			return maxF32Generic(x[n:], maxF32Generic(lanes[1:], lanes[0]))
		}
	}
	return maxF32Generic(x[1:], x[0])
}

// PacksIQ4_NL reports whether the active variant multiplies PackIQ4_NL's
// layout natively: none here (IQ4_NLAsQ8_0 is the fast way).
func PacksIQ4_NL() bool { return false }

func packedMatMulIQ4(out []float32, ldo int, w []byte, rows int, f16 bool, a []int8, da []float32, n, nb int) {
	packedIQ4Ref(out, ldo, w, rows, f16, a, da, n, nb)
}
