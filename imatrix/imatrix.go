package imatrix

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/krafla/krafla/internal/atomicfile"
)

// Magic and Version identify an MLI1 file; HeaderSize is the fixed header length.
const (
	Magic      = "MLI1"
	Version    = 1
	HeaderSize = 40
	// MaxDim is the largest n_layers, dim, hidden_dim and q_dim (SPEC-NOTES.md).
	MaxDim = 1 << 16
	// Floor is the smallest importance a channel gets.
	Floor = 0.001
)

// ErrFormat is matched by every validation error of Parse and Open (errors.Is).
var ErrFormat = errors.New("imatrix: invalid file")

// Slot names the four per-layer input vectors a file holds statistics for.
type Slot int

// The slots of a layer, in file order.
const (
	AttnIn  Slot = iota // input of wq, wk, wv (dim); in a linear-attention layer of lqkv, lz, lb, la
	AttnOut             // input of wo (q_dim); lout's where V·dv equals q_dim
	FFNIn               // input of w1 and w3 (dim)
	FFNOut              // input of w2 (hidden_dim)
)

// NumSlots is the number of slots per layer.
const NumSlots = 4

// String returns "attn_in", "attn_out", "ffn_in" or "ffn_out".
func (s Slot) String() string {
	switch s {
	case AttnIn:
		return "attn_in"
	case AttnOut:
		return "attn_out"
	case FFNIn:
		return "ffn_in"
	case FFNOut:
		return "ffn_out"
	}
	return fmt.Sprintf("Slot(%d)", int(s))
}

// Matrices lists the weight matrices whose input the slot records.
func (s Slot) Matrices() string {
	switch s {
	case AttnIn:
		return "wq/wk/wv"
	case AttnOut:
		return "wo"
	case FFNIn:
		return "w1/w3"
	case FFNOut:
		return "w2"
	}
	return "?"
}

// SlotOf returns the slot that records the input of a layer matrix, by the short
// name used in .mlb tensor names ("wq" for "blk.3.wq"). Attention's q, k, v and gate
// projections, and the linear-attention input projections, share AttnIn; lout uses
// AttnOut, which holds its input only where V·dv equals q_dim (the caller compares
// SlotSize with the matrix's columns and falls back to x² weighting otherwise).
// The classifier is not a slot: use ClassifierImportance for wcls.
func SlotOf(matrix string) (Slot, bool) {
	switch matrix {
	case "wq", "wk", "wv", "wg", "lqkv", "lz", "lb", "la":
		return AttnIn, true
	case "wo", "lout":
		return AttnOut, true
	case "w1", "w3":
		return FFNIn, true
	case "w2":
		return FFNOut, true
	}
	return 0, false
}

// File is an importance matrix: the header fields and the sums as stored.
type File struct {
	NLayers, Dim, HiddenDim, QDim uint32 // QDim as stored: 0 when equal to Dim
	LayerTokens, ClassifierTokens uint64
	Sums                          []float64 // the float64 array after the 40-byte header
}

// New returns an empty file for a model with these sizes; qDim is the real q_dim and
// is stored as 0 when it equals dim. It panics on a size outside 1..65536, a
// caller's bug (the sizes come from a validated model).
func New(nLayers, dim, hiddenDim, qDim int) *File {
	for _, v := range []int{nLayers, dim, hiddenDim, qDim} {
		if v < 1 || v > MaxDim {
			panic(fmt.Sprintf("imatrix: New(%d, %d, %d, %d): sizes must be 1..%d", nLayers, dim, hiddenDim, qDim, MaxDim))
		}
	}
	f := &File{NLayers: uint32(nLayers), Dim: uint32(dim), HiddenDim: uint32(hiddenDim)}
	if qDim != dim {
		f.QDim = uint32(qDim)
	}
	f.Sums = make([]float64, f.numSums())
	return f
}

// QDimEff returns q_dim: QDim, or Dim when QDim is 0.
func (f *File) QDimEff() int {
	if f.QDim == 0 {
		return int(f.Dim)
	}
	return int(f.QDim)
}

// SlotSize returns the number of channels of slot s.
func (f *File) SlotSize(s Slot) int {
	switch s {
	case AttnIn, FFNIn:
		return int(f.Dim)
	case AttnOut:
		return f.QDimEff()
	case FFNOut:
		return int(f.HiddenDim)
	}
	return 0
}

func (f *File) layerSize() int { return 2*int(f.Dim) + f.QDimEff() + int(f.HiddenDim) }

// numSums is the length of Sums the header implies, computed in uint64 (at most
// 2^16·(4·2^16) + 2^16 < 2^35 for validated sizes).
func numSums(nLayers, dim, hidden, qdim uint64) uint64 {
	if qdim == 0 {
		qdim = dim
	}
	return nLayers*(2*dim+qdim+hidden) + dim
}

func (f *File) numSums() int {
	return int(numSums(uint64(f.NLayers), uint64(f.Dim), uint64(f.HiddenDim), uint64(f.QDim)))
}

// slotOffset returns the index in Sums of slot s of layer l.
func (f *File) slotOffset(l int, s Slot) int {
	off := l * f.layerSize()
	for t := AttnIn; t < s; t++ {
		off += f.SlotSize(t)
	}
	return off
}

// Slot returns the sums of slot s of layer l, a view into Sums. It panics when l or s
// is out of range.
func (f *File) Slot(l int, s Slot) []float64 {
	if l < 0 || l >= int(f.NLayers) || s < 0 || s >= NumSlots {
		panic(fmt.Sprintf("imatrix: Slot(%d, %v) out of range (%d layers)", l, s, f.NLayers))
	}
	off := f.slotOffset(l, s)
	return f.Sums[off : off+f.SlotSize(s) : off+f.SlotSize(s)]
}

// Classifier returns the sums of the classifier input (dim), a view into Sums.
func (f *File) Classifier() []float64 {
	off := int(f.NLayers) * f.layerSize()
	return f.Sums[off : off+int(f.Dim) : off+int(f.Dim)]
}

// Importance returns the importance of each input channel of slot s of layer l: the
// channel's mean square (sum / LayerTokens) divided by the mean over the slot's
// channels, at least 0.001. It returns nil when the slot has no statistics: zero
// tokens or all sums zero.
func (f *File) Importance(l int, s Slot) []float32 {
	return importance(f.Slot(l, s), f.LayerTokens)
}

// ClassifierImportance is Importance for the classifier input, with ClassifierTokens.
func (f *File) ClassifierImportance() []float32 {
	return importance(f.Classifier(), f.ClassifierTokens)
}

func importance(sums []float64, tokens uint64) []float32 {
	if tokens == 0 || len(sums) == 0 {
		return nil
	}
	n := float64(tokens)
	var mean float64
	for _, v := range sums {
		mean += v / n
	}
	mean /= float64(len(sums))
	if !(mean > 0) || math.IsInf(mean, 0) {
		return nil
	}
	imp := make([]float32, len(sums))
	for i, v := range sums {
		imp[i] = float32(math.Max(Floor, v/n/mean))
	}
	return imp
}

// AddSquares adds x_i² to sums_i in float64, the accumulation a run does per token.
func AddSquares(sums []float64, x []float32) {
	for i, v := range x[:len(sums)] {
		sums[i] += float64(v) * float64(v)
	}
}

// formatError builds an ErrFormat error: "imatrix: invalid file: <name>: <msg>".
func formatError(name string, format string, args ...any) error {
	if name == "" {
		return fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
	}
	return fmt.Errorf("%w: %s: %s", ErrFormat, name, fmt.Sprintf(format, args...))
}

// sizeFields are the header's sizes, each at most MaxDim; q_dim may be 0
// (meaning dim).
var sizeFields = []struct {
	name string
	off  int
	min  uint32
	get  func(*File) uint32
}{
	{"n_layers", 8, 1, func(f *File) uint32 { return f.NLayers }},
	{"dim", 12, 1, func(f *File) uint32 { return f.Dim }},
	{"hidden_dim", 16, 1, func(f *File) uint32 { return f.HiddenDim }},
	{"q_dim", 20, 0, func(f *File) uint32 { return f.QDim }},
}

// parseHeader decodes the fixed header and validates magic, version, limits and size.
func parseHeader(name string, b []byte, size uint64) (*File, error) {
	if len(b) < HeaderSize {
		return nil, formatError(name, "file is %d bytes, shorter than the %d-byte header", len(b), HeaderSize)
	}
	if string(b[:4]) != Magic {
		return nil, formatError(name, "bad magic %q at offset 0, want %q", b[:4], Magic)
	}
	le := binary.LittleEndian
	if v := le.Uint32(b[4:]); v != Version {
		return nil, formatError(name, "version %d at offset 4, want %d", v, Version)
	}
	f := &File{
		NLayers:          le.Uint32(b[8:]),
		Dim:              le.Uint32(b[12:]),
		HiddenDim:        le.Uint32(b[16:]),
		QDim:             le.Uint32(b[20:]),
		LayerTokens:      le.Uint64(b[24:]),
		ClassifierTokens: le.Uint64(b[32:]),
	}
	for _, c := range sizeFields {
		if v := c.get(f); v < c.min || v > MaxDim {
			return nil, formatError(name, "%s = %d at offset %d, must be %d..%d", c.name, v, c.off, c.min, MaxDim)
		}
	}
	n := numSums(uint64(f.NLayers), uint64(f.Dim), uint64(f.HiddenDim), uint64(f.QDim))
	if want := HeaderSize + 8*n; size != want {
		what := "shorter than"
		if size > want {
			what = "longer than"
		}
		return nil, formatError(name, "file is %d bytes, %s the %d the header implies (n_layers %d, dim %d, hidden_dim %d, q_dim %d: %d sums)",
			size, what, want, f.NLayers, f.Dim, f.HiddenDim, f.QDimEff(), n)
	}
	return f, nil
}

// Parse decodes and validates an MLI1 file held in memory.
func Parse(b []byte) (*File, error) { return parse("", b) }

func parse(name string, b []byte) (*File, error) {
	f, err := parseHeader(name, b, uint64(len(b)))
	if err != nil {
		return nil, err
	}
	if err := f.decodeSums(name, b[HeaderSize:]); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *File) decodeSums(name string, b []byte) error {
	f.Sums = make([]float64, len(b)/8)
	for i := range f.Sums {
		v := math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		if !(v >= 0) || math.IsInf(v, 0) {
			return formatError(name, "%s is %v at offset %d, want a finite sum of squares ≥ 0", f.describe(i), v, HeaderSize+8*i)
		}
		f.Sums[i] = v
	}
	return nil
}

// describe names the channel of Sums index i: "layer 3 attn_out (wo) channel 17".
func (f *File) describe(i int) string {
	ls := f.layerSize()
	if l := i / ls; l < int(f.NLayers) {
		r := i % ls
		for s := AttnIn; s < NumSlots; s++ {
			if r < f.SlotSize(s) {
				return fmt.Sprintf("layer %d %v (%s) channel %d", l, s, s.Matrices(), r)
			}
			r -= f.SlotSize(s)
		}
	}
	return fmt.Sprintf("classifier channel %d", i-int(f.NLayers)*ls)
}

// Open reads and validates the MLI1 file at path. The size is checked against the
// header before the sums are read, so a lying header cannot cause a huge allocation.
func Open(path string) (*File, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("imatrix: %w", err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, fmt.Errorf("imatrix: %w", err)
	}
	var hdr [HeaderSize]byte
	n, err := io.ReadFull(fd, hdr[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("imatrix: %s: %w", path, err)
	}
	size := uint64(st.Size())
	if n < HeaderSize {
		size = uint64(n)
	}
	f, err := parseHeader(path, hdr[:n], size)
	if err != nil {
		return nil, err
	}
	body := make([]byte, size-HeaderSize)
	if _, err := io.ReadFull(fd, body); err != nil {
		return nil, fmt.Errorf("imatrix: %s: reading the sums: %w", path, err)
	}
	if err := f.decodeSums(path, body); err != nil {
		return nil, err
	}
	return f, nil
}

// MarshalBinary encodes the file. It fails if the header is invalid, Sums does not
// have the length the header implies, or a sum is negative, NaN or infinite.
func (f *File) MarshalBinary() ([]byte, error) {
	for _, c := range sizeFields {
		if v := c.get(f); v < c.min || v > MaxDim {
			return nil, fmt.Errorf("imatrix: %s = %d, must be %d..%d", c.name, v, c.min, MaxDim)
		}
	}
	if n := f.numSums(); len(f.Sums) != n {
		return nil, fmt.Errorf("imatrix: %d sums, the header implies %d", len(f.Sums), n)
	}
	for i, v := range f.Sums { // never write what Parse rejects
		if !(v >= 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("imatrix: %s is %v, want a finite sum of squares ≥ 0", f.describe(i), v)
		}
	}
	b := make([]byte, HeaderSize+8*len(f.Sums))
	le := binary.LittleEndian
	copy(b, Magic)
	le.PutUint32(b[4:], Version)
	le.PutUint32(b[8:], f.NLayers)
	le.PutUint32(b[12:], f.Dim)
	le.PutUint32(b[16:], f.HiddenDim)
	le.PutUint32(b[20:], f.QDim)
	le.PutUint64(b[24:], f.LayerTokens)
	le.PutUint64(b[32:], f.ClassifierTokens)
	for i, v := range f.Sums {
		le.PutUint64(b[HeaderSize+8*i:], math.Float64bits(v))
	}
	return b, nil
}

// Write stores the file at path atomically: it writes a temporary file in the same
// directory (internal/atomicfile), syncs it and renames it into place, so a reader
// never sees half a file.
func (f *File) Write(path string) error {
	b, err := f.MarshalBinary()
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, b); err != nil {
		return fmt.Errorf("imatrix: writing %s: %w", path, err)
	}
	return nil
}

// SlotStats summarizes one slot for inspection.
type SlotStats struct {
	Layer      int     `json:"layer"` // -1 for the classifier
	Slot       string  `json:"slot"`
	Matrices   string  `json:"matrices"`
	Channels   int     `json:"channels"`
	Zero       int     `json:"zero_channels"` // channels whose sum is 0
	MeanSq     float64 `json:"mean_square"`   // mean over channels of sum/tokens; 0 without tokens
	MaxRatio   float64 `json:"max_ratio"`     // largest channel mean square over the mean (largest importance)
	MinRatio   float64 `json:"min_ratio"`     // smallest, before the 0.001 floor
	HasStats   bool    `json:"has_stats"`     // false: the converter falls back to x² weighting
	MaxChannel int     `json:"max_channel"`   // the channel with the largest sum
}

func stats(layer int, name, matrices string, sums []float64, tokens uint64) SlotStats {
	st := SlotStats{Layer: layer, Slot: name, Matrices: matrices, Channels: len(sums)}
	var total float64
	for i, v := range sums {
		total += v
		if v == 0 {
			st.Zero++
		}
		if v > sums[st.MaxChannel] {
			st.MaxChannel = i
		}
	}
	if tokens == 0 || total == 0 || len(sums) == 0 {
		return st
	}
	st.HasStats = true
	mean := total / float64(len(sums))
	st.MeanSq = mean / float64(tokens)
	st.MaxRatio = sums[st.MaxChannel] / mean
	st.MinRatio = math.Inf(1)
	for _, v := range sums {
		st.MinRatio = math.Min(st.MinRatio, v/mean)
	}
	return st
}

// Stats summarizes slot s of layer l.
func (f *File) Stats(l int, s Slot) SlotStats {
	return stats(l, s.String(), s.Matrices(), f.Slot(l, s), f.LayerTokens)
}

// ClassifierStats summarizes the classifier input.
func (f *File) ClassifierStats() SlotStats {
	return stats(-1, "classifier", "wcls", f.Classifier(), f.ClassifierTokens)
}
