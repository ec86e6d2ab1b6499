package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// variants runs f once per SIMD variant this CPU has, with that variant
// active (the feature switch is global, so these tests are not parallel);
// the variants of this architecture that the CPU lacks are skipped visibly.
// Generic runs too: the checks compare with definitions as well as with the
// generic twin, so under -tags purego (no SIMD variant) they still test the
// exported functions and their twins rather than nothing.
func variants(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	defer func(k Kernel) { active = k }(active)
	for _, k := range append(archVariants(), Generic) {
		if !Available(k) {
			t.Run(k.String(), func(t *testing.T) { t.Skipf("%v: not available on this CPU or build", k) })
			continue
		}
		active = k
		t.Run(k.String(), f)
	}
}

// archVariants lists the SIMD variants of this architecture.
func archVariants() []Kernel {
	if runtime.GOARCH == "arm64" {
		return []Kernel{NEON, DotProd, I8MM}
	}
	return []Kernel{AVX2, AVX512}
}

// generic runs f with the pure-Go variant active.
func generic(f func()) {
	defer func(k Kernel) { active = k }(active)
	active = Generic
	f()
}

var blockCounts = []int{1, 2, 3, 7, 8, 15, 16, 17, 18, 19, 33, 35, 64}

const guard = 64 // guard elements before and after each buffer

// guarded returns a slice of n elements starting off elements into a buffer
// filled with fill, plus a check that the guards are intact.
func guarded[T comparable](n, off int, fill T) ([]T, func(t *testing.T, name string)) {
	buf := make([]T, guard+off+n+guard)
	for i := range buf {
		buf[i] = fill
	}
	s := buf[guard+off : guard+off+n : guard+off+n]
	return s, func(t *testing.T, name string) {
		t.Helper()
		for i := range guard + off {
			if buf[i] != fill {
				t.Fatalf("%s: guard before the buffer overwritten at %d", name, i-guard-off)
			}
		}
		for i := guard + off + n; i < len(buf); i++ {
			if buf[i] != fill {
				t.Fatalf("%s: guard after the buffer overwritten at +%d", name, i-guard-off-n)
			}
		}
	}
}

func sameFloat(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
}

// scale kinds for weights and activations.
// The "f16" kinds are binary16 values (widened), which the f16 layout of
// Packed holds: any bits, or only the special ones.
var scaleKinds = []string{"normal", "zero", "subnormal", "huge", "negzero", "mixed", "nan", "inf", "f16", "f16special"}

// f16Specials are binary16 subnormals, ±0, ±Inf, quiet and signalling NaNs
// (with sign and payload) and the extremes of the normal range.
var f16Specials = []uint16{0x0001, 0x03ff, 0x8001, 0x8200, 0x0000, 0x8000, 0x7c00, 0xfc00,
	0x7e00, 0xfe01, 0x7c01, 0xfd55, 0x0400, 0x7bff, 0xfbff}

func genScale(rng *rand.Rand, kind string) float32 {
	switch kind {
	case "zero":
		return 0
	case "subnormal":
		return math.Float32frombits(uint32(rng.IntN(1 << 23)))
	case "huge":
		return float32(1e38) * float32(1+rng.Float64())
	case "negzero":
		return float32(math.Copysign(0, -1))
	case "nan":
		if rng.IntN(4) == 0 {
			return float32(math.NaN())
		}
	case "inf":
		if rng.IntN(4) == 0 {
			return float32(math.Inf(2*rng.IntN(2) - 1))
		}
	case "mixed":
		return genScale(rng, scaleKinds[rng.IntN(5)])
	case "f16":
		return F16ToF32(uint16(rng.Uint32()))
	case "f16special":
		if rng.IntN(2) == 0 {
			return F16ToF32(f16Specials[rng.IntN(len(f16Specials))])
		}
		return F16ToF32(uint16(rng.Uint32()))
	}
	return float32(rng.NormFloat64() * 0.02)
}

// quant kinds: random over the whole range, or the extremes only.
func genW8(rng *rand.Rand, extreme bool) int8 {
	if extreme {
		return []int8{-128, -127, 127, 0}[rng.IntN(4)]
	}
	return int8(rng.IntN(256) - 128)
}

func genA(rng *rand.Rand, extreme bool) int8 {
	if extreme {
		return []int8{-127, 127}[rng.IntN(2)]
	}
	return int8(rng.IntN(255) - 127)
}

type problem struct {
	nb, rows, n int
	w8          []int8
	w4          []byte
	dw, da      []float32
	a           []int8
}

func genProblem(rng *rand.Rand, nb, rows, n int, extreme bool, wk, ak string) problem {
	p := problem{nb: nb, rows: rows, n: n}
	p.w8 = make([]int8, rows*nb*32)
	for i := range p.w8 {
		p.w8[i] = genW8(rng, extreme)
	}
	p.w4 = make([]byte, rows*nb*16)
	for i := range p.w4 {
		if extreme {
			p.w4[i] = []byte{0x00, 0xff, 0x0f, 0xf0, 0x88}[rng.IntN(5)]
		} else {
			p.w4[i] = byte(rng.IntN(256))
		}
	}
	p.a = make([]int8, n*nb*32)
	for i := range p.a {
		p.a[i] = genA(rng, extreme)
	}
	p.dw = make([]float32, rows*nb)
	for i := range p.dw {
		p.dw[i] = genScale(rng, wk)
	}
	p.da = make([]float32, n*nb)
	for i := range p.da {
		p.da[i] = genScale(rng, ak)
	}
	return p
}

// check runs every product of p with the active variant, on guarded buffers
// starting off elements into their allocation, and compares each output
// with want (the generic matmul's, out[i·rows+r]).
func (p problem) check(t *testing.T, off int, want8, want4 []float32) {
	t.Helper()
	cols := p.nb * 32
	// Inputs are copied to guarded, offset buffers too, so that misaligned
	// loads are exercised.
	w8, _ := guarded(len(p.w8), off, int8(0x55))
	copy(w8, p.w8)
	w4, _ := guarded(len(p.w4), off, byte(0x55))
	copy(w4, p.w4)
	a, _ := guarded(len(p.a), off, int8(0x55))
	copy(a, p.a)
	dw, _ := guarded(len(p.dw), off, float32(7))
	copy(dw, p.dw)
	da, _ := guarded(len(p.da), off, float32(7))
	copy(da, p.da)

	cmp := func(what string, got, want []float32) {
		t.Helper()
		for i := range want {
			if !sameFloat(got[i], want[i]) {
				t.Fatalf("%s: out[%d] got %v (%#08x), want %v (%#08x)", what, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
		}
	}
	ldo := p.rows + 3 // a gap between output rows must stay untouched
	for _, q4 := range []bool{false, true} {
		name, want := "Q8_0", want8
		if q4 {
			name, want = "Q4_0", want4
		}
		// MatMul.
		out, checkOut := guarded((p.n-1)*ldo+p.rows, off, float32(-3))
		for i := range out {
			out[i] = -3
		}
		if q4 {
			MatMulQ4_0(out, ldo, w4, dw, p.rows, a, da, p.n)
		} else {
			MatMulQ8_0(out, ldo, w8, dw, p.rows, a, da, p.n)
		}
		checkOut(t, name+" MatMul")
		got := make([]float32, p.n*p.rows)
		for i := range p.n {
			copy(got[i*p.rows:], out[i*ldo:i*ldo+p.rows])
			for j := i*ldo + p.rows; j < min((i+1)*ldo, len(out)); j++ {
				if out[j] != -3 {
					t.Fatalf("%s MatMul: wrote out[%d] in the gap between rows", name, j)
				}
			}
		}
		cmp(name+" MatMul", got, want)
		// Packed, float32 scales and (when they fit) binary16 ones.
		for _, f16 := range []bool{false, true} {
			if f16 && !ScalesFitF16(dw) {
				continue
			}
			buf, checkBuf := guarded(PackedSize(q4, f16, p.rows, cols), off, byte(0x55))
			pk := pack(buf, q4, f16, w8, w4, dw, p.rows, cols)
			checkBuf(t, name+" Pack")
			clear(out)
			pk.MatMul(out, ldo, 0, p.rows, a, da, p.n)
			for i := range p.n {
				copy(got[i*p.rows:], out[i*ldo:i*ldo+p.rows])
			}
			cmp(fmt.Sprintf("%s Packed f16=%v MatMul", name, f16), got, want)
		}
		// MatVec and Dot, per activation row.
		for i := range p.n {
			ai, dai := a[i*cols:(i+1)*cols], da[i*p.nb:(i+1)*p.nb]
			mv, checkMV := guarded(p.rows, off, float32(-5))
			if q4 {
				MatVecQ4_0(mv, w4, dw, ai, dai)
			} else {
				MatVecQ8_0(mv, w8, dw, ai, dai)
			}
			checkMV(t, name+" MatVec")
			cmp(fmt.Sprintf("%s MatVec act %d", name, i), mv, want[i*p.rows:(i+1)*p.rows])
			for r := range p.rows {
				var d float32
				if q4 {
					d = DotQ4_0(w4[r*p.nb*16:(r+1)*p.nb*16], dw[r*p.nb:], ai, dai)
				} else {
					d = DotQ8_0(w8[r*cols:(r+1)*cols], dw[r*p.nb:], ai, dai)
				}
				cmp(fmt.Sprintf("%s Dot act %d row %d", name, i, r), []float32{d}, want[i*p.rows+r:i*p.rows+r+1])
			}
		}
	}
}

// pack packs the Q4_0 (q4) or Q8_0 matrix into buf with binary16 (f16) or
// float32 scales.
func pack(buf []byte, q4, f16 bool, w8 []int8, w4 []byte, dw []float32, rows, cols int) Packed {
	if q4 {
		return PackQ4_0(buf, w4, dw, rows, cols, f16)
	}
	return PackQ8_0(buf, w8, dw, rows, cols, f16)
}

func (p problem) want() (want8, want4 []float32) {
	want8 = make([]float32, p.n*p.rows)
	want4 = make([]float32, p.n*p.rows)
	generic(func() {
		MatMulQ8_0(want8, p.rows, p.w8, p.dw, p.rows, p.a, p.da, p.n)
		MatMulQ4_0(want4, p.rows, p.w4, p.dw, p.rows, p.a, p.da, p.n)
	})
	return
}

func TestProductsMatchGeneric(t *testing.T) {
	variants(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		combo := 0
		for _, nb := range blockCounts {
			for _, n := range []int{1, 2, 3, 4, 5, 9, 17} {
				// -short (the qemu arm64 runs) takes every third (nb, n), all of its cases.
				if combo++; testing.Short() && combo%3 != 1 {
					continue
				}
				for _, extreme := range []bool{false, true} {
					for _, sk := range scaleKinds {
						rows := 1 + rng.IntN(20)
						p := genProblem(rng, nb, rows, n, extreme, sk, scaleKinds[rng.IntN(len(scaleKinds))])
						w8, w4 := p.want()
						t.Run(fmt.Sprintf("nb=%d/n=%d/rows=%d/extreme=%v/scales=%s", nb, n, rows, extreme, sk), func(t *testing.T) {
							p.check(t, rng.IntN(4), w8, w4)
						})
					}
				}
			}
		}
	})
}

// TestMatMulTiles crosses the weight tile boundary of the tiled matmul.
func TestMatMulTiles(t *testing.T) {
	variants(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		// 256 KiB tiles: 64 blocks of Q8_0 are 2 KiB per row, 128 rows a tile.
		p := genProblem(rng, 64, 300, 6, false, "normal", "normal")
		w8, w4 := p.want()
		p.check(t, 1, w8, w4)
		// 325 rows: 20 full groups, which the tiles do not divide evenly (the
		// 18 above they do), so the last tile is partial; and a rest of 5.
		p = genProblem(rng, 64, 325, 6, false, "normal", "normal")
		w8, w4 = p.want()
		p.check(t, 1, w8, w4)
	})
}

func TestQuantizeMatchesGeneric(t *testing.T) {
	variants(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 10))
		for _, nb := range blockCounts {
			for _, kind := range xKinds {
				x := make([]float32, nb*32)
				for i := range x {
					x[i] = genX(rng, kind)
				}
				for off := range 3 {
					checkQuantize(t, fmt.Sprintf("nb=%d/%s/off=%d", nb, kind, off), x, off)
				}
			}
		}
	})
}

var xKinds = []string{"normal", "tiny", "subnormal", "huge", "halves", "nan", "inf", "negzero", "mixed"}

func genX(rng *rand.Rand, kind string) float32 {
	switch kind {
	case "tiny":
		return float32(rng.NormFloat64() * 1e-31)
	case "subnormal":
		return math.Float32frombits(uint32(rng.IntN(1<<23)) | uint32(rng.IntN(2))<<31)
	case "huge":
		return float32(rng.NormFloat64() * 1e37)
	case "halves":
		// x·127/amax lands on or near .5 boundaries.
		return float32(rng.IntN(255)-127) / 254 * 3
	case "nan":
		if rng.IntN(8) == 0 {
			return float32(math.NaN())
		}
	case "inf":
		if rng.IntN(16) == 0 {
			return float32(math.Inf(2*rng.IntN(2) - 1))
		}
	case "negzero":
		if rng.IntN(2) == 0 {
			return float32(math.Copysign(0, -1))
		}
		return 0
	case "mixed":
		return genX(rng, xKinds[rng.IntN(len(xKinds)-1)])
	}
	return float32(rng.NormFloat64())
}

func checkQuantize(t *testing.T, name string, x []float32, off int) {
	t.Helper()
	nb := len(x) / 32
	wantQ := make([]int8, len(x))
	wantD := make([]float32, nb)
	generic(func() { QuantizeQ8_0(x, wantQ, wantD) })
	xs, _ := guarded(len(x), off, float32(1e30))
	copy(xs, x)
	q, checkQ := guarded(len(x), off, int8(0x55))
	d, checkD := guarded(nb, off, float32(9))
	QuantizeQ8_0(xs, q, d)
	checkQ(t, name+" q")
	checkD(t, name+" d")
	for i := range wantQ {
		if q[i] != wantQ[i] {
			t.Fatalf("%s: q[%d] got %v, want %v (x=%v)", name, i, q[i], wantQ[i], x[i])
		}
	}
	for i := range wantD {
		if math.Float32bits(d[i]) != math.Float32bits(wantD[i]) {
			t.Fatalf("%s: d[%d] got %v, want %v", name, i, d[i], wantD[i])
		}
	}
}
