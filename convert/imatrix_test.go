package convert

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/imatrix"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/quantize"
)

// TestImatrix converts one checkpoint to Q4_0 (w2 and wcls kept in Q8_0)
// with and without a synthetic importance matrix: every Q8_0 tensor must be
// byte-identical, and the Q4_0 ones must change.
func TestImatrix(t *testing.T) {
	dir := t.TempDir()
	if err := hfgen.Write(dir, "llama", hfgen.Options{Seed: 11}); err != nil {
		t.Fatal(err)
	}
	// llama tiny: 2 layers, dim 64, hidden 128, q_dim 64.
	im := imatrix.New(2, 64, 128, 64)
	for i := range im.Sums {
		k := float64(i%7 + 1)
		im.Sums[i] = k * k * k * k // importance spread over 1..2401
	}
	im.LayerTokens, im.ClassifierTokens = 10, 10
	imPath := filepath.Join(t.TempDir(), "m.imatrix")
	if err := im.Write(imPath); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	conv := func(name, imat string) *mlb.File {
		p := filepath.Join(out, name)
		_, err := Convert(context.Background(), dir, Options{Out: p, Type: quantize.TypeQ4_0, Q4Rule: "best",
			Q8Mask: mlb.MaskW2 | mlb.MaskWcls, Imatrix: imat, NoTokenizer: true})
		if err != nil {
			t.Fatal(err)
		}
		f, err := mlb.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	plain, weighted := conv("plain.mlb", ""), conv("imat.mlb", imPath)
	var q4, q4changed, q8 int
	for i := range plain.Tensors {
		a, b := &plain.Tensors[i], &weighted.Tensors[i]
		same := bytes.Equal(a.Q, b.Q) && slices.Equal(a.D, b.D) && slices.Equal(a.F32, b.F32)
		switch a.Type {
		case mlb.Q8_0:
			q8++
			if !same {
				t.Errorf("%s (Q8_0): changed by the importance matrix", a.Name)
			}
		case mlb.Q4_0:
			q4++
			if !same {
				q4changed++
			} else if a.Name != "tok_emb" {
				t.Errorf("%s (Q4_0): unchanged by the importance matrix", a.Name)
			}
		default:
			if !same {
				t.Errorf("%s (%v): changed", a.Name, a.Type)
			}
		}
	}
	if q8 == 0 || q4changed == 0 {
		t.Errorf("got %d Q8_0 tensors and %d of %d Q4_0 tensors changed, want some of each", q8, q4changed, q4)
	}

	// A matrix for another model is refused.
	bad := imatrix.New(3, 64, 128, 64)
	bad.LayerTokens = 1
	bp := filepath.Join(t.TempDir(), "bad.imatrix")
	if err := bad.Write(bp); err != nil {
		t.Fatal(err)
	}
	if _, err := Convert(context.Background(), dir, Options{Out: filepath.Join(out, "x.mlb"), Type: quantize.TypeQ4_0,
		Imatrix: bp, NoTokenizer: true}); err == nil {
		t.Errorf("mismatched importance matrix: got nil error")
	}
}
