package mlt

import "bytes"

// TokenBytes returns, per id, the bytes the token adds in the middle of a
// text (metaspace as a space, a byte-fallback token as its byte, byte-level
// tokens as their raw bytes, possibly part of a character), and which ids are
// control tokens (special added tokens and ids with no token), which never
// occur inside generated text; an added token that tokenizer.json marks not
// special (Qwen's <tool_call>, <think>) is its text. For constrained
// decoding (package grammar).
func (t *Tokenizer) TokenBytes() (toks [][]byte, control []bool) {
	toks = make([][]byte, len(t.Tokens))
	control = make([]bool, len(t.Tokens))
	k := 0
	for id := range t.Tokens {
		tok := &t.Tokens[id]
		if tok.Attr == AttrAdded {
			k++
		}
		switch {
		case tok.Attr == AttrAdded && t.Pipeline != nil && k-1 < len(t.Pipeline.Added) && t.Pipeline.Added[k-1]&AddedSpecial == 0:
			toks[id] = tok.Bytes
		case tok.Attr == AttrNone || tok.Attr == AttrAdded:
			control[id] = true
		case tok.Attr == AttrByte:
			if t.Pipeline == nil || t.Pipeline.DecodeBytes {
				toks[id] = []byte{tok.Bytes[0]}
			} else {
				control[id] = true
			}
		case t.Kind == KindByteLevel:
			toks[id] = tok.Bytes
		default:
			toks[id] = bytes.ReplaceAll(tok.Bytes, []byte(metaspace), []byte(" "))
		}
	}
	return toks, control
}
