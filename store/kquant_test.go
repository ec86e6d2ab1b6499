package store

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/krafla/krafla/convert"
	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/gguf"
	"github.com/krafla/krafla/hub"
	"github.com/krafla/krafla/hub/hubtest"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/quantize"
)

// TestPullQ4_K_M: without a tag a -GGUF repo gives its Q4_K_M file (as
// llama.cpp's -hf does; Q8_0 and Q4_0 files beside it are not downloaded),
// and the pull imports it bit for bit: a mixed .mlb whose Q4_K and Q6_K
// matrices export back to the very tensors of the file.
func TestPullQ4_K_M(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	if err := hfgen.Write(ck, "llama", hfgen.Options{Seed: 3, Shape: "k256"}); err != nil {
		t.Fatal(err)
	}
	mlbPath := filepath.Join(dir, "m.mlb")
	if _, err := convert.Convert(context.Background(), ck, convert.Options{Out: mlbPath, GGML: quantize.GGMLQ4_K, Mix: true}); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "m-Q4_K_M.gguf")
	if _, err := convert.ExportGGUF(mlbPath, src, convert.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	h := hubtest.New()
	defer h.Close()
	h.Add("org/m-GGUF", map[string][]byte{"m-Q4_K_M.gguf": b, "m-Q8_0.gguf": []byte("never downloaded"),
		"m-Q4_0.gguf": []byte("never downloaded"), "README.md": []byte("# GGUF")})
	s := newStore(t, h)
	m, err := s.Resolve(context.Background(), hub.Ref{Repo: "org/m-GGUF"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range resolves(h) {
		if filepath.Base(p) != "m-Q4_K_M.gguf" {
			t.Errorf("downloaded %s", p)
		}
	}
	if m.Type != "q4_k_m" || m.Source != "m-Q4_K_M.gguf" {
		t.Fatalf("pulled %s from %s, want q4_k_m from m-Q4_K_M.gguf", m.Type, m.Source)
	}
	f, err := mlb.Open(m.Path)
	if err != nil {
		t.Fatal(err)
	}
	types := map[uint8]int{}
	for _, c := range f.Header.Types {
		types[c]++
	}
	f.Close()
	if f.Header.WType != mlb.WTypeMixed || types[mlb.TypeCode(mlb.Q4_K)] == 0 || types[mlb.TypeCode(mlb.Q6_K)] == 0 {
		t.Fatalf("pulled .mlb: wtype %d, type codes %v; want a mixed file with Q4_K and Q6_K matrices", f.Header.WType, types)
	}
	back := filepath.Join(dir, "back.gguf")
	if _, err := convert.ExportGGUF(m.Path, back, convert.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	want, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Close()
	got, err := gguf.Open(back)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	for _, wt := range want.Tensors {
		gt := got.Tensor(wt.Name)
		if gt == nil || gt.Type != wt.Type || !bytes.Equal(gt.Data, wt.Data) {
			t.Errorf("tensor %s (%v): not given back bit for bit by the pulled model", wt.Name, wt.Type)
		}
	}
}
