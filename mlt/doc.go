// Package mlt reads and writes .mlt tokenizer files, builds them from Hugging
// Face tokenizer.json files, and encodes and decodes text exactly as the
// Hugging Face tokenizers library does for the tokenizers it can represent.
//
// # File layout
//
// Everything is little-endian; there is no alignment or padding.
//
//	offset  type     field     meaning
//	0       char[4]  magic     "MLT1"
//	4       u32      version   1
//	8       u32      kind      1 SentencePiece-style BPE, 2 byte-level BPE
//	12      u32      n_vocab   number of tokens, 1..2^24
//	16      u32      n_merges  number of merge rules
//	20      i32      bos       BOS id or -1
//	24      i32      eos       EOS id or -1
//	28      u32      flags     see below; unknown bits are an error
//	32      tokens   n_vocab × { u8 attr; u32 len; len bytes }
//	...     merges   n_merges × { u32 left; u32 right; u32 merged }, in rank order
//
// The file ends right after the last merge, or after the extension sections
// the flags 512 (pipeline, pipeline.go) and 1024 (chat, chat.go) announce
// (sections.go). Token attr: 0 normal, 1 added
// (matched literally in the raw text before anything else, longest match
// first), 2 byte (kind 1 only: the byte-fallback token <0xXX>, stored as its
// single byte), 3 none (pipeline files only: an id without a token). Byte-level
// pieces are stored as the raw bytes they stand for,
// SentencePiece pieces as UTF-8 with ▁ (U+2581) for spaces. docs/FORMATS.md
// describes the format completely.
//
// Flags: 1 add BOS; 2 ignore_merges; 4 (kind 1) the ▁ prefix only on the
// segment at the start of the text, and not when it already starts with a
// space or ▁ (Hugging Face's Metaspace prepend_scheme "first"); 8 (kind 2)
// NFC between added tokens; 16 (kind 2) single digits; 32 (kind 2) the GPT-2
// regex; 64 (kind 2) digits split off before the regex; 128 (kind 1) never a
// ▁ prefix; 256 (kind 2) the Qwen 3.5 regex. Without 4 or 128, kind 1 prepends
// ▁ to every non-empty segment between added tokens (the legacy Prepend
// normalizer). With 512 the kind-specific flags are 0: the pipeline says it.
//
// Validation (Parse, Open, Write) refuses: a bad magic or version, an unknown
// kind or flag bit, flags of the other kind or contradicting each other, counts
// that need more bytes than the file has, a token or merge running past the
// end, trailing bytes, an unknown attr, empty or duplicate tokens, a byte token
// that is not one byte or appears twice, a kind 1 file without all 256 byte
// tokens (unless it has a pipeline section, where a character with a missing
// byte token becomes unk) or a kind 2 file without a token for every single
// byte, a malformed section, bos or eos
// out of range, and merges naming missing tokens or whose parts do not
// concatenate to the merged token. Errors are *Error values matching ErrFormat
// or ErrIO and naming the offset.
//
// # Encoding and decoding
//
// Encode matches added tokens first, in the raw text, leftmost and then
// longest. Each stretch between them is encoded by the kind: kind 1 replaces
// spaces by ▁, adds the ▁ prefix by the flags' rule, looks up each character
// (byte-fallback tokens for characters the vocabulary lacks) and applies the
// merges by rank, leftmost first among equal ranks (bpe.go); kind 2 normalizes
// (flag 8), pre-tokenizes with the regex the flags select (pretok.go) and
// merges the bytes of each pre-token (bytelevel.go). Decode follows the
// decoders of the source tokenizer.json: for kind 1 Replace(▁→' '),
// ByteFallback, Fuse and, unless flag 128, Strip of one leading space; for
// kind 2 ByteLevel with invalid UTF-8 replaced as Rust's from_utf8_lossy does.
// StreamDecoder gives the same text piece by piece without splitting a
// character.
//
// With a pipeline section, encoding follows the tokenizers library step by
// step instead (pipeline_encode.go): added tokens with their options,
// normalizers, normalized added tokens, the pre-tokenizer sequence (regexes
// through onig.go's Oniguruma-to-regexp2 translation, or the scanners for
// their exact texts), then the model.
//
// FromHF maps a tokenizer.json onto a kind and flags when they describe it
// exactly (such files are as they always were), and onto a kind and a
// pipeline section otherwise. It refuses (ErrUnsupported) whatever an .mlt
// cannot reproduce exactly, naming the part: non-BPE models (Unigram,
// WordPiece), dropout, word prefixes and suffixes, normalizers and
// pre-tokenizers it does not know (Precompiled, UnicodeScripts, ...), regex
// constructs without an exact regexp2 equivalent, post-processors adding
// anything but one BOS, decoders that do not match the kind.
package mlt
