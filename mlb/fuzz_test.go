package mlb_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlb/mlbtest"
)

var update = flag.Bool("update", false, "rewrite testdata/fuzz/FuzzOpen from mlbtest")

// tinyCases shrinks mlbtest's feature cases to a few KB each, for the fuzz seed
// corpus (the fuzzer mutates small inputs far faster).
func tinyCases() []mlbtest.Case {
	keep := map[string]bool{"q8": true, "q4": true, "q4_mask_all_f16": true, "q4_mask_wcls_shared": true,
		"q8_f16": true, "qwen2_bias": true, "qwen3_qknorm_headdim": true, "rope_llama3": true,
		"rope_yarn": true, "gemma2": true, "gemma3_local_rope": true, "smollm3_no_rope": true,
		"qwen35_linear": true, "qwen35_linear_q4_mask": true}
	var out []mlbtest.Case
	for _, c := range mlbtest.Cases() {
		if !keep[c.Name] {
			continue
		}
		h := c.Header
		// One layer, keeping the most telling flag byte.
		h.NLayers = 1
		if h.LayerFlags != 0 {
			fl := h.Flags[0]
			for _, x := range h.Flags {
				fl = max(fl, x)
			}
			h.Flags = []uint8{fl}
		}
		h.Dim, h.HiddenDim, h.Vocab, h.MaxSeq = 32, 32, 5, 16
		if h.HeadDim == 0 {
			h.NHeads, h.NKVHeads = 2, 1
		} else {
			h.HeadDim, h.NHeads, h.NKVHeads = 16, 2, 1
		}
		if h.RotDim > 16 {
			h.RotDim = 16
		}
		if h.LinKHeads != 0 {
			h.LinKHeads, h.LinVHeads, h.LinKDim, h.LinVDim, h.LinConv = 1, 4, 4, 8, 2
		}
		if err := h.Validate(); err != nil {
			panic(fmt.Sprintf("tiny %s: %v", c.Name, err))
		}
		out = append(out, mlbtest.Case{Name: c.Name, Header: h})
	}
	// A mixed file (wtype 3) with the ggml block types of 32 weights (the
	// 256-weight ones need rows of 256, too large for a seed).
	h := mlbtest.Mixed(mlb.Q4_1, mlb.Q5_0, mlb.IQ4_NL, mlb.Q8_0, mlb.Q4_0)
	h.NLayers, h.Dim, h.HiddenDim, h.Vocab, h.MaxSeq, h.NHeads, h.NKVHeads = 1, 32, 32, 5, 16, 2, 1
	h.Types = h.Types[:h.NumMatrices()]
	if err := h.Validate(); err != nil {
		panic(fmt.Sprintf("tiny mixed: %v", err))
	}
	return append(out, mlbtest.Case{Name: "mixed32", Header: h})
}

// TestFuzzSeeds checks that the checked-in seed corpus is what mlbtest writes
// today (so the seeds stay valid files), and rewrites it with -update.
func TestFuzzSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzOpen")
	tmp := t.TempDir()
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range tinyCases() {
		path := mlbtest.Write(t, tmp, c.Header, 7)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		seed := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		name := filepath.Join(dir, "seed-"+c.Name)
		if *update {
			if err := os.WriteFile(name, []byte(seed), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("%v (regenerate with go test -run TestFuzzSeeds -update ./mlb)", err)
		}
		if string(got) != seed {
			t.Errorf("%s differs from what mlbtest writes (regenerate with -update)", name)
		}
	}
}

// FuzzOpen proves that no byte string makes the loader panic, and that every
// error carries exactly one of the three codes.
func FuzzOpen(f *testing.F) {
	// The checked-in corpus under testdata/fuzz/FuzzOpen holds the valid tiny
	// files of every feature; add a few hand-made prefixes too.
	f.Add([]byte{})
	f.Add([]byte("MLB1"))
	h := mlbtest.Base()
	f.Add(h.Marshal())
	h.SetPair([mlb.PairIDSize]byte{1, 2, 3}) // the pair record
	f.Add(h.Marshal())
	f.Fuzz(func(t *testing.T, b []byte) {
		// A hang is a finding too: crash so the fuzzer saves the input.
		timer := time.AfterFunc(10*time.Second, func() { panic("mlb.Parse hangs on this input") })
		defer timer.Stop()
		file, err := mlb.Parse(b)
		if err != nil {
			n := 0
			for _, s := range []error{mlb.ErrIO, mlb.ErrFormat, mlb.ErrShape} {
				if errors.Is(err, s) {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("error matches %d of the three codes: %v", n, err)
			}
			if c := mlb.CodeOf(err); c != mlb.CodeFormat && c != mlb.CodeShape {
				t.Fatalf("in-memory parse gave code %v: %v", c, err)
			}
			return
		}
		touch(t, file)
	})
}

// touch calls every accessor of a loaded file and checks what it can.
func touch(t *testing.T, f *mlb.File) {
	t.Helper()
	h := f.Header
	if err := h.Validate(); err != nil {
		t.Fatalf("loaded header does not validate: %v", err)
	}
	ts, err := mlb.Tensors(&h)
	if err != nil {
		t.Fatal(err)
	}
	arrs, err := mlb.Layout(&h)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != len(f.Tensors) {
		t.Fatalf("got %d tensors, want %d", len(f.Tensors), len(ts))
	}
	if last := arrs[len(arrs)-1]; last.End() > f.Size {
		t.Fatalf("last array ends at %d beyond the file size %d", last.End(), f.Size)
	}
	_ = h.QDim() + h.KVDim() + h.RotDimEff() + h.LinQKVDim() + h.LinVDimTotal()
	for l := 0; l < int(h.NLayers); l++ {
		_ = h.LayerFlag(l)
	}
	for i, ti := range ts {
		tt := f.Tensor(ti.Name)
		if tt == nil || tt != &f.Tensors[i] {
			t.Fatalf("Tensor(%q) is not the %dth tensor", ti.Name, i)
		}
		n := ti.Rows * ti.Cols
		switch ti.Type {
		case mlb.F32:
			if len(tt.F32) != n {
				t.Fatalf("%s: %d values, want %d", ti.Name, len(tt.F32), n)
			}
		case mlb.Q8_0:
			for _, q := range tt.Q8() {
				if q == -128 {
					t.Fatalf("%s: -128 accepted", ti.Name)
				}
			}
			fallthrough
		case mlb.Q4_0:
			if len(tt.D) != n/32 {
				t.Fatalf("%s: %d scales, want %d", ti.Name, len(tt.D), n/32)
			}
		}
	}
	if f.Tensor("no such tensor") != nil {
		t.Fatal("Tensor of an absent name is not nil")
	}
}
