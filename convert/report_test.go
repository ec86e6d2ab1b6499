package convert

import (
	"context"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/imatrix"
	"github.com/krafla/krafla/internal/testenv"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/quantize"
)

// TestQuantReport: with Measure, Report.Errors lists every quantized matrix
// once, worst first, and each relative RMSE equals the one computed here from
// the written file and the source values (checkTensors' expected), weighted by
// the importance matrix's column importance when one is given.
func TestQuantReport(t *testing.T) {
	im := imatrix.New(2, 64, 128, 64) // llama tiny
	for i := range im.Sums {
		k := float64(i%5 + 1)
		im.Sums[i] = k * k * k
	}
	im.LayerTokens, im.ClassifierTokens = 10, 10
	imPath := filepath.Join(t.TempDir(), "m.imatrix")
	if err := im.Write(imPath); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opt  Options
	}{
		{"q8_0", Options{}},
		{"q4_0", Options{Type: quantize.TypeQ4_0, Q8Mask: mlb.MaskW2, F16Scales: true}},
		{"q4_0-imatrix", Options{Type: quantize.TypeQ4_0, Imatrix: imPath}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opt.NoTokenizer, tc.opt.Measure = true, true
			ck, f, rep := convertArch(t, "llama", hfgen.Options{Seed: 2}, tc.opt)
			want := expected(t, ck, refArchs["llama"], &f.Header)
			var quantized int
			for i := range f.Tensors {
				if f.Tensors[i].Type.Quantized() {
					quantized++
				}
			}
			if len(rep.Errors) != quantized {
				t.Fatalf("%d errors reported, want one per quantized matrix (%d)", len(rep.Errors), quantized)
			}
			for i, e := range rep.Errors {
				if i > 0 && e.RelRMSE > rep.Errors[i-1].RelRMSE {
					t.Errorf("%s (%.5f) after %s (%.5f): not worst first", e.Name, e.RelRMSE, rep.Errors[i-1].Name, rep.Errors[i-1].RelRMSE)
				}
				ft := f.Tensor(e.Name)
				typ := quantize.TypeQ8_0
				if ft.Type == mlb.Q4_0 {
					typ = quantize.TypeQ4_0
				}
				got := quantize.Dequantize(typ, ft.Q, ft.D, ft.Rows, ft.Cols)
				imp := importanceOf(im, e.Name)
				weighted := tc.opt.Imatrix != "" && imp != nil
				var se, sw float64
				for j, w := range want[e.Name] {
					c := 1.0
					if weighted {
						c = float64(imp[j%ft.Cols])
					}
					d := float64(got[j]) - float64(w)
					se += c * d * d
					sw += c * float64(w) * float64(w)
				}
				rel := math.Sqrt(se / sw)
				if math.Abs(rel-e.RelRMSE) > 1e-9*rel || e.Weighted != weighted || e.Type != ft.Type.String() || e.Rows != ft.Rows || e.Cols != ft.Cols {
					t.Errorf("%s: got %+v, want rel RMSE %.9f, weighted %v, %s %d×%d", e.Name, e, rel, weighted, ft.Type, ft.Rows, ft.Cols)
				}
				// Sanity of the scale: Q8_0 about 1/127 of a block's range, Q4_0 about 1/8.
				if lim := map[mlb.DType]float64{mlb.Q8_0: 0.02, mlb.Q4_0: 0.2}[ft.Type]; !(e.RelRMSE > 0 && e.RelRMSE < lim) {
					t.Errorf("%s (%v): rel RMSE %.4f outside (0, %.2f)", e.Name, ft.Type, e.RelRMSE, lim)
				}
			}
		})
	}
	// Without Measure, nothing is measured.
	_, _, rep := convertArch(t, "llama", hfgen.Options{Seed: 2}, Options{NoTokenizer: true})
	if rep.Errors != nil {
		t.Errorf("Errors without Measure: got %d entries, want none", len(rep.Errors))
	}
}

// importanceOf is the column importance an MLI1 file gives the matrix
// called name (nil for tok_emb, which has no input), by the slot table of
// SPEC.md: wq/wk/wv, wo, w1/w3, w2; wcls the classifier.
func importanceOf(f *imatrix.File, name string) []float32 {
	if name == "wcls" {
		return f.ClassifierImportance()
	}
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return nil
	}
	l, _ := strconv.Atoi(rest[:strings.IndexByte(rest, '.')])
	slot := map[string]imatrix.Slot{"wq": imatrix.AttnIn, "wk": imatrix.AttnIn, "wv": imatrix.AttnIn, "wo": imatrix.AttnOut,
		"w1": imatrix.FFNIn, "w3": imatrix.FFNIn, "w2": imatrix.FFNOut}[rest[strings.IndexByte(rest, '.')+1:]]
	return f.Importance(l, slot)
}

// TestStoriesReportBothForms: stories260K converted to Q4_0 from its Hugging
// Face checkpoint and from its GGUF file (F32 tensors, the same weights) gives
// the same header, FFN padding included, and the same quantization report.
func TestStoriesReportBothForms(t *testing.T) {
	var reps []*Report
	for _, src := range []string{testenv.Model(t, "stories260K"), testenv.Model(t, "stories260K.gguf")} {
		rep, err := Convert(context.Background(), src, Options{Out: filepath.Join(t.TempDir(), "s.mlb"), Type: quantize.TypeQ4_0,
			NoTokenizer: true, Measure: true})
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if rep.Header.TrueHiddenDim != 172 || rep.Header.HiddenDim != 192 {
			t.Errorf("%s: hidden_dim %d, true_hidden_dim %d; want 192, 172", src, rep.Header.HiddenDim, rep.Header.TrueHiddenDim)
		}
		reps = append(reps, rep)
	}
	a, b := reps[0].Errors, reps[1].Errors
	if len(a) != len(b) || len(a) != 36 { // tok_emb and 7 matrices in 5 layers; the classifier is shared
		t.Fatalf("%d and %d matrices reported, want 36 each", len(a), len(b))
	}
	for i := range a {
		if a[i].Name != b[i].Name || math.Abs(a[i].RelRMSE-b[i].RelRMSE) > 1e-12 {
			t.Errorf("entry %d: checkpoint %s %.6f, GGUF %s %.6f", i, a[i].Name, a[i].RelRMSE, b[i].Name, b[i].RelRMSE)
		}
	}
}
