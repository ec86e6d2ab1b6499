package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/krafla/krafla/convert"
	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/quantize"
)

// TestConvertGGUFKeepsKQuants: `krafla convert F-Q4_K_M.gguf` without --type
// copies the K-quant blocks into a mixed .mlb (nothing requantized); with
// --type q8_0 every matrix is Q8_0.
func TestConvertGGUFKeepsKQuants(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	if err := hfgen.Write(ck, "llama", hfgen.Options{Seed: 3, Shape: "k256"}); err != nil {
		t.Fatal(err)
	}
	m := filepath.Join(dir, "m.mlb")
	if _, err := convert.Convert(context.Background(), ck, convert.Options{Out: m, GGML: quantize.GGMLQ4_K, Mix: true}); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "m-Q4_K_M.gguf")
	if _, err := convert.ExportGGUF(m, src, convert.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args  []string
		mixed bool
	}{{nil, true}, {[]string{"--type", "q8_0"}, false}} {
		out := filepath.Join(dir, "back.mlb")
		if _, _, err := runCLI(append([]string{"convert", src, "-o", out}, tc.args...)...); err != nil {
			t.Fatalf("convert %v: %v", tc.args, err)
		}
		f, err := mlb.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		for _, c := range f.Header.Types {
			if c == mlb.TypeCode(mlb.Q4_K) {
				k++
			}
		}
		mixed := f.Header.WType == mlb.WTypeMixed
		f.Close()
		if mixed != tc.mixed || (k > 0) != tc.mixed {
			t.Errorf("convert %v: wtype mixed %v with %d Q4_K matrices; want mixed %v", tc.args, mixed, k, tc.mixed)
		}
	}
}
