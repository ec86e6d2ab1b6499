package mlb_test

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/krafla/krafla/internal/cputime"
	"github.com/krafla/krafla/mlb"
)

// writeBig writes a Q8_0 model of about 1 GiB (dim 4096, 7 layers of MHA with a
// 4096 FFN, vocab 32000, separate classifier) with a quant pattern free of -128.
func writeBig(b *testing.B, path string) {
	h := mlb.Header{Version: 1, Dim: 4096, NLayers: 7, NHeads: 32, NKVHeads: 32, HiddenDim: 4096,
		Vocab: 32000, MaxSeq: 4096, RopeTheta: 10000, NormEps: 1e-5, WType: mlb.WTypeQ8_0}
	var q, d []byte
	writeModel(b, path, h, func(ti mlb.TensorInfo) []float32 {
		v := make([]float32, ti.Elems())
		for i := range v {
			v[i] = 1
		}
		return v
	}, func(ti mlb.TensorInfo) ([]byte, []byte) {
		n := int(ti.Elems())
		if len(q) < n {
			q = make([]byte, n)
			for i := range q {
				q[i] = byte(int8(i%255 - 127))
			}
			d = make([]byte, n/32*4)
			for i := 0; i < n/32; i++ {
				binary.LittleEndian.PutUint32(d[4*i:], math.Float32bits(0.01))
			}
		}
		return q[:n], d[:n/32*4]
	})
}

// BenchmarkOpen opens and fully validates a 1 GiB Q8_0 file (mmap, checks, the
// -128 scan of every quant); "scan" times the scan alone over the mapped
// quants. Both report throughput over the bytes they cover.
func BenchmarkOpen(b *testing.B) {
	if testing.Short() {
		b.Skip("writes a 1 GiB file")
	}
	path := filepath.Join(b.TempDir(), "big.mlb")
	t0 := time.Now()
	writeBig(b, path)
	b.Logf("wrote the file in %v", time.Since(t0))
	b.Run("open", func(b *testing.B) {
		b.ReportAllocs()
		c0, n, size := cputime.Process(), 0, int64(0)
		for b.Loop() {
			f, err := mlb.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			size = f.Size
			b.SetBytes(size)
			f.Close()
			n++
		}
		reportCPU(b, c0, n, size)
	})
	b.Run("scan", func(b *testing.B) {
		f, err := mlb.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		var qs [][]byte
		var n int64
		for _, t := range f.Tensors {
			if t.Type == mlb.Q8_0 {
				qs = append(qs, t.Q)
				n += int64(len(t.Q))
			}
		}
		b.SetBytes(n)
		c0, k := cputime.Process(), 0
		for b.Loop() {
			for _, q := range qs {
				if mlb.FindMinus128(q) >= 0 {
					b.Fatal("found -128")
				}
			}
			k++
		}
		reportCPU(b, c0, k, n)
	})
}

// reportCPU adds GB per CPU second (process CPU time since c0 over n loops).
func reportCPU(b *testing.B, c0 time.Duration, n int, bytes int64) {
	if d := cputime.Process() - c0; d > 0 && n > 0 {
		b.ReportMetric(float64(n)*float64(bytes)/d.Seconds()/1e9, "GB/cpu-s")
	}
}
