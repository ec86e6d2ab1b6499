package convert

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/quantize"
)

// TestConvertPaddedFFN converts checkpoints of stories260K's shape (FFN width
// 172) and checks that every tensor is the source's, w1 and w3 with 20 zero
// rows and w2 with 20 zero columns (checkTensors' bound is exact for zero
// blocks), that the header records 172 and the summary says so.
func TestConvertPaddedFFN(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  Options
	}{
		{"q8_0", Options{}},
		{"q4_0", Options{Type: quantize.TypeQ4_0}},
		{"q4_0-round-f16", Options{Type: quantize.TypeQ4_0, Q4Rule: "round", F16Scales: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opt.NoTokenizer = true
			ck, f, rep := convertArch(t, "llama", hfgen.Options{Shape: "stories260k", Seed: 11, DType: "f32"}, tc.opt)
			if got := cmp(f.Header.HiddenDim, 192, f.Header.TrueHiddenDim, 172, uint32(f.Header.FFNDim()), 172); got != "" {
				t.Errorf("header: %s", got)
			}
			checkTensors(t, f, expected(t, ck, refArchs["llama"], &f.Header))
			if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "172 padded to 192") {
				t.Errorf("notes %q, want one saying 172 padded to 192", rep.Notes)
			}
		})
	}
	// A width already a multiple of 32 leaves the header field 0.
	_, f, rep := convertArch(t, "llama", hfgen.Options{}, Options{NoTokenizer: true})
	if f.Header.TrueHiddenDim != 0 || len(rep.Notes) != 0 {
		t.Errorf("unpadded FFN: true_hidden_dim %d, notes %q; want 0 and none", f.Header.TrueHiddenDim, rep.Notes)
	}
}

// TestRefuseUnpaddable: widths that cannot be padded exactly are refused
// before any tensor is read, with the numbers and the reason.
func TestRefuseUnpaddable(t *testing.T) {
	for _, tc := range []struct {
		name, arch string
		cfg        map[string]any
		want       []string
	}{
		{"dim", "llama", map[string]any{"hidden_size": 48, "head_dim": 16}, []string{"dim) 48", "multiple of 32", "RMSNorm"}},
		{"head_dim", "llama", map[string]any{"head_dim": 12}, []string{"head_dim 12", "n_heads 4", "= 48", "RoPE"}},
		{"linear value channels", "qwen3_5", map[string]any{"linear_num_value_heads": 6, "linear_num_key_heads": 2},
			[]string{"lin_v_heads 6", "multiple of 4", "not exact"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := hfgen.Write(dir, tc.arch, hfgen.Options{NoTokenizer: true, Config: tc.cfg}); err != nil {
				t.Fatal(err)
			}
			_, err := Convert(context.Background(), dir, Options{Out: filepath.Join(t.TempDir(), "o.mlb"), NoTokenizer: true})
			if err == nil {
				t.Fatalf("got no error, want one containing %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestPadMatrix(t *testing.T) {
	w := []float32{1, 2, 3, 4, 5, 6} // 2×3
	got, err := PadMatrix(w, 2, 3, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{1, 2, 3, 0, 4, 5, 6, 0, 0, 0, 0, 0}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if same, _ := PadMatrix(w, 2, 3, 2, 3); &same[0] != &w[0] {
		t.Errorf("no padding: got a copy, want w itself")
	}
	if _, err := PadMatrix(w, 2, 3, 1, 3); err == nil {
		t.Errorf("shrinking: got no error")
	}
	var h mlb.Header
	for _, c := range []struct{ hid, padded, field int }{{172, 192, 172}, {192, 192, 0}, {1, 32, 1}, {33, 64, 33}} {
		p, err := PadFFN(&h, c.hid)
		if err != nil || p != c.padded || int(h.HiddenDim) != c.padded || int(h.TrueHiddenDim) != c.field {
			t.Errorf("PadFFN(%d): got %d (hidden_dim %d, true_hidden_dim %d, %v), want %d, %d, %d",
				c.hid, p, h.HiddenDim, h.TrueHiddenDim, err, c.padded, c.padded, c.field)
		}
	}
	if _, err := PadFFN(&h, 0); err == nil {
		t.Errorf("PadFFN(0): got no error")
	}
}
