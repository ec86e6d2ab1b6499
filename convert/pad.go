package convert

import (
	"fmt"

	"github.com/krafla/krafla/mlb"
)

// The .mlb format stores every matrix in blocks of 32 weights along its rows,
// so each width a matrix is multiplied along must be a multiple of 32. A
// checkpoint whose FFN width is not (stories260K: 172) is padded exactly: the
// extra channels get zero rows of w1 and w3, so their gate and up values are
// 0, the activation gives act(0)·0 = 0 for SiLU and GELU alike, and the zero
// columns of w2 add nothing. The header records the true width in
// true_hidden_dim. No other width can be padded exactly; CheckShapes says why.

// PaddedWidth returns n rounded up to a multiple of mlb.BlockSize.
func PaddedWidth(n int) int { return (n + mlb.BlockSize - 1) / mlb.BlockSize * mlb.BlockSize }

// PadFFN sets h.HiddenDim to the checkpoint's FFN width hid rounded up to a
// multiple of 32 and h.TrueHiddenDim to hid when that padded it (0 when hid
// is already a multiple, so such files are unchanged). It returns the padded
// width. w1 and w3 then have PadFFN rows, w2 PadFFN columns; PadMatrix fills
// them.
func PadFFN(h *mlb.Header, hid int) (int, error) {
	if hid <= 0 || hid > mlb.MaxDim {
		return 0, fmt.Errorf("convert: FFN width %d out of range (1 to %d)", hid, mlb.MaxDim)
	}
	p := PaddedWidth(hid)
	h.HiddenDim, h.TrueHiddenDim = uint32(p), 0
	if p != hid {
		h.TrueHiddenDim = uint32(hid)
	}
	return p, nil
}

// PadMatrix returns the row-major rows×cols matrix w widened with zeros to
// prows×pcols (prows ≥ rows, pcols ≥ cols): w itself when nothing is added.
// For a padded FFN: w1 and w3 (hid×dim) get prows = padded width, w2
// (dim×hid) gets pcols = padded width.
func PadMatrix(w []float32, rows, cols, prows, pcols int) ([]float32, error) {
	if len(w) != rows*cols || prows < rows || pcols < cols {
		return nil, fmt.Errorf("convert: internal error: padding a %d×%d matrix of %d values to %d×%d", rows, cols, len(w), prows, pcols)
	}
	if prows == rows && pcols == cols {
		return w, nil
	}
	out := make([]float32, prows*pcols)
	for r := 0; r < rows; r++ {
		copy(out[r*pcols:r*pcols+cols], w[r*cols:(r+1)*cols])
	}
	return out, nil
}

// CheckShapes refuses, with the reason and the numbers, the widths of h that
// are not a multiple of 32 and cannot be padded exactly. Call it after
// PadFFN, before mlb.Create, so the user reads why instead of the loader's
// rule.
func CheckShapes(h *mlb.Header) error {
	const b = mlb.BlockSize
	if h.Dim%b != 0 {
		return fmt.Errorf("convert: hidden size (dim) %d is not a multiple of %d, and padding it is not exact: "+
			"every RMSNorm divides by dim, so zero channels would change each norm (the .mlb format quantizes in blocks of %d)",
			h.Dim, b, b)
	}
	if q := h.QDim(); q%b != 0 {
		return fmt.Errorf("convert: q_dim = head_dim %d × n_heads %d = %d is not a multiple of %d, and padding it is not exact: "+
			"a wider head_dim changes RoPE's frequencies and the 1/sqrt(head_dim) score scale, and extra heads change how query heads share the %d key/value heads",
			h.HeadDimEff(), h.NHeads, q, b, h.NKVHeads)
	}
	if h.LinVHeads != 0 {
		if v := h.LinVDimTotal(); v%b != 0 || h.LinVHeads%4 != 0 {
			return fmt.Errorf("convert: linear attention: lin_v_heads %d × lin_v_dim %d = %d value channels; the format needs "+
				"lin_v_heads a multiple of 4 and the channels a multiple of %d, and padding them is not exact: "+
				"extra value heads change how query heads map to them, and wider heads change the gated RMSNorm over lin_v_dim",
				h.LinVHeads, h.LinVDim, v, b)
		}
	}
	return nil
}
