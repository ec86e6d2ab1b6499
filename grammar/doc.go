// Package grammar is constrained decoding over token bytes: a grammar
// (compiled from a JSON Schema, from json_object, or from a GBNF text) is a
// context-free grammar over bytes, and a State masks, at every step, the
// tokens of a Vocab whose bytes cannot continue a valid output.
//
// Everything is bytes: code-point classes are compiled to UTF-8 byte
// sequences, so a character split across two tokens is followed byte by
// byte, byte-fallback tokens (<0x41>) are just one-byte tokens, and special
// tokens never match inside an output (only the Vocab's stop tokens are
// allowed, and only where the output is complete), except a special token
// given its text where a call's literal reads that text (gpt-oss's
// <|channel|>): the trie holds it between 0xFF bytes, which no UTF-8 text
// holds and only CompileCalls' literals accept.
//
// Speed: the parse state is a set of stacks (as llama.cpp's grammar), but the
// sets are interned into a lazily built DFA whose transitions are cached per
// byte, and the vocabulary is a byte trie walked once per mask with subtree
// pruning (llguidance's toktrie); masks of states seen before are cached.
//
// The package knows nothing of HTTP, templates or tokenizers.
package grammar
