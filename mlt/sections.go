package mlt

import (
	"encoding/binary"
)

// Extension sections (docs/FORMATS.md, "Extension sections"). Each flag bit of
// 512 and above says that one section follows the merges; they come in bit
// order. A section is
//
//	u32 length   bytes of what follows (version and payload), at most the bytes left
//	u32 version  of that section's payload layout
//	payload
//
// A reader rejects a section whose version it does not know, a length that runs
// past the file, and a payload its own parser does not consume exactly.
type section struct {
	flag    uint32
	name    string
	present func(t *Tokenizer) bool
	// parse decodes one payload of the given version; off is the payload's
	// file offset, for error messages.
	parse func(t *Tokenizer, version uint32, p []byte, off int64) error
	// append encodes the section's version and payload (without the length).
	append func(t *Tokenizer, b []byte) []byte
	// check, when set, validates a present section's fields before writing.
	check func(t *Tokenizer) error
}

var sections = []section{
	{FlagPipeline, "pipeline", func(t *Tokenizer) bool { return t.Pipeline != nil }, parsePipelineSection, appendPipelineSection, nil},
	{FlagChat, "chat", func(t *Tokenizer) bool { return t.Chat != nil }, parseChatSection, appendChatSection, checkChatSection},
	{FlagPost, "post-processor", func(t *Tokenizer) bool { return t.Post != nil }, parsePostSection, appendPostSection, checkPostSection},
	{FlagEmbed, "embedding", func(t *Tokenizer) bool { return t.Embed != nil }, parseEmbedSection, appendEmbedSection, checkEmbedSection},
	{FlagPair, "pair", func(t *Tokenizer) bool { return t.Pair != [PairIDSize]byte{} }, parsePairSection, appendPairSection, nil},
}

const sectionHeaderSize = 8

// parseSections reads the sections the flags announce, starting at off; it
// returns the offset after the last one.
func (t *Tokenizer) parseSections(b []byte, off int64) (int64, error) {
	le := binary.LittleEndian
	for _, s := range sections {
		if t.Flags&s.flag == 0 {
			continue
		}
		left := int64(len(b)) - off
		if left < sectionHeaderSize {
			return 0, formatErr(off, "flag %s (%d) is set but the %s section's 8-byte header is missing (%d bytes left)", s.name, s.flag, s.name, left)
		}
		n := int64(le.Uint32(b[off:]))
		if n < 4 || n > left-4 {
			return 0, formatErr(off, "%s section length %d out of range 4..%d (the bytes left)", s.name, n, left-4)
		}
		version := le.Uint32(b[off+4:])
		p := b[off+sectionHeaderSize : off+4+n]
		if err := s.parse(t, version, p, off+sectionHeaderSize); err != nil {
			return 0, err
		}
		off += 4 + n
	}
	return off, nil
}

// appendSections encodes the sections present in t, in bit order; without
// pair, the pair section is left out.
func (t *Tokenizer) appendSections(b []byte, pair bool) []byte {
	le := binary.LittleEndian
	for _, s := range sections {
		if !s.present(t) || !pair && s.flag == FlagPair {
			continue
		}
		at := len(b)
		b = le.AppendUint32(b, 0)
		b = s.append(t, b)
		le.PutUint32(b[at:], uint32(len(b)-at-4))
	}
	return b
}

// validateSections checks that each extension flag matches its section.
func (t *Tokenizer) validateSections() error {
	for _, s := range sections {
		if (t.Flags&s.flag != 0) != s.present(t) {
			return formatErr(28, "flag %s (%d) must be set exactly when the tokenizer has a %s section", s.name, s.flag, s.name)
		}
		if s.check != nil && s.present(t) {
			if err := s.check(t); err != nil {
				return err
			}
		}
	}
	return nil
}
