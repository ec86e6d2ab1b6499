package mlt

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrUnsupported is matched (errors.Is) by FromHF's refusals: tokenizer.json
// files whose behaviour no .mlt kind and flags reproduce exactly.
var ErrUnsupported = errors.New("tokenizer cannot be represented exactly as .mlt")

// The pre-tokenizer regexes an .mlt can express, exactly as tokenizer.json spells them.
const (
	regexLlama3 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	regexQwen2  = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	regexQwen35 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	regexGPT2   = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
)

// hfComp is any tokenizer.json component (normalizer, pre-tokenizer,
// post-processor, decoder); only the fields the supported types use are read.
type hfComp struct {
	Type          string    `json:"type,omitempty"`
	Normalizers   []*hfComp `json:"normalizers,omitempty"`
	Pretokenizers []*hfComp `json:"pretokenizers,omitempty"`
	Decoders      []*hfComp `json:"decoders,omitempty"`
	Processors    []*hfComp `json:"processors,omitempty"`

	Prepend *string `json:"prepend,omitempty"`
	Pattern *struct {
		String *string `json:"String,omitempty"`
		Regex  *string `json:"Regex,omitempty"`
	} `json:"pattern,omitempty"`
	Content  *string `json:"content,omitempty"`
	Behavior string  `json:"behavior,omitempty"`
	Invert   bool    `json:"invert,omitempty"`

	AddPrefixSpace   *bool   `json:"add_prefix_space,omitempty"`
	UseRegex         *bool   `json:"use_regex,omitempty"`
	IndividualDigits *bool   `json:"individual_digits,omitempty"`
	Replacement      *string `json:"replacement,omitempty"`
	PrependScheme    *string `json:"prepend_scheme,omitempty"`
	Split            *bool   `json:"split,omitempty"`
	Start            *int    `json:"start,omitempty"`
	Stop             *int    `json:"stop,omitempty"`
	StripLeft        *bool   `json:"strip_left,omitempty"`
	StripRight       *bool   `json:"strip_right,omitempty"`
	Delimiter        *string `json:"delimiter,omitempty"`

	Single        []map[string]struct{ ID string } `json:"single,omitempty"`
	Pair          []map[string]struct{ ID string } `json:"pair,omitempty"`
	SpecialTokens map[string]struct {
		IDs []int `json:"ids,omitempty"`
	} `json:"special_tokens,omitempty"`
}

type hfAdded struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

type hfFile struct {
	AddedTokens   []hfAdded `json:"added_tokens"`
	Normalizer    *hfComp   `json:"normalizer"`
	PreTokenizer  *hfComp   `json:"pre_tokenizer"`
	PostProcessor *hfComp   `json:"post_processor"`
	Decoder       *hfComp   `json:"decoder"`
	Model         struct {
		Type                    *string         `json:"type"`
		Dropout                 *float64        `json:"dropout"`
		ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
		EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
		ByteFallback            bool            `json:"byte_fallback"`
		UnkToken                *string         `json:"unk_token"`
		FuseUnk                 bool            `json:"fuse_unk"`
		IgnoreMerges            bool            `json:"ignore_merges"`
		Vocab                   map[string]int  `json:"vocab"`
		Merges                  json.RawMessage `json:"merges"`
	} `json:"model"`
}

// hfConfig is the part of tokenizer_config.json that matters here.
type hfConfig struct {
	AddBOSToken *bool           `json:"add_bos_token"`
	BOSToken    json.RawMessage `json:"bos_token"`
	EOSToken    json.RawMessage `json:"eos_token"`
}

// tokenName reads a tokenizer_config token: a string or {"content": ...}.
func tokenName(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct{ Content string }
	if json.Unmarshal(raw, &o) == nil {
		return o.Content
	}
	return ""
}

// FromHF builds a Tokenizer from a Hugging Face tokenizer.json, or from a
// folder holding one; tokenizer_config.json beside it is read too, when
// present, for add_bos_token and the BOS and EOS names. Anything the .mlt
// kinds and flags cannot reproduce exactly is refused with an error that
// matches ErrUnsupported and names the part.
func FromHF(path string) (*Tokenizer, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("mlt: %w", err)
	}
	if st.IsDir() {
		path = filepath.Join(path, "tokenizer.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mlt: %w", err)
	}
	// Other models lay out their vocab differently (Unigram: a list of
	// pairs), so the model type is read and refused by name first.
	var head struct {
		Model struct {
			Type *string `json:"type"`
		} `json:"model"`
	}
	if err := json.Unmarshal(data, &head); err == nil && head.Model.Type != nil && *head.Model.Type != "BPE" {
		return nil, fmt.Errorf("mlt: %s: %w", path, unsupported("model type %q (only BPE)", *head.Model.Type))
	}
	var f hfFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("mlt: %s: invalid JSON: %w", path, err)
	}
	var cfg hfConfig
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(path), "tokenizer_config.json")); err == nil {
		if err := json.Unmarshal(b, &cfg); err != nil {
			return nil, fmt.Errorf("mlt: %s: invalid JSON: %w", filepath.Join(filepath.Dir(path), "tokenizer_config.json"), err)
		}
	}
	t, err := fromHF(&f, &cfg)
	if err != nil {
		return nil, fmt.Errorf("mlt: %s: %w", path, err)
	}
	return t, nil
}

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}

func describe(c *hfComp) string {
	if c == nil {
		return "none"
	}
	b, _ := json.Marshal(c)
	s := string(b)
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return c.Type + " " + s
}

// flatten returns a component as a list: a Sequence's members (recursively),
// or the component alone.
func flatten(c *hfComp) []*hfComp {
	if c == nil {
		return nil
	}
	if c.Type == "Sequence" {
		var out []*hfComp
		for _, l := range [][]*hfComp{c.Normalizers, c.Pretokenizers, c.Decoders, c.Processors} {
			for _, m := range l {
				out = append(out, flatten(m)...)
			}
		}
		return out
	}
	return []*hfComp{c}
}

func isStr(p *string, want string) bool { return p != nil && *p == want }

func isReplace(c *hfComp, from, to string) bool {
	return c.Type == "Replace" && c.Pattern != nil && isStr(c.Pattern.String, from) && c.Pattern.Regex == nil && isStr(c.Content, to)
}

func fromHF(f *hfFile, cfg *hfConfig) (*Tokenizer, error) {
	if err := checkModel(f); err != nil {
		return nil, err
	}
	// A tokenizer the SPEC.md flags describe exactly is written as before;
	// anything else gets a pipeline section.
	if t, err := fromHFFlags(f, cfg); err == nil {
		return t, nil
	}
	return fromHFPipeline(f, cfg)
}

// checkModel refuses the models no .mlt reproduces: anything but BPE, and BPE
// with dropout or word prefixes and suffixes.
func checkModel(f *hfFile) error {
	m := &f.Model
	if m.Type != nil && *m.Type != "BPE" {
		return unsupported("model type %q (only BPE)", *m.Type)
	}
	if m.Vocab == nil {
		return unsupported("model has no vocab (only BPE models)")
	}
	if m.Dropout != nil && *m.Dropout != 0 {
		return unsupported("model dropout %v makes encoding random", *m.Dropout)
	}
	if m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "" {
		return unsupported("model continuing_subword_prefix %q", *m.ContinuingSubwordPrefix)
	}
	if m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "" {
		return unsupported("model end_of_word_suffix %q", *m.EndOfWordSuffix)
	}
	return nil
}

// hasByteLevel reports whether the pre-tokenizer holds a ByteLevel step (kind 2).
func hasByteLevel(f *hfFile) bool {
	for _, p := range flatten(f.PreTokenizer) {
		if p.Type == "ByteLevel" {
			return true
		}
	}
	return false
}

// fromHFFlags maps a tokenizer.json onto a kind and the SPEC.md flags.
func fromHFFlags(f *hfFile, cfg *hfConfig) (*Tokenizer, error) {
	t := &Tokenizer{BOS: -1, EOS: -1}
	if f.Model.IgnoreMerges {
		t.Flags |= FlagIgnoreMerges
	}
	var err error
	if hasByteLevel(f) {
		t.Kind = KindByteLevel
		err = mapByteLevel(f, t)
	} else {
		t.Kind = KindSentencePiece
		err = mapSentencePiece(f, t)
	}
	if err != nil {
		return nil, err
	}
	if err := checkAddedTokens(f); err != nil {
		return nil, err
	}
	return finishHF(f, cfg, t)
}

// finishHF fills the vocabulary, merges and post-processor and validates.
func finishHF(f *hfFile, cfg *hfConfig, t *Tokenizer) (*Tokenizer, error) {
	if err := buildVocab(f, t); err != nil {
		return nil, err
	}
	if err := mapPostProcessor(f, cfg, t); err != nil {
		return nil, err
	}
	if t.Pipeline != nil {
		if err := mapPipelineTokens(f, t); err != nil {
			return nil, err
		}
	}
	if err := t.Validate(); err != nil {
		return nil, unsupported("%s", strings.TrimPrefix(err.Error(), "mlt: "))
	}
	return t, nil
}

// fromHFPipeline maps a tokenizer.json onto a kind and a pipeline section.
func fromHFPipeline(f *hfFile, cfg *hfConfig) (*Tokenizer, error) {
	t := &Tokenizer{BOS: -1, EOS: -1, Flags: FlagPipeline, Pipeline: &Pipeline{Unk: -1}}
	if f.Model.IgnoreMerges {
		t.Flags |= FlagIgnoreMerges
	}
	t.Kind = KindSentencePiece
	if hasByteLevel(f) {
		t.Kind = KindByteLevel
	}
	pl := t.Pipeline
	for _, n := range flatten(f.Normalizer) {
		s, err := hfNormalizer(n)
		if err != nil {
			return nil, err
		}
		pl.Normalizers = append(pl.Normalizers, s...)
	}
	for _, p := range flatten(f.PreTokenizer) {
		s, err := hfPreTokenizer(p)
		if err != nil {
			return nil, err
		}
		pl.PreTokenizers = append(pl.PreTokenizers, s...)
	}
	if t.Kind == KindByteLevel {
		if pl.PreTokenizers[len(pl.PreTokenizers)-1].Op != OpByteLevel {
			return nil, unsupported("pre_tokenizer %s: a step after ByteLevel would see the byte alphabet", describe(f.PreTokenizer))
		}
		if f.Decoder == nil || f.Decoder.Type != "ByteLevel" {
			return nil, unsupported("decoder %s (a byte-level tokenizer needs ByteLevel)", describe(f.Decoder))
		}
	} else {
		strip, bytes, err := hfKind1Decoder(f.Decoder)
		if err != nil {
			return nil, err
		}
		pl.DecodeStrip, pl.DecodeBytes = strip, bytes
		pl.FuseUnk = f.Model.FuseUnk
	}
	for _, a := range f.AddedTokens {
		if a.Content == "" {
			return nil, unsupported("added token id %d is empty", a.ID)
		}
	}
	return finishHF(f, cfg, t)
}

// hfNormalizer maps one normalizer (not a Sequence).
func hfNormalizer(n *hfComp) ([]Step, error) {
	switch n.Type {
	case "NFC":
		return []Step{{Op: OpNFC}}, nil
	case "NFD":
		return []Step{{Op: OpNFD}}, nil
	case "NFKC":
		return []Step{{Op: OpNFKC}}, nil
	case "NFKD":
		return []Step{{Op: OpNFKD}}, nil
	case "Lowercase":
		return []Step{{Op: OpLowercase}}, nil
	case "StripAccents":
		return []Step{{Op: OpStripAccents}}, nil
	case "Prepend":
		if n.Prepend == nil {
			return nil, unsupported("normalizer Prepend without prepend")
		}
		return []Step{{Op: OpPrepend, Pattern: *n.Prepend}}, nil
	case "Strip":
		return []Step{{Op: OpStrip, Left: n.StripLeft == nil || *n.StripLeft, Right: n.StripRight == nil || *n.StripRight}}, nil
	case "Replace":
		pat, regex, err := hfPattern(n)
		if err != nil {
			return nil, err
		}
		if n.Content == nil {
			return nil, unsupported("normalizer Replace without content")
		}
		return []Step{{Op: OpReplace, Pattern: pat, Regex: regex, Content: *n.Content}}, nil
	}
	return nil, unsupported("normalizer %s", describe(n))
}

// hfPattern reads a Split or Replace pattern: {"String": s} or {"Regex": r}.
func hfPattern(c *hfComp) (string, bool, error) {
	switch {
	case c.Pattern != nil && c.Pattern.String != nil && c.Pattern.Regex == nil:
		return *c.Pattern.String, false, nil
	case c.Pattern != nil && c.Pattern.Regex != nil && c.Pattern.String == nil:
		if _, err := compileOniguruma(*c.Pattern.Regex); err != nil {
			return "", false, unsupported("%s: %v", c.Type, err)
		}
		return *c.Pattern.Regex, true, nil
	}
	return "", false, unsupported("%s pattern %s (want one of String and Regex)", c.Type, describe(c))
}

func hfBehavior(c *hfComp, def Behavior) (Behavior, error) {
	if c.Behavior == "" {
		return def, nil
	}
	for i, n := range behaviorNames {
		if n == c.Behavior {
			return Behavior(i), nil
		}
	}
	return 0, unsupported("%s behavior %q", c.Type, c.Behavior)
}

// hfPreTokenizer maps one pre-tokenizer (not a Sequence).
func hfPreTokenizer(p *hfComp) ([]Step, error) {
	switch p.Type {
	case "Split":
		pat, regex, err := hfPattern(p)
		if err != nil {
			return nil, err
		}
		b, err := hfBehavior(p, Isolated)
		if err != nil {
			return nil, err
		}
		return []Step{{Op: OpSplit, Pattern: pat, Regex: regex, Behavior: b, Invert: p.Invert}}, nil
	case "Digits":
		return []Step{{Op: OpDigits, Individual: p.IndividualDigits != nil && *p.IndividualDigits}}, nil
	case "ByteLevel":
		// Both default to true in the tokenizers library.
		return []Step{{Op: OpByteLevel, AddPrefixSpace: p.AddPrefixSpace == nil || *p.AddPrefixSpace,
			UseRegex: p.UseRegex == nil || *p.UseRegex}}, nil
	case "Metaspace":
		s := Step{Op: OpMetaspace, Pattern: "▁", Prepend: PrependAlways, SplitWords: p.Split == nil || *p.Split}
		if p.Replacement != nil {
			s.Pattern = *p.Replacement
		}
		switch {
		case p.PrependScheme == nil:
			// Files from before prepend_scheme say add_prefix_space.
			if p.AddPrefixSpace != nil && !*p.AddPrefixSpace {
				s.Prepend = PrependNever
			}
		case *p.PrependScheme == "always":
		case *p.PrependScheme == "first":
			s.Prepend = PrependFirst
		case *p.PrependScheme == "never":
			s.Prepend = PrependNever
		default:
			return nil, unsupported("pre_tokenizer Metaspace prepend_scheme %q", *p.PrependScheme)
		}
		return []Step{s}, nil
	case "Punctuation":
		b, err := hfBehavior(p, Isolated)
		if err != nil {
			return nil, err
		}
		return []Step{{Op: OpPunctuation, Behavior: b}}, nil
	case "Whitespace":
		return []Step{{Op: OpWhitespace}}, nil
	case "WhitespaceSplit":
		return []Step{{Op: OpWhitespaceSplit}}, nil
	case "BertPreTokenizer":
		// Whitespace removed, then punctuation isolated.
		return []Step{{Op: OpWhitespaceSplit}, {Op: OpPunctuation, Behavior: Isolated}}, nil
	case "CharDelimiterSplit":
		if p.Delimiter == nil {
			return nil, unsupported("pre_tokenizer CharDelimiterSplit without delimiter")
		}
		return []Step{{Op: OpSplit, Pattern: *p.Delimiter, Behavior: Removed}}, nil
	}
	return nil, unsupported("pre_tokenizer %s", describe(p))
}

// hfKind1Decoder maps a kind 1 decoder: Sequence[Replace(▁→' '), ByteFallback,
// Fuse] with an optional Strip(' ', 1, 0), or a Metaspace(▁) decoder, alone or
// after ByteFallback (and Fuse). It returns the strip count and whether byte
// tokens decode to bytes.
func hfKind1Decoder(d *hfComp) (strip uint8, bytes bool, err error) {
	dec := flatten(d)
	if n := len(dec); n > 0 && dec[n-1].Type == "Metaspace" {
		m := dec[n-1]
		ok := isStr(m.Replacement, "▁") || m.Replacement == nil
		switch n {
		case 1:
		case 2:
			ok = ok && dec[0].Type == "ByteFallback"
		case 3:
			ok = ok && dec[0].Type == "ByteFallback" && dec[1].Type == "Fuse"
		default:
			ok = false
		}
		if ok {
			// The first token loses its leading space unless the scheme is
			// never (older files: add_prefix_space).
			strip := uint8(1)
			if isStr(m.PrependScheme, "never") || m.PrependScheme == nil && m.AddPrefixSpace != nil && !*m.AddPrefixSpace {
				strip = 0
			}
			return strip, n > 1, nil
		}
	}
	ok := len(dec) == 3 || len(dec) == 4
	for i := 0; ok && i < len(dec); i++ {
		c := dec[i]
		switch i {
		case 0:
			ok = isReplace(c, "▁", " ")
		case 1:
			ok = c.Type == "ByteFallback"
		case 2:
			ok = c.Type == "Fuse"
		case 3:
			ok = c.Type == "Strip" && isStr(c.Content, " ") && c.Start != nil && *c.Start == 1 && (c.Stop == nil || *c.Stop == 0)
		}
	}
	if !ok {
		return 0, false, unsupported("decoder %s (kind 1 decodes as Sequence[Replace(▁→' '), ByteFallback, Fuse] with an optional Strip(' ', 1, 0), or as Metaspace(▁) alone or after ByteFallback)", describe(d))
	}
	return uint8(len(dec) - 3), true, nil
}

// mapPipelineTokens sets the pipeline's unk and the added tokens' options.
func mapPipelineTokens(f *hfFile, t *Tokenizer) error {
	pl := t.Pipeline
	if u := f.Model.UnkToken; u != nil && t.Kind == KindSentencePiece {
		id, ok := f.Model.Vocab[*u]
		if !ok {
			return unsupported("model unk_token %q is not in the vocab", *u)
		}
		pl.Unk = int32(id)
	}
	opts := map[int]AddedOptions{}
	for _, a := range f.AddedTokens {
		var o AddedOptions
		for _, b := range []struct {
			on  bool
			bit AddedOptions
		}{{a.LStrip, AddedLStrip}, {a.RStrip, AddedRStrip}, {a.SingleWord, AddedSingleWord}, {a.Normalized, AddedNormalized}, {a.Special, AddedSpecial}} {
			if b.on {
				o |= b.bit
			}
		}
		opts[a.ID] = o
	}
	pl.Added = pl.Added[:0]
	for id, tok := range t.Tokens {
		if tok.Attr == AttrAdded {
			pl.Added = append(pl.Added, opts[id])
		}
	}
	return nil
}

// mapSentencePiece maps normalizer, pre-tokenizer and decoder onto kind 1.
func mapSentencePiece(f *hfFile, t *Tokenizer) error {
	if !f.Model.ByteFallback {
		return unsupported("model: a BPE without byte_fallback and without a ByteLevel pre-tokenizer (kind 1 needs byte fallback)")
	}
	norm := flatten(f.Normalizer)
	pre := flatten(f.PreTokenizer)
	prepend, replace := false, false
	for _, n := range norm {
		switch {
		case n.Type == "Prepend" && isStr(n.Prepend, "▁") && !prepend:
			prepend = true
		case isReplace(n, " ", "▁") && !replace:
			replace = true
		default:
			return unsupported("normalizer %s (kind 1 supports Prepend(▁) and Replace(' '→▁))", describe(n))
		}
	}
	switch {
	case len(norm) == 0:
		// Non-legacy: Metaspace does the replacing and the prefix.
		if len(pre) != 1 || pre[0].Type != "Metaspace" {
			return unsupported("pre_tokenizer %s (with no normalizer kind 1 needs Metaspace)", describe(f.PreTokenizer))
		}
		p := pre[0]
		if !isStr(p.Replacement, "▁") {
			return unsupported("pre_tokenizer Metaspace with replacement other than ▁")
		}
		if p.Split == nil || *p.Split {
			return unsupported("pre_tokenizer Metaspace with split true (words split at ▁)")
		}
		switch {
		case isStr(p.PrependScheme, "first"):
			t.Flags |= FlagPrefixOnce
		case isStr(p.PrependScheme, "never"):
			t.Flags |= FlagNoPrefix
		default:
			// "always" prepends ▁ unless the segment already starts with one,
			// which neither the legacy rule nor flag 4 reproduces.
			return unsupported("pre_tokenizer Metaspace prepend_scheme %v", p.PrependScheme)
		}
	case replace && prepend:
		if len(pre) != 0 {
			return unsupported("pre_tokenizer %s after the Prepend/Replace normalizer", describe(f.PreTokenizer))
		}
	case replace:
		t.Flags |= FlagNoPrefix
		// Gemma's Split on " " finds nothing once every space is ▁.
		for _, p := range pre {
			if !(p.Type == "Split" && p.Pattern != nil && isStr(p.Pattern.String, " ") && p.Pattern.Regex == nil && !p.Invert) {
				return unsupported("pre_tokenizer %s", describe(p))
			}
		}
	default:
		return unsupported("normalizer %s (Prepend(▁) without Replace(' '→▁))", describe(f.Normalizer))
	}
	// Decoder: Replace(▁→' '), ByteFallback, Fuse, and Strip(' ', 1, 0)
	// exactly when a prefix is added.
	dec := flatten(f.Decoder)
	want := []string{"Replace", "ByteFallback", "Fuse"}
	strip := t.Flags&FlagNoPrefix == 0
	if strip {
		want = append(want, "Strip")
	}
	ok := len(dec) == len(want)
	for i := 0; ok && i < len(dec); i++ {
		d := dec[i]
		switch want[i] {
		case "Replace":
			ok = isReplace(d, "▁", " ")
		case "Strip":
			ok = d.Type == "Strip" && isStr(d.Content, " ") && d.Start != nil && *d.Start == 1 && (d.Stop == nil || *d.Stop == 0)
		default:
			ok = d.Type == want[i]
		}
	}
	if !ok {
		return unsupported("decoder %s (kind 1 with these flags decodes as Sequence[%s])", describe(f.Decoder), strings.Join(want, ", "))
	}
	return nil
}

// mapByteLevel maps normalizer, pre-tokenizer and decoder onto kind 2.
func mapByteLevel(f *hfFile, t *Tokenizer) error {
	for _, n := range flatten(f.Normalizer) {
		if n.Type == "NFC" {
			t.Flags |= FlagNFC
			continue
		}
		return unsupported("normalizer %s (kind 2 supports only NFC)", describe(n))
	}
	pre := flatten(f.PreTokenizer)
	if len(pre) > 0 && pre[0].Type == "Digits" {
		if pre[0].IndividualDigits == nil || !*pre[0].IndividualDigits {
			return unsupported("pre_tokenizer Digits without individual_digits")
		}
		t.Flags |= FlagSplitDigits
		pre = pre[1:]
	}
	bl := pre[len(pre)-1] // the flattened list holds a ByteLevel
	if bl.Type != "ByteLevel" {
		return unsupported("pre_tokenizer %s after ByteLevel", describe(bl))
	}
	if bl.AddPrefixSpace != nil && *bl.AddPrefixSpace {
		return unsupported("pre_tokenizer ByteLevel with add_prefix_space true")
	}
	useRegex := bl.UseRegex == nil || *bl.UseRegex
	switch {
	case len(pre) == 1 && useRegex:
		t.Flags |= FlagGPT2Regex
	case len(pre) == 2 && !useRegex:
		s := pre[0]
		if s.Type != "Split" || s.Pattern == nil || s.Pattern.Regex == nil || s.Behavior != "Isolated" || s.Invert {
			return unsupported("pre_tokenizer %s (kind 2 needs Split(regex, Isolated))", describe(s))
		}
		switch *s.Pattern.Regex {
		case regexLlama3:
		case regexQwen2:
			t.Flags |= FlagSingleDigits
		case regexQwen35:
			t.Flags |= FlagSingleDigits | FlagQwen35Regex
		case regexGPT2:
			t.Flags |= FlagGPT2Regex
		default:
			return unsupported("pre_tokenizer Split regex %q (supported: the Llama 3, Qwen 2, Qwen 3.5 and GPT-2 regexes)", *s.Pattern.Regex)
		}
	default:
		return unsupported("pre_tokenizer %s (kind 2 needs ByteLevel(use_regex), or one Split(regex) then ByteLevel(use_regex false), optionally after Digits)", describe(f.PreTokenizer))
	}
	if f.Decoder == nil || f.Decoder.Type != "ByteLevel" {
		return unsupported("decoder %s (kind 2 needs ByteLevel)", describe(f.Decoder))
	}
	return nil
}

func checkAddedTokens(f *hfFile) error {
	var norm, raw []string
	for _, a := range f.AddedTokens {
		if a.SingleWord || a.LStrip || a.RStrip {
			return unsupported("added token %q (id %d) has single_word, lstrip or rstrip", a.Content, a.ID)
		}
		if a.Content == "" {
			return unsupported("added token id %d is empty", a.ID)
		}
		if a.Normalized {
			// Normalized added tokens are matched in the normalized text.
			if f.Normalizer != nil && len(flatten(f.Normalizer)) > 0 {
				return unsupported("added token %q (id %d) is matched after the normalizer %s", a.Content, a.ID, f.Normalizer.Type)
			}
			norm = append(norm, a.Content)
		} else {
			raw = append(raw, a.Content)
		}
	}
	// The tokenizers library extracts the raw-text tokens first, then the
	// normalized ones; one leftmost-longest pass gives the same result unless
	// a token of one group can overlap one of the other.
	for _, a := range norm {
		for _, b := range raw {
			if overlaps(a, b) || overlaps(b, a) {
				return unsupported("added tokens %q (normalized) and %q (not normalized) can overlap", a, b)
			}
		}
	}
	return nil
}

// overlaps reports whether a proper suffix of a (or all of a) can be a prefix of b,
// or either contains the other.
func overlaps(a, b string) bool {
	if strings.Contains(a, b) || strings.Contains(b, a) {
		return true
	}
	for i := 1; i < len(a); i++ {
		if strings.HasPrefix(b, a[i:]) {
			return true
		}
	}
	return false
}

// byteLevelDecode maps a piece written with GPT-2's printable characters back
// to the bytes it stands for; ok is false when a character is not in the map.
func byteLevelDecode(s string) (b []byte, ok bool) {
	b = make([]byte, 0, len(s))
	for _, r := range s {
		c, ok := unicodeToByte(r)
		if !ok {
			return nil, false
		}
		b = append(b, c)
	}
	return b, true
}

// byteToUnicode is GPT-2's bytes_to_unicode: printable Latin-1 bytes stand
// for themselves, the other 68 take the code points from U+0100 in order.
var byteToUnicode = func() (m [256]rune) {
	n := 0
	for b := range 256 {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			m[b] = rune(b)
		} else {
			m[b] = rune(256 + n)
			n++
		}
	}
	return m
}()

// unicodeByte inverts byteToUnicode: index rune, value byte+1 (0 = not in the map).
var unicodeByte = func() (m [0x144]uint16) {
	for b, r := range byteToUnicode {
		m[r] = uint16(b) + 1
	}
	return m
}()

func unicodeToByte(r rune) (byte, bool) {
	if r < 0 || int(r) >= len(unicodeByte) || unicodeByte[r] == 0 {
		return 0, false
	}
	return byte(unicodeByte[r] - 1), true
}

// maxGaps is how many ids without a token a pipeline file may have.
const maxGaps = 4096

// buildVocab fills t.Tokens from the model vocab and the added tokens, and
// t.Merges from the merges.
func buildVocab(f *hfFile, t *Tokenizer) error {
	m := &f.Model
	n := 0
	for p, id := range m.Vocab {
		if id < 0 || id >= MaxVocab {
			return unsupported("vocab entry %q has id %d outside 0..%d", p, id, MaxVocab-1)
		}
		n = max(n, id+1)
	}
	for _, a := range f.AddedTokens {
		if a.ID < 0 || a.ID >= MaxVocab {
			return unsupported("added token %q has id %d outside 0..%d", a.Content, a.ID, MaxVocab-1)
		}
		n = max(n, a.ID+1)
	}
	// A pipeline file may leave a few ids without a token (AttrNone).
	gaps := 0
	if t.Pipeline != nil {
		gaps = maxGaps
	}
	if entries := len(m.Vocab) + len(f.AddedTokens); n > entries+gaps {
		// Fewer entries than ids leaves a gap. Find the first one in a table
		// sized by the entries, not by the highest id, so that a small file
		// naming id 2^24-1 cannot cost a gigabyte of tokens.
		have := make([]bool, entries+1)
		for _, id := range m.Vocab {
			if id <= entries {
				have[id] = true
			}
		}
		for _, a := range f.AddedTokens {
			if a.ID <= entries {
				have[a.ID] = true
			}
		}
		return unsupported("no token has id %d (ids must run from 0 to %d without gaps)", slices.Index(have, false), n-1)
	}
	addedAt := make(map[int]string, len(f.AddedTokens))
	for _, a := range f.AddedTokens {
		addedAt[a.ID] = a.Content
	}
	t.Tokens = make([]Token, n)
	filled := make([]bool, n)
	pieces := make([]string, n) // the vocab piece of each id, for the merges
	for p, id := range m.Vocab {
		if filled[id] {
			return unsupported("vocab entries %q and %q share id %d", pieces[id], p, id)
		}
		filled[id] = true
		pieces[id] = p
		tok := Token{Attr: AttrNormal}
		if t.Kind == KindByteLevel {
			b, ok := byteLevelDecode(p)
			if !ok && addedAt[id] == p {
				continue // the added token of that id takes the place
			}
			if !ok {
				return unsupported("vocab entry %q (id %d) is not written in the byte-level alphabet", p, id)
			}
			tok.Bytes = b
		} else if len(p) == 6 && strings.HasPrefix(p, "<0x") && p[5] == '>' && m.ByteFallback {
			var c byte
			if _, err := fmt.Sscanf(p[3:5], "%02X", &c); err == nil && fmt.Sprintf("<0x%02X>", c) == p {
				tok = Token{Attr: AttrByte, Bytes: []byte{c}}
			} else {
				tok.Bytes = []byte(p)
			}
		} else {
			tok.Bytes = []byte(p)
		}
		t.Tokens[id] = tok
	}
	for _, a := range f.AddedTokens {
		if filled[a.ID] {
			if t.Tokens[a.ID].Attr == AttrNormal && string(t.Tokens[a.ID].Bytes) != a.Content &&
				pieces[a.ID] != a.Content {
				return unsupported("added token %q has id %d, which the vocab gives to %q", a.Content, a.ID, pieces[a.ID])
			}
			if t.Tokens[a.ID].Attr == AttrByte {
				return unsupported("added token %q has the id %d of a byte token", a.Content, a.ID)
			}
		}
		if t.Kind == KindByteLevel {
			// The ByteLevel decoder maps a token through the byte alphabet when
			// every character is in it, so such a token decodes to other bytes
			// than its text unless the mapping is the identity.
			if b, ok := byteLevelDecode(a.Content); ok && string(b) != a.Content {
				return unsupported("added token %q (id %d) decodes to %q through the ByteLevel decoder", a.Content, a.ID, b)
			}
		}
		filled[a.ID] = true
		t.Tokens[a.ID] = Token{Attr: AttrAdded, Bytes: []byte(a.Content)}
	}
	for id, ok := range filled {
		if !ok && gaps == 0 {
			return unsupported("no token has id %d (ids must run from 0 to %d without gaps)", id, n-1)
		}
		if !ok {
			gaps--
			t.Tokens[id] = Token{Attr: AttrNone}
		}
	}

	// Merges: ["a b", ...] or [["a", "b"], ...].
	var pairs [][2]string
	if len(m.Merges) > 0 && string(m.Merges) != "null" {
		var strs []string
		if err := json.Unmarshal(m.Merges, &strs); err == nil {
			pairs = make([][2]string, len(strs))
			for i, s := range strs {
				l, r, ok := strings.Cut(s, " ")
				if !ok || strings.Contains(r, " ") {
					return unsupported("merge %d %q is not two pieces separated by one space", i, s)
				}
				pairs[i] = [2]string{l, r}
			}
		} else {
			var lists [][]string
			if err := json.Unmarshal(m.Merges, &lists); err != nil {
				return unsupported("model merges are neither strings nor pairs: %v", err)
			}
			pairs = make([][2]string, len(lists))
			for i, l := range lists {
				if len(l) != 2 {
					return unsupported("merge %d has %d pieces, want 2", i, len(l))
				}
				pairs[i] = [2]string{l[0], l[1]}
			}
		}
	}
	t.Merges = make([][3]uint32, len(pairs))
	for i, p := range pairs {
		l, okl := m.Vocab[p[0]]
		r, okr := m.Vocab[p[1]]
		mg, okm := m.Vocab[p[0]+p[1]]
		if !okl || !okr || !okm {
			missing := p[0]
			if okl {
				missing = p[1]
			}
			if okl && okr {
				missing = p[0] + p[1]
			}
			return unsupported("merge %d (%q, %q) names %q, which is not in the vocab", i, p[0], p[1], missing)
		}
		t.Merges[i] = [3]uint32{uint32(l), uint32(r), uint32(mg)}
	}
	return nil
}

// mapPostProcessor sets BOS, EOS and the add-BOS flag, or the
// post-processor section when the flags cannot say what the template adds.
func mapPostProcessor(f *hfFile, cfg *hfConfig, t *Tokenizer) error {
	var tp *hfComp
	for _, p := range flatten(f.PostProcessor) {
		switch p.Type {
		case "ByteLevel":
			// Only adjusts offsets.
		case "TemplateProcessing":
			if tp != nil {
				return unsupported("post_processor has two TemplateProcessing steps")
			}
			tp = p
		default:
			return unsupported("post_processor %s", describe(p))
		}
	}
	if tp != nil {
		post, err := mapTemplate(tp)
		if err != nil {
			return err
		}
		switch {
		case isTemplate(post.Single, PostSeqA) && isTemplate(post.Pair, PostSeqA, PostSeqB):
			// Adds nothing.
		case isTemplate(post.Single, PostSpecial, PostSeqA) && len(post.Single[0].IDs) == 1 &&
			isTemplate(post.Pair, PostSpecial, PostSeqA, PostSpecial, PostSeqB) &&
			slices.Equal(post.Pair[0].IDs, post.Single[0].IDs) && slices.Equal(post.Pair[2].IDs, post.Single[0].IDs):
			// BOS before each text: flag 1, as files were written before
			// the section existed.
			t.BOS = post.Single[0].IDs[0]
			t.Flags |= FlagAddBOS
		default:
			t.SetPost(post)
		}
	}
	ids := map[string]int{}
	for id, tok := range t.Tokens {
		if tok.Attr == AttrAdded {
			ids[string(tok.Bytes)] = id
		}
	}
	if t.BOS < 0 {
		if id, ok := ids[tokenName(cfg.BOSToken)]; ok {
			t.BOS = int32(id)
		}
	}
	if cfg.AddBOSToken != nil && *cfg.AddBOSToken && t.Flags&FlagAddBOS == 0 {
		if t.Post != nil {
			if it := t.Post.Single[0]; it.Seq != PostSpecial || len(it.IDs) != 1 || it.IDs[0] != t.BOS {
				return unsupported("tokenizer_config.json add_bos_token is true but the post_processor template does not start with bos_token %q", tokenName(cfg.BOSToken))
			}
			return nil
		}
		if t.BOS < 0 {
			return unsupported("tokenizer_config.json add_bos_token is true but bos_token %q is not an added token", tokenName(cfg.BOSToken))
		}
		t.Flags |= FlagAddBOS
	}
	if id, ok := ids[tokenName(cfg.EOSToken)]; ok {
		t.EOS = int32(id)
	} else {
		for _, name := range []string{"</s>", "<|end_of_text|>", "<|endoftext|>", "<eos>", "<|im_end|>", "<|eot_id|>", "<end_of_turn>"} {
			if id, ok := ids[name]; ok {
				t.EOS = int32(id)
				break
			}
		}
	}
	return nil
}

// mapTemplate reads a TemplateProcessing's single and pair templates. The
// type ids are not kept: no architecture krafla runs has token-type
// embeddings.
func mapTemplate(p *hfComp) (*Post, error) {
	items := func(name string, tpl []map[string]struct{ ID string }) ([]PostItem, error) {
		out := make([]PostItem, 0, len(tpl))
		for _, item := range tpl {
			if s, ok := item["SpecialToken"]; ok && len(item) == 1 {
				st, ok := p.SpecialTokens[s.ID]
				if !ok || len(st.IDs) == 0 {
					return nil, unsupported("post_processor TemplateProcessing %s: special token %q has no ids in special_tokens", name, s.ID)
				}
				ids := make([]int32, len(st.IDs))
				for i, id := range st.IDs {
					ids[i] = int32(id)
				}
				out = append(out, PostItem{Seq: PostSpecial, IDs: ids})
			} else if s, ok := item["Sequence"]; ok && len(item) == 1 && (s.ID == "A" || s.ID == "B") {
				seq := uint8(PostSeqA)
				if s.ID == "B" {
					seq = PostSeqB
				}
				out = append(out, PostItem{Seq: seq})
			} else {
				return nil, unsupported("post_processor TemplateProcessing %s item %v", name, item)
			}
		}
		return out, nil
	}
	post := &Post{}
	var err error
	if post.Single, err = items("single", p.Single); err != nil {
		return nil, err
	}
	if p.Pair == nil {
		return nil, unsupported("post_processor TemplateProcessing has no pair template")
	}
	if post.Pair, err = items("pair", p.Pair); err != nil {
		return nil, err
	}
	if err := validatePost(post, math.MaxInt32, -1); err != nil {
		return nil, unsupported("post_processor TemplateProcessing: %s", strings.TrimPrefix(err.Error(), "mlt: post-processor section: "))
	}
	return post, nil
}

// isTemplate reports whether the items are of the kinds given, in order.
func isTemplate(items []PostItem, kinds ...uint8) bool {
	if len(items) != len(kinds) {
		return false
	}
	for i, it := range items {
		if it.Seq != kinds[i] {
			return false
		}
	}
	return true
}
