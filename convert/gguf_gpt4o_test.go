package convert

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/gguf"
	"github.com/krafla/krafla/internal/testenv"
	"github.com/krafla/krafla/mlt"
)

// llamaCppChkTxt and gpt4oChkHsh: chktxt and the chkhsh of "gpt-4o" in
// llama.cpp's get_vocab_base_pre (conversion/base.py of the source
// node-llama-cpp 3.21.1 bundles; convert_hf_to_gguf_update.py's list names
// Xenova/gpt-4o for it).
const (
	llamaCppChkTxt = "\n \n\n \n\n\n \t \t\t \t\n  \n   \n    \n     \n🚀 (normal) 😶\u200d🌫\ufe0f (multiple emojis concatenated) ✅ 🦙🦙 3 33 333 3333 33333 333333 3333333 33333333 3.3 3..3 3...3 កាន\u17cbតែព\u17b7សេសអាច😁 ?我想在apple工作1314151天～ ------======= нещо на Български ''''''```````\"\"\"\"......!!!!!!?????? I've been 'told he's there, 'RE you sure? 'M not sure I'll make it, 'D you like some tea? We'Ve a'lL"
	gpt4oChkHsh    = "ccc2ef013c104be7bae2965776d611e1d7a8a2a9c547dd93a682c9a9fc80352e"
)

// gptossRows is gpt-oss's embedding rows: its 200019 tokens padded.
const gptossRows = 201088

// gptossCases reads ../shared/tokenizers-next/gptoss/cases.jsonl: texts and
// the ids Hugging Face tokenizers gives them (its README says how they were
// made).
func gptossCases(t *testing.T, dir string) (texts []string, ids [][]int) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "cases.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c struct {
			Text string `json:"text"`
			IDs  []int  `json:"ids"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		texts, ids = append(texts, c.Text), append(ids, c.IDs)
	}
	if err := sc.Err(); err != nil || len(texts) == 0 {
		t.Fatalf("cases.jsonl: %d cases, %v", len(texts), err)
	}
	return texts, ids
}

// TestExportGPT4o: gpt-oss's tokenizer (the o200k regex in a pipeline Split,
// ignore_merges) exports as llama.cpp's gpt-4o pre-tokenizer on a tiny model
// with gpt-oss's 201088 rows; the GGUF imports back to a tokenizer that
// gives Hugging Face's ids on the cases, and (KRAFLA_LLAMACPP) llama.cpp
// tokenizes the cases the same.
func TestExportGPT4o(t *testing.T) {
	src := testenv.Shared(t, "tokenizers-next", "gptoss")
	if testing.Short() {
		t.Skip("-short: a 201088-row model")
	}
	texts, want := gptossCases(t, src)
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	if err := hfgen.Write(ck, "llama3", hfgen.Options{Seed: 4, Vocab: gptossRows, NoTokenizer: true}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tokenizer.json", "tokenizer_config.json"} {
		if err := os.WriteFile(filepath.Join(ck, name), mustRead(t, filepath.Join(src, name)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := filepath.Join(dir, "m.mlb")
	if _, err := Convert(context.Background(), ck, Options{Out: in, F16Scales: true}); err != nil {
		t.Fatal(err)
	}
	gg := filepath.Join(dir, "m.gguf")
	if _, err := ExportGGUF(in, gg, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(gg)
	if err != nil {
		t.Fatal(err)
	}
	pre, _ := f.String("tokenizer.ggml.pre")
	f.Close()
	if pre != "gpt-4o" {
		t.Fatalf("tokenizer.ggml.pre: got %q, want gpt-4o", pre)
	}
	// The .mlt ignores merges and llama.cpp's gpt-4o does not: the export
	// checks that the merges build every token, and refuses once one merge
	// is taken out ("Ġ" + "Ġ": nothing else builds "ĠĠ", two spaces).
	cut, err := mlt.Open(TokenizerPath(in))
	if err != nil {
		t.Fatal(err)
	}
	if cut.Flags&mlt.FlagIgnoreMerges == 0 {
		t.Fatalf("gpt-oss flags %v: want ignore_merges", mlt.FlagNames(cut.Flags))
	}
	m := cut.Merges[0]
	cut.Merges = cut.Merges[1:]
	_, err = exportTokenizer(cut, gptossRows, func(string, ...any) {})
	if err == nil || !strings.Contains(err.Error(), "not built by the merges") || !strings.Contains(err.Error(), fmt.Sprintf("the first %d ", m[2])) {
		t.Errorf("without merge %v: got %v, want an error naming token %d", m, err, m[2])
	}

	back := filepath.Join(dir, "back.mlb")
	if _, err := ConvertGGUF(context.Background(), gg, Options{Out: back, F16Scales: true}); err != nil {
		t.Fatal(err)
	}
	tok, err := mlt.Open(TokenizerPath(back))
	if err != nil {
		t.Fatal(err)
	}
	if tok.Flags&mlt.FlagIgnoreMerges != 0 {
		t.Errorf("imported flags %v: llama.cpp's gpt-4o does not ignore merges", mlt.FlagNames(tok.Flags))
	}
	for i, text := range texts {
		if got := tok.Encode(text, false); fmt.Sprint(got) != fmt.Sprint(want[i]) {
			t.Errorf("imported tokenizer, %q: got %v, want %v", text, got, want[i])
		}
	}

	// convert_hf_to_gguf.py names a pre-tokenizer by the SHA-256 of
	// str(tokenizer.encode(chktxt)); the imported tokenizer's ids give the
	// hash it maps to "gpt-4o" (Xenova/gpt-4o).
	ids := tok.Encode(llamaCppChkTxt, false)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	if h := fmt.Sprintf("%x", sha256.Sum256([]byte("["+strings.Join(parts, ", ")+"]"))); h != gpt4oChkHsh {
		t.Errorf("chkhsh of krafla's gpt-oss ids: got %s, want gpt-4o's %s", h, gpt4oChkHsh)
	}

	nlc := os.Getenv("KRAFLA_LLAMACPP")
	if nlc == "" {
		t.Skip("KRAFLA_LLAMACPP not set: no node-llama-cpp@3.21.1 folder to compare with llama.cpp (scripts/test.sh installs one when node and npm are on PATH)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found (scripts/test.sh installs node-llama-cpp when node and npm are on PATH)")
	}
	link := filepath.Join(nlc, "krafla-greedy.mjs")
	if err := os.WriteFile(link, mustRead(t, filepath.Join("..", "scripts", "llamacpp", "greedy.mjs")), 0o644); err != nil {
		t.Fatal(err)
	}
	// Probes beside the cases, against krafla's tokenizer (whose o200k
	// scanner mlt checks against the regex): the regex's corners.
	probes := []string{"HELLOworld's don'T I'M", "JSONParser x/\n/ 1234567 ½²", "ünïcödé Москва 東京"}
	ptok, err := mlt.Open(TokenizerPath(in))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probes {
		texts, want = append(texts, p), append(want, ptok.Encode(p, false))
	}
	tp := filepath.Join(dir, "texts.json")
	tb, _ := json.Marshal(texts)
	if err := os.WriteFile(tp, tb, 0o644); err != nil {
		t.Fatal(err)
	}
	r := runLlamaCpp(t, node, nlc, link, gg, 1, "13225", tp)
	agree := 0
	for i, text := range texts {
		got := fmt.Sprint(r.Tokenized[i])
		switch {
		case got == fmt.Sprint(want[i]):
			agree++
		case !o200kLlamaCppAlike(text):
			t.Logf("llama.cpp differs on a text where its gpt-4o regex may (combining marks, non-ASCII case changes): %.40q", text)
		default:
			t.Errorf("llama.cpp, %q: got %v, want %v", text, got, want[i])
		}
	}
	t.Logf("llama.cpp gives Hugging Face's ids on %d of %d cases", agree, len(texts))
}

// o200kLlamaCppAlike reports whether llama.cpp's gpt-4o regex_exprs must
// split text as the o200k regex does (false: it may not). llama.cpp rewrites the regex's
// letter classes as ((?=[\p{L}])([^a-z])) and ((?=[\p{L}])([^A-Z])): a
// combining mark (\p{M}) is no letter to it, and a non-ASCII letter is both
// upper and lower case, so it differs on text with a mark, or with a
// lower-case letter (Ll) followed by an upper or title case one (Lu, Lt)
// where either is not ASCII (o200k splits there).
func o200kLlamaCppAlike(text string) bool {
	prev := rune(-1)
	for _, r := range text {
		if unicode.IsMark(r) {
			return false
		}
		if prev >= 0 && unicode.IsLower(prev) && (unicode.IsUpper(r) || unicode.IsTitle(r)) && (prev >= 0x80 || r >= 0x80) {
			return false
		}
		prev = r
	}
	return true
}
