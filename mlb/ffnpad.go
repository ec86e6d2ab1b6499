package mlb

import "fmt"

// checkReserved refuses a header whose padding after the last known field is
// not zero. Every writer of the format writes zeros there; a nonzero byte is a
// field this reader does not know, and guessing its meaning would be worse
// than refusing it.
func checkReserved(data []byte) error {
	for i := ReservedStart; i < HeaderSize; i++ {
		if data[i] != 0 {
			return formatErr(int64(i), "header byte %d is %#x; bytes %d to %d are reserved and must be 0 (a field this reader does not know?)",
				i, data[i], ReservedStart, HeaderSize-1)
		}
	}
	return nil
}

// zeroCode is the stored value of a weight that dequantizes to 0 whatever its
// block's scale: int8 0 for Q8_0, nibble 8 (level nibble−8 = 0) for Q4_0.
func zeroCode(t DType) byte {
	if t == Q4_0 {
		return 8
	}
	return 0
}

// quant returns the stored value of weight (r, c) of a quantized matrix with
// cols columns whose quants are q.
func quant(t DType, q []byte, cols, r, c int) byte {
	i := r*cols + c
	if t == Q4_0 {
		// Each block of 32 is 16 bytes: weight j in the low nibble of byte j,
		// weight j+16 in the high nibble (SPEC.md).
		b, j := i/BlockSize, i%BlockSize
		v := q[b*16+j%16]
		if j >= 16 {
			return v >> 4
		}
		return v & 15
	}
	return q[i]
}

// checkFFNPadding checks that the channels true_hidden_dim recorded as
// padding hold zeros: rows ffn_dim.. of w1 and w3 and columns ffn_dim.. of w2
// store the zero code. Then the padded width computes exactly what the true
// width would, and the field states a fact about the weights, not a hope.
func checkFFNPadding(f *File) error {
	h := &f.Header
	if h.TrueHiddenDim == 0 {
		return nil
	}
	n, hid := int(h.TrueHiddenDim), int(h.HiddenDim)
	for l := 0; l < int(h.NLayers); l++ {
		for _, name := range []string{"w1", "w3", "w2"} {
			t := f.Tensor(fmt.Sprintf("blk.%d.%s", l, name))
			if t == nil {
				return fmt.Errorf("mlb: internal error: blk.%d.%s missing", l, name)
			}
			z := zeroCode(t.Type)
			for r := 0; r < t.Rows; r++ {
				c0, c1 := 0, t.Cols // w1, w3: whole padded rows
				if name == "w2" {
					c0, c1 = n, hid // w2: the padded columns of every row
				} else if r < n {
					continue
				}
				for c := c0; c < c1; c++ {
					if v := quant(t.Type, t.Q, t.Cols, r, c); v != z {
						return &Error{Code: CodeFormat, Offset: quantOffset(f, t, r, c), Tensor: t.Name,
							Msg: fmt.Sprintf("weight at row %d, column %d is not zero (stored %d), but true_hidden_dim %d makes FFN channels %d to %d zero padding",
								r, c, v, n, n, hid-1)}
					}
				}
			}
		}
	}
	return nil
}

// quantOffset is the file offset of the byte holding weight (r, c) of t.
func quantOffset(f *File, t *Tensor, r, c int) int64 {
	for _, a := range f.Arrays {
		if a.Tensor == t.Name && (a.Elem == ElemQ8 || a.Elem == ElemQ4) {
			i := int64(r)*int64(t.Cols) + int64(c)
			if a.Elem == ElemQ4 {
				i = i/BlockSize*16 + i%16
			}
			return a.Offset + i
		}
	}
	return -1
}
