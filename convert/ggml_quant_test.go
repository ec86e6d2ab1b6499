package convert

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/quantize"
)

// TestConvertIQ4 converts a synthetic llama (k256: every width a multiple
// of 256; tiny: widths of 64) to IQ4_XS, IQ4_NL and Q6_K: the file is mixed
// with the types the rule gives (IQ4_XS, IQ4_NL where a width is not a
// multiple of 256; the shared classifier Q6_K, or Q8_0 there), every matrix dequantizes to within 4- (6-) bit error of the Q8_0
// conversion of the same checkpoint, the report names the types, 1 and 3
// threads write the same bytes, and the model runs.
func TestConvertIQ4(t *testing.T) {
	for _, shape := range []string{"k256", "tiny"} {
		dir := t.TempDir()
		ck := filepath.Join(dir, "ck")
		if err := hfgen.Write(ck, "llama", hfgen.Options{Seed: 5, Shape: shape}); err != nil {
			t.Fatal(err)
		}
		q8 := filepath.Join(dir, "q8.mlb")
		if _, err := Convert(context.Background(), ck, Options{Out: q8}); err != nil {
			t.Fatal(err)
		}
		for _, gt := range []quantize.GGMLType{quantize.GGMLIQ4_XS, quantize.GGMLIQ4_NL, quantize.GGMLQ6_K} {
			if shape == "tiny" && gt != quantize.GGMLIQ4_XS {
				continue // tiny's IQ4_XS is IQ4_NL throughout already; its Q6_K would be Q8_0
			}
			out := filepath.Join(dir, gt.String()+".mlb")
			rep, err := Convert(context.Background(), ck, Options{Out: out, GGML: gt, Threads: 1, Measure: true})
			if err != nil {
				t.Fatal(err)
			}
			if gt == quantize.GGMLIQ4_XS { // (quantize's tests check the threads of every type)
				out3 := filepath.Join(dir, gt.String()+"-3.mlb")
				if _, err := Convert(context.Background(), ck, Options{Out: out3, GGML: gt, Threads: 3}); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(readFile(t, out), readFile(t, out3)) {
					t.Errorf("%s %v: 1 and 3 threads write different files", shape, gt)
				}
			}
			seen := map[string]bool{}
			for _, e := range rep.Errors {
				seen[e.Type] = true
				lo, hi := 0.01, 0.2 // 4 bits
				switch e.Type {
				case "Q6_K":
					lo, hi = 0.002, 0.06
				case "Q8_0":
					lo, hi = 0.0005, 0.015
				}
				if !(e.RelRMSE > lo && e.RelRMSE < hi) {
					t.Errorf("%s %v: %s (%s) relative RMSE %.4f outside 4-bit range", shape, gt, e.Name, e.Type, e.RelRMSE)
				}
			}
			checkIQ4File(t, out, q8, gt)
			t.Logf("%s %v: report types %v", shape, gt, seen)
			m, err := infer.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			s, err := m.NewSession(infer.SessionOptions{Ctx: 16})
			if err != nil {
				t.Fatal(err)
			}
			var last []float32
			if err := s.Eval([]int{1, 2, 3}, false, func(_ int, l []float32) error { last = l; return nil }); err != nil {
				t.Fatal(err)
			}
			for _, v := range last {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("%s %v: logit %v", shape, gt, v)
				}
			}
			m.Close()
		}
	}
}

// checkIQ4File checks the mixed file's types and that each matrix is
// within 4-bit error of the Q8_0 file's.
func checkIQ4File(t *testing.T, path, q8 string, gt quantize.GGMLType) {
	t.Helper()
	f, err := mlb.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := mlb.Open(q8)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if f.Header.WType != mlb.WTypeMixed {
		t.Fatalf("wtype %d, want mixed", f.Header.WType)
	}
	blocked := 0
	for _, ti := range f.Tensors {
		if !ti.Type.Quantized() {
			continue
		}
		want := mlb.IQ4_NL
		if gt == quantize.GGMLIQ4_XS && ti.Cols%256 == 0 {
			want = mlb.IQ4_XS
		}
		lo, hi := 0.01, 0.2
		cls := ti.Name == "wcls" || ti.Name == "tok_emb" && f.Header.SharedClassifier != 0
		if gt == quantize.GGMLQ6_K || cls { // llama-quantize's classifier type
			want, lo, hi = mlb.Q6_K, 0.002, 0.06
			if ti.Cols%256 != 0 {
				want, lo, hi = mlb.Q8_0, -1, 0.003 // its blocks with f16 scales
			}
		}
		if ti.Type != want {
			t.Errorf("%s (%d cols): %v, want %v", ti.Name, ti.Cols, ti.Type, want)
			continue
		}
		blocked++
		y := make([]float32, ti.Rows*ti.Cols)
		if ti.Type == mlb.Q8_0 {
			y = quantize.Dequantize(quantize.TypeQ8_0, ti.Q, ti.D, ti.Rows, ti.Cols)
		} else if err := quantize.DequantizeGGML(quantize.GGMLType(mlb.TypeCode(ti.Type)), ti.Q, y); err != nil {
			t.Fatal(err)
		}
		rt := g.Tensor(ti.Name)
		ref := quantize.Dequantize(quantize.TypeQ8_0, rt.Q, rt.D, rt.Rows, rt.Cols)
		var se, sx float64
		for i := range y {
			se += float64(y[i]-ref[i]) * float64(y[i]-ref[i])
			sx += float64(ref[i]) * float64(ref[i])
		}
		if r := math.Sqrt(se / sx); !(r > lo && r < hi) {
			t.Errorf("%s: relative distance to Q8_0 %.4f", ti.Name, r)
		}
	}
	if blocked == 0 {
		t.Fatal("no matrix of the type")
	}
}

// TestConvertIQ4Refused: GGUF input, a second type and --q8 are refused.
func TestConvertIQ4Refused(t *testing.T) {
	dir := t.TempDir()
	if _, err := Convert(context.Background(), filepath.Join("..", "testdata", "stories260K.gguf"), Options{Out: filepath.Join(dir, "x.mlb"), GGML: quantize.GGMLIQ4_NL}); err == nil {
		t.Error("GGUF input accepted")
	}
	ck := filepath.Join(dir, "ck")
	if err := hfgen.Write(ck, "llama", hfgen.Options{Seed: 5}); err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{GGML: quantize.GGMLIQ4_NL, Type: quantize.TypeQ4_0}, {GGML: quantize.GGMLQ4_1}, {GGML: quantize.GGMLIQ4_XS, Q8Mask: mlb.MaskW2}} {
		o.Out = filepath.Join(dir, "y.mlb")
		if _, err := Convert(context.Background(), ck, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
		if _, err := os.Stat(o.Out); err == nil {
			t.Errorf("%+v: output written", o)
		}
	}
}

// TestConvertKMix converts the 2-layer synthetic llama to q4_k_m and q5_k_m
// and checks llama-quantize's _M mix as written out here for 2 layers
// (use_more_bits picks layer 1 only): blk.1.wv, blk.1.w2 and the
// classifier Q6_K, the rest the base type; with widths of 64 (tiny) Q4_K
// and Q5_K fall back to Q5_0 and Q6_K to Q8_0. Every matrix dequantizes
// to within its bits' error of the Q8_0 conversion, and the model runs.
func TestConvertKMix(t *testing.T) {
	for _, shape := range []string{"k256", "tiny"} {
		dir := t.TempDir()
		ck := filepath.Join(dir, "ck")
		if err := hfgen.Write(ck, "llama", hfgen.Options{Seed: 6, Shape: shape}); err != nil {
			t.Fatal(err)
		}
		q8 := filepath.Join(dir, "q8.mlb")
		if _, err := Convert(context.Background(), ck, Options{Out: q8}); err != nil {
			t.Fatal(err)
		}
		g, err := mlb.Open(q8)
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		for _, base := range []quantize.GGMLType{quantize.GGMLQ4_K, quantize.GGMLQ5_K} {
			if shape == "tiny" && base == quantize.GGMLQ5_K {
				continue // the same fallbacks as Q4_K
			}
			out := filepath.Join(dir, base.String()+"_m.mlb")
			if _, err := Convert(context.Background(), ck, Options{Out: out, GGML: base, Mix: true, Threads: 2}); err != nil {
				t.Fatal(err)
			}
			f, err := mlb.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, ti := range f.Tensors {
				if !ti.Type.Quantized() {
					continue
				}
				want := mlb.Q4_K
				if base == quantize.GGMLQ5_K {
					want = mlb.Q5_K
				}
				if ti.Name == "blk.1.wv" || ti.Name == "blk.1.w2" || ti.Name == "wcls" || ti.Name == "tok_emb" && f.Header.SharedClassifier != 0 {
					want = mlb.Q6_K
				}
				if ti.Cols%256 != 0 {
					want = map[mlb.DType]mlb.DType{mlb.Q4_K: mlb.Q5_0, mlb.Q5_K: mlb.Q5_0, mlb.Q6_K: mlb.Q8_0}[want]
				}
				if ti.Type != want {
					t.Errorf("%s %v_M: %s (%d cols) is %v, want %v", shape, base, ti.Name, ti.Cols, ti.Type, want)
					continue
				}
				y := make([]float32, ti.Rows*ti.Cols)
				if ti.Type == mlb.Q8_0 {
					y = quantize.Dequantize(quantize.TypeQ8_0, ti.Q, ti.D, ti.Rows, ti.Cols)
				} else if err := quantize.DequantizeGGML(quantize.GGMLType(mlb.TypeCode(ti.Type)), ti.Q, y); err != nil {
					t.Fatal(err)
				}
				rt := g.Tensor(ti.Name)
				ref := quantize.Dequantize(quantize.TypeQ8_0, rt.Q, rt.D, rt.Rows, rt.Cols)
				var se, sx float64
				for i := range y {
					se += float64(y[i]-ref[i]) * float64(y[i]-ref[i])
					sx += float64(ref[i]) * float64(ref[i])
				}
				hi := map[mlb.DType]float64{mlb.Q4_K: 0.15, mlb.Q5_K: 0.08, mlb.Q6_K: 0.05, mlb.Q5_0: 0.08, mlb.Q8_0: 0.01}[ti.Type]
				if r := math.Sqrt(se / sx); !(r < hi) {
					t.Errorf("%s %v_M: %s (%v) relative distance to Q8_0 %.4f, want < %g", shape, base, ti.Name, ti.Type, r, hi)
				}
			}
			f.Close()
			m, err := infer.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			s, err := m.NewSession(infer.SessionOptions{Ctx: 8})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Eval([]int{1, 2}, false, func(int, []float32) error { return nil }); err != nil {
				t.Fatal(err)
			}
			m.Close()
		}
	}
}
