package mlt

import "slices"

// FIM is a tokenizer's fill-in-the-middle format: the sentinel tokens a
// code model was trained to complete the text between a prefix and a suffix
// with, found by their spellings (FIM).
type FIM struct {
	Family string // the models that spell the sentinels so ("Qwen2.5-Coder", "CodeLlama", ...)
	Pre    int    // the token before the prefix
	Suf    int    // the token before the suffix
	Mid    int    // the token the middle follows; -1: none (Codestral ends with the prefix)
	// SuffixFirst: the suffix comes before the prefix, and no middle token
	// follows (Codestral's [SUFFIX]…[PREFIX]…).
	SuffixFirst bool
	// Format shows the prompt's layout with the sentinels' spellings:
	// "<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>".
	Format string
	// Stops are the sentinels that end an infill besides the tokenizer's
	// stop tokens: llama.cpp's FIM pad, repo and file-separator tokens and
	// CodeLlama's <EOT>, sorted.
	Stops []int
}

// fimFamilies are the sentinel spellings llama.cpp's llama_vocab::impl::load
// detects (src/llama-vocab.cpp, "find FIM_PRE token" and the two after it,
// in llama.cpp v0.4.0 as node-llama-cpp 3.21.1 bundles it), one row a family
// so that a format never mixes two; and Codestral's, which llama.cpp does not
// detect by text, from mistral-common (InstructTokenizerV2.encode_fim:
// BOS [SUFFIX] suffix [PREFIX] prefix, no middle token) and ollama's
// codestral template ([SUFFIX]{{ .Suffix }}[PREFIX] {{ .Prompt }}).
var fimFamilies = []struct {
	family        string
	pre, suf, mid string
	suffixFirst   bool
}{
	{"Qwen2.5-Coder", "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", false},
	{"StarCoder", "<fim_prefix>", "<fim_suffix>", "<fim_middle>", false},
	{"fim-dash", "<fim-prefix>", "<fim-suffix>", "<fim-middle>", false},
	{"DeepSeek-Coder", "<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>", false},
	// CodeLlama's pieces carry SentencePiece's space: ▁<PRE> is " <PRE>".
	{"CodeLlama", "▁<PRE>", "▁<SUF>", "▁<MID>", false},
	{"CodeLlama", "<PRE>", "<SUF>", "<MID>", false},
	{"GLM-4.5", "<|code_prefix|>", "<|code_suffix|>", "<|code_middle|>", false},
	{"Falcon-H1-Coder", "<|prefix|>", "<|suffix|>", "<|middle|>", false},
	{"Codestral", "[PREFIX]", "[SUFFIX]", "", true},
}

// fimStops are the tokens llama.cpp adds to the end-of-generation set for
// FIM (its FIM_PAD, FIM_REP and FIM_SEP spellings) and CodeLlama's end of
// infill, which llama.cpp's EOT list spells <EOT> and _<EOT> while
// CodeLlama's SentencePiece model has ▁<EOT>.
var fimStops = []string{
	"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]",
	"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>",
	"<|file_sep|>",
	"<EOT>", "_<EOT>", "▁<EOT>",
}

// FIM returns the tokenizer's fill-in-the-middle format, if it has every
// sentinel of one family.
func (t *Tokenizer) FIM() (FIM, bool) {
	look := func(s string) int {
		if s == "" {
			return -1
		}
		if id, ok := t.Lookup(s); ok && t.Tokens[id].Attr != AttrByte {
			return id
		}
		return -2
	}
	for _, f := range fimFamilies {
		pre, suf, mid := look(f.pre), look(f.suf), look(f.mid)
		if pre < 0 || suf < 0 || mid == -2 {
			continue
		}
		out := FIM{Family: f.family, Pre: pre, Suf: suf, Mid: mid, SuffixFirst: f.suffixFirst,
			Format: f.pre + "{prefix}" + f.suf + "{suffix}" + f.mid}
		if f.suffixFirst {
			out.Format = f.suf + "{suffix}" + f.pre + "{prefix}"
		}
		for _, s := range fimStops {
			if id := look(s); id >= 0 {
				out.Stops = append(out.Stops, id)
			}
		}
		slices.Sort(out.Stops)
		out.Stops = slices.Compact(out.Stops)
		return out, true
	}
	return FIM{}, false
}

// Prompt returns the ids of a fill-in-the-middle prompt as llama.cpp's
// server builds it for /infill (format_prompt_infill in
// tools/server/server-common.cpp): BOS when addBOS, then the prefix
// sentinel, the prefix, the suffix sentinel, the suffix and the middle
// sentinel. Prefix and suffix are each encoded alone, as llama.cpp tokenizes
// each by itself, so a SentencePiece tokenizer gives both its ▁ prefix; and
// as plain text (llama.cpp's parse_special false): a source file that holds
// "<|endoftext|>" or a sentinel's spelling gets the characters, not the
// token. llama.cpp's repo-level lines ("<|repo_name|>myproject",
// "<|file_sep|>filename", placeholders it marks TODO, added only when the
// context has room beyond a batch) are left out, as ollama's templates
// leave them out.
//
// A SuffixFirst format (Codestral) follows mistral-common: BOS when addBOS,
// [SUFFIX] suffix [PREFIX] prefix, the suffix encoded as text that follows a
// token (no ▁ prefix of its own with Metaspace "first"), the prefix as the
// text's start.
func (f FIM) Prompt(t *Tokenizer, prefix, suffix string, addBOS bool) []int {
	ids, _ := f.PromptWithin(t, prefix, suffix, addBOS, 0)
	return ids
}

// PromptWithin is Prompt with at most limit ids (limit > 0): a longer prompt is
// trimmed as llama.cpp trims /infill's to its batch, the suffix to a
// quarter of the room and the prefix to the rest (what the suffix leaves
// goes to the prefix, and the other way), the prefix losing tokens from its
// start and the suffix from its end, so the text nearest the insertion
// stays. It reports whether it trimmed; a limit below the sentinels' count
// leaves no text.
func (f FIM) PromptWithin(t *Tokenizer, prefix, suffix string, addBOS bool, limit int) ([]int, bool) {
	pre := t.appendPlain(nil, prefix, true)
	suf := t.appendPlain(nil, suffix, !f.SuffixFirst)
	fixed := 2
	if f.Mid >= 0 {
		fixed++
	}
	bos := addBOS && t.BOS >= 0
	if bos {
		fixed++
	}
	trimmed := false
	if room := limit - fixed; limit > 0 && len(pre)+len(suf) > room {
		room = max(room, 0)
		nSuf := min(len(suf), room/4)
		nPre := min(len(pre), room-nSuf)
		nSuf = min(len(suf), room-nPre)
		pre, suf, trimmed = pre[len(pre)-nPre:], suf[:nSuf], true
	}
	out := make([]int, 0, fixed+len(pre)+len(suf))
	if bos {
		out = append(out, int(t.BOS))
	}
	if f.SuffixFirst {
		out = append(append(out, f.Suf), suf...)
		return append(append(out, f.Pre), pre...), trimmed
	}
	out = append(append(out, f.Pre), pre...)
	out = append(append(out, f.Suf), suf...)
	return append(out, f.Mid), trimmed
}

// appendPlain appends the ids of text with no added token matched in it,
// as one segment that starts the text (atStart) or follows a token: what
// Encode gives for text without added tokens' spellings.
func (t *Tokenizer) appendPlain(out []int, text string, atStart bool) []int {
	t.prepare()
	if text == "" {
		return out
	}
	if t.pipe != nil {
		return t.encodePieces(t.pipe.normalize(text), atStart, out)
	}
	return t.encodeSegment(text, atStart, out)
}
