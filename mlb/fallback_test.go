package mlb_test

import (
	"os"
	"slices"
	"testing"

	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlb/mlbtest"
)

// TestOpenReadFallback runs Open's path for systems without mmap (Windows,
// wasm, plan9: mmap_other.go), here by forcing it: the file is read into
// memory, Mapped is false, and every tensor equals Parse's of the same bytes.
func TestOpenReadFallback(t *testing.T) {
	defer func() { *mlb.NoMmap = false }()
	*mlb.NoMmap = true
	p := mlbtest.Write(t, t.TempDir(), mlbtest.CaseHeader(t, "q8"), 3)
	f, err := mlb.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Mapped {
		t.Fatal("Mapped is true on the read path")
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := mlb.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tensors) != len(ref.Tensors) || len(f.Tensors) == 0 {
		t.Fatalf("%d tensors, want %d", len(f.Tensors), len(ref.Tensors))
	}
	for i, tn := range f.Tensors {
		r := ref.Tensors[i]
		if tn.Name != r.Name || !slices.Equal(tn.Q, r.Q) || !slices.Equal(tn.D, r.D) || !slices.Equal(tn.F32, r.F32) {
			t.Fatalf("tensor %q differs from Parse's", tn.Name)
		}
	}
}
