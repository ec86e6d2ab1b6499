package quantize

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/x448/float16"
)

// BlockSize is the number of consecutive weights of a row that share one scale.
const BlockSize = 32

// Type is a quantized weight type; the values are the .mlb wtype values.
type Type uint32

// The quantized types of SPEC.md. docs/DESIGN.md names them Q8_0 and Q4_0, but Go
// cannot give a constant and the function Q8_0 (the activation quantizer) one name.
const (
	TypeQ8_0 Type = 1
	TypeQ4_0 Type = 2
	// TypeKeep (wtype 3, a mixed file) asks a GGUF import to keep each
	// matrix's own type, its ggml blocks copied bit for bit where the .mlb
	// can hold them (docs/FORMATS.md, "Mixed types").
	TypeKeep Type = 3
)

// String returns "q8_0", "q4_0" or "type(N)".
func (t Type) String() string {
	switch t {
	case TypeQ8_0:
		return "q8_0"
	case TypeQ4_0:
		return "q4_0"
	case TypeKeep:
		return "keep"
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// BlockBytes returns the bytes of quants per block of 32 weights: 32 for Q8_0, 16
// for Q4_0, and 0 for an unknown type.
func (t Type) BlockBytes() int {
	switch t {
	case TypeQ8_0:
		return 32
	case TypeQ4_0:
		return 16
	}
	return 0
}

// Q4Rule selects how Q4_0 blocks are quantized.
type Q4Rule int

const (
	// BestFit searches 13 candidate levels for the block's largest-magnitude
	// element and keeps the weighted least-squares fit with the smallest error.
	BestFit Q4Rule = iota
	// Round is llama.cpp's quantize_row_q4_0_ref: d = max/−8, rounded levels.
	Round
)

// String returns "best" or "round".
func (r Q4Rule) String() string {
	switch r {
	case BestFit:
		return "best"
	case Round:
		return "round"
	}
	return fmt.Sprintf("Q4Rule(%d)", int(r))
}

// MaxF16Scale is the largest scale an f16 can store; larger scales are refused.
const MaxF16Scale = 65504

// Errors returned by Matrix, for errors.Is; the messages name the tensor and row.
var (
	ErrShape     = errors.New("quantize: bad shape")
	ErrNonFinite = errors.New("quantize: NaN or Inf")
	ErrScale     = errors.New("quantize: scale out of f16 range")
)

// Options controls Matrix.
type Options struct {
	Name       string    // tensor name, for error messages ("blk.3.wq row 17: NaN")
	F16Scales  bool      // store d as IEEE f16 (rounded to nearest even)
	Q4Rule     Q4Rule    // Q4_0 only
	Importance []float32 // per input column (len cols), already normalized; nil = plain x² weighting
	Threads    int       // 0 = 1; bytes are identical for any value
}

func (o *Options) name() string {
	if o.Name == "" {
		return "tensor"
	}
	return fmt.Sprintf("%q", o.Name)
}

// Matrix quantizes a row-major rows×cols matrix (cols % 32 == 0) and returns the
// quants (Q8_0: int8 bytes; Q4_0: packed nibbles) and the scales encoded little-endian
// as f32 or f16, exactly the two arrays an .mlb stores.
//
// Q8_0 always uses the fixed rule of SPEC.md (Importance is ignored, as SPEC-NOTES.md
// says). Q4_0 uses opt.Q4Rule; Importance applies to BestFit only, since the round
// rule is llama.cpp's fixed formula. NaN or Inf weights, and with F16Scales a scale
// whose magnitude exceeds 65504, are refused with an error naming the tensor, row and
// column; the first such row in row order is reported whatever the thread count.
func Matrix(t Type, w []float32, rows, cols int, opt Options) (q, scales []byte, err error) {
	if t.BlockBytes() == 0 {
		return nil, nil, fmt.Errorf("%w: %s: unknown type %d", ErrShape, opt.name(), uint32(t))
	}
	if t == TypeQ4_0 && opt.Q4Rule != BestFit && opt.Q4Rule != Round {
		return nil, nil, fmt.Errorf("%w: %s: unknown Q4_0 rule %d", ErrShape, opt.name(), int(opt.Q4Rule))
	}
	if rows < 0 || cols < 0 || cols%BlockSize != 0 {
		return nil, nil, fmt.Errorf("%w: %s: %d×%d: cols must be a non-negative multiple of %d", ErrShape, opt.name(), rows, cols, BlockSize)
	}
	if cols != 0 && rows > math.MaxInt/cols || rows*cols != len(w) {
		return nil, nil, fmt.Errorf("%w: %s: %d×%d does not match %d weights", ErrShape, opt.name(), rows, cols, len(w))
	}
	imp := opt.Importance
	if len(imp) == 0 || t != TypeQ4_0 || opt.Q4Rule != BestFit {
		imp = nil
	} else {
		if len(imp) != cols {
			return nil, nil, fmt.Errorf("%w: %s: importance has %d values for %d columns", ErrShape, opt.name(), len(imp), cols)
		}
		for c, v := range imp {
			if !(v >= 0) || math.IsInf(float64(v), 0) {
				return nil, nil, fmt.Errorf("%w: %s: importance of column %d is %v, want finite and ≥ 0", ErrNonFinite, opt.name(), c, v)
			}
		}
	}
	nb := rows * cols / BlockSize
	sb := 4
	if opt.F16Scales {
		sb = 2
	}
	q = make([]byte, nb*t.BlockBytes())
	scales = make([]byte, nb*sb)
	bpr := cols / BlockSize // blocks per row

	threads := opt.Threads
	if threads < 1 {
		threads = 1
	}
	if threads > rows {
		threads = rows
	}
	doRows := func(r0, r1 int) error {
		var s rowScratch
		for r := r0; r < r1; r++ {
			x := w[r*cols : (r+1)*cols]
			if c := firstNonFinite(x); c >= 0 {
				return fmt.Errorf("%w: %s row %d, column %d: %v", ErrNonFinite, opt.name(), r, c, x[c])
			}
			qr := q[r*bpr*t.BlockBytes() : (r+1)*bpr*t.BlockBytes()]
			sr := scales[r*bpr*sb : (r+1)*bpr*sb]
			var err error
			switch {
			case t == TypeQ8_0:
				err = q8Row(x, qr, sr, opt.F16Scales)
			case opt.Q4Rule == Round:
				err = q4RoundRow(x, qr, sr, opt.F16Scales)
			default:
				err = q4BestRow(x, qr, sr, opt.F16Scales, imp, &s)
			}
			if err != nil {
				return fmt.Errorf("%w: %s row %d, %v", ErrScale, opt.name(), r, err)
			}
		}
		return nil
	}
	if threads <= 1 {
		if err := doRows(0, rows); err != nil {
			return nil, nil, err
		}
		return q, scales, nil
	}
	// Rows are independent and each goroutine writes only its own rows, so the
	// bytes do not depend on the split. Each goroutine stops at its first bad row;
	// chunks are in row order, so the first error of the lowest chunk is the first
	// bad row of the matrix.
	errs := make([]error, threads)
	var wg sync.WaitGroup
	for i := 0; i < threads; i++ {
		r0, r1 := rows*i/threads, rows*(i+1)/threads
		wg.Add(1)
		go func(i, r0, r1 int) {
			defer wg.Done()
			errs[i] = doRows(r0, r1)
		}(i, r0, r1)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	return q, scales, nil
}

func firstNonFinite(x []float32) int {
	for i, v := range x {
		// v−v is 0 for finite v and NaN for NaN or ±Inf.
		if f := v - v; f != 0 {
			return i
		}
	}
	return -1
}

// putScale stores block b's scale little-endian as f32 or f16. With f16 a scale
// above 65504 in magnitude is refused (SPEC.md: it cannot be stored).
func putScale(dst []byte, b int, d float32, f16 bool) error {
	if !f16 {
		binary.LittleEndian.PutUint32(dst[4*b:], math.Float32bits(d))
		return nil
	}
	if d > MaxF16Scale || d < -MaxF16Scale {
		return fmt.Errorf("block %d: scale %g above the f16 maximum %d", b, d, MaxF16Scale)
	}
	binary.LittleEndian.PutUint16(dst[2*b:], float16.Fromfloat32(d).Bits())
	return nil
}

// roundF16 returns d rounded to the nearest f16 (ties to even), as a float32.
func roundF16(d float32) float32 { return float16.Fromfloat32(d).Float32() }

// DecodeScales decodes little-endian f32 (4 bytes each) or f16 (2 bytes each)
// scales to float32; f16 converts exactly. A trailing partial scale is ignored.
func DecodeScales(b []byte, f16 bool) []float32 {
	if f16 {
		d := make([]float32, len(b)/2)
		for i := range d {
			d[i] = float16.Frombits(binary.LittleEndian.Uint16(b[2*i:])).Float32()
		}
		return d
	}
	d := make([]float32, len(b)/4)
	for i := range d {
		d[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return d
}

// Dequantize returns the rows×cols weights of a matrix stored as quants q and
// decoded scales d (see DecodeScales): Q8_0 w = int8(q)·d, Q4_0 w = (nibble−8)·d,
// each one float32 multiplication. It panics if the lengths do not match the shape,
// which is a caller's bug: files are validated before their arrays are used.
func Dequantize(t Type, q []byte, d []float32, rows, cols int) []float32 {
	if rows < 0 || cols < 0 || cols%BlockSize != 0 || t.BlockBytes() == 0 {
		panic(fmt.Sprintf("quantize: Dequantize %s %d×%d: bad type or shape", t, rows, cols))
	}
	nb := rows * cols / BlockSize
	if len(q) != nb*t.BlockBytes() || len(d) != nb {
		panic(fmt.Sprintf("quantize: Dequantize %s %d×%d: %d quant bytes and %d scales, want %d and %d",
			t, rows, cols, len(q), len(d), nb*t.BlockBytes(), nb))
	}
	w := make([]float32, rows*cols)
	for b := 0; b < nb; b++ {
		wb := w[b*BlockSize : (b+1)*BlockSize]
		db := d[b]
		if t == TypeQ8_0 {
			for i, v := range q[b*32 : (b+1)*32] {
				wb[i] = float32(int8(v)) * db
			}
			continue
		}
		for j, v := range q[b*16 : (b+1)*16] {
			wb[j] = float32(int(v&15)-8) * db
			wb[j+16] = float32(int(v>>4)-8) * db
		}
	}
	return w
}
