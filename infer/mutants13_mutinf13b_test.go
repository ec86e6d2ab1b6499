package infer

import (
	"errors"
	"testing"

	"github.com/krafla/krafla/asm"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlb/mlbtest"
	"github.com/krafla/krafla/mlt"
	"github.com/krafla/krafla/quantize"
)

// Tests written for the mutants of infer's hidden.go, imat.go, imatrix.go,
// tokenizer.go, open.go and model.go that a session-13 mutation pass
// (docs/RELIABILITY.md) found alive; each says which mutants it kills.
// Expected values come from the documented rules, never from the code under
// test.

// TestAddBOS13: AddBOS is true exactly when the tokenizer's add-BOS flag is
// set and it has a BOS id: mlt's BOS is -1 when none, so id 0 is a valid BOS
// (a vocabulary may put it first). Kills tokenizer.go:23 `tok.BOS >= 0` →
// `> 0`.
func TestAddBOS13(t *testing.T) {
	for _, c := range []struct {
		flags uint32
		bos   int32
		want  bool
	}{
		{mlt.FlagAddBOS, 0, true},
		{mlt.FlagAddBOS, 1, true},
		{mlt.FlagAddBOS, -1, false},
		{0, 0, false},
		{0, 1, false},
	} {
		tok := &mlt.Tokenizer{Flags: c.flags, BOS: c.bos}
		if got := AddBOS(tok); got != c.want {
			t.Errorf("AddBOS(flags %#x, BOS %d) = %v, want %v", c.flags, c.bos, got, c.want)
		}
	}
}

// TestMixedIQ4_NLPacked13: packing for a variant with IQ4_NL kernels in the
// Q4_0 layout (asm.PacksIQ4_NL: AVX-512) puts every IQ4_NL matrix in that
// layout (asm.PackedSize with q4, half a byte a weight), for any other
// variant in the Q8_0 form; the Q5_0 and Q8_0 matrices beside them are never
// in the Q4_0 layout. Kills model.go:65 `w.gt == quantize.GGMLIQ4_NL` → `!=`
// (packIQ4), which packs IQ4_NL as Q8_0 (the same products, twice the bytes).
func TestMixedIQ4_NLPacked13(t *testing.T) {
	orig := asm.Variant()
	defer asm.Use(orig)
	h := mlbtest.Mixed(mlb.IQ4_NL, mlb.Q5_0, mlb.Q8_0)
	sawQ4 := false
	for _, k := range asm.AvailableKernels() {
		if err := asm.Use(k); err != nil {
			t.Fatal(err)
		}
		m, _ := openModel(t, h, 3)
		m.ensurePacked()
		n := 0
		for _, w := range m.mats() {
			if w.gt != quantize.GGMLIQ4_NL {
				if w.pk.Q4() {
					t.Errorf("%v: a %v %d×%d matrix packed in the Q4_0 layout", k, w.gt, w.rows, w.cols)
				}
				continue
			}
			n++
			q4 := asm.PacksIQ4_NL()
			if w.pk.Q4() != q4 || w.pk.Bytes() != asm.PackedSize(q4, w.f16, w.rows, w.cols) {
				t.Fatalf("%v: IQ4_NL %d×%d packed Q4 %v in %d bytes, want Q4 %v in %d", k, w.rows, w.cols, w.pk.Q4(), w.pk.Bytes(), q4, asm.PackedSize(q4, w.f16, w.rows, w.cols))
			}
			sawQ4 = sawQ4 || q4
		}
		if n == 0 {
			t.Fatal("no IQ4_NL matrix in the file")
		}
	}
	if !sawQ4 {
		t.Log("no variant here packs IQ4_NL as Q4_0 (AVX-512): the mutant is not reached")
	}
}

// TestModelCloseErrors13: Close releases the huge-page copy, then the file,
// and returns the first error of the two (the file's when releasing the copy
// succeeded); each is called once, and a second Close does nothing. Kills
// model.go:187 `err == nil` → `!=`.
func TestModelCloseErrors13(t *testing.T) {
	errHuge, errFile := errors.New("huge"), errors.New("file")
	for _, c := range []struct {
		huge, file error
		want       error
	}{
		{nil, nil, nil},
		{nil, errFile, errFile},
		{errHuge, nil, errHuge},
		{errHuge, errFile, errHuge},
	} {
		var calls []string
		m := &Model{
			huge:   func() error { calls = append(calls, "huge"); return c.huge },
			closer: func() error { calls = append(calls, "file"); return c.file },
		}
		if err := m.Close(); err != c.want {
			t.Errorf("huge %v, file %v: Close = %v, want %v", c.huge, c.file, err, c.want)
		}
		if err := m.Close(); err != nil {
			t.Errorf("huge %v, file %v: second Close = %v, want nil", c.huge, c.file, err)
		}
		if len(calls) != 2 || calls[0] != "huge" || calls[1] != "file" {
			t.Errorf("huge %v, file %v: calls %v, want [huge file]", c.huge, c.file, calls)
		}
	}
	m := &Model{closer: func() error { return errFile }}
	if err := m.Close(); err != errFile {
		t.Errorf("no huge copy, file %v: Close = %v", errFile, err)
	}
}
