package mlb

import (
	"math/bits"
	"strconv"
)

// DType is the type of a tensor of the body.
type DType int

const (
	F32  DType = iota + 1 // float32 vector or matrix
	U8                    // bytes (the layer flags)
	Q8_0                  // int8 quants + one scale per 32 weights
	Q4_0                  // packed nibbles + one scale per 32 weights
)

func (t DType) String() string {
	switch t {
	case F32:
		return "F32"
	case U8:
		return "U8"
	case Q8_0:
		return "Q8_0"
	case Q4_0:
		return "Q4_0"
	}
	return "DType(" + strconv.Itoa(int(t)) + ")"
}

// Quantized reports whether t is Q8_0 or Q4_0.
func (t DType) Quantized() bool { return t == Q8_0 || t == Q4_0 }

// TensorInfo is one tensor of the body. F32 vectors and U8 arrays have Rows = 1.
type TensorInfo struct {
	Name       string
	Type       DType
	Rows, Cols int
}

// Elems returns Rows × Cols.
func (t TensorInfo) Elems() int64 { return int64(t.Rows) * int64(t.Cols) }

// Elem is the element type of one array of the body.
type Elem int

const (
	ElemU8       Elem = iota + 1 // layer flags
	ElemF32                      // an F32 tensor
	ElemQ8                       // Q8_0 quants (int8)
	ElemQ4                       // Q4_0 quants (two per byte)
	ElemScaleF32                 // scales, f32
	ElemScaleF16                 // scales, f16
)

func (e Elem) String() string {
	switch e {
	case ElemU8:
		return "u8"
	case ElemF32:
		return "f32"
	case ElemQ8:
		return "q8_0"
	case ElemQ4:
		return "q4_0"
	case ElemScaleF32:
		return "f32 scales"
	case ElemScaleF16:
		return "f16 scales"
	}
	return "Elem(" + strconv.Itoa(int(e)) + ")"
}

// bits is the size of one element in bits.
func (e Elem) bits() int64 {
	switch e {
	case ElemQ4:
		return 4
	case ElemU8, ElemQ8:
		return 8
	case ElemScaleF16:
		return 16
	}
	return 32 // ElemF32, ElemScaleF32
}

// Array is one array of the body: an F32 tensor, the layer flags, or the quants
// or the scales of a quantized matrix. Quants are named "<tensor>.q" and scales
// "<tensor>.d"; the others carry the tensor's name.
type Array struct {
	Name   string
	Tensor string // the tensor the array belongs to
	Elem   Elem
	Rows   int   // shape in elements: quants rows × cols, scales rows × cols/32
	Cols   int   //
	Offset int64 // from the start of the file; a multiple of Align
	Bytes  int64 // without the padding
}

// End is the offset just past the array's data (before its padding).
func (a Array) End() int64 { return a.Offset + a.Bytes }

// q8 reports whether tensor class bit is stored as Q8_0 under h (always for
// Q8_0 models; per q8_mask for Q4_0 ones).
func (h *Header) q8(bit uint32) bool { return h.WType == WTypeQ8_0 || h.Q8Mask&bit != 0 }

func (h *Header) matType(bit uint32) DType {
	if h.q8(bit) {
		return Q8_0
	}
	return Q4_0
}

// Tensors lists the body's tensors in file order, with q8_mask applied. The
// header must be valid (it is validated first).
func Tensors(h *Header) ([]TensorInfo, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	return tensors(h), nil
}

// tensors lists the tensors of a valid header.
func tensors(h *Header) []TensorInfo {
	var ts []TensorInfo
	walk(h, func(layer int, name string, t DType, rows, cols int) {
		if layer >= 0 {
			name = "blk." + strconv.Itoa(layer) + "." + name
		}
		ts = append(ts, TensorInfo{Name: name, Type: t, Rows: rows, Cols: cols})
	})
	return ts
}

// walk calls add for every tensor of a valid header in file order; layer is -1
// outside the layers, and name is then the full name, else the name inside the
// layer. It allocates nothing, so sizes can be checked before any allocation.
func walk(h *Header, add func(layer int, name string, t DType, rows, cols int)) {
	dim, hid, vocab := int(h.Dim), int(h.HiddenDim), int(h.Vocab)
	qd, kvd, hd := h.QDim(), h.KVDim(), h.HeadDimEff()
	if h.LayerFlags != 0 {
		add(-1, "layer_flags", U8, 1, int(h.NLayers))
	}
	embT := Q4_0
	if h.q8(MaskTokEmb) || (h.SharedClassifier != 0 && h.q8(MaskWcls)) {
		embT = Q8_0
	}
	add(-1, "tok_emb", embT, vocab, dim)
	for l := 0; l < int(h.NLayers); l++ {
		add(l, "attn_norm", F32, 1, dim)
		if h.LayerFlag(l)&FlagLinear != 0 {
			qkv, vd, v := h.LinQKVDim(), h.LinVDimTotal(), int(h.LinVHeads)
			add(l, "lqkv", h.matType(MaskWQK), qkv, dim)
			add(l, "lz", h.matType(MaskWV), vd, dim)
			add(l, "lb", Q8_0, v, dim)
			add(l, "la", Q8_0, v, dim)
			add(l, "lconv", F32, qkv, int(h.LinConv))
			add(l, "dt_bias", F32, 1, v)
			add(l, "A_log", F32, 1, v)
			add(l, "lnorm", F32, 1, int(h.LinVDim))
			add(l, "lout", h.matType(MaskWO), dim, vd)
		} else {
			add(l, "wq", h.matType(MaskWQK), qd, dim)
			add(l, "wk", h.matType(MaskWQK), kvd, dim)
			add(l, "wv", h.matType(MaskWV), kvd, dim)
			add(l, "wo", h.matType(MaskWO), dim, qd)
			if h.AttnGate != 0 {
				add(l, "wg", h.matType(MaskWQK), qd, dim)
			}
			if h.QKVBias != 0 {
				add(l, "bq", F32, 1, qd)
				add(l, "bk", F32, 1, kvd)
				add(l, "bv", F32, 1, kvd)
			}
			if h.QKNorm != 0 {
				add(l, "q_norm", F32, 1, hd)
				add(l, "k_norm", F32, 1, hd)
			}
		}
		add(l, "ffn_norm", F32, 1, dim)
		add(l, "w1", h.matType(MaskW13), hid, dim)
		add(l, "w2", h.matType(MaskW2), dim, hid)
		add(l, "w3", h.matType(MaskW13), hid, dim)
		if h.PostNorms != 0 {
			add(l, "post_attn_norm", F32, 1, dim)
			add(l, "post_ffn_norm", F32, 1, dim)
		}
	}
	add(-1, "final_norm", F32, 1, dim)
	if h.SharedClassifier == 0 {
		add(-1, "wcls", h.matType(MaskWcls), vocab, dim)
	}
}

// walkArrays calls put for every array of a valid header in file order: the
// tensor's layer (-1 outside the layers) and name as walk gives them, the
// array's suffix (".q" quants, ".d" scales, "" otherwise), its shape in
// elements and its element type. Like walk it allocates nothing.
func walkArrays(h *Header, put func(layer int, name, suffix string, rows, cols int, e Elem)) {
	se := ElemScaleF32
	if h.ScaleF16 != 0 {
		se = ElemScaleF16
	}
	walk(h, func(layer int, name string, t DType, rows, cols int) {
		switch t {
		case U8:
			put(layer, name, "", rows, cols, ElemU8)
		case F32:
			put(layer, name, "", rows, cols, ElemF32)
		case Q8_0:
			put(layer, name, ".q", rows, cols, ElemQ8)
			put(layer, name, ".d", rows, cols/BlockSize, se)
		case Q4_0:
			put(layer, name, ".q", rows, cols, ElemQ4)
			put(layer, name, ".d", rows, cols/BlockSize, se)
		}
	})
}

// bodyEnd returns the offset just past the last array's data (the smallest valid
// file size) and the number of tensors, without allocating.
func bodyEnd(h *Header) (end int64, n int, err error) {
	pos, last := int64(HeaderSize), int64(HeaderSize)
	ok := true
	walkArrays(h, func(_ int, _, suffix string, rows, cols int, e Elem) {
		if suffix != ".d" {
			n++
		}
		b, k := mul64(int64(rows), int64(cols))
		if k {
			b, k = mul64(b, e.bits())
		}
		if k {
			last, k = add64(pos, b/8)
		}
		if k {
			pos, k = alignUp(last)
		}
		ok = ok && k
	})
	if !ok {
		return 0, 0, sizeErr("the body")
	}
	return last, n, nil
}

// Layout returns every array of the body in file order with its offset and size.
// The header must be valid (it is validated first).
func Layout(h *Header) ([]Array, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	return layout(h)
}

// sizeErr reports an arithmetic overflow of the layout; with SPEC.md's limits it
// cannot happen in 64 bits, but the check keeps every size honest.
func sizeErr(name string) error {
	return formatErr(-1, "size of %s overflows", name)
}

func mul64(a, b int64) (int64, bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > 1<<62 || a < 0 || b < 0 {
		return 0, false
	}
	return int64(lo), true
}

func add64(a, b int64) (int64, bool) {
	s := a + b
	if a < 0 || b < 0 || s < a || s > 1<<62 {
		return 0, false
	}
	return s, true
}

func alignUp(n int64) (int64, bool) { return add64(n, (Align-n%Align)%Align) }

// layout places the arrays of a valid header after the header.
func layout(h *Header) ([]Array, error) {
	var arrs []Array
	pos := int64(HeaderSize)
	var err error
	walkArrays(h, func(layer int, name, suffix string, rows, cols int, e Elem) {
		if err != nil {
			return
		}
		if layer >= 0 {
			name = "blk." + strconv.Itoa(layer) + "." + name
		}
		a := Array{Name: name + suffix, Tensor: name, Elem: e, Rows: rows, Cols: cols}
		if suffix == ".q" && cols%BlockSize != 0 {
			err = shapeErr(-1, "tensor %s: %d columns are not a multiple of %d", name, cols, BlockSize)
			return
		}
		n, ok := mul64(int64(rows), int64(cols))
		if ok {
			n, ok = mul64(n, e.bits())
		}
		if ok {
			a.Bytes, a.Offset = n/8, pos
			var end int64
			if end, ok = add64(pos, a.Bytes); ok {
				pos, ok = alignUp(end)
			}
		}
		if !ok {
			err = sizeErr(a.Name)
			return
		}
		arrs = append(arrs, a)
	})
	if err != nil {
		return nil, err
	}
	return arrs, nil
}
