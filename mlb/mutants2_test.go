package mlb_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlb/mlbtest"
)

// The tests of this file come from the mutants gremlins found alive in
// validate.go (from line 161) and writer.go (docs/RELIABILITY.md, "Mutation
// testing", session 7): each asserts behaviour no other test pinned down.

// TestTrueHiddenDimMessage: the error for a true_hidden_dim out of range names
// the range it allows, hidden_dim−31 to hidden_dim−1 (33 to 63 for 64).
func TestTrueHiddenDimMessage(t *testing.T) {
	h := mlbtest.Base()
	h.HiddenDim = 64
	h.TrueHiddenDim = 64
	err := h.Validate()
	want := "true_hidden_dim 64 must be 0 or from 33 to 63 (hidden_dim 64 is it rounded up to a multiple of 32)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want it to contain %q", err, want)
	}
}

// linHeader is Base with linear-attention sizes.
func linHeader(kHeads, vHeads, kDim, vDim uint32) mlb.Header {
	h := mlbtest.Base()
	h.LinKHeads, h.LinVHeads, h.LinKDim, h.LinVDim, h.LinConv = kHeads, vHeads, kDim, vDim, 4
	return h
}

// TestLinearLimits: lin_v_heads·lin_v_dim may be exactly MaxDim and
// 2·lin_k_heads·lin_k_dim + lin_v_heads·lin_v_dim exactly 4·MaxDim; one more
// block is refused, with the limit in the message, and the sum is the product
// the docs give (2·4·65536 alone is over the limit).
func TestLinearLimits(t *testing.T) {
	const lim = 4 * mlb.MaxDim // 262144
	for _, c := range []struct {
		name                       string
		kHeads, vHeads, kDim, vDim uint32
		want                       string // "" when valid
	}{
		{"vd = MaxDim, qkv = 4·MaxDim", 4, 4, 24576, 16384, ""}, // 2·4·24576 + 65536 = 262144
		{"vd over MaxDim", 4, 4, 16, 16384 + 8, "lin_v_heads × lin_v_dim = 65568 must be a multiple of 32 and at most 65536"},
		{"qkv over by 8", 4, 4, 24577, 16384, fmt.Sprintf("= %d is above the limit %d", 2*4*24577+65536, lim)},
		{"2·k·kd alone over", 4, 4, 65536, 8, fmt.Sprintf("= %d is above the limit %d", 2*4*65536+32, lim)},
	} {
		h := linHeader(c.kHeads, c.vHeads, c.kDim, c.vDim)
		err := h.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: got %v, want it valid", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want it to contain %q", c.name, err, c.want)
		}
	}
}

// TestLayerFlagOffset: an unknown flag bit of layer l is reported at byte
// HeaderSize + l (the flags follow the header).
func TestLayerFlagOffset(t *testing.T) {
	h := mlbtest.Base()
	h.NLayers = 3
	h.LayerFlags = 1
	h.Flags = []uint8{0, 0, 0x80}
	err := h.Validate()
	var e *mlb.Error
	if !errors.As(err, &e) || e.Offset != mlb.HeaderSize+2 {
		t.Fatalf("got %v, want an error at offset %d", err, mlb.HeaderSize+2)
	}
}

// TestUnknownTypeCodeMessage: a type table entry this reader does not know
// names the range of known codes, 1 to the largest code TypeOfCode accepts.
func TestUnknownTypeCodeMessage(t *testing.T) {
	top := 0
	for c := 1; c < 256; c++ {
		if _, ok := mlb.TypeOfCode(uint8(c)); ok {
			top = c
		}
	}
	h := mlbtest.Mixed(mlb.Q8_0)
	for i := range h.Types {
		h.Types[i] = 255
	}
	err := h.Validate()
	want := fmt.Sprintf("is 255, a type this reader does not know (known: 1 to %d)", top)
	if top == 0 || err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want it to contain %q (top %d)", err, want, top)
	}
}

// TestWriterErrorsHaveNoOffset: the writer's order and method errors concern
// no byte of a file (Offset -1), so their text names none.
func TestWriterErrorsHaveNoOffset(t *testing.T) {
	h := mlbtest.Base()
	h.NLayers = 1
	for _, c := range []struct {
		name string
		do   func(w *mlb.Writer) error
		want string
	}{
		{"wrong name", func(w *mlb.Writer) error { return w.WriteF32("output_norm", make([]float32, 64)) }, "where tok_emb comes next"},
		{"f32 for a matrix", func(w *mlb.Writer) error { return w.WriteF32("tok_emb", make([]float32, 67*64)) }, "written with the wrong method"},
		{"blocks for Q8_0", func(w *mlb.Writer) error { return w.WriteBlocks("tok_emb", make([]byte, 34*2*67)) }, "written with the wrong method"},
		{"after the last", func(w *mlb.Writer) error {
			if err := mlbtest.Fill(w, 1); err != nil {
				return err
			}
			return w.WriteF32("extra", make([]float32, 64))
		}, "written after the last tensor"},
	} {
		w, err := mlb.Create(filepath.Join(t.TempDir(), "m.mlb"), &h)
		if err != nil {
			t.Fatal(err)
		}
		err = c.do(w)
		w.Abort()
		var e *mlb.Error
		if !errors.As(err, &e) || e.Offset != -1 || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "offset") {
			t.Errorf("%s: got %v (offset %v), want %q at offset -1 and no offset in the text", c.name, err, e, c.want)
		}
	}
}
