package hfgen

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// byteUnicode is GPT-2's reversible byte → printable rune table, the
// alphabet of byte-level BPE vocabularies.
func byteUnicode() [256]rune {
	var t [256]rune
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			t[b] = rune(b)
		} else {
			t[b] = rune(256 + n)
			n++
		}
	}
	return t
}

// tokMerges are the merge rules of the small tokenizer, in rank order; each
// merged token is added to the vocabulary after the 256 byte tokens. "Ġ" is
// the byte-level form of a space.
var tokMerges = [][2]string{
	{"Ġ", "t"}, {"h", "e"}, {"Ġt", "he"}, {"i", "n"}, {"e", "r"}, {"a", "n"},
	{"Ġ", "a"}, {"o", "n"}, {"r", "e"}, {"a", "t"}, {"Ġ", "s"}, {"e", "n"},
	{"Ġ", "w"}, {"o", "r"}, {"e", "s"}, {"Ġ", "o"}, {"i", "s"}, {"Ġa", "n"},
	{"Ġan", "d"}, {"in", "g"}, {"Ġ", "c"}, {"l", "l"}, {"Ġ", "b"}, {"e", "d"},
}

// Special tokens of the small tokenizer, after the merged tokens.
var tokSpecials = []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"}

// TokenizerSize is the number of tokens of the small tokenizer; every
// generated model's vocabulary is at least this large.
var TokenizerSize = 256 + len(tokMerges) + len(tokSpecials)

// EOS is the id of "<|endoftext|>", used as BOS and EOS in the configs.
var EOS = 256 + len(tokMerges)

// writeTokenizer writes a GPT-2 style byte-level BPE tokenizer.json (the
// ByteLevel pre-tokenizer with the GPT-2 regex) with 256 byte tokens, a few
// merges and special tokens.
// With appendEOS the post-processor appends <|endoftext|> to each text (and to
// each of a pair), as Qwen3-Embedding's does.
func writeTokenizer(dir string, appendEOS bool) error {
	bu := byteUnicode()
	vocab := map[string]int{}
	for b := 0; b < 256; b++ {
		vocab[string(bu[b])] = b
	}
	merges := make([]string, 0, len(tokMerges))
	for i, m := range tokMerges {
		vocab[m[0]+m[1]] = 256 + i
		merges = append(merges, m[0]+" "+m[1])
	}
	var added []map[string]any
	for i, s := range tokSpecials {
		id := 256 + len(tokMerges) + i
		vocab[s] = id
		added = append(added, map[string]any{"id": id, "content": s, "single_word": false,
			"lstrip": false, "rstrip": false, "normalized": false, "special": true})
	}
	bl := func(prefix bool) map[string]any {
		return map[string]any{"type": "ByteLevel", "add_prefix_space": prefix, "trim_offsets": true, "use_regex": true}
	}
	tok := map[string]any{
		"version": "1.0", "truncation": nil, "padding": nil,
		"added_tokens":   added,
		"normalizer":     nil,
		"pre_tokenizer":  bl(false),
		"post_processor": bl(false),
		"decoder":        bl(false),
		"model": map[string]any{"type": "BPE", "dropout": nil, "unk_token": nil,
			"continuing_subword_prefix": "", "end_of_word_suffix": "", "fuse_unk": false,
			"byte_fallback": false, "vocab": vocab, "merges": merges},
	}
	if appendEOS {
		eot := tokSpecials[0]
		seq := func(id string, ty int) map[string]any {
			return map[string]any{"Sequence": map[string]any{"id": id, "type_id": ty}}
		}
		sp := func(ty int) map[string]any {
			return map[string]any{"SpecialToken": map[string]any{"id": eot, "type_id": ty}}
		}
		tok["post_processor"] = map[string]any{"type": "Sequence", "processors": []any{bl(false), map[string]any{
			"type": "TemplateProcessing", "single": []any{seq("A", 0), sp(0)}, "pair": []any{seq("A", 0), sp(0), seq("B", 1), sp(1)},
			"special_tokens": map[string]any{eot: map[string]any{"id": eot, "ids": []int{EOS}, "tokens": []string{eot}}},
		}}}
	}
	b, err := json.MarshalIndent(tok, "", " ")
	if err != nil {
		return err
	}
	cfg := map[string]any{"add_bos_token": false, "eos_token": tokSpecials[0], "bos_token": tokSpecials[0],
		"model_max_length": 4096, "tokenizer_class": "GPT2Tokenizer"}
	cb, _ := json.MarshalIndent(cfg, "", " ")
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), cb, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "tokenizer.json"), b, 0o644)
}
