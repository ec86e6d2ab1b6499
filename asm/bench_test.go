package asm

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// cpuClock measures the CPU time of the benchmark's thread, so that a busy
// shared machine (which preempts the benchmark) distorts the figures less
// than wall time does. It reports cpuGB/s (bytes per CPU second) and, when
// ops > 0, cpuGOPS.
type cpuClock struct {
	t0 time.Duration
}

func startCPU() cpuClock {
	runtime.LockOSThread()
	return cpuClock{threadCPU()}
}

func (c cpuClock) report(b *testing.B, bytes, ops float64) {
	d := (threadCPU() - c.t0).Seconds()
	runtime.UnlockOSThread()
	if d <= 0 {
		return
	}
	if bytes > 0 {
		b.ReportMetric(bytes*float64(b.N)/d/1e9, "cpuGB/s")
	}
	if ops > 0 {
		b.ReportMetric(ops*float64(b.N)/d/1e9, "cpuGOPS")
	}
}

var matVecShapes = []struct{ rows, cols int }{
	{576, 576}, {1536, 576}, {2048, 2048}, {8192, 2048}, {128256, 2048},
}

// benchVariants runs f as a sub-benchmark per available variant.
func benchVariants(b *testing.B, f func(b *testing.B)) {
	defer func(k Kernel) { active = k }(active)
	for _, k := range AvailableKernels() {
		active = k
		b.Run(k.String(), f)
	}
}

func benchData(rows, cols, n int) (w8 []int8, w4 []byte, dw []float32, a []int8, da []float32) {
	rng := rand.New(rand.NewPCG(1, 1))
	w8 = make([]int8, rows*cols)
	for i := range w8 {
		w8[i] = int8(rng.Uint32())
	}
	w4 = make([]byte, rows*cols/2)
	for i := range w4 {
		w4[i] = byte(rng.Uint32())
	}
	dw = randScales(rng, rows*cols/32)
	a, da = randActs(rng, n, cols/32)
	return
}

// benchTypes are the benchmarks' weight types: Q8_0 and Q4_0, with float32
// scales and with binary16 ones (the f16 layout).
var benchTypes = []string{"Q8_0", "Q4_0", "Q8_0-f16", "Q4_0-f16"}

// benchPack packs the benchmark's matrix as the runtime does at load (for an
// -f16 type, with the scales rounded to binary16 first), and returns it with
// the weights' bytes in the file's layout.
func benchPack(typ string, w8 []int8, w4 []byte, dw []float32, rows, cols int) (Packed, int) {
	f16 := strings.HasSuffix(typ, "-f16")
	sb := 4
	if f16 {
		dw = slices.Clone(dw)
		RoundF16(dw)
		sb = 2
	}
	q4 := strings.HasPrefix(typ, "Q4_0")
	bytes := len(w8) + sb*len(dw)
	if q4 {
		bytes = len(w4) + sb*len(dw)
	}
	return pack(make([]byte, PackedSize(q4, f16, rows, cols)), q4, f16, w8, w4, dw, rows, cols), bytes
}

func BenchmarkMatVec(b *testing.B) {
	for _, s := range matVecShapes {
		if s.rows > 100000 && testing.Short() {
			continue
		}
		w8, w4, dw, a, da := benchData(s.rows, s.cols, 1)
		out := make([]float32, s.rows)
		for _, typ := range benchTypes {
			b.Run(fmt.Sprintf("%s/%dx%d", typ, s.rows, s.cols), func(b *testing.B) {
				benchVariants(b, func(b *testing.B) {
					p, bytes := benchPack(typ, w8, w4, dw, s.rows, s.cols)
					b.SetBytes(int64(bytes))
					b.ReportAllocs()
					c := startCPU()
					for b.Loop() {
						p.MatMul(out, s.rows, 0, s.rows, a, da, 1)
					}
					c.report(b, float64(bytes), 0)
				})
			})
		}
	}
}

func BenchmarkMatMul(b *testing.B) {
	const n = 512
	for _, s := range matVecShapes[:4] {
		if s.rows*s.cols > 4<<20 && testing.Short() {
			continue
		}
		w8, w4, dw, a, da := benchData(s.rows, s.cols, n)
		out := make([]float32, s.rows*n)
		for _, typ := range benchTypes {
			b.Run(fmt.Sprintf("%s/%dx%d/n=%d", typ, s.rows, s.cols, n), func(b *testing.B) {
				benchVariants(b, func(b *testing.B) {
					if active == Generic && testing.Short() {
						b.Skip("generic matmul is slow; skipped under -short")
					}
					p, bytes := benchPack(typ, w8, w4, dw, s.rows, s.cols)
					b.SetBytes(int64(bytes))
					b.ReportAllocs()
					ops := 2 * float64(s.rows) * float64(s.cols) * n
					c := startCPU()
					for b.Loop() {
						p.MatMul(out, s.rows, 0, s.rows, a, da, n)
					}
					c.report(b, float64(bytes), ops)
					b.ReportMetric(ops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GOPS")
				})
			})
		}
	}
}

func BenchmarkQuantizeQ8_0(b *testing.B) {
	x := make([]float32, 2048)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	q := make([]int8, len(x))
	d := make([]float32, len(x)/32)
	benchVariants(b, func(b *testing.B) {
		b.SetBytes(int64(4 * len(x)))
		for b.Loop() {
			QuantizeQ8_0(x, q, d)
		}
	})
}

// BenchmarkDotsGGML times the K-quant row-times-batch products over a
// 2048 × 2048 matrix (the 1B shape's attention) with 1 and 64 activation
// rows, per variant, in thread CPU time (cpuGOPS: multiply-adds).
func BenchmarkDotsGGML(b *testing.B) {
	const rows, cols = 2048, 2048
	nb := cols / QK
	for _, k := range dotsKinds {
		for _, n := range []int{1, 64} {
			w := make([]byte, rows*nb*k.bb)
			for i := range w {
				w[i] = byte(i * 7919 >> 3)
			}
			a, da, bs := make([]int8, n*cols), make([]float32, n*nb), make([]int16, n*nb*16)
			x := make([]float32, n*cols)
			for i := range x {
				x[i] = float32(i%17) - 8
			}
			QuantizeQ8_K(x, a, da, bs)
			out := make([]float32, n*rows)
			b.Run(fmt.Sprintf("%s/n=%d", k.name, n), func(b *testing.B) {
				benchVariants(b, func(b *testing.B) {
					kv := active
					c := startCPU()
					for range b.N {
						for r := range rows {
							k.dots(kv, out[r:], rows, w[r*nb*k.bb:(r+1)*nb*k.bb], a, da, bs, n)
						}
					}
					c.report(b, float64(len(w)), float64(rows*cols*n))
				})
			})
		}
	}
}
