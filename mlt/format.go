package mlt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/krafla/krafla/internal/atomicfile"
)

// Kind is the tokenizer family of an .mlt file (header offset 8).
type Kind uint32

// The kinds SPEC.md defines.
const (
	KindSentencePiece Kind = 1 // SentencePiece-style BPE with byte fallback and ▁ for spaces
	KindByteLevel     Kind = 2 // byte-level BPE behind a regex pre-tokenizer
)

func (k Kind) String() string {
	switch k {
	case KindSentencePiece:
		return "sentencepiece-bpe"
	case KindByteLevel:
		return "byte-level-bpe"
	}
	return fmt.Sprintf("kind(%d)", uint32(k))
}

// Header flags (offset 28). SPEC.md defines 1..64, SPEC-NOTES.md adds 128 and 256.
const (
	FlagAddBOS       = 1   // prepend BOS when encoding with addBOS
	FlagIgnoreMerges = 2   // a whole pre-token found in the vocabulary is one token
	FlagPrefixOnce   = 4   // kind 1: ▁ prefix only on the text's first segment (Metaspace "first")
	FlagNFC          = 8   // kind 2: NFC-normalize the text between added tokens
	FlagSingleDigits = 16  // kind 2: \p{N} instead of \p{N}{1,3} in the Llama 3 regex
	FlagGPT2Regex    = 32  // kind 2: the GPT-2 regex instead of the Llama 3 one
	FlagSplitDigits  = 64  // kind 2: every \p{N} is split off before the regex
	FlagNoPrefix     = 128 // kind 1: never add the ▁ prefix (Gemma)
	FlagQwen35Regex  = 256 // kind 2: the Qwen 3.5 regex
	// Extension flags (docs/FORMATS.md): each says that a section follows the
	// merges, in bit order. A file without them is exactly SPEC.md's.
	FlagPipeline = 512  // a pipeline section (pipeline.go) follows the merges
	FlagChat     = 1024 // a chat section (chat.go) follows, after the pipeline section if any
	FlagPost     = 2048 // a post-processor section (postproc.go) follows
	FlagEmbed    = 4096 // an embedding section (embed.go) follows
	FlagPair     = 8192 // a pair section (pair.go) follows, last: the id of the model written with this tokenizer

	flagsKnown      = 16383
	flagsKind1Only  = FlagPrefixOnce | FlagNoPrefix
	flagsKind2Only  = FlagNFC | FlagSingleDigits | FlagGPT2Regex | FlagSplitDigits | FlagQwen35Regex
	headerSize      = 32
	tokenHeaderSize = 5  // u8 attr, u32 len
	mergeSize       = 12 // three u32
	// MaxVocab is the largest n_vocab accepted (SPEC.md's vocab limit, 2^24).
	MaxVocab = 1 << 24
	// MaxTokenLen bounds one token's length; real pieces are at most a few hundred bytes.
	MaxTokenLen = 1 << 16
)

// flagNames gives the flags in bit order, for inspect and error messages.
var flagNames = []struct {
	bit  uint32
	name string
}{
	{FlagAddBOS, "add_bos"}, {FlagIgnoreMerges, "ignore_merges"}, {FlagPrefixOnce, "prefix_once"},
	{FlagNFC, "nfc"}, {FlagSingleDigits, "single_digits"}, {FlagGPT2Regex, "gpt2_regex"},
	{FlagSplitDigits, "split_digits"}, {FlagNoPrefix, "no_prefix"}, {FlagQwen35Regex, "qwen35_regex"},
	{FlagPipeline, "pipeline"}, {FlagChat, "chat"}, {FlagPost, "post"}, {FlagEmbed, "embed"}, {FlagPair, "pair"},
}

// FlagNames returns the names of the set bits of flags, in bit order; unknown
// bits appear as "0x..".
func FlagNames(flags uint32) []string {
	var out []string
	for _, f := range flagNames {
		if flags&f.bit != 0 {
			out = append(out, f.name)
			flags &^= f.bit
		}
	}
	if flags != 0 {
		out = append(out, fmt.Sprintf("0x%x", flags))
	}
	return out
}

// Token attributes.
const (
	AttrNormal = 0 // a vocabulary piece reached through merges
	AttrAdded  = 1 // matched literally in the text before anything else
	AttrByte   = 2 // kind 1: byte-fallback token <0xXX>, stored as its single byte
	// AttrNone marks an id that has no token (cl100k's 100256), empty; only
	// in files with a pipeline section. Encoding never gives it and decoding
	// skips it.
	AttrNone = 3
)

// Token is one vocabulary entry. Bytes are the raw bytes a byte-level piece
// stands for, the UTF-8 piece (▁ for spaces) of a SentencePiece token, the
// literal text of an added token, or the single byte of a byte token.
type Token struct {
	Attr  uint8
	Bytes []byte
}

// Tokenizer is a parsed .mlt file. Build one with Parse, Open or FromHF; a
// Tokenizer built by hand must pass Validate before Encode is used. The
// encoding state is built once, on first use, and is safe for concurrent use.
type Tokenizer struct {
	Kind   Kind
	Flags  uint32
	BOS    int32 // -1 when none
	EOS    int32 // -1 when none
	Tokens []Token
	Merges [][3]uint32 // left, right, merged; in rank order
	// Extension sections: non-nil exactly when the flag is set.
	Pipeline *Pipeline        // FlagPipeline
	Chat     *Chat            // FlagChat
	Post     *Post            // FlagPost
	Embed    *Embed           // FlagEmbed
	Pair     [PairIDSize]byte // FlagPair: the pair's id (pair.go); zero without the section

	once    sync.Once
	pieceID map[string]int // normal tokens: bytes → id
	byteID  [256]int       // kind 2: id of the single-byte normal token; kind 1: id of <0xXX>
	added   addedMatcher   // the added tokens, for leftmost-longest matching
	merger  *merger        // the merge rules (bpe.go)
	asciiID [128]int32     // kind 1: id of each ASCII character's piece, -1 if none
	spaceID []int          // kind 1: the ids of ▁ (one piece, or its byte-fallback ids)
	// kind 1: characters that some token holds right before a ▁ (Gemma's
	// ">▁</"); a word boundary is never placed after them.
	crossASCII [128]bool
	crossOther map[rune]bool
	spSplit    bool       // kind 1 with a pipeline: words may be merged apart (▁ is a piece)
	pipe       *pipeState // the compiled Pipeline, if any
	decodeOnce sync.Once
	decodeMap  map[int][]byte // decodeAs
}

// prepare builds the lookup state used by encoding. It is called lazily by
// every encoding entry point and is cheap after the first call.
func (t *Tokenizer) prepare() {
	t.once.Do(func() {
		t.pieceID = make(map[string]int, len(t.Tokens))
		for i := range t.byteID {
			t.byteID[i] = -1
		}
		for id, tok := range t.Tokens {
			switch tok.Attr {
			case AttrNormal:
				t.pieceID[string(tok.Bytes)] = id
				if t.Kind == KindByteLevel && len(tok.Bytes) == 1 {
					t.byteID[tok.Bytes[0]] = id
				}
			case AttrByte:
				if len(tok.Bytes) == 1 {
					t.byteID[tok.Bytes[0]] = id
				}
			}
		}
		t.added = newAddedMatcher(t.Tokens)
		t.merger = newMergerRules(t.Merges)
		if t.Pipeline != nil {
			t.pipe = t.compilePipeline()
		}
		if t.Kind == KindSentencePiece {
			for c := range t.asciiID {
				t.asciiID[c] = -1
				if id, ok := t.pieceID[string(rune(c))]; ok {
					t.asciiID[c] = int32(id)
				}
			}
			t.spaceID, _ = t.spPiece(metaspace, nil, false)
			_, known := t.pieceID[metaspace]
			t.spSplit = t.Pipeline == nil || known
			for _, tok := range t.Tokens {
				if tok.Attr != AttrByte {
					t.noteCross(string(tok.Bytes))
				}
			}
		}
	})
}

// noteCross records the characters that p holds right before a ▁ (other than ▁),
// every ▁ of p, the first one included when p starts with it ("▁a▁b" has an
// 'a' before its second ▁).
func (t *Tokenizer) noteCross(p string) {
	for k := strings.Index(p, metaspace); k >= 0; {
		if k > 0 {
			r, _ := utf8.DecodeLastRuneInString(p[:k])
			if r < utf8.RuneSelf {
				t.crossASCII[r] = true
			} else if r != '▁' {
				if t.crossOther == nil {
					t.crossOther = map[rune]bool{}
				}
				t.crossOther[r] = true
			}
		}
		n := strings.Index(p[k+len(metaspace):], metaspace)
		if n < 0 {
			break
		}
		k += len(metaspace) + n
	}
}

// ErrFormat is matched (errors.Is) by every error about an invalid .mlt file;
// ErrIO by failures to read or write one.
var (
	ErrFormat = errors.New("ML_E_FORMAT")
	ErrIO     = errors.New("ML_E_IO")
)

// Error describes an invalid or unreadable .mlt file.
type Error struct {
	Code   error  // ErrFormat or ErrIO
	Path   string // file name when known
	Offset int64  // byte offset of the problem, -1 when not about one place
	Msg    string
	Err    error // underlying cause, if any
}

func (e *Error) Error() string {
	s := "mlt: "
	if e.Path != "" {
		s += e.Path + ": "
	}
	s += e.Msg
	if e.Offset >= 0 {
		s += fmt.Sprintf(" at offset 0x%x", e.Offset)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is reports whether target is the error's code.
func (e *Error) Is(target error) bool { return target == e.Code }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

func formatErr(off int64, format string, args ...any) *Error {
	return &Error{Code: ErrFormat, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// Open reads and validates an .mlt file.
func Open(path string) (*Tokenizer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &Error{Code: ErrIO, Offset: -1, Msg: "cannot open", Err: err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, &Error{Code: ErrIO, Path: path, Offset: -1, Msg: "cannot stat", Err: err}
	}
	// A tokenizer is at most a few tens of MB; refuse absurd sizes before reading.
	const maxFile = 1 << 31
	if st.Size() > maxFile {
		return nil, &Error{Code: ErrFormat, Path: path, Offset: -1, Msg: fmt.Sprintf("file of %d bytes is larger than any tokenizer (limit %d)", st.Size(), int64(maxFile))}
	}
	b := make([]byte, st.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, &Error{Code: ErrIO, Path: path, Offset: -1, Msg: "short read", Err: err}
	}
	t, err := Parse(b)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Path = path
		}
		return nil, err
	}
	return t, nil
}

// Parse decodes and validates an .mlt image. Token bytes are copied, so b may
// be reused afterwards.
func Parse(b []byte) (*Tokenizer, error) {
	if len(b) < headerSize {
		if len(b) == 0 {
			return nil, formatErr(0, "empty file")
		}
		return nil, formatErr(int64(len(b)), "file of %d bytes is shorter than the %d-byte header", len(b), headerSize)
	}
	if string(b[:4]) != "MLT1" {
		return nil, formatErr(0, "bad magic %q, want \"MLT1\"", b[:4])
	}
	le := binary.LittleEndian
	if v := le.Uint32(b[4:]); v != 1 {
		return nil, formatErr(4, "unsupported version %d, want 1", v)
	}
	t := &Tokenizer{
		Kind:  Kind(le.Uint32(b[8:])),
		BOS:   int32(le.Uint32(b[20:])),
		EOS:   int32(le.Uint32(b[24:])),
		Flags: le.Uint32(b[28:]),
	}
	nVocab := uint64(le.Uint32(b[12:]))
	nMerges := uint64(le.Uint32(b[16:]))
	if t.Kind != KindSentencePiece && t.Kind != KindByteLevel {
		return nil, formatErr(8, "unknown kind %d (1 = SentencePiece BPE, 2 = byte-level BPE)", uint32(t.Kind))
	}
	if err := checkFlags(t.Kind, t.Flags); err != nil {
		err.Offset = 28
		return nil, err
	}
	if nVocab == 0 || nVocab > MaxVocab {
		return nil, formatErr(12, "n_vocab %d out of range 1..%d", nVocab, MaxVocab)
	}
	rest := uint64(len(b) - headerSize)
	// Each token takes at least 5 bytes and each merge 12: check the counts
	// against the file before allocating anything sized by them.
	if nVocab*tokenHeaderSize+nMerges*mergeSize > rest {
		return nil, formatErr(12, "n_vocab %d and n_merges %d need at least %d bytes, the file has %d after the header",
			nVocab, nMerges, nVocab*tokenHeaderSize+nMerges*mergeSize, rest)
	}
	t.Tokens = make([]Token, nVocab)
	off := uint64(headerSize)
	size := uint64(len(b))
	// One backing array for all token bytes keeps the allocation count low.
	var arena []byte
	for i := range t.Tokens {
		if off+tokenHeaderSize > size {
			return nil, formatErr(int64(off), "token %d: header runs past the end of the file", i)
		}
		attr := b[off]
		n := uint64(le.Uint32(b[off+1:]))
		if attr > AttrNone || attr == AttrNone && t.Flags&FlagPipeline == 0 {
			return nil, formatErr(int64(off), "token %d: unknown attr %d (0 normal, 1 added, 2 byte; 3 none with a pipeline section)", i, attr)
		}
		if n > MaxTokenLen {
			return nil, formatErr(int64(off+1), "token %d: length %d above the limit %d", i, n, MaxTokenLen)
		}
		off += tokenHeaderSize
		if n > size-off {
			return nil, formatErr(int64(off), "token %d: %d bytes run past the end of the file", i, n)
		}
		if len(arena) < int(n) {
			arena = make([]byte, max(64<<10, n))
		}
		tb := arena[:n:n]
		arena = arena[n:]
		copy(tb, b[off:off+n])
		t.Tokens[i] = Token{Attr: attr, Bytes: tb}
		off += n
	}
	if nMerges*mergeSize > size-off {
		return nil, formatErr(int64(off), "%d merges need %d bytes, %d remain", nMerges, nMerges*mergeSize, size-off)
	}
	t.Merges = make([][3]uint32, nMerges)
	for i := range t.Merges {
		for j := range 3 {
			t.Merges[i][j] = le.Uint32(b[off+uint64(j)*4:])
		}
		off += mergeSize
	}
	mergeOff := int64(off) - int64(nMerges)*mergeSize
	end, err := t.parseSections(b, int64(off))
	if err != nil {
		return nil, err
	}
	if uint64(end) != size {
		return nil, formatErr(end, "%d trailing bytes after the last section", int64(size)-end)
	}
	if err := t.validate(mergeOff); err != nil {
		return nil, err
	}
	return t, nil
}

func checkFlags(k Kind, f uint32) *Error {
	if f&^flagsKnown != 0 {
		return formatErr(-1, "unknown flag bits 0x%x (known: 0x%x)", f&^flagsKnown, flagsKnown)
	}
	if k == KindSentencePiece && f&flagsKind2Only != 0 {
		return formatErr(-1, "flags %v are for byte-level tokenizers (kind 2), not kind 1", FlagNames(f&flagsKind2Only))
	}
	if k == KindByteLevel && f&flagsKind1Only != 0 {
		return formatErr(-1, "flags %v are for SentencePiece tokenizers (kind 1), not kind 2", FlagNames(f&flagsKind1Only))
	}
	if f&FlagPrefixOnce != 0 && f&FlagNoPrefix != 0 {
		return formatErr(-1, "flags prefix_once (4) and no_prefix (128) contradict each other")
	}
	if f&FlagGPT2Regex != 0 && f&FlagQwen35Regex != 0 {
		return formatErr(-1, "flags gpt2_regex (32) and qwen35_regex (256) select two different regexes")
	}
	if f&FlagAddBOS != 0 && f&FlagPost != 0 {
		return formatErr(-1, "flags add_bos (1) and post (2048) are both set: the post-processor section says which special tokens encoding adds")
	}
	if f&FlagGPT2Regex != 0 && f&FlagSingleDigits != 0 {
		return formatErr(-1, "flag single_digits (16) modifies the Llama 3 regex and is undefined with gpt2_regex (32)")
	}
	return nil
}

// Validate checks what Parse checks, for a Tokenizer built in memory.
func (t *Tokenizer) Validate() error {
	if t.Kind != KindSentencePiece && t.Kind != KindByteLevel {
		return formatErr(-1, "unknown kind %d (1 = SentencePiece BPE, 2 = byte-level BPE)", uint32(t.Kind))
	}
	if err := checkFlags(t.Kind, t.Flags); err != nil {
		return err
	}
	if len(t.Tokens) == 0 || len(t.Tokens) > MaxVocab {
		return formatErr(-1, "n_vocab %d out of range 1..%d", len(t.Tokens), MaxVocab)
	}
	for i, tok := range t.Tokens {
		if tok.Attr > AttrNone || tok.Attr == AttrNone && t.Flags&FlagPipeline == 0 {
			return formatErr(-1, "token %d: unknown attr %d (0 normal, 1 added, 2 byte; 3 none with a pipeline section)", i, tok.Attr)
		}
		if len(tok.Bytes) > MaxTokenLen {
			return formatErr(-1, "token %d: length %d above the limit %d", i, len(tok.Bytes), MaxTokenLen)
		}
	}
	if err := t.validateSections(); err != nil {
		return err
	}
	return t.validate(-1)
}

// validate checks the cross-references of a decoded tokenizer; mergeOff is the
// file offset of the first merge, or -1 for a tokenizer built in memory.
func (t *Tokenizer) validate(mergeOff int64) error {
	n := len(t.Tokens)
	if t.BOS < -1 || int(t.BOS) >= n {
		return formatErr(20, "bos id %d out of range (-1 or 0..%d)", t.BOS, n-1)
	}
	if t.EOS < -1 || int(t.EOS) >= n {
		return formatErr(24, "eos id %d out of range (-1 or 0..%d)", t.EOS, n-1)
	}
	if t.Flags&FlagAddBOS != 0 && t.BOS < 0 {
		return formatErr(28, "flag add_bos is set but bos is -1")
	}
	seen := make(map[string]int, n)
	added := make(map[string]int)
	var byteSeen [256]int
	for i := range byteSeen {
		byteSeen[i] = -1
	}
	for i, tok := range t.Tokens {
		switch tok.Attr {
		case AttrNormal:
			if len(tok.Bytes) == 0 {
				return formatErr(-1, "token %d: empty normal token", i)
			}
			if j, ok := seen[string(tok.Bytes)]; ok {
				return formatErr(-1, "token %d: piece %q duplicates token %d", i, tok.Bytes, j)
			}
			seen[string(tok.Bytes)] = i
		case AttrAdded:
			if len(tok.Bytes) == 0 {
				return formatErr(-1, "token %d: empty added token (it would match everywhere)", i)
			}
			if j, ok := added[string(tok.Bytes)]; ok {
				return formatErr(-1, "token %d: added token %q duplicates token %d", i, tok.Bytes, j)
			}
			added[string(tok.Bytes)] = i
		case AttrNone:
			if len(tok.Bytes) != 0 {
				return formatErr(-1, "token %d: a none token (attr 3) must be empty, it has %d bytes", i, len(tok.Bytes))
			}
		case AttrByte:
			if t.Kind != KindSentencePiece {
				return formatErr(-1, "token %d: byte tokens (attr 2) exist only in kind 1", i)
			}
			if len(tok.Bytes) != 1 {
				return formatErr(-1, "token %d: byte token of %d bytes, want 1", i, len(tok.Bytes))
			}
			if j := byteSeen[tok.Bytes[0]]; j >= 0 {
				return formatErr(-1, "token %d: byte token <0x%02X> duplicates token %d", i, tok.Bytes[0], j)
			}
			byteSeen[tok.Bytes[0]] = i
		}
	}
	if err := t.validatePipeline(); err != nil {
		return err
	}
	for c := range 256 {
		switch t.Kind {
		case KindSentencePiece:
			// With a pipeline, a character whose byte tokens are not all
			// there gets the unk token, as in the tokenizers library.
			if byteSeen[c] < 0 && t.Pipeline == nil {
				return formatErr(-1, "kind 1 needs all 256 byte-fallback tokens; <0x%02X> is missing", c)
			}
		case KindByteLevel:
			if _, ok := seen[string([]byte{byte(c)})]; !ok {
				return formatErr(-1, "kind 2 needs a normal token for every single byte; 0x%02X is missing", c)
			}
		}
	}
	for i, m := range t.Merges {
		off := int64(-1)
		if mergeOff >= 0 {
			off = mergeOff + int64(i)*mergeSize
		}
		for _, id := range m {
			if int64(id) >= int64(n) {
				return formatErr(off, "merge %d names token %d, which does not exist (n_vocab %d)", i, id, n)
			}
			// Byte tokens stand outside the merge table in SentencePiece BPE.
			if t.Tokens[id].Attr == AttrByte || t.Tokens[id].Attr == AttrNone {
				return formatErr(off, "merge %d uses byte or none token %d", i, id)
			}
		}
		l, r, m2 := t.Tokens[m[0]].Bytes, t.Tokens[m[1]].Bytes, t.Tokens[m[2]].Bytes
		if len(l)+len(r) != len(m2) || string(l) != string(m2[:len(l)]) || string(r) != string(m2[len(l):]) {
			return formatErr(off, "merge %d: %q + %q does not make token %d %q", i, l, r, m[2], m2)
		}
	}
	return nil
}

// Bytes encodes t as an .mlt image. It does not validate t.
func (t *Tokenizer) Bytes() []byte { return t.bytes(true) }

// BytesWithoutPair encodes t as it would be without its pair section (flag
// 2048 clear): the canonical content a pair id is derived from.
func (t *Tokenizer) BytesWithoutPair() []byte { return t.bytes(false) }

func (t *Tokenizer) bytes(pair bool) []byte {
	flags := t.Flags
	if !pair {
		flags &^= FlagPair
	}
	size := headerSize + len(t.Merges)*mergeSize
	for _, tok := range t.Tokens {
		size += tokenHeaderSize + len(tok.Bytes)
	}
	b := make([]byte, 0, size)
	le := binary.LittleEndian
	b = append(b, "MLT1"...)
	b = le.AppendUint32(b, 1)
	b = le.AppendUint32(b, uint32(t.Kind))
	b = le.AppendUint32(b, uint32(len(t.Tokens)))
	b = le.AppendUint32(b, uint32(len(t.Merges)))
	b = le.AppendUint32(b, uint32(t.BOS))
	b = le.AppendUint32(b, uint32(t.EOS))
	b = le.AppendUint32(b, flags)
	for _, tok := range t.Tokens {
		b = append(b, tok.Attr)
		b = le.AppendUint32(b, uint32(len(tok.Bytes)))
		b = append(b, tok.Bytes...)
	}
	for _, m := range t.Merges {
		b = le.AppendUint32(b, m[0])
		b = le.AppendUint32(b, m[1])
		b = le.AppendUint32(b, m[2])
	}
	return t.appendSections(b, pair)
}

// Write validates t and writes it to path atomically: a temporary file in the
// same directory (internal/atomicfile), synced, then renamed into place.
func (t *Tokenizer) Write(path string) error {
	if err := t.Validate(); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, t.Bytes()); err != nil {
		return &Error{Code: ErrIO, Path: path, Offset: -1, Msg: "cannot write file", Err: err}
	}
	return nil
}

// UnmergedTokens returns the normal tokens of a byte-level tokenizer that
// its merges, applied to the token's bytes alone, do not build into that one
// token: the tokens on which ignore_merges (flag 2) decides a pre-token that
// is exactly that token. Other kinds have none.
func (t *Tokenizer) UnmergedTokens() []int {
	if t.Kind != KindByteLevel {
		return nil
	}
	t.prepare()
	var out []int
	var ids []int
	for id, tok := range t.Tokens {
		if tok.Attr != AttrNormal || len(tok.Bytes) < 2 {
			continue
		}
		ids = ids[:0]
		for _, b := range tok.Bytes {
			ids = append(ids, t.byteID[b])
		}
		if m := t.merger.merge(ids); len(m) != 1 || m[0] != id {
			out = append(out, id)
		}
	}
	return out
}
