package infer

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand"
	"testing"

	"github.com/krafla/krafla/asm"
	"github.com/krafla/krafla/mlb/mlbtest"
)

// logitHashes are the SHA-256 prefixes of every logit's bits of
// TestLogitsHash's runs, recorded on amd64: the same on every CPU and
// kernel variant (arm64 under qemu in scripts/test.sh included).
var logitHashes = map[string]string{
	"q8":                    "9ad289481641fa1e",
	"q4_mask_all_f16":       "232f6f0fb6c579e8",
	"q4":                    "c9347e0fd469070d",
	"qwen35_linear_q4_mask": "3f22972cd37add0c",
}

// TestLogitsHash runs mlbtest cases with the active kernel variant and
// checks the hash of all their logits against logitHashes.
func TestLogitsHash(t *testing.T) { testLogitsHash(t, SessionOptions{Batch: 16, Threads: 2}) }

// TestLogitsHashDecode evaluates the same tokens one at a time, with the pure
// Go kernels: the matrix-vector products of generation, not the batched ones
// of TestLogitsHash, give the same hashes.
func TestLogitsHashDecode(t *testing.T) {
	defer asm.Use(asm.Variant())
	if err := asm.Use(asm.Generic); err != nil {
		t.Fatal(err)
	}
	testLogitsHash(t, SessionOptions{Batch: 1})
}

func testLogitsHash(t *testing.T, o SessionOptions) {
	for _, name := range []string{"q8", "q4_mask_all_f16", "q4", "qwen35_linear_q4_mask"} {
		h := mlbtest.CaseHeader(t, name)
		m, _ := openModel(t, h, 21)
		tokens := randTokens(rand.New(rand.NewSource(22)), min(int(h.MaxSeq), 40), int(h.Vocab))
		logits := allLogits(t, m, o, tokens, 0)
		d := sha256.New()
		var b [4]byte
		for _, row := range logits {
			for _, v := range row {
				binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
				d.Write(b[:])
			}
		}
		got := hex.EncodeToString(d.Sum(nil)[:8])
		if want := logitHashes[name]; got != want {
			t.Errorf("%s: logits hash %s, want %s", name, got, want)
		}
	}
}
