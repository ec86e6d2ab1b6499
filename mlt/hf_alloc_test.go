package mlt

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/krafla/krafla/internal/testenv"
)

// TestFromHFAllocBound feeds FromHF tokenizer.json files whose ids claim the
// most (vocab and added-token ids at 2^31, 2^63-1 and MaxVocab-1, merges
// naming ids that do not exist, a pipeline file with gaps) and the minimal
// valid files, and checks that no call allocates more than a small multiple
// of the file's size.
func TestFromHFAllocBound(t *testing.T) {
	inputs := map[string]jsonObj{"byte-level": byteLevelJSON(), "sentencepiece": sentencePieceJSON()}
	for _, id := range []int64{1 << 31, math.MaxInt64, MaxVocab - 1, MaxVocab, -1} {
		s := fmt.Sprint(id)
		j := byteLevelJSON()
		j["model"].(jsonObj)["vocab"].(jsonObj)["he"] = id
		inputs["vocab id "+s] = j
		j = byteLevelJSON()
		j["added_tokens"] = []any{jsonObj{"id": id, "content": "<|x|>", "special": true}}
		inputs["added id "+s] = j
		j = sentencePieceJSON()
		j["added_tokens"] = []any{jsonObj{"id": id, "content": "<s>", "special": true}}
		inputs["sentencepiece added id "+s] = j
	}
	j := byteLevelJSON()
	merges := make([]any, 32768)
	for i := range merges {
		merges[i] = fmt.Sprintf("x%d y%d", i, i)
	}
	j["model"].(jsonObj)["merges"] = merges
	inputs["32768 merges of unknown pieces"] = j
	j = byteLevelJSON()
	j["pre_tokenizer"] = seqPre(split(`\s+`), byteLevelNoRegex)
	j["added_tokens"] = []any{jsonObj{"id": 300, "content": "<|x|>", "special": true}}
	inputs["pipeline with a gap"] = j

	// encoding/json decodes the merges into strings (and the slice grows
	// by doubling), then they become pairs and the table of ids: about 21
	// bytes per byte of a long merges list (measured with 32768 merges), the
	// most of any input here; everything an id claims costs nothing.
	const factor = 32
	for name, tok := range inputs {
		dir := writeHF(t, tok, nil)
		st, err := os.Stat(filepath.Join(dir, "tokenizer.json"))
		if err != nil {
			t.Fatal(err)
		}
		testenv.CheckAllocBound(t, name, int(st.Size()), factor, func() { FromHF(dir) })
	}
}
