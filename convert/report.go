package convert

import (
	"math"
	"sort"

	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/quantize"
)

// TensorError is the quantization error of one matrix, measured against the
// float32 values it was quantized from (after the converter's transforms:
// permutations, folded factors, padding).
type TensorError struct {
	Name string `json:"name"`
	Type string `json:"type"` // Q8_0 or Q4_0
	Rows int    `json:"rows"`
	Cols int    `json:"cols"`
	// RelRMSE is sqrt(Σ e² / Σ w²) over the matrix, e = dequantized − w.
	// With an importance matrix each column j is weighted by its importance
	// I_j, the mean square of that input over the calibration text:
	// sqrt(Σ_j I_j Σ_i e_ij² / Σ_j I_j Σ_i w_ij²), the error in the matrix's
	// output relative to the output, if inputs were uncorrelated.
	RelRMSE  float64 `json:"rel_rmse"`
	Weighted bool    `json:"imatrix_weighted"`
}

// errSums accumulates one matrix's (weighted) squared error and squared
// values over its chunks of rows.
type errSums struct {
	e, w float64
}

// add takes rows x of cols values and their quantization q, s (the arrays
// quantize.Matrix returned), weighting column j by imp[j] when imp is set.
func (a *errSums) add(x []float32, cols int, qt quantize.Type, q, s []byte, f16 bool, imp []float32) {
	rows := len(x) / cols
	d := quantize.Dequantize(qt, q, quantize.DecodeScales(s, f16), rows, cols)
	a.sum(x, d, cols, imp)
}

// sum adds the squared errors of d against x and the squares of x,
// weighting column j by imp[j] when imp is set.
func (a *errSums) sum(x, d []float32, cols int, imp []float32) {
	for i, v := range x {
		e := float64(d[i]) - float64(v)
		ee, ww := e*e, float64(v)*float64(v)
		if imp != nil {
			c := float64(imp[i%cols])
			ee, ww = c*ee, c*ww
		}
		a.e += ee
		a.w += ww
	}
}

// addBlocks is add for rows quantized to ggml blocks of type gt.
func (a *errSums) addBlocks(x []float32, cols int, gt quantize.GGMLType, blocks []byte, imp []float32) {
	d := make([]float32, len(x))
	if err := quantize.DequantizeGGML(gt, blocks, d); err != nil {
		panic(err) // the blocks are QuantizeGGML's, for these rows
	}
	a.sum(x, d, cols, imp)
}

func (a *errSums) rel() float64 {
	if a.w == 0 {
		return 0 // an all-zero matrix quantizes exactly
	}
	return math.Sqrt(a.e / a.w)
}

func tensorError(ti mlb.TensorInfo, a *errSums, weighted bool) TensorError {
	return TensorError{Name: ti.Name, Type: ti.Type.String(), Rows: ti.Rows, Cols: ti.Cols, RelRMSE: a.rel(), Weighted: weighted}
}

// worstFirst sorts by decreasing relative RMSE, then by name.
func worstFirst(es []TensorError) {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].RelRMSE != es[j].RelRMSE {
			return es[i].RelRMSE > es[j].RelRMSE
		}
		return es[i].Name < es[j].Name
	})
}
