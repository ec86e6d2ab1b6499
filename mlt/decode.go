package mlt

import (
	"fmt"
	"slices"
	"unicode/utf8"
)

// Decode returns the text of ids as Hugging Face's decode with
// skip_special_tokens=false does for the tokenizer.json the file came from.
// Ids outside the vocabulary are skipped.
//
// Kind 1 (decoder Replace(▁→' '), ByteFallback, Fuse, Strip): ▁ becomes a
// space in every token, added ones included; a run of byte tokens becomes its
// bytes when they are valid UTF-8 and otherwise one U+FFFD per byte; and
// unless flag 128 is set one leading space of the whole text is removed.
// Kind 2 (ByteLevel decoder): the tokens' bytes are concatenated and invalid
// UTF-8 is replaced as Rust's String::from_utf8_lossy does (one U+FFFD per
// maximal invalid subsequence).
func (t *Tokenizer) Decode(ids []int) string {
	d := t.NewStreamDecoder()
	buf := make([]byte, 0, len(ids)*4)
	for _, id := range ids {
		buf = d.appendToken(buf, id)
	}
	return string(d.appendFlush(buf))
}

// StreamDecoder decodes ids one at a time, for printing generated text as it
// comes. The concatenation of everything Add and Flush return equals Decode of
// all the ids. It never returns part of a UTF-8 character: bytes that may
// still become a character are held back until the next token decides.
type StreamDecoder struct {
	t       *Tokenizer
	pending []byte // kind 2: a trailing incomplete UTF-8 prefix; kind 1: a run of byte tokens
	started bool   // kind 1: something was emitted, so no leading space is stripped any more
	out     []byte
}

// NewStreamDecoder returns a decoder at the start of a text.
func (t *Tokenizer) NewStreamDecoder() *StreamDecoder { return &StreamDecoder{t: t} }

// Add decodes one more id and returns the text that became final.
func (d *StreamDecoder) Add(id int) string {
	d.out = d.appendToken(d.out[:0], id)
	return string(d.out)
}

// Flush returns what is still held back (an incomplete character becomes
// U+FFFD) and resets the decoder to the start of a text.
func (d *StreamDecoder) Flush() string {
	d.out = d.appendFlush(d.out[:0])
	d.started = false
	return string(d.out)
}

func (d *StreamDecoder) appendToken(dst []byte, id int) []byte {
	t := d.t
	if id < 0 || id >= len(t.Tokens) {
		return dst
	}
	tok := &t.Tokens[id]
	if tok.Attr == AttrNone {
		return dst // no token: skipped like an id outside the vocabulary
	}
	b := tok.Bytes
	if t.Pipeline != nil && tok.Attr == AttrAdded {
		if nb, ok := t.decodeAs()[id]; ok {
			b = nb
		}
	}
	if t.Kind == KindByteLevel {
		d.pending = append(d.pending, b...)
		n := len(d.pending) - incompleteTail(d.pending)
		dst = appendLossy(dst, d.pending[:n])
		d.pending = append(d.pending[:0], d.pending[n:]...)
		return dst
	}
	if tok.Attr == AttrByte {
		if t.Pipeline == nil || t.Pipeline.DecodeBytes {
			d.pending = append(d.pending, tok.Bytes[0])
			return dst
		}
		// No ByteFallback decoder: the token is its text.
		b = fmt.Appendf(nil, "<0x%02X>", tok.Bytes[0])
	}
	dst = d.flushBytes(dst)
	start := len(dst)
	for len(b) > 0 {
		i := indexMetaspace(b)
		if i < 0 {
			dst = append(dst, b...)
			break
		}
		dst = append(dst, b[:i]...)
		dst = append(dst, ' ')
		b = b[i+len(metaspace):]
	}
	return d.strip(dst, start)
}

// strip removes the one leading space of the whole text (Strip decoder), once.
func (d *StreamDecoder) strip(dst []byte, start int) []byte {
	if d.started || len(dst) == start {
		return dst
	}
	d.started = true
	strip := d.t.Flags&FlagNoPrefix == 0
	if d.t.Pipeline != nil {
		strip = d.t.Pipeline.DecodeStrip > 0
	}
	if strip && dst[start] == ' ' {
		dst = append(dst[:start], dst[start+1:]...)
	}
	return dst
}

// flushBytes emits a kind 1 run of byte tokens: its bytes when they are valid
// UTF-8 as a whole, else one U+FFFD per byte (the ByteFallback decoder).
func (d *StreamDecoder) flushBytes(dst []byte) []byte {
	if len(d.pending) == 0 {
		return dst
	}
	start := len(dst)
	if utf8.Valid(d.pending) {
		dst = append(dst, d.pending...)
	} else {
		for range d.pending {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		}
	}
	d.pending = d.pending[:0]
	return d.strip(dst, start)
}

func (d *StreamDecoder) appendFlush(dst []byte) []byte {
	if d.t.Kind == KindByteLevel {
		dst = appendLossy(dst, d.pending)
		d.pending = d.pending[:0]
		return dst
	}
	return d.flushBytes(dst)
}

func indexMetaspace(b []byte) int {
	for i := 0; i+2 < len(b); i++ {
		if b[i] == 0xE2 && b[i+1] == 0x96 && b[i+2] == 0x81 {
			return i
		}
	}
	return -1
}

// seqInfo returns, for a UTF-8 lead byte, the sequence length and the valid
// range of the second byte; n = 0 for a byte that cannot start a sequence.
func seqInfo(c byte) (n int, lo, hi byte) {
	switch {
	case c < 0x80:
		return 1, 0, 0
	case c >= 0xC2 && c <= 0xDF:
		return 2, 0x80, 0xBF
	case c == 0xE0:
		return 3, 0xA0, 0xBF
	case c == 0xED:
		return 3, 0x80, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		return 3, 0x80, 0xBF
	case c == 0xF0:
		return 4, 0x90, 0xBF
	case c >= 0xF1 && c <= 0xF3:
		return 4, 0x80, 0xBF
	case c == 0xF4:
		return 4, 0x80, 0x8F
	}
	return 0, 0, 0
}

// validPrefix returns how many bytes of b, at most one sequence, form a valid
// (possibly incomplete) start of a UTF-8 character, and the full length.
func validPrefix(b []byte) (k, n int) {
	n, lo, hi := seqInfo(b[0])
	if n == 0 {
		return 0, 0
	}
	k = 1
	for k < n && k < len(b) {
		c := b[k]
		if k == 1 && (c < lo || c > hi) || k > 1 && (c < 0x80 || c > 0xBF) {
			break
		}
		k++
	}
	return k, n
}

// incompleteTail returns the length of a trailing valid but incomplete UTF-8
// sequence of b (0 to 3 bytes), which later bytes may complete.
func incompleteTail(b []byte) int {
	for back := 1; back <= 3 && back <= len(b); back++ {
		i := len(b) - back
		if b[i] >= 0x80 && b[i] < 0xC0 {
			continue // a continuation byte: look further back for its lead
		}
		if k, n := validPrefix(b[i:]); k == back && n > back {
			return back
		}
		return 0
	}
	return 0
}

// appendLossy appends b with each maximal invalid subsequence replaced by
// U+FFFD, as Rust's String::from_utf8_lossy (and the WHATWG decoder) does.
func appendLossy(dst, b []byte) []byte {
	for len(b) > 0 {
		if b[0] < utf8.RuneSelf {
			dst = append(dst, b[0])
			b = b[1:]
			continue
		}
		k, n := validPrefix(b)
		if n > 0 && k == n {
			dst = append(dst, b[:n]...)
			b = b[n:]
			continue
		}
		dst = utf8.AppendRune(dst, utf8.RuneError)
		b = b[max(k, 1):]
	}
	return dst
}

// stopNames are the end-of-turn and end-of-text tokens chat models stop on.
// "</s>" is not among them: SentencePiece models give it as their EOS anyway,
// and in Gemma it is the HTML strikethrough tag.
var stopNames = []string{
	"<|eot_id|>", "<|eom_id|>", "<|end_of_text|>", "<|im_end|>", "<|endoftext|>",
	"<end_of_turn>", "<eos>", "<|end|>", "<|return|>", "<EOT>",
}

// StopTokens returns the ids generation stops on: EOS and the added tokens
// whose names mark the end of a turn or of the text in known chat formats
// (<|eot_id|>, <|im_end|>, <end_of_turn>, <|endoftext|>, ...), sorted.
func (t *Tokenizer) StopTokens() []int {
	t.prepare()
	var out []int
	if t.EOS >= 0 {
		out = append(out, int(t.EOS))
	}
	for _, name := range stopNames {
		if id, n := t.added.match(name); n == len(name) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
