package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/internal/testenv"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlb/mlbtest"
)

// execInspect runs `krafla inspect args...` through the cobra root.
func execInspect(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"inspect"}, args...))
	err := root.Execute()
	return out.String(), err
}

func TestInspectMLBTables(t *testing.T) {
	if inspectors["MLB1"] == nil {
		t.Fatal(`no inspector registered for "MLB1"`)
	}
	h := mlbtest.CaseHeader(t, "gemma3_local_rope")
	path := mlbtest.Write(t, t.TempDir(), h, 1)
	out, err := execInspect(t, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out)
	up := strings.ToUpper(out)
	for _, want := range []string{
		"VALID .MLB MODEL", "HEADER", "DERIVED VALUES", "LAYERS", "TOTALS",
		"ROPE_LOCAL_THETA", "100", // field and its offset
		"Q8_MASK", "SLIDING WINDOW", "LOCAL ROPE", "KV BYTES/POSITION", "BITS PER WEIGHT",
	} {
		if !strings.Contains(up, strings.ToUpper(want)) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out, "blk.0.wq.q") {
		t.Error("arrays listed without --tensors")
	}
	out, err = execInspect(t, "--tensors", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"layer_flags", "blk.0.wq.q", "blk.2.w2.d", "q4_0", "f32 scales", "tok_emb.q"} {
		if !strings.Contains(out, want) {
			t.Errorf("--tensors output lacks %q", want)
		}
	}
}

// TestInspectMLBJSON checks the JSON report against values computed here from
// the header of mlbtest's gemma3 case: dim 64, 3 layers (two sliding with the
// local base 10000, one global), 4 query and 2 KV heads of head_dim 32.
func TestInspectMLBJSON(t *testing.T) {
	h := mlbtest.CaseHeader(t, "gemma3_local_rope")
	path := mlbtest.Write(t, t.TempDir(), h, 1)
	out, err := execInspect(t, "--json", "--tensors", path)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Magic   string
		Header  map[string]any
		Flags   []int `json:"layer_flag_bytes"`
		Derived struct {
			HeadDim int `json:"head_dim"`
			QDim    int `json:"q_dim"`
			KVDim   int `json:"kv_dim"`
		}
		Layers []struct {
			Kind      string  `json:"kind"`
			Window    int     `json:"sliding_window"`
			LocalRoPE bool    `json:"local_rope"`
			RopeTheta float64 `json:"rope_theta"`
			KVBytes   int64   `json:"kv_cache_bytes_per_position"`
		}
		Totals struct {
			Parameters int64 `json:"parameters"`
			FileSize   int64 `json:"file_size"`
		}
		Arrays []struct {
			Name   string
			Offset int64
			Bytes  int64
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if r.Magic != "MLB1" || r.Header["n_kv_heads"] != 2.0 || r.Header["rope_local_theta"] != 10000.0 || r.Header["dim"] != 64.0 {
		t.Errorf("header: got %v", r.Header)
	}
	if len(r.Flags) != 3 || r.Flags[0] != 3 || r.Flags[2] != 0 {
		t.Errorf("layer_flag_bytes: got %v, want [3 3 0]", r.Flags)
	}
	if len(r.Header) != 41 {
		t.Errorf("header has %d fields, want 41 (magic + 39 of SPEC.md + true_hidden_dim)", len(r.Header))
	}
	if r.Derived.HeadDim != 32 || r.Derived.QDim != 128 || r.Derived.KVDim != 64 {
		t.Errorf("derived: got %+v, want head_dim 32, q_dim 128, kv_dim 64", r.Derived)
	}
	if len(r.Layers) != 3 {
		t.Fatalf("got %d layers, want 3", len(r.Layers))
	}
	for i, want := range []struct {
		window int
		local  bool
		theta  float64
	}{{8, true, 10000}, {8, true, 10000}, {0, false, 1e6}} {
		l := r.Layers[i]
		if l.Window != want.window || l.LocalRoPE != want.local || l.RopeTheta != want.theta || l.KVBytes != 2*64*4 {
			t.Errorf("layer %d: got %+v, want window %d local %v theta %v kv 512", i, l, want.window, want.local, want.theta)
		}
	}
	// Parameters by hand: tok_emb 67·64; per layer 2 norms of 64, wq 128·64, wk and wv 64·64,
	// wo 64·128, q/k norms 32 each, w1 w2 w3 96·64, post norms 2·64; final_norm 64.
	perLayer := int64(64 + 128*64 + 2*64*64 + 64*128 + 2*32 + 64 + 3*96*64 + 2*64)
	if want := int64(67*64) + 3*perLayer + 64; r.Totals.Parameters != want {
		t.Errorf("parameters: got %d, want %d", r.Totals.Parameters, want)
	}
	st, _ := os.Stat(path)
	if r.Totals.FileSize != st.Size() {
		t.Errorf("file size: got %d, want %d", r.Totals.FileSize, st.Size())
	}
	if len(r.Arrays) == 0 || r.Arrays[0].Name != "layer_flags" || r.Arrays[0].Offset != 256 || r.Arrays[0].Bytes != 3 {
		t.Errorf("first array: got %+v, want layer_flags at 256, 3 bytes", r.Arrays[:1])
	}
}

// TestInspectFFNPadding: a padded FFN shows its true width beside hidden_dim,
// in the tables and the JSON (mlbtest's "everything" case: 86 of 96).
func TestInspectFFNPadding(t *testing.T) {
	path := mlbtest.Write(t, t.TempDir(), mlbtest.CaseHeader(t, "everything"), 1)
	out, err := execInspect(t, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"true_hidden_dim", "86 (hidden_dim 96: 10 zero channels of padding)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, err = execInspect(t, "--json", path)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Header  map[string]any
		Derived struct {
			FFNDim     int `json:"ffn_dim"`
			FFNPadding int `json:"ffn_padding"`
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Header["true_hidden_dim"] != 86.0 || r.Derived.FFNDim != 86 || r.Derived.FFNPadding != 10 {
		t.Errorf("got true_hidden_dim %v, ffn_dim %d, ffn_padding %d; want 86, 86, 10", r.Header["true_hidden_dim"], r.Derived.FFNDim, r.Derived.FFNPadding)
	}
}

func TestInspectInvalid(t *testing.T) {
	h := mlbtest.Base()
	dir := t.TempDir()
	path := mlbtest.Write(t, dir, h, 1)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(b[20:], 3) // n_kv_heads 3 does not divide n_heads 4
	bad := filepath.Join(dir, "bad.mlb")
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	unknown := filepath.Join(dir, "x.bin")
	os.WriteFile(unknown, []byte("GGML\x03\x00\x00\x00"), 0o644)
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("ML"), 0o644)
	st := filepath.Join(dir, "model.safetensors") // an 8-byte header length, then the JSON header
	os.WriteFile(st, []byte("\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":1}       "), 0o644)
	js := filepath.Join(dir, "tokenizer.json")
	os.WriteFile(js, []byte("{\n  \"version\": \"1.0\"}"), 0o644)
	// A known extension is validated by its loader, whatever the file holds.
	ggufAsMLB := filepath.Join(dir, "gguf.mlb")
	os.WriteFile(ggufAsMLB, append([]byte("GGUF\x01\x00\x00\x00"), make([]byte, 300)...), 0o644)
	mlbAsMLT := filepath.Join(dir, "model.MLT")
	os.WriteFile(mlbAsMLT, b, 0o644)
	mlbAsGGUF := filepath.Join(dir, "model.gguf")
	os.WriteFile(mlbAsGGUF, b, 0o644)
	for _, c := range []struct {
		path, want string
	}{
		{bad, "ML_E_SHAPE: " + bad + ": n_kv_heads 3 does not divide n_heads 4"},
		{ggufAsMLB, "ML_E_FORMAT: " + ggufAsMLB + `: bad magic "GGUF", want "MLB1": this looks like a GGUF file: convert it with ` + "`krafla convert FILE`"},
		{mlbAsMLT, "ML_E_FORMAT: "},
		{mlbAsGGUF, "ML_E_FORMAT: gguf: " + mlbAsGGUF + `: magic "MLB1" is not "GGUF"`},
		{filepath.Join(dir, "missing.mlb"), "ML_E_IO"},
		{unknown, `ML_E_FORMAT: ` + unknown + `: unknown file type: magic "GGML"`},
		{short, "ML_E_FORMAT"},
		{st, `ML_E_FORMAT: ` + st + `: unknown file type: magic "\x10\x00\x00\x00" is none of GGUF, MLB1, MLI1, MLT1 (a safetensors file: convert its folder with krafla convert DIR)`},
		{js, `ML_E_FORMAT: ` + js + `: unknown file type: magic "{\n  " is none of GGUF, MLB1, MLI1, MLT1 (JSON: a tokenizer.json becomes an .mlt with krafla tokenize)`},
	} {
		_, err := execInspect(t, c.path)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error starting %q", c.path, err, c.want)
		}
		var ue usageError
		if ok := errorsAs(err, &ue); ok {
			t.Errorf("%s: an invalid file is a usage error (exit 2), want exit 1", c.path)
		}
	}
	if _, err := execInspect(t); err == nil {
		t.Error("inspect without FILE: got no error")
	} else if ok := errorsAs(err, new(usageError)); !ok {
		t.Errorf("inspect without FILE: got %v, want a usage error", err)
	}
}

func errorsAs(err error, target *usageError) bool { return errors.As(err, target) }

// TestInspectMLTTensors: --tensors lists every token and merge of a
// tokenizer, in the tables and in the JSON.
func TestInspectMLTTensors(t *testing.T) {
	ck := filepath.Join(t.TempDir(), "ck")
	if err := runSynth("llama", synthOptions{Output: ck, Shape: "tiny", DType: "bf16", Seed: 1, Shards: 1}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	tok := filepath.Join(t.TempDir(), "t.mlt")
	if err := runTokenize(context.Background(), ck, tokenizeOptions{Output: tok}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runInspect(tok, inspectOptions{Tensors: true}, &out); err != nil {
		t.Fatal(err)
	}
	ntok, nmerge := hfgen.TokenizerSize, hfgen.TokenizerSize-256-3 // bytes, merges, 3 specials
	for _, want := range []string{
		fmt.Sprintf("tokens (%d):", ntok),
		fmt.Sprintf("merges (%d, by rank):", nmerge),
		fmt.Sprintf("  %8d  added   %q", ntok-1, "<|im_end|>"),
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("inspect --tensors lacks %q", want)
		}
	}
	out.Reset()
	if err := runInspect(tok, inspectOptions{Tensors: true, JSON: true}, &out); err != nil {
		t.Fatal(err)
	}
	var j struct {
		Kind   string            `json:"kind"`
		Tokens []json.RawMessage `json:"tokens"`
		Merges []json.RawMessage `json:"merges"`
	}
	if err := json.Unmarshal(out.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if j.Kind != "tokenizer" || len(j.Tokens) != ntok || len(j.Merges) != nmerge {
		t.Errorf("got kind %q, %d tokens, %d merges; want tokenizer, %d, %d", j.Kind, len(j.Tokens), len(j.Merges), ntok, nmerge)
	}
}

// TestInspectMixedTypes inspects a mixed file (wtype 3): the header names the
// type table, the totals split the parameters by type, and each matrix's
// array says its block type.
func TestInspectMixedTypes(t *testing.T) {
	h := mlbtest.Mixed(mlb.Q4_K, mlb.Q6_K, mlb.IQ4_XS, mlb.Q8_0)
	path := mlbtest.Write(t, t.TempDir(), h, 1)
	out, err := execInspect(t, "--tensors", path)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"mixed types", "type_table", "tok_emb.b", "q4_k blocks", "q6_k blocks", "iq4_xs blocks",
		"Q8_0 ", "Q4_K ", "Q6_K ", "IQ4_XS "} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out)
		}
	}
}

// TestInspectMLTFIM: inspect shows the fill-in-the-middle format of Qwen3's
// tokenizer (the Qwen2.5 vocabulary: <|fim_prefix|> 151659, <|fim_suffix|>
// 151661, <|fim_middle|> 151660, and the infill stops <|fim_pad|> 151662,
// <|repo_name|> 151663, <|file_sep|> 151664, as its tokenizer.json numbers
// them), and nothing for a tokenizer without sentinels.
func TestInspectMLTFIM(t *testing.T) {
	src := testenv.Shared(t, "tokenizers", "qwen3")
	tok := filepath.Join(t.TempDir(), "q.mlt")
	if err := runTokenize(context.Background(), src, tokenizeOptions{Output: tok}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runInspect(tok, inspectOptions{}, &out); err != nil {
		t.Fatal(err)
	}
	want := `  fim          Qwen2.5-Coder: <|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|> (infill stops 151662 "<|fim_pad|>", 151663 "<|repo_name|>", 151664 "<|file_sep|>")`
	if !strings.Contains(out.String(), want+"\n") {
		t.Errorf("inspect lacks\n%s\nin\n%s", want, out.String())
	}
	out.Reset()
	if err := runInspect(tok, inspectOptions{JSON: true}, &out); err != nil {
		t.Fatal(err)
	}
	var j struct{ FIM *mltFIMJSON }
	if err := json.Unmarshal(out.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if f := j.FIM; f == nil || f.PrefixID != 151659 || f.SuffixID != 151661 || f.MiddleID != 151660 || fmt.Sprint(f.StopIDs) != "[151662 151663 151664]" {
		t.Errorf("fim JSON %+v, want prefix 151659, suffix 151661, middle 151660, stops 151662-151664", j.FIM)
	}

	ck := filepath.Join(t.TempDir(), "ck")
	if err := runSynth("llama", synthOptions{Output: ck, Shape: "tiny", DType: "bf16", Seed: 1, Shards: 1}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(t.TempDir(), "t.mlt")
	if err := runTokenize(context.Background(), ck, tokenizeOptions{Output: plain}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := runInspect(plain, inspectOptions{}, &out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "fim ") {
		t.Errorf("a tokenizer without sentinels shows a fim line:\n%s", out.String())
	}
}
