package quantize

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// FuzzMatrix feeds arbitrary float32 bit patterns (NaN, Inf, subnormals, huge
// values) to every rule: it must return an error or bytes that decode, never panic;
// the bytes must not depend on the thread count; Q8_0 must agree with the independent
// model, and best fit's x²-weighted error must not exceed the round rule's (unless its
// d is a float32 subnormal, which cannot hold the fitted value).
func FuzzMatrix(f *testing.F) {
	f.Add(make([]byte, 4*64), uint8(0))
	seed := make([]byte, 4*64)
	for i := 0; i < 64; i++ {
		binary.LittleEndian.PutUint32(seed[4*i:], math.Float32bits(float32(i%7)-3.5))
	}
	f.Add(seed, uint8(5))
	f.Fuzz(func(t *testing.T, b []byte, flags uint8) {
		n := len(b) / 4 / 32 * 32
		if n == 0 || n > 32*64 {
			return
		}
		w := make([]float32, n)
		for i := range w {
			w[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		rows, cols := n/32, 32
		if flags&8 != 0 && rows%2 == 0 {
			rows, cols = rows/2, 64
		}
		tp := TypeQ8_0
		opt := Options{F16Scales: flags&1 != 0}
		if flags&2 != 0 {
			tp = TypeQ4_0
			if flags&4 != 0 {
				opt.Q4Rule = Round
			}
		}
		q, s, err := Matrix(tp, w, rows, cols, opt)
		if err != nil {
			if !errors.Is(err, ErrNonFinite) && !errors.Is(err, ErrScale) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		opt.Threads = 3
		q3, s3, err := Matrix(tp, w, rows, cols, opt)
		if err != nil || !bytes.Equal(q, q3) || !bytes.Equal(s, s3) {
			t.Fatalf("threads=3 differs from threads=1 (err %v)", err)
		}
		d := DecodeScales(s, opt.F16Scales)
		dq := Dequantize(tp, q, d, rows, cols)
		if len(dq) != n {
			t.Fatalf("dequantized %d values, want %d", len(dq), n)
		}
		for blk := 0; blk < n/32; blk++ {
			x := w[32*blk : 32*blk+32]
			switch {
			case tp == TypeQ8_0:
				rq, rd := refQ8Block(x, opt.F16Scales)
				if d[blk] != rd {
					t.Fatalf("block %d: d got %v, want %v", blk, d[blk], rd)
				}
				for i := range rq {
					if int8(q[32*blk+i]) != rq[i] {
						t.Fatalf("block %d element %d: got %d, want %d", blk, i, int8(q[32*blk+i]), rq[i])
					}
				}
			case opt.Q4Rule == BestFit && !opt.F16Scales:
				wt := x2Weights(x)
				var sw float64
				for i := range x {
					sw += wt[i] * float64(x[i]) * float64(x[i])
				}
				if math.IsInf(sw, 0) {
					continue // x⁴ overflows float64 in the independent check, not in the fit
				}
				if math.Abs(float64(d[blk])) < 0x1p-126 {
					// a subnormal float32 d keeps only a few bits of the fitted value,
					// so the stored fit can lose to the round rule's exact max/−8
					continue
				}
				rl, rd := refRoundBlock(x)
				got := weightedErr(x, wt, float64(d[blk]), levels(q, blk))
				if re := weightedErr(x, wt, float64(rd), rl); got > re+1e-6*sw {
					t.Fatalf("block %v: best-fit error %g above the round rule's %g", x, got, re)
				}
			}
		}
	})
}
