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

	// The ggml block types of a mixed file (wtype 3, docs/FORMATS.md): each
	// matrix is one array of ggml's blocks, copied bit for bit.
	Q4_1   // blocks of 32: f16 d, f16 m, 16 bytes of nibbles
	Q5_0   // blocks of 32: f16 d, 4 bytes of high bits, 16 bytes of nibbles
	Q4_K   // superblocks of 256: f16 d, f16 dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles
	Q5_K   // superblocks of 256: Q4_K's and 32 bytes of high bits
	Q6_K   // superblocks of 256: 128 bytes low nibbles, 64 bytes high 2 bits, 16 int8 scales, f16 d
	IQ4_NL // blocks of 32: f16 d, 16 bytes of codebook indices
	IQ4_XS // superblocks of 256: f16 d, u16 high scale bits, 4 bytes low scale nibbles, 128 bytes of indices
)

// blockTypes lists, for each ggml block type, its weights and bytes per block.
var blockTypes = map[DType]struct{ elems, bytes int }{
	Q4_1: {32, 20}, Q5_0: {32, 22}, Q4_K: {256, 144}, Q5_K: {256, 176},
	Q6_K: {256, 210}, IQ4_NL: {32, 18}, IQ4_XS: {256, 136},
}

// Blocked reports whether t is one of the ggml block types, stored as one
// array of blocks.
func (t DType) Blocked() bool { _, ok := blockTypes[t]; return ok }

// BlockElems is the number of weights in one block of t (32 for Q8_0 and Q4_0,
// 256 for the K-quants and IQ4_XS), 0 for F32 and U8.
func (t DType) BlockElems() int {
	if t == Q8_0 || t == Q4_0 {
		return BlockSize
	}
	return blockTypes[t].elems
}

// BlockBytes is the size of one ggml block of a Blocked type t, 0 otherwise.
func (t DType) BlockBytes() int { return blockTypes[t].bytes }

// Type codes of the type table (docs/FORMATS.md, "Mixed types"): the byte
// that names a matrix's type. 1 and 2 are wtype's values.
var typeCodes = []DType{0, Q8_0, Q4_0, Q4_1, Q5_0, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS}

// TypeCode returns the type-table code of a matrix type (0 for F32, U8).
func TypeCode(t DType) uint8 {
	for c, u := range typeCodes {
		if c > 0 && u == t {
			return uint8(c)
		}
	}
	return 0
}

// TypeOfCode returns the matrix type a type-table code names; ok is false for
// a code this reader does not know.
func TypeOfCode(c uint8) (t DType, ok bool) {
	if c == 0 || int(c) >= len(typeCodes) {
		return 0, false
	}
	return typeCodes[c], true
}

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
	case Q4_1:
		return "Q4_1"
	case Q5_0:
		return "Q5_0"
	case Q4_K:
		return "Q4_K"
	case Q5_K:
		return "Q5_K"
	case Q6_K:
		return "Q6_K"
	case IQ4_NL:
		return "IQ4_NL"
	case IQ4_XS:
		return "IQ4_XS"
	}
	return "DType(" + strconv.Itoa(int(t)) + ")"
}

// Quantized reports whether t is a matrix type: Q8_0, Q4_0 or a Blocked one.
func (t DType) Quantized() bool { return t == Q8_0 || t == Q4_0 || t.Blocked() }

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
	ElemBlocks                   // ggml blocks of a Blocked type (Array.Type says which)
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
	case ElemBlocks:
		return "blocks"
	}
	return "Elem(" + strconv.Itoa(int(e)) + ")"
}

// size returns the bytes of an array of rows × cols elements of e (for
// ElemBlocks, of type t; cols a multiple of its block); ok is false on overflow.
func (e Elem) size(t DType, rows, cols int) (int64, bool) {
	if e == ElemBlocks {
		bt := blockTypes[t]
		if bt.elems == 0 {
			return 0, false
		}
		n, ok := mul64(int64(rows), int64(cols/bt.elems))
		if ok {
			n, ok = mul64(n, int64(bt.bytes))
		}
		return n, ok
	}
	n, ok := mul64(int64(rows), int64(cols))
	if ok {
		n, ok = mul64(n, e.bits())
	}
	return n / 8, ok
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
	Type   DType // ElemBlocks: the block type
	Rows   int   // shape in elements: quants and blocks rows × cols, scales rows × cols/32
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

// Tensors lists the body's tensors in file order, with q8_mask or the type
// table applied. The header must be valid (it is validated first).
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

// classQ8 marks a matrix that is Q8_0 in every wtype 1 and 2 file (lb, la).
const classQ8 = 1 << 31

// walk calls add for every tensor of a valid header in file order; layer is -1
// outside the layers, and name is then the full name, else the name inside the
// layer. It allocates nothing, so sizes can be checked before any allocation.
// In a mixed file (wtype 3) the i-th matrix has the type of Types[i] (0 when
// the table is short or the code unknown, which validateTypes refuses first).
func walk(h *Header, add func(layer int, name string, t DType, rows, cols int)) {
	mi := 0
	walkMats(h, func(layer int, name string, class uint32, t DType, rows, cols int) {
		if class != 0 {
			t = h.classType(class, mi)
			mi++
		}
		add(layer, name, t, rows, cols)
	})
}

// classType is the type of the mi-th matrix, of class bits class.
func (h *Header) classType(class uint32, mi int) DType {
	switch {
	case h.WType == WTypeMixed:
		if mi < len(h.Types) {
			t, _ := TypeOfCode(h.Types[mi])
			return t
		}
		return 0
	case class == classQ8:
		return Q8_0
	case class == MaskTokEmb:
		if h.q8(MaskTokEmb) || (h.SharedClassifier != 0 && h.q8(MaskWcls)) {
			return Q8_0
		}
		return Q4_0
	}
	return h.matType(class)
}

// walkMats is walk with each matrix's class (its q8_mask bit, classQ8 for lb
// and la, 0 for the F32 and U8 tensors, whose type t is given) instead of its
// type. The type table, when there is one, is the array after the layer flags.
func walkMats(h *Header, add func(layer int, name string, class uint32, t DType, rows, cols int)) {
	dim, hid, vocab := int(h.Dim), int(h.HiddenDim), int(h.Vocab)
	qd, kvd, hd := h.QDim(), h.KVDim(), h.HeadDimEff()
	f32 := func(layer int, name string, n int) { add(layer, name, 0, F32, 1, n) }
	if h.LayerFlags != 0 {
		add(-1, "layer_flags", 0, U8, 1, int(h.NLayers))
	}
	if h.WType == WTypeMixed {
		add(-1, "type_table", 0, U8, 1, h.numMatrices())
	}
	add(-1, "tok_emb", MaskTokEmb, 0, vocab, dim)
	for l := 0; l < int(h.NLayers); l++ {
		f32(l, "attn_norm", dim)
		if h.LayerFlag(l)&FlagLinear != 0 {
			qkv, vd, v := h.LinQKVDim(), h.LinVDimTotal(), int(h.LinVHeads)
			add(l, "lqkv", MaskWQK, 0, qkv, dim)
			add(l, "lz", MaskWV, 0, vd, dim)
			add(l, "lb", classQ8, 0, v, dim)
			add(l, "la", classQ8, 0, v, dim)
			add(l, "lconv", 0, F32, qkv, int(h.LinConv))
			f32(l, "dt_bias", v)
			f32(l, "A_log", v)
			f32(l, "lnorm", int(h.LinVDim))
			add(l, "lout", MaskWO, 0, dim, vd)
		} else {
			add(l, "wq", MaskWQK, 0, qd, dim)
			add(l, "wk", MaskWQK, 0, kvd, dim)
			add(l, "wv", MaskWV, 0, kvd, dim)
			add(l, "wo", MaskWO, 0, dim, qd)
			if h.AttnGate != 0 {
				add(l, "wg", MaskWQK, 0, qd, dim)
			}
			if h.QKVBias != 0 {
				f32(l, "bq", qd)
				f32(l, "bk", kvd)
				f32(l, "bv", kvd)
			}
			if h.QKNorm != 0 {
				f32(l, "q_norm", hd)
				f32(l, "k_norm", hd)
			}
		}
		f32(l, "ffn_norm", dim)
		add(l, "w1", MaskW13, 0, hid, dim)
		add(l, "w2", MaskW2, 0, dim, hid)
		add(l, "w3", MaskW13, 0, hid, dim)
		if h.PostNorms != 0 {
			f32(l, "post_attn_norm", dim)
			f32(l, "post_ffn_norm", dim)
		}
	}
	f32(-1, "final_norm", dim)
	if h.SharedClassifier == 0 {
		add(-1, "wcls", MaskWcls, 0, vocab, dim)
	}
}

// NumMatrices is the number of matrices of the body: the length of a mixed
// file's type table. The layer flags must be known.
func (h *Header) NumMatrices() int { return h.numMatrices() }

func (h *Header) numMatrices() int {
	n := 1 // tok_emb
	for l := 0; l < int(h.NLayers); l++ {
		if h.LayerFlag(l)&FlagLinear != 0 {
			n += 5 + 3
		} else {
			n += 4 + 3
			if h.AttnGate != 0 {
				n++
			}
		}
	}
	if h.SharedClassifier == 0 {
		n++
	}
	return n
}

// walkArrays calls put for every array of a valid header in file order: the
// tensor's layer (-1 outside the layers) and name as walk gives them, the
// array's suffix (".q" quants, ".d" scales, ".b" blocks, "" otherwise), its
// shape in elements, its element type and the tensor's type. Like walk it
// allocates nothing.
func walkArrays(h *Header, put func(layer int, name, suffix string, rows, cols int, e Elem, t DType)) {
	se := ElemScaleF32
	if h.ScaleF16 != 0 {
		se = ElemScaleF16
	}
	walk(h, func(layer int, name string, t DType, rows, cols int) {
		switch t {
		case U8:
			put(layer, name, "", rows, cols, ElemU8, t)
		case F32:
			put(layer, name, "", rows, cols, ElemF32, t)
		case Q8_0:
			put(layer, name, ".q", rows, cols, ElemQ8, t)
			put(layer, name, ".d", rows, cols/BlockSize, se, t)
		case Q4_0:
			put(layer, name, ".q", rows, cols, ElemQ4, t)
			put(layer, name, ".d", rows, cols/BlockSize, se, t)
		default:
			put(layer, name, ".b", rows, cols, ElemBlocks, t)
		}
	})
}

// bodyEnd returns the offset just past the last array's data (the smallest valid
// file size) and the number of tensors, without allocating.
func bodyEnd(h *Header) (end int64, n int, err error) {
	pos, last := int64(HeaderSize), int64(HeaderSize)
	ok := true
	walkArrays(h, func(_ int, _, suffix string, rows, cols int, e Elem, t DType) {
		if suffix != ".d" {
			n++
		}
		b, k := e.size(t, rows, cols)
		if k {
			last, k = add64(pos, b)
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
	walkArrays(h, func(layer int, name, suffix string, rows, cols int, e Elem, t DType) {
		if err != nil {
			return
		}
		if layer >= 0 {
			name = "blk." + strconv.Itoa(layer) + "." + name
		}
		a := Array{Name: name + suffix, Tensor: name, Elem: e, Rows: rows, Cols: cols}
		if e == ElemBlocks {
			a.Type = t
		}
		if (suffix == ".q" || suffix == ".b") && (t.BlockElems() == 0 || cols%t.BlockElems() != 0) {
			err = shapeErr(-1, "tensor %s: %d columns are not a multiple of %s's block of %d", name, cols, t, t.BlockElems())
			return
		}
		n, ok := e.size(t, rows, cols)
		if ok {
			a.Bytes, a.Offset = n, pos
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
