package mlt

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"
)

// Pipeline describes what the SPEC.md flags cannot: the normalizer and
// pre-tokenizer sequences of a Hugging Face tokenizer, the options of each
// added token, and the few model and decoder settings beyond them (flag 512;
// docs/FORMATS.md, "Pipeline section"). A tokenizer with a Pipeline sets none
// of the kind-specific flags (4, 8, 16, 32, 64, 128, 256): the pipeline says
// everything they would.
//
// Encoding with a Pipeline follows the tokenizers library step by step:
// added tokens that are not normalized are found in the raw text (with their
// options); each stretch between them is normalized; normalized added tokens
// are found in the result; each remaining piece runs through the
// pre-tokenizers, and each pre-token through the BPE model of the kind.
//
// A byte-level tokenizer (kind 2) whose text a regex cuts before the bytes are
// merged, as GGUF's gpt2 tokenizers are, is
//
//	p := &mlt.Pipeline{Unk: -1, PreTokenizers: []mlt.Step{
//		mlt.SplitRegex(re), {Op: mlt.OpByteLevel}}}
//	p.Added = make([]mlt.AddedOptions, nAddedTokens) // or the options each one has
//	t := &mlt.Tokenizer{Kind: mlt.KindByteLevel, Flags: mlt.FlagPipeline, Pipeline: p, ...}
//
// followed by t.Validate(), which also compiles the regexes.
type Pipeline struct {
	Normalizers   []Step // normalizer operations (Op below OpSplit), in order
	PreTokenizers []Step // pre-tokenizer operations (OpSplit and above), in order
	// Added holds the options of each added token (attr 1), in id order; its
	// length is the number of added tokens.
	Added []AddedOptions
	// Unk is, for kind 1, the id given to a character that has neither a
	// piece nor all of its byte-fallback tokens (-1: such a character is
	// dropped, as the tokenizers library does without an unk_token). Kind 2: -1.
	Unk int32
	// FuseUnk joins consecutive unknown characters of a pre-token into one Unk.
	FuseUnk bool
	// DecodeStrip is, for kind 1, how many leading spaces the decoder removes
	// from the whole text (the Strip decoder's start, or a Metaspace decoder
	// whose prepend_scheme is not never; 0 or 1). Kind 2: 0.
	DecodeStrip uint8
	// DecodeBytes is, for kind 1, whether byte tokens decode to their bytes
	// (a ByteFallback decoder); without it they decode to their text <0xXX>
	// (a Metaspace decoder alone). Kind 2: false.
	DecodeBytes bool
}

// AddedOptions are an added token's options, as tokenizer.json names them.
type AddedOptions uint8

const (
	AddedLStrip     AddedOptions = 1 << iota // the match takes the whitespace before it
	AddedRStrip                              // the match takes the whitespace after it
	AddedSingleWord                          // matched only where no word character touches it
	AddedNormalized                          // matched in the normalized text, with its normalized content
	AddedSpecial                             // a special token (skipped by decoders that skip specials)

	addedKnown = AddedLStrip | AddedRStrip | AddedSingleWord | AddedNormalized | AddedSpecial
)

// Op is one pipeline operation.
type Op uint8

// Normalizers (1..15) and pre-tokenizers (16..); the values are the section's op codes.
const (
	OpNFC          Op = 1 // Unicode NFC
	OpNFD          Op = 2 // Unicode NFD
	OpNFKC         Op = 3 // Unicode NFKC
	OpNFKD         Op = 4 // Unicode NFKD
	OpLowercase    Op = 5 // Rust's char::to_lowercase on every character
	OpReplace      Op = 6 // every match of Pattern (literal, or regex if Regex) becomes Content
	OpPrepend      Op = 7 // Pattern before non-empty text
	OpStrip        Op = 8 // whitespace removed at the start (Left) and the end (Right)
	OpStripAccents Op = 9 // characters of category Mn removed

	OpSplit           Op = 16 // matches of Pattern (literal, or regex if Regex) split by Behavior, Invert
	OpDigits          Op = 17 // \p{N} characters split off, each alone if Individual, else runs
	OpByteLevel       Op = 18 // a space before each piece if AddPrefixSpace; the GPT-2 regex if UseRegex
	OpMetaspace       Op = 19 // spaces become Pattern (one character), prefix by Prepend, split if SplitWords
	OpPunctuation     Op = 20 // punctuation characters split off by Behavior
	OpWhitespace      Op = 21 // the pieces matching \w+|[^\w\s]+, whitespace dropped
	OpWhitespaceSplit Op = 22 // split on whitespace, which is dropped

	opFirstPreTokenizer = OpSplit
)

var opNames = map[Op]string{
	OpNFC: "NFC", OpNFD: "NFD", OpNFKC: "NFKC", OpNFKD: "NFKD", OpLowercase: "Lowercase",
	OpReplace: "Replace", OpPrepend: "Prepend", OpStrip: "Strip", OpStripAccents: "StripAccents",
	OpSplit: "Split", OpDigits: "Digits", OpByteLevel: "ByteLevel", OpMetaspace: "Metaspace",
	OpPunctuation: "Punctuation", OpWhitespace: "Whitespace", OpWhitespaceSplit: "WhitespaceSplit",
}

func (o Op) String() string {
	if s, ok := opNames[o]; ok {
		return s
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Behavior is a Split's SplitDelimiterBehavior: what becomes of the matches.
type Behavior uint8

const (
	Removed            Behavior = 0 // matches dropped
	Isolated           Behavior = 1 // matches are pieces of their own
	MergedWithPrevious Behavior = 2 // a match joins the piece before it
	MergedWithNext     Behavior = 3 // a match joins the piece after it
	Contiguous         Behavior = 4 // consecutive matches form one piece
)

var behaviorNames = []string{"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"}

func (b Behavior) String() string {
	if int(b) < len(behaviorNames) {
		return behaviorNames[b]
	}
	return fmt.Sprintf("behavior(%d)", uint8(b))
}

// PrependScheme is Metaspace's prepend_scheme.
type PrependScheme uint8

const (
	PrependAlways PrependScheme = 0 // ▁ before every piece that does not start with one
	PrependFirst  PrependScheme = 1 // only before the piece at offset 0 of the text
	PrependNever  PrependScheme = 2
)

// Step is one operation with its parameters; only those of its Op are used.
type Step struct {
	Op             Op
	Pattern        string        // Split, Replace: the literal or regex source; Prepend: the prefix; Metaspace: the replacement
	Regex          bool          // Split, Replace: Pattern is an Oniguruma regex, not a literal
	Content        string        // Replace: what replaces each match
	Behavior       Behavior      // Split, Punctuation
	Invert         bool          // Split: the text between matches is split by Behavior instead
	Individual     bool          // Digits: individual_digits
	AddPrefixSpace bool          // ByteLevel
	UseRegex       bool          // ByteLevel
	Prepend        PrependScheme // Metaspace
	SplitWords     bool          // Metaspace: split before each replacement character
	Left, Right    bool          // Strip
}

// SplitRegex is the pre-tokenizer Split(Regex re, Isolated), the form byte-level
// tokenizers use before ByteLevel(use_regex false).
func SplitRegex(re string) Step {
	return Step{Op: OpSplit, Pattern: re, Regex: true, Behavior: Isolated}
}

const (
	pipelineVersion = 1
	maxPipelineStr  = 1 << 16 // a pattern or replacement longer than this is not a real one
	maxSteps        = 1 << 10
)

// pipeReader decodes a section payload, bounds-checking every read.
type pipeReader struct {
	p   []byte
	i   int
	off int64 // file offset of p[0]
	err *Error
}

func (r *pipeReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = formatErr(r.off+int64(r.i), "pipeline section: "+format, args...)
	}
}

func (r *pipeReader) u8(what string) uint8 {
	if r.err != nil {
		return 0
	}
	if r.i >= len(r.p) {
		r.fail("%s runs past the end of the section", what)
		return 0
	}
	r.i++
	return r.p[r.i-1]
}

func (r *pipeReader) u32(what string) uint32 {
	if r.err != nil {
		return 0
	}
	if len(r.p)-r.i < 4 {
		r.fail("%s runs past the end of the section", what)
		return 0
	}
	r.i += 4
	return binary.LittleEndian.Uint32(r.p[r.i-4:])
}

func (r *pipeReader) bool(what string) bool {
	at := r.i
	v := r.u8(what)
	if v > 1 && r.err == nil {
		r.i = at
		r.fail("%s is %d, want 0 or 1", what, v)
	}
	return v == 1
}

func (r *pipeReader) str(what string) string {
	at := r.i
	n := r.u32(what + " length")
	if r.err != nil {
		return ""
	}
	if n > maxPipelineStr || int64(n) > int64(len(r.p)-r.i) {
		r.i = at
		r.fail("%s length %d is above the limit %d or the %d bytes left", what, n, maxPipelineStr, len(r.p)-r.i-4)
		return ""
	}
	s := string(r.p[r.i : r.i+int(n)])
	if !utf8.ValidString(s) {
		r.fail("%s %q is not valid UTF-8", what, s)
		return ""
	}
	r.i += int(n)
	return s
}

// count reads a u32 count of items of at least minSize bytes each and checks
// it against the bytes left before anything is allocated for it.
func (r *pipeReader) count(what string, minSize, limit int) int {
	at := r.i
	n := r.u32(what)
	if r.err != nil {
		return 0
	}
	if int64(n) > int64(limit) || int64(n)*int64(minSize) > int64(len(r.p)-r.i) {
		r.i = at
		r.fail("%s %d is above the limit %d or needs more than the %d bytes left", what, n, limit, len(r.p)-r.i-4)
		return 0
	}
	return int(n)
}

func (r *pipeReader) step(normalizer bool, k int) Step {
	what := fmt.Sprintf("pre-tokenizer %d", k)
	if normalizer {
		what = fmt.Sprintf("normalizer %d", k)
	}
	at := r.i
	s := Step{Op: Op(r.u8(what + " op"))}
	if r.err != nil {
		return s
	}
	if _, ok := opNames[s.Op]; !ok || (s.Op < opFirstPreTokenizer) != normalizer {
		r.i = at
		kind := "pre-tokenizer"
		if normalizer {
			kind = "normalizer"
		}
		r.fail("%s: unknown %s operation %d", what, kind, uint8(s.Op))
		return s
	}
	what += " (" + s.Op.String() + ")"
	switch s.Op {
	case OpReplace:
		s.Regex = r.bool(what + " regex")
		s.Pattern = r.str(what + " pattern")
		s.Content = r.str(what + " content")
	case OpPrepend:
		s.Pattern = r.str(what + " prefix")
	case OpStrip:
		s.Left = r.bool(what + " left")
		s.Right = r.bool(what + " right")
	case OpSplit:
		s.Regex = r.bool(what + " regex")
		s.Pattern = r.str(what + " pattern")
		s.Behavior = Behavior(r.u8(what + " behavior"))
		s.Invert = r.bool(what + " invert")
	case OpDigits:
		s.Individual = r.bool(what + " individual_digits")
	case OpByteLevel:
		s.AddPrefixSpace = r.bool(what + " add_prefix_space")
		s.UseRegex = r.bool(what + " use_regex")
	case OpMetaspace:
		s.Pattern = r.str(what + " replacement")
		s.Prepend = PrependScheme(r.u8(what + " prepend_scheme"))
		s.SplitWords = r.bool(what + " split")
	case OpPunctuation:
		s.Behavior = Behavior(r.u8(what + " behavior"))
	}
	return s
}

func parsePipelineSection(t *Tokenizer, version uint32, p []byte, off int64) error {
	if version != pipelineVersion {
		return formatErr(off-4, "pipeline section version %d is not supported (want %d)", version, pipelineVersion)
	}
	r := &pipeReader{p: p, off: off}
	pl := &Pipeline{}
	for _, normalizer := range []bool{true, false} {
		n := r.count("step count", 1, maxSteps)
		steps := make([]Step, 0, n)
		for k := 0; k < n && r.err == nil; k++ {
			steps = append(steps, r.step(normalizer, k))
		}
		if normalizer {
			pl.Normalizers = steps
		} else {
			pl.PreTokenizers = steps
		}
	}
	pl.Unk = int32(r.u32("unk"))
	pl.FuseUnk = r.bool("fuse_unk")
	pl.DecodeStrip = r.u8("decode_strip")
	pl.DecodeBytes = r.bool("decode_bytes")
	n := r.count("added-token count", 1, MaxVocab)
	if r.err == nil {
		pl.Added = make([]AddedOptions, n)
		for i := range pl.Added {
			at := r.i
			pl.Added[i] = AddedOptions(r.u8("added-token options"))
			if pl.Added[i]&^addedKnown != 0 {
				r.i = at
				r.fail("added token %d: unknown option bits 0x%x", i, uint8(pl.Added[i]&^addedKnown))
			}
		}
	}
	if r.err == nil && r.i != len(p) {
		r.fail("%d bytes left over after the added-token options", len(p)-r.i)
	}
	if r.err != nil {
		return r.err
	}
	t.Pipeline = pl
	return nil
}

func appendStr(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendPipelineSection(t *Tokenizer, b []byte) []byte {
	le := binary.LittleEndian
	pl := t.Pipeline
	b = le.AppendUint32(b, pipelineVersion)
	for _, steps := range [][]Step{pl.Normalizers, pl.PreTokenizers} {
		b = le.AppendUint32(b, uint32(len(steps)))
		for _, s := range steps {
			b = append(b, byte(s.Op))
			switch s.Op {
			case OpReplace:
				b = appendBool(b, s.Regex)
				b = appendStr(b, s.Pattern)
				b = appendStr(b, s.Content)
			case OpPrepend:
				b = appendStr(b, s.Pattern)
			case OpStrip:
				b = appendBool(appendBool(b, s.Left), s.Right)
			case OpSplit:
				b = appendBool(b, s.Regex)
				b = appendStr(b, s.Pattern)
				b = append(b, byte(s.Behavior))
				b = appendBool(b, s.Invert)
			case OpDigits:
				b = appendBool(b, s.Individual)
			case OpByteLevel:
				b = appendBool(appendBool(b, s.AddPrefixSpace), s.UseRegex)
			case OpMetaspace:
				b = appendStr(b, s.Pattern)
				b = append(b, byte(s.Prepend))
				b = appendBool(b, s.SplitWords)
			case OpPunctuation:
				b = append(b, byte(s.Behavior))
			}
		}
	}
	b = le.AppendUint32(b, uint32(pl.Unk))
	b = appendBool(b, pl.FuseUnk)
	b = append(b, pl.DecodeStrip)
	b = appendBool(b, pl.DecodeBytes)
	b = le.AppendUint32(b, uint32(len(pl.Added)))
	for _, o := range pl.Added {
		b = append(b, byte(o))
	}
	return b
}

// validatePipeline checks a pipeline against its tokenizer: each step's
// parameters, the place of ByteLevel, the regexes compile, the added-token
// count, unk and the decoder setting.
func (t *Tokenizer) validatePipeline() error {
	pl := t.Pipeline
	if pl == nil {
		return nil
	}
	const off = -1
	if t.Flags&(flagsKind1Only|flagsKind2Only) != 0 {
		return formatErr(28, "flags %v cannot be combined with a pipeline section, which describes the pipeline itself",
			FlagNames(t.Flags&(flagsKind1Only|flagsKind2Only)))
	}
	for k, s := range pl.Normalizers {
		if _, ok := opNames[s.Op]; !ok || s.Op >= opFirstPreTokenizer {
			return formatErr(off, "pipeline normalizer %d: unknown normalizer operation %d", k, uint8(s.Op))
		}
		if s.Op == OpReplace && s.Regex {
			if _, err := compileOniguruma(s.Pattern); err != nil {
				return formatErr(off, "pipeline normalizer %d (Replace): %v", k, err)
			}
		}
	}
	byteLevel := -1
	for k, s := range pl.PreTokenizers {
		if _, ok := opNames[s.Op]; !ok || s.Op < opFirstPreTokenizer {
			return formatErr(off, "pipeline pre-tokenizer %d: unknown pre-tokenizer operation %d", k, uint8(s.Op))
		}
		switch s.Op {
		case OpSplit, OpPunctuation:
			if s.Behavior > Contiguous {
				return formatErr(off, "pipeline pre-tokenizer %d (%s): unknown behavior %d (0..4)", k, s.Op, uint8(s.Behavior))
			}
			if s.Op == OpSplit && s.Regex {
				if _, err := compileOniguruma(s.Pattern); err != nil {
					return formatErr(off, "pipeline pre-tokenizer %d (Split): %v", k, err)
				}
			}
		case OpMetaspace:
			if utf8.RuneCountInString(s.Pattern) != 1 {
				return formatErr(off, "pipeline pre-tokenizer %d (Metaspace): replacement %q is not one character", k, s.Pattern)
			}
			if s.Prepend > PrependNever {
				return formatErr(off, "pipeline pre-tokenizer %d (Metaspace): unknown prepend_scheme %d (0 always, 1 first, 2 never)", k, uint8(s.Prepend))
			}
		case OpByteLevel:
			if byteLevel >= 0 {
				return formatErr(off, "pipeline pre-tokenizers %d and %d are both ByteLevel", byteLevel, k)
			}
			byteLevel = k
		}
	}
	switch t.Kind {
	case KindByteLevel:
		if byteLevel != len(pl.PreTokenizers)-1 || byteLevel < 0 {
			return formatErr(off, "pipeline of a byte-level tokenizer (kind 2) must end with its one ByteLevel pre-tokenizer")
		}
		if pl.Unk != -1 || pl.FuseUnk || pl.DecodeStrip != 0 || pl.DecodeBytes {
			return formatErr(off, "pipeline unk, fuse_unk, decode_strip and decode_bytes are for kind 1; a byte-level tokenizer has -1, 0, 0, 0")
		}
	case KindSentencePiece:
		if byteLevel >= 0 {
			return formatErr(off, "pipeline pre-tokenizer %d: ByteLevel belongs to byte-level tokenizers (kind 2), not kind 1", byteLevel)
		}
		if pl.Unk < -1 || int(pl.Unk) >= len(t.Tokens) {
			return formatErr(off, "pipeline unk id %d out of range (-1 or 0..%d)", pl.Unk, len(t.Tokens)-1)
		}
		if pl.Unk >= 0 && t.Tokens[pl.Unk].Attr != AttrNormal && t.Tokens[pl.Unk].Attr != AttrAdded {
			return formatErr(off, "pipeline unk id %d is a byte or none token", pl.Unk)
		}
		if pl.DecodeStrip > 1 {
			return formatErr(off, "pipeline decode_strip %d, want 0 or 1", pl.DecodeStrip)
		}
	}
	added := 0
	for _, tok := range t.Tokens {
		if tok.Attr == AttrAdded {
			added++
		}
	}
	if len(pl.Added) != added {
		return formatErr(off, "pipeline has options for %d added tokens, the vocabulary has %d", len(pl.Added), added)
	}
	for i, o := range pl.Added {
		if o&^addedKnown != 0 {
			return formatErr(off, "pipeline added token %d: unknown option bits 0x%x", i, uint8(o&^addedKnown))
		}
	}
	return nil
}

// String describes the step as tokenizer.json would name it, with its
// parameters, for inspect and messages.
func (s Step) String() string {
	pat := func() string {
		if s.Regex {
			return "Regex " + fmt.Sprintf("%q", s.Pattern)
		}
		return "String " + fmt.Sprintf("%q", s.Pattern)
	}
	switch s.Op {
	case OpReplace:
		return fmt.Sprintf("Replace(%s → %q)", pat(), s.Content)
	case OpPrepend:
		return fmt.Sprintf("Prepend(%q)", s.Pattern)
	case OpStrip:
		return fmt.Sprintf("Strip(left %v, right %v)", s.Left, s.Right)
	case OpSplit:
		return fmt.Sprintf("Split(%s, %s, invert %v)", pat(), s.Behavior, s.Invert)
	case OpDigits:
		return fmt.Sprintf("Digits(individual_digits %v)", s.Individual)
	case OpByteLevel:
		return fmt.Sprintf("ByteLevel(add_prefix_space %v, use_regex %v)", s.AddPrefixSpace, s.UseRegex)
	case OpMetaspace:
		scheme := [...]string{"always", "first", "never"}[min(int(s.Prepend), 2)]
		return fmt.Sprintf("Metaspace(%q, prepend_scheme %s, split %v)", s.Pattern, scheme, s.SplitWords)
	case OpPunctuation:
		return fmt.Sprintf("Punctuation(%s)", s.Behavior)
	}
	return s.Op.String()
}
