package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/internal/pair"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlt"
)

// pairTestModels converts one synthetic checkpoint twice, Q8_0 and Q4_0, into
// two folders, and returns the checkpoint and the two .mlb paths.
func pairTestModels(t *testing.T) (ck, q8, q4 string) {
	t.Helper()
	root := t.TempDir()
	ck = filepath.Join(root, "ck")
	if err := runSynth("llama3", synthOptions{Output: ck, Shape: "tiny", DType: "bf16", Seed: 1, Shards: 1}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	q8, q4 = filepath.Join(root, "a", "m.mlb"), filepath.Join(root, "b", "m.mlb")
	for _, c := range []struct{ out, typ string }{{q8, "q8_0"}, {q4, "q4_0"}} {
		if err := os.MkdirAll(filepath.Dir(c.out), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := runConvert(context.Background(), ck, convertOptions{Output: c.out, Type: c.typ, Threads: 1}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
	}
	return ck, q8, q4
}

func mltOf(p string) string { return strings.TrimSuffix(p, ".mlb") + ".mlt" }

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	writeFileBytes(t, to, readFileBytes(t, from))
}

func readFileBytes(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFileBytes(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRefuseOtherPair: run, serve, export, ppl and chat refuse a model beside a
// tokenizer it was not written with: that of another convert of the same
// checkpoint (the tokenizers differ only in the pair they name), or one
// written by krafla tokenize, which has no record; the error names both files
// and says to re-run convert. Given with -t, such a tokenizer is refused too.
func TestRefuseOtherPair(t *testing.T) {
	ck, q8, q4 := pairTestModels(t)
	a, b := readFileBytes(t, mltOf(q8)), readFileBytes(t, mltOf(q4))
	ta, err := mlt.Parse(a)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := mlt.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ta.BytesWithoutPair(), tb.BytesWithoutPair()) || ta.Pair == tb.Pair {
		t.Fatal("the two converts' tokenizers should differ in their pair id only")
	}
	if _, _, err := runCLI("run", q8, "-p", "The", "-n", "1", "--temp", "0", "--no-huge-pages"); err != nil {
		t.Fatalf("run on the model's own tokenizer: %v", err)
	}
	// The refusal names the model and the tokenizer it was given.
	check := func(t *testing.T, err error, tokPath, says string) {
		t.Helper()
		if !errors.Is(err, pair.ErrMismatch) {
			t.Fatalf("got %v, want the pair refused", err)
		}
		for _, want := range []string{q8 + " and " + tokPath + " are not a pair", says, "re-run krafla convert"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
	}
	tokenized := filepath.Join(t.TempDir(), "plain.mlt")
	if _, _, err := runCLI("tokenize", filepath.Join(ck, "tokenizer.json"), "-o", tokenized); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		tok  string // what lies beside the model
		says string
	}{
		{"tokenizer of the Q4_0 convert", mltOf(q4), "the tokenizer of pair " + hexID(tb.Pair)},
		{"tokenizer written by krafla tokenize", tokenized, "the tokenizer has no pair record"},
	} {
		t.Run(c.name, func(t *testing.T) {
			copyFile(t, c.tok, mltOf(q8))
			defer writeFileBytes(t, mltOf(q8), a)
			_, _, err := runCLI("run", q8, "-p", "The", "-n", "1", "--temp", "0", "--no-huge-pages")
			check(t, err, mltOf(q8), c.says)
			_, err = serveLog(t, q8)
			check(t, err, mltOf(q8), c.says)
			_, _, err = runCLI("export", q8, "-o", filepath.Join(t.TempDir(), "m.gguf"))
			check(t, err, mltOf(q8), c.says)
			_, _, err = runCLI("ppl", q8, "-f", writeRunText(t, 40), "--ctx", "16")
			check(t, err, mltOf(q8), c.says)
			err = runChat(context.Background(), q8, chatOptions{modelOptions: modelOptions{Threads: 1}}, strings.NewReader("Hi\n"), io.Discard, io.Discard)
			check(t, err, mltOf(q8), c.says)
		})
	}
	// -t names the tokenizer: still refused when it is another pair's.
	_, _, err = runCLI("run", q8, "-t", mltOf(q4), "-p", "The", "-n", "1", "--no-huge-pages")
	check(t, err, mltOf(q4), "the tokenizer of pair "+hexID(tb.Pair))
	// A model converted without its tokenizer has no record: the old
	// tokenizer beside it (which names the model it was written with) is
	// refused.
	var warned bytes.Buffer
	if err := runConvert(context.Background(), ck, convertOptions{Output: q8, Type: "q4_0", Threads: 1, NoTokenizer: true}, &bytes.Buffer{}, &warned); err != nil {
		t.Fatal(err)
	}
	if want := "warning: " + mltOf(q8) + " beside the model is an earlier convert's tokenizer"; !strings.Contains(warned.String(), want) {
		t.Errorf("convert --no-tokenizer beside a paired tokenizer: stderr %q, want %q", warned.String(), want)
	}
	_, _, err = runCLI("run", q8, "-p", "The", "-n", "1", "--no-huge-pages")
	check(t, err, mltOf(q8), "the model has no pair record")
}

func hexID(id pair.ID) string {
	const digits = "0123456789abcdef"
	var b []byte
	for _, c := range id {
		b = append(b, digits[c>>4], digits[c&15])
	}
	return string(b)
}

// TestOldPairLoads: files without the record (what every krafla wrote
// before it) load and generate as they always did. The stripped model is byte
// for byte the one convert --no-tokenizer writes, so the record is the only
// difference convert makes.
func TestOldPairLoads(t *testing.T) {
	ck, q8, _ := pairTestModels(t)
	args := []string{"-p", "The lava", "-n", "12", "--temp", "0", "--threads", "1", "--no-huge-pages"}
	paired, _, err := runCLI(append([]string{"run", q8}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(t.TempDir(), "old.mlb")
	b := readFileBytes(t, q8)
	clear(b[mlb.PairVersionOffset : mlb.PairIDOffset+mlb.PairIDSize])
	writeFileBytes(t, old, b)
	tok, err := mlt.Open(mltOf(q8))
	if err != nil {
		t.Fatal(err)
	}
	writeFileBytes(t, mltOf(old), tok.BytesWithoutPair())
	plain := filepath.Join(t.TempDir(), "plain.mlb")
	if err := runConvert(context.Background(), ck, convertOptions{Output: plain, Type: "q8_0", Threads: 1, NoTokenizer: true}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readFileBytes(t, plain), b) {
		t.Error("the model with its record zeroed differs from convert --no-tokenizer's")
	}
	got, _, err := runCLI(append([]string{"run", old}, args...)...)
	if err != nil {
		t.Fatalf("run on files without the record: %v", err)
	}
	if got != paired || strings.TrimSpace(got) == "" {
		t.Errorf("without the record: %q, with it %q; want the same text", got, paired)
	}
}

// TestInspectPair: inspect shows the pair id of a model and of its
// tokenizer, the same in both, and none for a file without the record.
func TestInspectPair(t *testing.T) {
	_, q8, _ := pairTestModels(t)
	tok, err := mlt.Open(mltOf(q8))
	if err != nil {
		t.Fatal(err)
	}
	id := hexID(tok.Pair)
	for _, p := range []string{q8, mltOf(q8)} {
		out, _, err := runCLI("inspect", p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "pair_id") || !strings.Contains(out, id) {
			t.Errorf("inspect %s does not show pair_id %s:\n%s", p, id, out)
		}
	}
	writeFileBytes(t, mltOf(q8), tok.BytesWithoutPair())
	if out, _, err := runCLI("inspect", mltOf(q8)); err != nil || strings.Contains(out, "pair_id") {
		t.Errorf("inspect of a tokenizer without the record: %v\n%s", err, out)
	}
}
