package convert

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/gguf"
	"github.com/krafla/krafla/gguf/gguftest"
	"github.com/krafla/krafla/internal/testenv"
	"github.com/krafla/krafla/quantize"
)

// TestGGUFSplitSet: a split set written from the real stories260K.gguf
// converts to the very bytes the unsplit file converts to (.mlb and .mlt),
// for the file's own types and for Q4_0; a broken set is refused naming the
// file at fault.
func TestGGUFSplitSet(t *testing.T) {
	src := testenv.Model(t, "stories260K.gguf")
	dir := t.TempDir()
	paths, err := gguftest.Split(src, filepath.Join(dir, "stories260K"), 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []quantize.Type{0, quantize.TypeQ4_0} {
		one, set := filepath.Join(dir, "one.mlb"), filepath.Join(dir, "set.mlb")
		var log bytes.Buffer
		if _, err := ConvertGGUF(context.Background(), src, Options{Out: one, Type: typ}); err != nil {
			t.Fatal(err)
		}
		if _, err := Convert(context.Background(), paths[0], Options{Out: set, Type: typ, Log: &log}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(log.String(), "split set of 3 files") {
			t.Errorf("log %q does not say a split set was read", log.String())
		}
		for _, p := range [][2]string{{one, set}, {TokenizerPath(one), TokenizerPath(set)}} {
			a, err := os.ReadFile(p[0])
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(p[1])
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("type %v: %s (%d bytes) differs from %s (%d bytes)", typ, filepath.Base(p[1]), len(b), filepath.Base(p[0]), len(a))
			}
		}
	}
	// A missing split: refused naming it, nothing written.
	os.Remove(paths[1])
	out := filepath.Join(dir, "missing.mlb")
	_, err = Convert(context.Background(), paths[0], Options{Out: out})
	if err == nil || !errors.Is(err, gguf.ErrIO) || !strings.Contains(err.Error(), paths[1]) || !strings.Contains(err.Error(), "split 2 of 3 is missing") {
		t.Errorf("missing split: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("missing split: %s written", out)
	}
	// A later split given: asks for the first.
	_, err = Convert(context.Background(), paths[2], Options{Out: out})
	if err == nil || !strings.Contains(err.Error(), "give the first split, "+paths[0]) {
		t.Errorf("third split given: %v", err)
	}
}
