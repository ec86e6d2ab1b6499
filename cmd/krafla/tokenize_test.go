package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/internal/testenv"
	"github.com/krafla/krafla/mlt"
)

// execKrafla runs `krafla args...` through the cobra root with stdin in.
func execKrafla(t *testing.T, in string, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetIn(strings.NewReader(in))
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// TestTokenizeStrayStopID: tokenize warns about an eos_token_id outside the
// vocabulary, naming it and the vocabulary size, and writes the tokenizer
// without it.
func TestTokenizeStrayStopID(t *testing.T) {
	dir := t.TempDir()
	if err := hfgen.Write(dir, "qwen2", hfgen.Options{}); err != nil {
		t.Fatal(err)
	}
	gen := fmt.Sprintf(`{"eos_token_id": [%d, 1000000]}`, hfgen.EOS)
	if err := os.WriteFile(filepath.Join(dir, "generation_config.json"), []byte(gen), 0o644); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "t.mlt")
	out, err := execKrafla(t, "", "tokenize", dir, "-o", dst)
	if err != nil {
		t.Fatalf("tokenize: %v\n%s", err, out)
	}
	tok, err := mlt.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Chat == nil || len(tok.Chat.StopIDs) != 1 || tok.Chat.StopIDs[0] != int32(hfgen.EOS) {
		t.Errorf("chat %+v, want the stop ids [%d]", tok.Chat, hfgen.EOS)
	}
	want := fmt.Sprintf("warning: %s: eos_token_id 1000000 is not one of the tokenizer's %d ids", filepath.Join(dir, "generation_config.json"), len(tok.Tokens))
	if !strings.Contains(out, want) {
		t.Errorf("output %q, want it to contain %q", out, want)
	}
}

// TestTokenizeEncodeDecode goes through the CLI with the shipped llama2
// tokenizer, whose "Hello world" ids [1, 22557, 1526] the shared README gives.
func TestTokenizeEncodeDecode(t *testing.T) {
	src := testenv.Shared(t, "tokenizers", "llama2")
	tok := filepath.Join(t.TempDir(), "llama2.mlt")
	if out, err := execKrafla(t, "", "tokenize", src, "-o", tok); err != nil || !strings.Contains(out, "kind 1") {
		t.Fatalf("tokenize: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		name string
		in   string
		args []string
		want string
	}{
		{"encode", "", []string{"encode", "-t", tok, "Hello world"}, "1 22557 1526\n"},
		{"encode no special", "", []string{"encode", "-t", tok, "--no-special", "Hello world"}, "22557 1526\n"},
		{"encode jsonl", "{\"text\":\"Hello world\"}\n\n{\"text\":\"\"}", []string{"encode", "-t", tok, "--jsonl"},
			"{\"ids\":[1,22557,1526]}\n{\"ids\":[1]}\n"},
		// The decoder strips one leading space of the whole text; <s> comes first.
		{"decode", "", []string{"decode", "-t", tok, "1", "22557", "1526"}, "<s> Hello world\n"},
		{"decode without bos", "", []string{"decode", "-t", tok, "22557", "1526"}, "Hello world\n"},
		{"decode one argument", "", []string{"decode", "-t", tok, "1 22557,1526"}, "<s> Hello world\n"},
		{"decode jsonl", "{\"ids\":[22557,1526]}\n\n{\"ids\":[]}", []string{"decode", "-t", tok, "--jsonl"},
			"{\"text\":\"Hello world\"}\n{\"text\":\"\"}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := execKrafla(t, tc.in, tc.args...)
			if err != nil || out != tc.want {
				t.Errorf("got %q, %v, want %q", out, err, tc.want)
			}
		})
	}
	// --no-bos, the old name, still works and says it is deprecated.
	if out, err := execKrafla(t, "", "encode", "-t", tok, "--no-bos", "Hello world"); err != nil ||
		!strings.HasSuffix(out, "\n22557 1526\n") || !strings.Contains(out, "use --no-special") {
		t.Errorf("encode --no-bos: got %q, %v; want the deprecation and the ids without BOS", out, err)
	}

	for in, want := range map[string]string{
		"{\"txt\":\"a\"}\n":          `stdin line 1: no "text" field`,
		"{\"text\":\"a\"}\n{oops}\n": "stdin line 2: invalid JSON: invalid character",
		"{\"text\":5}\n":             `stdin line 1: "text" is 5, want a string`,
		"{\"text\":null}\n":          `stdin line 1: "text" is null, want a string`,
		"\"a\"\n":                    `stdin line 1: not a JSON object; want {"text": a string}`,
	} {
		if _, err := execKrafla(t, in, "encode", "-t", tok, "--jsonl"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("encode --jsonl of %q: got %v, want an error containing %q", in, err, want)
		}
	}

	for in, want := range map[string]string{
		"{\"ids\":[22557]}\n{\"ids\":[32000]}\n": "stdin line 2: id 32000 is outside the vocabulary of " + tok + " (32000 tokens)",
		"{\"ids\":\"1 2\"}\n":                    `stdin line 1: "ids" is "1 2", want an array of token ids`,
		"{\"text\":\"a\"}\n":                     `stdin line 1: no "ids" field`,
	} {
		if _, err := execKrafla(t, in, "decode", "-t", tok, "--jsonl"); err == nil || err.Error() != want {
			t.Errorf("decode --jsonl of %q: got %v, want %q", in, err, want)
		}
	}

	out, err := execKrafla(t, "", "inspect", tok)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"MLT1", "1 (sentencepiece-bpe)", "add_bos", "32000 (31741 normal, 3 added, 256 byte)", "58980", "bos          1 \"<s>\"", "eos          2 \"</s>\""} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out)
		}
	}
	out, err = execKrafla(t, "", "inspect", "--json", tok)
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Kind      int      `json:"tokenizer_kind"`
		FileKind  string   `json:"kind"`
		FlagNames []string `json:"flag_names"`
		Vocab     int      `json:"n_vocab"`
		Byte      int      `json:"byte_tokens"`
		Merges    int      `json:"n_merges"`
		BOS       int      `json:"bos"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("inspect --json: %v\n%s", err, out)
	}
	if j.FileKind != "tokenizer" || j.Kind != 1 || j.Vocab != 32000 || j.Byte != 256 || j.Merges != 58980 || j.BOS != 1 || len(j.FlagNames) != 1 || j.FlagNames[0] != "add_bos" {
		t.Errorf("inspect --json: got %+v", j)
	}
}

func TestTokenizeErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.mlt")
	if err := os.WriteFile(bad, []byte("MLT1\x02\x00\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		want  string
		usage bool
	}{
		{"encode without -t", []string{"encode", "x"}, "-t TOK.mlt is required", true},
		{"encode two texts", []string{"encode", "-t", bad, "a", "b"}, `encode takes 1 argument, got 2 ("a", "b")`, true},
		{"jsonl with text", []string{"encode", "-t", bad, "--jsonl", "a"}, "takes no TEXT", true},
		{"decode no ids", []string{"decode", "-t", bad}, "at least one ID", true},
		{"jsonl without text field", []string{"encode", "-t", "", "--jsonl"}, "-t TOK.mlt is required", true},
		{"decode bad id", []string{"decode", "-t", bad, "x1"}, `id "x1" is not a non-negative integer`, true},
		{"decode jsonl with ids", []string{"decode", "-t", bad, "--jsonl", "1"}, "takes no ID argument", true},
		{"encode invalid file", []string{"encode", "-t", bad, "a"}, "shorter than the 32-byte header", false},
		{"inspect invalid file", []string{"inspect", bad}, "ML_E_FORMAT: mlt: " + bad, false},
		{"tokenize missing", []string{"tokenize", filepath.Join(dir, "nothing")}, "no such file", false},
		{"tokenize output in a missing folder", []string{"tokenize", filepath.Join(dir, "nothing"), "-o", filepath.Join(dir, "no", "t.mlt")},
			"-o " + filepath.Join(dir, "no", "t.mlt") + ": folder " + filepath.Join(dir, "no") + " does not exist", false},
		{"tokenize output is a folder", []string{"tokenize", filepath.Join(dir, "nothing"), "-o", dir}, "-o " + dir + ": is a folder", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := execKrafla(t, "", tc.args...)
			var ue usageError
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.As(err, &ue) != tc.usage {
				t.Errorf("got %v (usage error: %v), want an error containing %q (usage error: %v)", err, errors.As(err, &ue), tc.want, tc.usage)
			}
		})
	}
}

// TestTokenizeClaude: claude's NFKC normalizer goes into the pipeline
// section, and the written file encodes its cases as Hugging Face does.
func TestTokenizeClaude(t *testing.T) {
	src := testenv.Shared(t, "tokenizers", "claude")
	out := filepath.Join(t.TempDir(), "claude.mlt")
	msg, err := execKrafla(t, "", "tokenize", src, "-o", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, "pipeline: 1 normalizer(s), 1 pre-tokenizer(s): NFKC, ByteLevel") {
		t.Errorf("tokenize output %q does not describe the pipeline", msg)
	}
	// "…" becomes "..." under NFKC before the merges.
	got, err := execKrafla(t, "", "encode", "-t", out, "…")
	if err != nil {
		t.Fatal(err)
	}
	want := claudeIDs(t, src, "…")
	if strings.TrimSpace(got) != want {
		t.Errorf("encode: got %q, want %q", got, want)
	}
}

// TestTokenizeRefusesUnigram: a Unigram model is refused by name and no file
// is written.
func TestTokenizeRefusesUnigram(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "tokenizer.json")
	if err := os.WriteFile(src, []byte(`{"model": {"type": "Unigram", "vocab": [["a", -1.0]]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "u.mlt")
	_, err := execKrafla(t, "", "tokenize", src, "-o", out)
	if err == nil || !strings.Contains(err.Error(), `model type "Unigram"`) {
		t.Errorf("got %v, want a refusal naming the Unigram model", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was written", out)
	}
}

// claudeIDs returns the ids of text in dir's cases.jsonl, space-separated.
func claudeIDs(t *testing.T, dir, text string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "cases.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		var c struct {
			Text string
			IDs  []int
		}
		if json.Unmarshal([]byte(l), &c) == nil && c.Text == text {
			return strings.Trim(fmt.Sprint(c.IDs), "[]")
		}
	}
	t.Fatalf("no case %q in %s", text, dir)
	return ""
}
