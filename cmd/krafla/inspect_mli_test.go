package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/imatrix"
)

func writeMLI(t *testing.T) string {
	t.Helper()
	f := imatrix.New(2, 32, 64, 32) // q_dim = dim: stored as 0
	f.LayerTokens, f.ClassifierTokens = 10, 4
	s := f.Slot(1, imatrix.FFNOut)
	for i := range s {
		s[i] = 10 // mean square 1 everywhere
	}
	s[3] = 50 // 63·10 + 50 = 680: mean 10.625, mean square 1.0625, ratio 50/10.625 = 4.71
	path := filepath.Join(t.TempDir(), "m.mli")
	if err := f.Write(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestInspectMLI(t *testing.T) {
	if inspectors["MLI1"] == nil {
		t.Fatal(`no inspector registered for "MLI1"`)
	}
	path := writeMLI(t)
	var out bytes.Buffer
	if err := inspectMLI(path, inspectOptions{}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"importance matrix (MLI1 version 1)", "HIDDEN_DIM", "32 (stored 0: equal to dim)", "FFN_OUT", "W2", "none: x² fallback", "4.71", "1.062"} {
		if !strings.Contains(strings.ToUpper(out.String()), strings.ToUpper(want)) {
			t.Errorf("table output lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	if err := inspectMLI(path, inspectOptions{JSON: true}, &out); err != nil {
		t.Fatal(err)
	}
	var r mliReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out.String())
	}
	// 2 layers × 4 slots + the classifier
	if r.NLayers != 2 || r.QDim != 32 || r.QDimStored != 0 || len(r.Slots) != 9 || r.LayerTokens != 10 {
		t.Errorf("JSON report: got %+v", r)
	}
	w2 := r.Slots[7]
	if w2.Layer != 1 || w2.Slot != "ffn_out" || !w2.HasStats || w2.MaxChannel != 3 || w2.MeanSq != 1.0625 {
		t.Errorf("layer 1 ffn_out: got %+v, want mean square 1.0625 with channel 3 largest", w2)
	}
	if c := r.Slots[8]; c.Layer != -1 || c.HasStats {
		t.Errorf("classifier: got %+v, want layer -1 without statistics", c)
	}
}

func TestInspectMLIInvalid(t *testing.T) {
	path := writeMLI(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:len(b)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	err = inspectMLI(path, inspectOptions{}, new(bytes.Buffer))
	if err == nil || !strings.HasPrefix(err.Error(), "ML_E_FORMAT: ") || !strings.Contains(err.Error(), path) {
		t.Errorf("truncated file: got %v, want ML_E_FORMAT naming the file", err)
	}
	err = inspectMLI(filepath.Join(t.TempDir(), "none.mli"), inspectOptions{}, new(bytes.Buffer))
	if err == nil || !strings.HasPrefix(err.Error(), "ML_E_IO: ") {
		t.Errorf("missing file: got %v, want ML_E_IO", err)
	}
}
