package quantize

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// Tests written from the mutants gremlins found alive (scripts/mutate.sh,
// docs/RELIABILITY.md); each expectation is worked out from SPEC.md's rules.

// TestQ8_0Blocks: the exported Q8_0 on several blocks. Block b holds k·2^-b for
// integers k with max |k| = 127, so d = amax/127 = 2^-b and every quant is k
// exactly; a zero block gets d = 0 and its (garbage-filled) quants cleared.
func TestQ8_0Blocks(t *testing.T) {
	const nb = 4
	x := make([]float32, nb*BlockSize)
	want := make([]int8, len(x))
	for b := 0; b < nb-1; b++ {
		for i := 0; i < BlockSize; i++ {
			k := (i*37+b*11)%255 - 127 // −127…127
			if i == 3 {
				k = 127 - 254*(b%2) // the block maximum, +127 or −127
			}
			x[b*BlockSize+i] = float32(math.Ldexp(float64(k), -b))
			want[b*BlockSize+i] = int8(k)
		}
	}
	q := make([]int8, len(x))
	for i := range q {
		q[i] = 99
	}
	d := make([]float32, nb)
	Q8_0(x, q, d)
	for b := 0; b < nb; b++ {
		wd := float32(math.Ldexp(1, -b))
		if b == nb-1 {
			wd = 0
		}
		if d[b] != wd {
			t.Errorf("block %d: d = %v, want %v", b, d[b], wd)
		}
		for i := b * BlockSize; i < (b+1)*BlockSize; i++ {
			if q[i] != want[i] {
				t.Fatalf("block %d element %d: q = %d, want %d", b, i%BlockSize, q[i], want[i])
			}
		}
	}
}

// TestQ8_0F16Max: a block whose d = amax/127 is exactly the largest f16, 65504,
// is stored (only d above it is refused) and quantized against it: x = k·65504
// gives quants k.
func TestQ8_0F16Max(t *testing.T) {
	x := make([]float32, BlockSize)
	for i := range x {
		x[i] = float32((i - 16) * MaxF16Scale)
	}
	x[5] = 127 * MaxF16Scale
	q, s, err := Matrix(TypeQ8_0, x, 1, BlockSize, Options{F16Scales: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := DecodeScales(s, true)[0]; d != MaxF16Scale {
		t.Errorf("d = %v, want %d", d, MaxF16Scale)
	}
	for i := range x {
		want := int8(i - 16)
		if i == 5 {
			want = 127
		}
		if got := int8(q[i]); got != want {
			t.Fatalf("element %d: q = %d, want %d", i, got, want)
		}
	}
	x[5] = 128 * MaxF16Scale // d = 128/127 · 65504 > 65504
	if _, _, err := Matrix(TypeQ8_0, x, 1, BlockSize, Options{F16Scales: true}); !errors.Is(err, ErrScale) {
		t.Errorf("d above the f16 maximum: got %v, want ErrScale", err)
	}
}

// TestMatrixShapeEdges: 0 rows or 0 columns is a valid empty matrix (any
// thread count); rows·cols that overflows int is ErrShape, not a wrapped
// product that happens to match len(w).
func TestMatrixShapeEdges(t *testing.T) {
	for _, c := range []struct{ rows, cols, threads int }{{0, 32, 1}, {0, 32, 4}, {3, 0, 1}, {3, 0, 2}, {0, 0, 1}} {
		for _, typ := range []Type{TypeQ8_0, TypeQ4_0} {
			q, s, err := Matrix(typ, nil, c.rows, c.cols, Options{Threads: c.threads})
			if err != nil || len(q) != 0 || len(s) != 0 {
				t.Errorf("%v %d×%d, %d threads: got %d bytes, %d scale bytes, %v; want empty, nil", typ, c.rows, c.cols, c.threads, len(q), len(s), err)
			}
		}
	}
	// (2^59)·32 = 2^64 wraps to 0 = len(nil)
	if _, _, err := Matrix(TypeQ8_0, nil, 1<<59, 32, Options{}); !errors.Is(err, ErrShape) {
		t.Errorf("2^59×32: got %v, want ErrShape", err)
	}
}

// TestMatrixNonFiniteColumn0: a NaN or Inf in the first column is reported as
// column 0.
func TestMatrixNonFiniteColumn0(t *testing.T) {
	for _, v := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
		x := make([]float32, 2*BlockSize)
		x[BlockSize] = v // row 1, column 0
		_, _, err := Matrix(TypeQ4_0, x, 2, BlockSize, Options{Name: "w"})
		if !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "row 1, column 0") {
			t.Errorf("%v at row 1 column 0: got %v", v, err)
		}
	}
}

// TestPutScaleF16Range: ±65504, the largest f16, are stored (as 0x7bff and
// 0xfbff); anything beyond is refused.
func TestPutScaleF16Range(t *testing.T) {
	b := make([]byte, 2)
	for _, c := range []struct {
		d    float32
		bits uint16
	}{{MaxF16Scale, 0x7bff}, {-MaxF16Scale, 0xfbff}} {
		if err := putScale(b, 0, c.d, true); err != nil {
			t.Errorf("putScale(%v): %v", c.d, err)
		} else if got := uint16(b[0]) | uint16(b[1])<<8; got != c.bits {
			t.Errorf("putScale(%v): bits %#04x, want %#04x", c.d, got, c.bits)
		}
	}
	for _, d := range []float32{MaxF16Scale + 1, -MaxF16Scale - 1} {
		if err := putScale(b, 0, d, true); err == nil {
			t.Errorf("putScale(%v) accepted", d)
		}
	}
}

// TestDequantizeEmpty: 0 rows or 0 columns is an empty matrix, not a panic.
func TestDequantizeEmpty(t *testing.T) {
	for _, c := range [][2]int{{0, 32}, {2, 0}, {0, 0}} {
		if w := Dequantize(TypeQ4_0, nil, nil, c[0], c[1]); len(w) != 0 {
			t.Errorf("%d×%d: %d weights", c[0], c[1], len(w))
		}
	}
}
