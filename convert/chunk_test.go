package convert

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/quantize"
)

// TestChunkingAndThreads converts with chunks of a few rows and several
// threads: the bytes must equal those of whole-tensor, one-thread
// quantization (rows are quantized independently).
func TestChunkingAndThreads(t *testing.T) {
	dir := t.TempDir()
	if err := hfgen.Write(dir, "phi3", hfgen.Options{Seed: 9}); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	conv := func(name string, chunk, threads int) []byte {
		old := chunkBytes
		chunkBytes = chunk
		defer func() { chunkBytes = old }()
		p := filepath.Join(out, name)
		if _, err := Convert(context.Background(), dir, Options{Out: p, Type: quantize.TypeQ4_0, Threads: threads, NoTokenizer: true}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	whole := conv("whole.mlb", 16<<20, 1)
	// 3 rows of 64 float32 per chunk: chunks end mid-head and mid-tensor.
	small := conv("small.mlb", 3*64*4, 3)
	if !bytes.Equal(whole, small) {
		t.Errorf("chunked, threaded conversion differs from whole-tensor conversion")
	}
}

func TestCancel(t *testing.T) {
	dir := t.TempDir()
	if err := hfgen.Write(dir, "llama", hfgen.Options{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(t.TempDir(), "o.mlb")
	_, err := Convert(ctx, dir, Options{Out: out, NoTokenizer: true})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	if left, _ := os.ReadDir(filepath.Dir(out)); len(left) != 0 {
		t.Errorf("files left behind: %v", left)
	}
}
