package mlt

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

type jsonObj = map[string]any

// byteLevelJSON is a minimal byte-level tokenizer.json: the 256 byte
// characters of GPT-2's alphabet (id = byte), "he" (256), the added token
// <|x|> (257) and the GPT-2 ByteLevel pre-tokenizer.
func byteLevelJSON() jsonObj {
	vocab := jsonObj{}
	for b := range 256 {
		vocab[string(byteToUnicode[b])] = b
	}
	vocab["he"] = 256
	return jsonObj{
		"added_tokens":  []any{jsonObj{"id": 257, "content": "<|x|>", "special": true, "normalized": false}},
		"normalizer":    nil,
		"pre_tokenizer": jsonObj{"type": "ByteLevel", "add_prefix_space": false},
		"decoder":       jsonObj{"type": "ByteLevel"},
		"model":         jsonObj{"type": "BPE", "vocab": vocab, "merges": []any{"h e"}},
	}
}

// sentencePieceJSON is a minimal legacy SentencePiece BPE tokenizer.json:
// <0x00>..<0xFF> (ids 0-255), ▁ (256), a (257), ▁a (258), <s> (259, added).
func sentencePieceJSON() jsonObj {
	vocab := jsonObj{}
	for b := range 256 {
		vocab[fmt.Sprintf("<0x%02X>", b)] = b
	}
	vocab["▁"], vocab["a"], vocab["▁a"], vocab["<s>"] = 256, 257, 258, 259
	return jsonObj{
		"added_tokens": []any{jsonObj{"id": 259, "content": "<s>", "special": true}},
		"normalizer": jsonObj{"type": "Sequence", "normalizers": []any{
			jsonObj{"type": "Prepend", "prepend": "▁"},
			jsonObj{"type": "Replace", "pattern": jsonObj{"String": " "}, "content": "▁"},
		}},
		"pre_tokenizer": nil,
		"decoder":       spDecoder(true),
		"model":         jsonObj{"type": "BPE", "byte_fallback": true, "vocab": vocab, "merges": []any{[]any{"▁", "a"}}},
	}
}

func spDecoder(strip bool) jsonObj {
	d := []any{
		jsonObj{"type": "Replace", "pattern": jsonObj{"String": "▁"}, "content": " "},
		jsonObj{"type": "ByteFallback"}, jsonObj{"type": "Fuse"},
	}
	if strip {
		d = append(d, jsonObj{"type": "Strip", "content": " ", "start": 1, "stop": 0})
	}
	return jsonObj{"type": "Sequence", "decoders": d}
}

func split(regex string) jsonObj {
	return jsonObj{"type": "Split", "pattern": jsonObj{"Regex": regex}, "behavior": "Isolated", "invert": false}
}

func seqPre(p ...any) jsonObj { return jsonObj{"type": "Sequence", "pretokenizers": p} }

var byteLevelNoRegex = jsonObj{"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}

// writeHF writes tokenizer.json (and tokenizer_config.json when cfg is not
// nil) into a fresh folder and returns the folder.
func writeHF(t *testing.T, tok, cfg jsonObj) string {
	t.Helper()
	dir := t.TempDir()
	for name, v := range map[string]jsonObj{"tokenizer.json": tok, "tokenizer_config.json": cfg} {
		if v == nil {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestFromHFMapping(t *testing.T) {
	for _, tc := range []struct {
		name      string
		base      func() jsonObj
		edit      func(j jsonObj)
		cfg       jsonObj
		kind      Kind
		flags     uint32
		bos, eos  int32
		text      string
		wantIDs   []int
		wantAdded int
	}{
		{name: "gpt2", base: byteLevelJSON, kind: KindByteLevel, flags: FlagGPT2Regex, bos: -1, eos: -1,
			text: "he<|x|>", wantIDs: []int{256, 257}},
		{name: "llama3 regex + ignore_merges", base: byteLevelJSON, edit: func(j jsonObj) {
			j["pre_tokenizer"] = seqPre(split(regexLlama3), byteLevelNoRegex)
			j["model"].(jsonObj)["ignore_merges"] = true
		}, kind: KindByteLevel, flags: FlagIgnoreMerges, bos: -1, eos: -1},
		{name: "qwen2 regex + NFC", base: byteLevelJSON, edit: func(j jsonObj) {
			j["pre_tokenizer"] = seqPre(split(regexQwen2), byteLevelNoRegex)
			j["normalizer"] = jsonObj{"type": "NFC"}
		}, kind: KindByteLevel, flags: FlagNFC | FlagSingleDigits, bos: -1, eos: -1},
		{name: "qwen3.5 regex", base: byteLevelJSON, edit: func(j jsonObj) {
			j["pre_tokenizer"] = seqPre(split(regexQwen35), byteLevelNoRegex)
		}, kind: KindByteLevel, flags: FlagSingleDigits | FlagQwen35Regex, bos: -1, eos: -1},
		{name: "digits + gpt2", base: byteLevelJSON, edit: func(j jsonObj) {
			j["pre_tokenizer"] = seqPre(jsonObj{"type": "Digits", "individual_digits": true}, jsonObj{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true})
		}, kind: KindByteLevel, flags: FlagGPT2Regex | FlagSplitDigits, bos: -1, eos: -1},
		{name: "template BOS", base: byteLevelJSON, edit: func(j jsonObj) {
			j["post_processor"] = jsonObj{"type": "Sequence", "processors": []any{
				jsonObj{"type": "ByteLevel"},
				jsonObj{"type": "TemplateProcessing",
					"single": []any{jsonObj{"SpecialToken": jsonObj{"id": "<|x|>", "type_id": 0}}, jsonObj{"Sequence": jsonObj{"id": "A", "type_id": 0}}},
					"pair": []any{jsonObj{"SpecialToken": jsonObj{"id": "<|x|>", "type_id": 0}}, jsonObj{"Sequence": jsonObj{"id": "A", "type_id": 0}},
						jsonObj{"SpecialToken": jsonObj{"id": "<|x|>", "type_id": 1}}, jsonObj{"Sequence": jsonObj{"id": "B", "type_id": 1}}},
					"special_tokens": jsonObj{"<|x|>": jsonObj{"id": "<|x|>", "ids": []int{257}, "tokens": []string{"<|x|>"}}}},
			}}
		}, kind: KindByteLevel, flags: FlagGPT2Regex | FlagAddBOS, bos: 257, eos: -1},
		{name: "legacy sentencepiece", base: sentencePieceJSON, kind: KindSentencePiece, bos: -1, eos: -1,
			text: "a<s>a", wantIDs: []int{258, 259, 258}},
		{name: "config add_bos_token", base: sentencePieceJSON, cfg: jsonObj{"add_bos_token": true, "bos_token": "<s>", "eos_token": jsonObj{"content": "<s>"}},
			kind: KindSentencePiece, flags: FlagAddBOS, bos: 259, eos: 259, text: "a", wantIDs: []int{259, 258}},
		{name: "metaspace first", base: sentencePieceJSON, edit: func(j jsonObj) {
			j["normalizer"] = nil
			j["pre_tokenizer"] = jsonObj{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": false}
		}, kind: KindSentencePiece, flags: FlagPrefixOnce, bos: -1, eos: -1, text: "a<s>a", wantIDs: []int{258, 259, 257}},
		{name: "gemma style", base: sentencePieceJSON, edit: func(j jsonObj) {
			j["normalizer"] = jsonObj{"type": "Replace", "pattern": jsonObj{"String": " "}, "content": "▁"}
			j["pre_tokenizer"] = jsonObj{"type": "Split", "pattern": jsonObj{"String": " "}, "behavior": "MergedWithPrevious", "invert": false}
			j["decoder"] = spDecoder(false)
		}, kind: KindSentencePiece, flags: FlagNoPrefix, bos: -1, eos: -1, text: "a a", wantIDs: []int{257, 258}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := tc.base()
			if tc.edit != nil {
				tc.edit(j)
			}
			dir := writeHF(t, j, tc.cfg)
			tk, err := FromHF(filepath.Join(dir, "tokenizer.json"))
			if err != nil {
				t.Fatal(err)
			}
			if tk.Kind != tc.kind || tk.Flags != tc.flags || tk.BOS != tc.bos || tk.EOS != tc.eos {
				t.Errorf("got kind %d flags %v bos %d eos %d, want kind %d flags %v bos %d eos %d",
					tk.Kind, FlagNames(tk.Flags), tk.BOS, tk.EOS, tc.kind, FlagNames(tc.flags), tc.bos, tc.eos)
			}
			if tc.text != "" {
				if got := tk.Encode(tc.text, true); fmt.Sprint(got) != fmt.Sprint(tc.wantIDs) {
					t.Errorf("Encode(%q): got %v, want %v", tc.text, got, tc.wantIDs)
				}
			}
		})
	}
}

func TestFromHFRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		base func() jsonObj
		edit func(j jsonObj)
		want string
	}{
		{"wordpiece", byteLevelJSON, func(j jsonObj) { j["model"].(jsonObj)["type"] = "WordPiece" }, `model type "WordPiece"`},
		{"precompiled normalizer", byteLevelJSON, func(j jsonObj) {
			j["normalizer"] = jsonObj{"type": "Precompiled", "precompiled_charsmap": "AAAA"}
		}, "normalizer Precompiled"},
		{"unicode scripts", byteLevelJSON, func(j jsonObj) {
			j["pre_tokenizer"] = seqPre(jsonObj{"type": "UnicodeScripts"}, byteLevelNoRegex)
		}, "pre_tokenizer UnicodeScripts"},
		{"possessive quantifier", byteLevelJSON, func(j jsonObj) { j["pre_tokenizer"] = seqPre(split(`\p{L}++|\s+`), byteLevelNoRegex) }, "possessive"},
		{"word boundary", byteLevelJSON, func(j jsonObj) { j["pre_tokenizer"] = seqPre(split(`\bx`), byteLevelNoRegex) }, `escape \b`},
		{"ligature fold", byteLevelJSON, func(j jsonObj) { j["pre_tokenizer"] = seqPre(split(`(?i:fi)|.`), byteLevelNoRegex) }, "ligature"},
		{"dot-all option", byteLevelJSON, func(j jsonObj) { j["pre_tokenizer"] = seqPre(split(`(?m:.)`), byteLevelNoRegex) }, "inline options"},
		{"split after ByteLevel", byteLevelJSON, func(j jsonObj) { j["pre_tokenizer"] = seqPre(byteLevelNoRegex, split(`\s+`)) }, "after ByteLevel"},
		{"metaspace decoder with another replacement", sentencePieceJSON, func(j jsonObj) { j["decoder"] = jsonObj{"type": "Metaspace", "replacement": "_"} }, "decoder Metaspace"},
		{"no decoder", byteLevelJSON, func(j jsonObj) { j["decoder"] = nil }, "decoder"},
		{"unigram", byteLevelJSON, func(j jsonObj) { j["model"].(jsonObj)["type"] = "Unigram" }, `model type "Unigram"`},
		{"id at the vocab limit", byteLevelJSON, func(j jsonObj) {
			j["added_tokens"] = []any{jsonObj{"id": MaxVocab - 1, "content": "<|x|>"}}
		}, "no token has id 257"},
		{"merge of a missing piece", byteLevelJSON, func(j jsonObj) { j["model"].(jsonObj)["merges"] = []any{"h x"} }, "not in the vocab"},
		{"template without pair", byteLevelJSON, func(j jsonObj) {
			// The tokenizers library refuses this file too (no PostProcessorWrapper variant matches).
			j["post_processor"] = jsonObj{"type": "TemplateProcessing",
				"single":         []any{jsonObj{"Sequence": jsonObj{"id": "A"}}, jsonObj{"SpecialToken": jsonObj{"id": "<|x|>"}}},
				"special_tokens": jsonObj{"<|x|>": jsonObj{"id": "<|x|>", "ids": []int{257}}}}
		}, "has no pair template"},
		{"template with an unknown special token", byteLevelJSON, func(j jsonObj) {
			j["post_processor"] = jsonObj{"type": "TemplateProcessing",
				"single":         []any{jsonObj{"Sequence": jsonObj{"id": "A"}}, jsonObj{"SpecialToken": jsonObj{"id": "<|y|>"}}},
				"pair":           []any{jsonObj{"Sequence": jsonObj{"id": "A"}}, jsonObj{"Sequence": jsonObj{"id": "B"}}},
				"special_tokens": jsonObj{"<|x|>": jsonObj{"id": "<|x|>", "ids": []int{257}}}}
		}, `special token "<|y|>" has no ids`},
		{"template with $A twice", byteLevelJSON, func(j jsonObj) {
			j["post_processor"] = jsonObj{"type": "TemplateProcessing",
				"single": []any{jsonObj{"Sequence": jsonObj{"id": "A"}}, jsonObj{"Sequence": jsonObj{"id": "A"}}},
				"pair":   []any{jsonObj{"Sequence": jsonObj{"id": "A"}}, jsonObj{"Sequence": jsonObj{"id": "B"}}}}
		}, "holds $A 2 times"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := tc.base()
			tc.edit(j)
			_, err := FromHF(writeHF(t, j, nil))
			if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want a refusal containing %q", err, tc.want)
			}
		})
	}
}

// TestFromHFHighIDSmallFile: a tokenizer.json of a few kilobytes naming id
// 2^24-1 is refused without allocating a token table of that size (about a
// gigabyte with the per-id bookkeeping).
func TestFromHFHighIDSmallFile(t *testing.T) {
	j := byteLevelJSON()
	j["added_tokens"] = []any{jsonObj{"id": MaxVocab - 1, "content": "<|x|>"}}
	dir := writeHF(t, j, nil)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := FromHF(dir)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("got %v, want an ErrUnsupported refusal", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("FromHF allocated %d bytes, want under 64 MiB", got)
	}
}

// TestFlagsFilesUnchanged: the tokenizers that the SPEC.md flags describe are
// written byte for byte as before the pipeline section existed. The digests
// are of FromHF(dir).Bytes() built by commit 416a8af (the last one before it).
func TestFlagsFilesUnchanged(t *testing.T) {
	for name, want := range map[string]string{
		"llama2": "7fd15ef6ea0069ba3ad7e5958c936746bcfa06ee442b38c385bc7cc2eaa4f2f7",
		"llama3": "54c1a685031fe7bd898574093c6cd5ae4a68fccc6308bd3065a30a74601f4a6d",
		"qwen3":  "ba77ce3613acf5375f0dabcf9bc801c1701dba6c552f99efc35dc704c5a7e8a0",
		"gemma3": "5bb568f84b59acad56cb98775b9ded3d8847dbc474d10c62454eda88d87309e2",
		"gpt2":   "c3e9e4cca89e9dd703ec61edecfdd02356b9f2390548d77a2b69564d56cd1412",
	} {
		t.Run(name, func(t *testing.T) {
			tk := shipped(t, name)
			if tk.Pipeline != nil {
				t.Errorf("%s got a pipeline section; the flags describe it", name)
			}
			if got := fmt.Sprintf("%x", sha256.Sum256(tk.Bytes())); got != want {
				t.Errorf("%s: .mlt sha256 %s, want %s (the bytes changed)", name, got, want)
			}
		})
	}
}
