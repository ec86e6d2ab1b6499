package convert

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/internal/testenv"
)

// TestSafetensorsAllocBound feeds ParseSafetensors headers that claim the
// most (a header length of 2^31, 2^63 and 2^64-1; dimensions and offsets at
// 2^31 and 2^63; many dimensions; many tensors) and valid files, and checks
// that no call allocates more than a small multiple of its input.
func TestSafetensorsAllocBound(t *testing.T) {
	inputs := map[string][]byte{}
	for _, n := range []uint64{1 << 31, 1 << 63, math.MaxUint64} {
		b := stFile(`{}`, nil)
		for i := range 8 {
			b[i] = byte(n >> (8 * i))
		}
		inputs[fmt.Sprintf("header length %d", n)] = b
	}
	for _, v := range []string{"2147483648", "9223372036854775807", "18446744073709551615", "99999999999999999999"} {
		inputs["shape "+v] = stFile(`{"a":{"dtype":"F32","shape":[`+v+`,`+v+`],"data_offsets":[0,4]}}`, make([]byte, 4))
		inputs["data_offsets "+v] = stFile(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,`+v+`]}}`, make([]byte, 4))
	}
	dims := "1" + strings.Repeat(",1", 1<<16)
	inputs["65537 dimensions"] = stFile(`{"a":{"dtype":"F32","shape":[`+dims+`],"data_offsets":[0,4]}}`, make([]byte, 4))
	many := "{"
	for i := range 4096 {
		many += fmt.Sprintf(`"t%d":{"dtype":"U8","shape":[1],"data_offsets":[%d,%d]},`, i, i, i+1)
	}
	inputs["4096 tensors"] = stFile(many+`"__metadata__":{"format":"pt"}}`, make([]byte, 4096))
	inputs["4096 tensors, data missing"] = stFile(many+`"__metadata__":{"format":"pt"}}`, nil)
	dir := t.TempDir()
	if err := hfgen.Write(dir, "qwen3", hfgen.Options{NoTokenizer: true}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	inputs["valid"] = b
	inputs["valid, truncated"] = b[:len(b)/2]
	for name, b := range inputs {
		testenv.CheckAllocBound(t, name, len(b), testenv.AllocFactor, func() { ParseSafetensors(b, "x") })
	}
}

// TestConfigAllocBound maps config.json files whose sizes claim the most
// (every numeric key of each architecture's config at 2^31, 2^63-1, 2^64,
// 1e300 and -1; lists of 4096 layer types) through parseConfig, resolveFamily
// and buildHeader, and checks that no call allocates more than a small
// multiple of its input.
func TestConfigAllocBound(t *testing.T) {
	inputs := map[string][]byte{}
	for _, arch := range []string{"llama3", "qwen3_5", "gemma3", "smollm3", "phi3", "gemma3-mm"} {
		dir := t.TempDir()
		if err := hfgen.Write(dir, arch, hfgen.Options{NoTokenizer: true}); err != nil {
			t.Fatal(err)
		}
		base, err := os.ReadFile(filepath.Join(dir, "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		inputs[arch] = base
		var top map[string]any
		if err := json.Unmarshal(base, &top); err != nil {
			t.Fatal(err)
		}
		obj := top
		if tc, ok := top["text_config"].(map[string]any); ok {
			obj = tc
		}
		keys := make([]string, 0, len(obj))
		for k, v := range obj {
			if _, ok := v.(float64); ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range append(keys, "num_hidden_layers", "sliding_window_pattern", "full_attention_interval", "no_rope_layer_interval") {
			for _, v := range []string{"2147483648", "9223372036854775807", "18446744073709551616", "1e300", "-1"} {
				old, had := obj[k]
				obj[k] = json.RawMessage(v)
				b, err := json.Marshal(top)
				if err != nil {
					t.Fatal(err)
				}
				inputs[arch+" "+k+"="+v] = b
				if had {
					obj[k] = old
				} else {
					delete(obj, k)
				}
			}
		}
		types := make([]string, 4096)
		for i := range types {
			types[i] = "full_attention"
		}
		obj["layer_types"] = types
		b, err := json.Marshal(top)
		if err != nil {
			t.Fatal(err)
		}
		inputs[arch+" 4096 layer_types"] = b
	}
	for name, b := range inputs {
		testenv.CheckAllocBound(t, name, len(b), testenv.AllocFactor, func() {
			c, err := parseConfig(b, "config.json")
			if err != nil {
				return
			}
			fam, _, err := resolveFamily(c)
			if err != nil {
				return
			}
			buildHeader(c, fam)
		})
	}
}
