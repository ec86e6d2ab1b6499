package convert

import (
	"bytes"
	"context"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/gguf"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlb/mlbtest"
	"github.com/krafla/krafla/quantize"
)

// q4kmMix gives each GGUF tensor of a 2-layer llama a type in the spirit of
// llama.cpp's Q4_K_M (attn_v and ffn_down of the first layer Q6_K, the rest
// mostly Q4_K), plus one tensor of every other type a mixed file holds.
func q4kmMix(name string) (gguf.Type, bool) {
	switch {
	case name == "token_embd.weight":
		return gguf.Q4_K, true
	case name == "output.weight":
		return gguf.Q6_K, true
	case strings.HasSuffix(name, "attn_v.weight"), name == "blk.0.ffn_down.weight":
		return gguf.Q6_K, true
	case name == "blk.1.ffn_down.weight":
		return gguf.Q5_0, true
	case name == "blk.0.attn_k.weight":
		return gguf.Q5_K, true
	case name == "blk.1.attn_k.weight":
		return gguf.IQ4_XS, true
	case name == "blk.1.attn_output.weight":
		return gguf.IQ4_NL, true
	case name == "blk.1.ffn_up.weight":
		return gguf.Q4_1, true
	case name == "blk.1.ffn_gate.weight":
		return gguf.Q8_0, true
	case strings.HasSuffix(name, ".weight") && !strings.Contains(name, "norm"):
		return gguf.Q4_K, true
	}
	return 0, false
}

var mlbOfGGUF = map[gguf.Type]mlb.DType{gguf.Q8_0: mlb.Q8_0, gguf.Q4_1: mlb.Q4_1, gguf.Q5_0: mlb.Q5_0, gguf.Q4_K: mlb.Q4_K,
	gguf.Q5_K: mlb.Q5_K, gguf.Q6_K: mlb.Q6_K, gguf.IQ4_NL: mlb.IQ4_NL, gguf.IQ4_XS: mlb.IQ4_XS}

// mixedGGUF writes dir/mix.gguf: a 2-layer llama of hfgen's k256 shape whose
// matrices have the types mix gives them, filled with random blocks (binary16
// scales sized for unit-scale activations); it returns the path and each
// tensor's blocks and type.
func mixedGGUF(t *testing.T, dir string, mix func(string) (gguf.Type, bool), seed int64) (string, map[string][]byte, map[string]gguf.Type) {
	t.Helper()
	ck := filepath.Join(dir, "ck")
	if err := hfgen.Write(ck, "llama", hfgen.Options{Seed: 7, Shape: "k256"}); err != nil {
		t.Fatal(err)
	}
	q8 := filepath.Join(dir, "q8.mlb")
	if _, err := Convert(context.Background(), ck, Options{Out: q8, F16Scales: true}); err != nil {
		t.Fatal(err)
	}
	g := filepath.Join(dir, "q8.gguf")
	if _, err := ExportGGUF(q8, g, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	mixed := filepath.Join(dir, "mix.gguf")
	r := rand.New(rand.NewSource(seed))
	want := map[string][]byte{}
	wantType := map[string]gguf.Type{}
	rewriteGGUF(t, g, mixed, func(kvs []gguf.KV, ts []gguf.TensorInfo, data [][]byte) ([]gguf.KV, []gguf.TensorInfo, [][]byte) {
		for i := range ts {
			typ, ok := mix(ts[i].Name)
			if !ok || len(ts[i].Shape) != 2 {
				continue
			}
			mt := mlbOfGGUF[typ]
			n := int(ts[i].Shape[0]*ts[i].Shape[1]) / mt.BlockElems()
			b := mlbtest.RandomBlocks(r, mt, n, int(ts[i].Shape[0]))
			if typ == gguf.Q8_0 {
				b = data[i] // keep the exported Q8_0 blocks (no quant of −128)
			}
			ts[i].Type, data[i] = typ, b
			want[ts[i].Name], wantType[ts[i].Name] = b, typ
		}
		return kvs, ts, data
	})
	return mixed, want, wantType
}

// TestGGUFKeepLossless builds a GGUF file with known random blocks of every
// type in a Q4_K_M-style mix, imports it with --type keep, and checks that
// every matrix has its GGUF type and exactly the GGUF's bytes, that export
// writes every tensor back byte for byte, and that the re-import is the same
// .mlb byte for byte.
func TestGGUFKeepLossless(t *testing.T) {
	dir := t.TempDir()
	mixed, want, wantType := mixedGGUF(t, dir, q4kmMix, 24)
	out := filepath.Join(dir, "mix.mlb")
	rep, err := ConvertGGUF(context.Background(), mixed, Options{Out: out, Type: quantize.TypeKeep})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) != 0 {
		t.Errorf("warnings: %v", rep.Warnings)
	}
	f, err := mlb.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Header.WType != mlb.WTypeMixed {
		t.Fatalf("wtype %d", f.Header.WType)
	}
	seen := 0
	for _, ts := range f.Tensors {
		if !ts.Type.Quantized() {
			continue
		}
		gn := ggufName(ts.Name)
		wt, ok := wantType[gn]
		if !ok {
			t.Fatalf("%s (%s): no source", ts.Name, gn)
		}
		seen++
		if ts.Type != mlbOfGGUF[wt] {
			t.Errorf("%s: type %v, want %v", ts.Name, ts.Type, wt)
			continue
		}
		if ts.Type.Blocked() && !bytes.Equal(ts.Q, want[gn]) {
			t.Errorf("%s: blocks differ from the GGUF's", ts.Name)
		}
	}
	if seen != len(want) {
		t.Errorf("%d matrices, want %d", seen, len(want))
	}
	back := filepath.Join(dir, "back.gguf")
	if _, err := ExportGGUF(out, back, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	src, err := gguf.Open(mixed)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bg, err := gguf.Open(back)
	if err != nil {
		t.Fatal(err)
	}
	defer bg.Close()
	if len(bg.Tensors) != len(src.Tensors) {
		t.Fatalf("%d tensors exported, want %d", len(bg.Tensors), len(src.Tensors))
	}
	for i, st := range src.Tensors {
		bt := bg.Tensors[i]
		if bt.Name != st.Name || bt.Type != st.Type || !bytes.Equal(bt.Data, st.Data) {
			t.Errorf("tensor %d: exported %s %v (%d bytes), source %s %v (%d bytes), same bytes %v",
				i, bt.Name, bt.Type, len(bt.Data), st.Name, st.Type, len(st.Data), bytes.Equal(bt.Data, st.Data))
		}
	}
	if ft, _ := bg.Uint("general.file_type"); ft != 15 {
		t.Errorf("general.file_type %d, want 15 (Q4_K_M)", ft)
	}
	again := filepath.Join(dir, "again.mlb")
	if _, err := ConvertGGUF(context.Background(), back, Options{Out: again, Type: quantize.TypeKeep}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readFile(t, out), readFile(t, again)) {
		t.Error("GGUF → .mlb → GGUF → .mlb differs")
	}
}

// TestLlamaCppKeepTypes (opt-in like TestLlamaCppLive) runs llama.cpp on GGUF
// files of each ggml block type (and the Q4_K_M-style mix) and krafla on their
// --type keep import, and compares greedy tokens and the top log-probabilities.
func TestLlamaCppKeepTypes(t *testing.T) {
	nlc := os.Getenv("KRAFLA_LLAMACPP")
	if nlc == "" {
		t.Skip("set KRAFLA_LLAMACPP to a folder with node-llama-cpp@3.21.1 installed to compare with llama.cpp")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found")
	}
	script, err := filepath.Abs(filepath.Join("..", "scripts", "llamacpp", "greedy.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(nlc, "krafla-greedy.mjs")
	if err := os.WriteFile(link, mustRead(t, script), 0o644); err != nil {
		t.Fatal(err)
	}
	one := func(typ gguf.Type) func(string) (gguf.Type, bool) {
		return func(name string) (gguf.Type, bool) {
			if _, ok := q4kmMix(name); !ok {
				return 0, false
			}
			return typ, true
		}
	}
	cases := []struct {
		name string
		mix  func(string) (gguf.Type, bool)
	}{{"q4_k_m_mix", q4kmMix}, {"Q4_K", one(gguf.Q4_K)}, {"Q5_K", one(gguf.Q5_K)}, {"Q6_K", one(gguf.Q6_K)},
		{"IQ4_XS", one(gguf.IQ4_XS)}, {"IQ4_NL", one(gguf.IQ4_NL)}, {"Q5_0", one(gguf.Q5_0)}, {"Q4_1", one(gguf.Q4_1)}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			gg, _, _ := mixedGGUF(t, dir, c.mix, 3)
			out := filepath.Join(dir, "mix.mlb")
			if _, err := ConvertGGUF(context.Background(), gg, Options{Out: out, Type: quantize.TypeKeep}); err != nil {
				t.Fatal(err)
			}
			texts := filepath.Join(dir, "texts.json")
			if err := os.WriteFile(texts, []byte("[]"), 0o644); err != nil {
				t.Fatal(err)
			}
			const n = 24
			start := []int{1}
			r := runLlamaCpp(t, node, nlc, link, gg, n, joinInts(start), texts)
			r.Start = start
			k := kraflaRun(t, out, start, r.Tokens)
			agree, diff := compareRuns(r, k)
			t.Logf("%s: %d of %d greedy tokens agree; max |Δ log p| of the top 8 = %.4g", c.name, agree, n, diff)
			if agree != n || diff > llamaCppLogprobBound {
				t.Errorf("%d of %d greedy tokens agree, max |Δ log p| %.4g (bound %g)", agree, n, diff, llamaCppLogprobBound)
			}
		})
	}
}
