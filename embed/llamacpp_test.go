package embed

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/krafla/krafla/convert"
	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/mlt"
)

// TestLlamaCppEmbeddings runs llama.cpp itself (node-llama-cpp 3.21.1, as
// convert's TestLlamaCppLive: KRAFLA_LLAMACPP) on the GGUF export of head-less
// embedding checkpoints, one per pooling mode (the export's pooling_type
// tells llama.cpp which), and compares its vectors of the same token ids
// with krafla's: cos ≥ 0.9999 (the same Q8_0 weights; the two runtimes round
// activations differently).
func TestLlamaCppEmbeddings(t *testing.T) {
	nlc := os.Getenv("KRAFLA_LLAMACPP")
	if nlc == "" {
		t.Skip("KRAFLA_LLAMACPP not set: no node-llama-cpp@3.21.1 folder to compare with llama.cpp (scripts/test.sh installs one when node and npm are on PATH)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found")
	}
	script, err := filepath.Abs(filepath.Join("..", "scripts", "llamacpp", "embed.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(nlc, "krafla-embed.mjs") // resolved against nlc's node_modules
	src, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(link, src, 0o644); err != nil {
		t.Fatal(err)
	}
	texts := []string{"the quick brown fox", "hello", "and the sands of time run out, slowly, over the dunes"}
	type model struct {
		name  string
		gguf  string
		ids   [][]int
		krafl [][]float32
	}
	var models []model
	var args []string
	for _, c := range []struct{ arch, pool string }{{"qwen3", "last"}, {"llama", "mean"}, {"qwen2", "cls"}} {
		dir := t.TempDir()
		ck := filepath.Join(dir, "ck")
		if err := hfgen.Write(ck, c.arch, hfgen.Options{Seed: 6, Embedding: c.pool}); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "m.mlb")
		if _, err := convert.Convert(context.Background(), ck, convert.Options{Out: out, F16Scales: true}); err != nil {
			t.Fatal(err)
		}
		md := model{name: c.arch + "/" + c.pool, gguf: filepath.Join(dir, "m.gguf")}
		if _, err := convert.ExportGGUF(out, md.gguf, convert.ExportOptions{}); err != nil {
			t.Fatal(err)
		}
		m, err := infer.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := mlt.Open(convert.TokenizerPath(out))
		if err != nil {
			t.Fatal(err)
		}
		e, err := New(m, tok, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range texts {
			in, _ := e.Tokenize("", s)
			md.ids = append(md.ids, in)
		}
		md.krafl, err = e.Embed(md.ids)
		e.Close()
		m.Close()
		if err != nil {
			t.Fatal(err)
		}
		idsFile := filepath.Join(dir, "ids.json")
		b, _ := json.Marshal(md.ids)
		if err := os.WriteFile(idsFile, b, 0o644); err != nil {
			t.Fatal(err)
		}
		models = append(models, md)
		args = append(args, md.gguf, idsFile)
	}
	// One node process for all the models: loading node-llama-cpp is most
	// of the time.
	cmd := exec.Command(node, append([]string{link}, args...)...)
	cmd.Dir = nlc
	o, err := cmd.Output()
	if err != nil {
		t.Fatalf("llama.cpp: %v\n%s", err, o)
	}
	var got [][][]float64
	if err := json.Unmarshal(o, &got); err != nil || len(got) != len(models) {
		t.Fatalf("llama.cpp output (%d models, want %d): %v: %.200s", len(got), len(models), err, o)
	}
	for mi, md := range models {
		t.Run(md.name, func(t *testing.T) {
			want := md.krafl
			if len(got[mi]) != len(want) {
				t.Fatalf("llama.cpp gave %d vectors, want %d", len(got[mi]), len(want))
			}
			for i, g := range got[mi] {
				var ab, aa, bb float64
				for k, x := range g {
					y := float64(want[i][k])
					ab, aa, bb = ab+x*y, aa+x*x, bb+y*y
				}
				c := ab / math.Sqrt(aa*bb)
				t.Logf("input %d (%d tokens): cos(krafla, llama.cpp) = %.7f", i, len(md.ids[i]), c)
				if !(c >= 0.9999) {
					t.Errorf("input %d: cos(krafla, llama.cpp) = %.6f, want ≥ 0.9999", i, c)
				}
			}
		})
	}
}
