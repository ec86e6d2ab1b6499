package convert

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/gguf"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlt"
)

// TestHeadLessGGUFRoundTrip: a head-less Qwen3-Embedding-style checkpoint
// converts with a shared classifier and the EOS template; its GGUF export
// says add_eos_token (what llama.cpp's embedding models use), and the import
// of that GGUF gives the same template back.
func TestHeadLessGGUFRoundTrip(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "hf")
	if err := hfgen.Write(src, "qwen3", hfgen.Options{Seed: 1, Embedding: "last"}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "e.mlb")
	if _, err := Convert(context.Background(), src, Options{Out: out, Threads: 1}); err != nil {
		t.Fatal(err)
	}
	f, err := mlb.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	shared := f.Header.SharedClassifier
	f.Close()
	if shared == 0 {
		t.Error("no shared classifier for a checkpoint without lm_head")
	}
	tok, err := mlt.Open(TokenizerPath(out))
	if err != nil {
		t.Fatal(err)
	}
	eos := []mlt.PostItem{{Seq: mlt.PostSeqA}, {Seq: mlt.PostSpecial, IDs: []int32{int32(hfgen.EOS)}}}
	if tok.Post == nil || !reflect.DeepEqual(tok.Post.Single, eos) {
		t.Fatalf("post-processor %+v, want $A EOS", tok.Post)
	}
	g := filepath.Join(dir, "e.gguf")
	if _, err := ExportGGUF(out, g, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	gf, err := gguf.Open(g)
	if err != nil {
		t.Fatal(err)
	}
	addEOS, _ := gf.Bool("tokenizer.ggml.add_eos_token")
	addBOS, _ := gf.Bool("tokenizer.ggml.add_bos_token")
	gf.Close()
	if !addEOS || addBOS {
		t.Errorf("GGUF add_eos_token %v add_bos_token %v, want true and false", addEOS, addBOS)
	}
	back := filepath.Join(dir, "back.mlb")
	if _, err := ConvertGGUF(context.Background(), g, Options{Out: back}); err != nil {
		t.Fatal(err)
	}
	bt, err := mlt.Open(TokenizerPath(back))
	if err != nil {
		t.Fatal(err)
	}
	if bt.Post == nil || !reflect.DeepEqual(bt.Post.Single, eos) || len(bt.Post.Pair) != 4 {
		t.Errorf("imported post-processor %+v, want $A EOS (pair $A EOS $B EOS)", bt.Post)
	}
}

// TestExportEmbeddingPoolings: GGUF export refuses a max-pooling model
// (llama.cpp has no max pooling; its pooling type 4 is rank) and says that
// llama.cpp pools the prompt's tokens of a model that excludes them; the
// import of that GGUF gives the mode back, pooling every token.
func TestExportEmbeddingPoolings(t *testing.T) {
	conv := func(opt hfgen.Options) string {
		dir := t.TempDir()
		src := filepath.Join(dir, "hf")
		if err := hfgen.Write(src, "qwen3", opt); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "e.mlb")
		if _, err := Convert(context.Background(), src, Options{Out: out, Threads: 1}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	mx := conv(hfgen.Options{Seed: 1, Embedding: "max"})
	if _, err := ExportGGUF(mx, filepath.Join(t.TempDir(), "m.gguf"), ExportOptions{}); err == nil || !strings.Contains(err.Error(), "pools by max, which llama.cpp cannot") {
		t.Errorf("export of a max-pooling model: got %v", err)
	}
	ex := conv(hfgen.Options{Seed: 1, Embedding: "mean", ExcludePrompt: true})
	g := filepath.Join(t.TempDir(), "x.gguf")
	rep, err := ExportGGUF(ex, g, ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, n := range rep.Notices {
		found = found || strings.Contains(n, "include_prompt false")
	}
	if !found {
		t.Errorf("notices %q say nothing of the excluded prompt", rep.Notices)
	}
	back := filepath.Join(t.TempDir(), "back.mlb")
	if _, err := ConvertGGUF(context.Background(), g, Options{Out: back}); err != nil {
		t.Fatal(err)
	}
	bt, err := mlt.Open(TokenizerPath(back))
	if err != nil {
		t.Fatal(err)
	}
	if bt.Embed == nil || bt.Embed.Pooling != mlt.PoolMean || bt.Embed.ExcludePrompt {
		t.Errorf("imported embedding section %+v, want mean pooling of every token", bt.Embed)
	}
}
