package convert

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/mlb"
)

// FuzzConfig feeds arbitrary config.json bytes through the header mapping:
// it must return a header or an error, never panic, and every header it
// builds passes mlb's Validate.
func FuzzConfig(f *testing.F) {
	for _, arch := range hfgen.Archs {
		dir := f.TempDir()
		if err := hfgen.Write(dir, arch, hfgen.Options{NoTokenizer: true}); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "config.json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"model_type":"llama","hidden_size":64,"num_hidden_layers":1,"num_attention_heads":3,"intermediate_size":64,"head_dim":null}`))
	f.Add([]byte(`{"architectures":["Qwen3_5ForConditionalGeneration"],"text_config":{"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":64,"linear_num_key_heads":65536,"layer_types":["x"]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := parseConfig(b, "config.json")
		if err != nil {
			return
		}
		fam, _, err := resolveFamily(c)
		if err != nil {
			return
		}
		mh, err := buildHeader(c, fam)
		if err != nil {
			return
		}
		// buildPlan's next check, before any tensor is read.
		if err := CheckShapes(&mh.h); err != nil {
			return
		}
		// Every accepted config gives a header the loader accepts, with what
		// buildPlan and Convert set after it: the vocabulary from the embedding's
		// shape (any size up to MaxVocab) and the weight type from --type.
		for _, wt := range []uint32{mlb.WTypeQ8_0, mlb.WTypeQ4_0} {
			h := mh.h
			h.WType = wt
			h.Vocab = 320
			if err := h.Validate(); err != nil {
				t.Fatalf("accepted config gives an invalid header (wtype %d): %v\n%s", wt, err, b)
			}
		}
	})
}
