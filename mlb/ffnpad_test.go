package mlb_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlb/mlbtest"
)

// padded is mlbtest.Base with an FFN of 81 true channels stored as 96.
func padded(wtype uint32) mlb.Header {
	h := mlbtest.Base()
	h.WType = wtype
	h.TrueHiddenDim = 81
	return h
}

// TestTrueHiddenDimOpens: a file with zero padding channels opens, keeps the
// field and reports the true width; the smallest and largest values are valid.
func TestTrueHiddenDimOpens(t *testing.T) {
	for _, c := range []struct {
		wtype uint32
		n     uint32
	}{{mlb.WTypeQ8_0, 81}, {mlb.WTypeQ4_0, 81}, {mlb.WTypeQ8_0, 65}, {mlb.WTypeQ4_0, 95}} {
		t.Run(fmt.Sprintf("wtype%d/%d", c.wtype, c.n), func(t *testing.T) {
			h := padded(c.wtype)
			h.TrueHiddenDim = c.n
			f, err := openBytes(t, validBytes(t, h))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := f.Header.TrueHiddenDim, c.n; got != want {
				t.Errorf("TrueHiddenDim got %d, want %d", got, want)
			}
			if got, want := f.Header.FFNDim(), int(c.n); got != want {
				t.Errorf("FFNDim got %d, want %d", got, want)
			}
		})
	}
	h := mlbtest.Base()
	if got, want := h.FFNDim(), 96; got != want {
		t.Errorf("FFNDim without the field got %d, want %d", got, want)
	}
}

// TestReservedBytes: every header byte after true_hidden_dim must be zero.
func TestReservedBytes(t *testing.T) {
	for _, i := range []int{mlb.ReservedStart, 200, mlb.HeaderSize - 1} {
		b := validBytes(t, mlbtest.Base())
		b[i] = 1
		_, err := openBytes(t, b)
		wantCode(t, err, mlb.CodeFormat, mlb.ErrFormat)
		var e *mlb.Error
		if !errors.As(err, &e) || e.Offset != int64(i) {
			t.Errorf("byte %d: error %v does not point at offset %d", i, err, i)
		}
	}
}

// TestFFNPaddingNotZero: one nonzero weight in a padded channel (a row of w1
// or w3 at or past true_hidden_dim, a column of w2 at or past it) is refused;
// the same weight in a true channel is accepted.
func TestFFNPaddingNotZero(t *testing.T) {
	for _, wtype := range []uint32{mlb.WTypeQ8_0, mlb.WTypeQ4_0} {
		for _, c := range []struct {
			tensor string
			r, c   int
			bad    bool
		}{
			{"blk.0.w1", 81, 0, true}, {"blk.1.w3", 95, 63, true}, {"blk.1.w2", 0, 81, true},
			{"blk.0.w2", 63, 95, true}, {"blk.0.w1", 80, 63, false}, {"blk.0.w2", 5, 80, false},
		} {
			t.Run(fmt.Sprintf("wtype%d/%s/%d,%d", wtype, c.tensor, c.r, c.c), func(t *testing.T) {
				h := padded(wtype)
				b := validBytes(t, h)
				f, err := openBytes(t, b)
				if err != nil {
					t.Fatal(err)
				}
				off := quantByte(t, f, c.tensor, c.r, c.c)
				f.Close()
				if wtype == mlb.WTypeQ4_0 {
					// Flip both nibbles: whichever is the weight, it is no longer 8.
					b[off] ^= 0x11
				} else {
					b[off] = 3
				}
				_, err = openBytes(t, b)
				if !c.bad {
					if err != nil {
						t.Fatalf("a true channel's weight refused: %v", err)
					}
					return
				}
				wantCode(t, err, mlb.CodeFormat, mlb.ErrFormat)
				if !strings.Contains(err.Error(), "true_hidden_dim 81") || !strings.Contains(err.Error(), c.tensor) {
					t.Errorf("message %q does not name the tensor and true_hidden_dim 81", err)
				}
			})
		}
	}
}

// quantByte returns the file offset of the byte storing weight (r, c) of a
// quantized tensor, from the layout SPEC.md gives (Q4_0: blocks of 16 bytes,
// weight j in the low nibble of byte j, weight j+16 in the high one).
func quantByte(t *testing.T, f *mlb.File, tensor string, r, c int) int {
	t.Helper()
	ti := f.Tensor(tensor)
	for _, a := range f.Arrays {
		if a.Name == tensor+".q" {
			i := r*ti.Cols + c
			if a.Elem == mlb.ElemQ4 {
				i = i/32*16 + i%16
			}
			return int(a.Offset) + i
		}
	}
	t.Fatalf("no quants of %s", tensor)
	return 0
}
