package infer

import (
	"math"
	"math/rand"
	"runtime"
	"strings"
	"testing"

	"github.com/krafla/krafla/mlb/mlbtest"
)

// TestCopyToHugePages checks that the copy in huge pages gives the logits of
// the file mapping bit for bit, for Q8_0 and Q4_0 models with shared and
// separate classifiers and linear-attention layers, and that Close releases it.
func TestCopyToHugePages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("huge pages are copied on Linux only")
	}
	for _, name := range []string{"q8", "q4", "qwen35_linear_q4_mask"} {
		h := mlbtest.CaseHeader(t, name)
		m, _ := openModel(t, h, 31)
		tokens := randTokens(rand.New(rand.NewSource(32)), min(int(h.MaxSeq), 24), int(h.Vocab))
		want := allLogits(t, m, SessionOptions{Batch: 8}, tokens, 0)
		n, err := m.CopyToHugePages()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if m.huge == nil {
			t.Fatalf("%s: no huge-page copy after CopyToHugePages", name)
		}
		var sum int64
		for _, w := range m.mats() {
			sum += w.bytes()
		}
		if n < sum {
			t.Errorf("%s: copied %d bytes, want at least the %d bytes of the matrices", name, n, sum)
		}
		if n2, err := m.CopyToHugePages(); n2 != 0 || err != nil {
			t.Errorf("%s: second copy: got %d, %v, want 0, nil", name, n2, err)
		}
		got := allLogits(t, m, SessionOptions{Batch: 8, Threads: 2}, tokens, 0)
		for i := range want {
			for j := range want[i] {
				if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
					t.Fatalf("%s: position %d logit %d: got %v, want %v (file mapping)", name, i, j, got[i][j], want[i][j])
				}
			}
		}
		if err := m.Close(); err != nil {
			t.Errorf("%s: Close: %v", name, err)
		}
		if m.huge != nil {
			t.Errorf("%s: Close left the huge-page copy mapped", name)
		}
	}
}

// TestCopyToHugePagesUnsupported runs the path of systems without huge pages
// (hugepages_other.go): CopyToHugePages fails saying so, and the model keeps
// its file mapping and its logits.
func TestCopyToHugePagesUnsupported(t *testing.T) {
	defer func() { allocHuge = hugeAlloc }()
	allocHuge = hugeAllocUnsupported
	h := mlbtest.CaseHeader(t, "q4")
	m, _ := openModel(t, h, 31)
	defer m.Close()
	tokens := randTokens(rand.New(rand.NewSource(33)), min(int(h.MaxSeq), 12), int(h.Vocab))
	want := allLogits(t, m, SessionOptions{Batch: 4}, tokens, 0)
	n, err := m.CopyToHugePages()
	if err == nil || n != 0 || m.huge != nil {
		t.Fatalf("CopyToHugePages: %d bytes, %v, huge copy %v; want 0 and an error", n, err, m.huge != nil)
	}
	if !strings.Contains(err.Error(), "not supported") {
		t.Errorf("error %q does not say huge pages are not supported", err)
	}
	got := allLogits(t, m, SessionOptions{Batch: 4}, tokens, 0)
	for i := range want {
		for j := range want[i] {
			if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
				t.Fatalf("position %d logit %d: got %v, want %v", i, j, got[i][j], want[i][j])
			}
		}
	}
}
