package mlt

import (
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/krafla/krafla/internal/testenv"
)

// TestAllocBound feeds Parse files that claim the most (n_vocab and n_merges
// at 2^31 and 2^32-1 or at their limits, a token and a section of 2^31 bytes
// and more) and the seed corpus, and checks that no call allocates more than
// a small multiple of its input.
func TestAllocBound(t *testing.T) {
	le := binary.LittleEndian
	hdr := func(kind, nVocab, nMerges, flags uint32, tail ...byte) []byte {
		b := []byte("MLT1")
		for _, v := range []uint32{1, kind, nVocab, nMerges, 0, 0, flags} {
			b = le.AppendUint32(b, v)
		}
		return append(b, tail...)
	}
	token := func(n uint32) []byte { return le.AppendUint32([]byte{AttrNormal}, n) }
	inputs := map[string][]byte{}
	for _, v := range []uint32{1 << 31, math.MaxUint32} {
		s := fmt.Sprint(v)
		inputs["n_vocab "+s] = hdr(2, v, 0, 0)
		inputs["n_merges "+s] = hdr(2, 1, v, 0, token(1)...)
		inputs["token length "+s] = hdr(2, 1, 0, 0, token(v)...)
		inputs["n_vocab and n_merges "+s] = hdr(1, v, v, 0)
	}
	inputs["n_vocab at the limit"] = hdr(2, MaxVocab, MaxVocab, 0, make([]byte, 1<<16)...)
	inputs["token length at the limit"] = hdr(2, 1, 0, 0, append(token(MaxTokenLen), make([]byte, 100)...)...)
	// As many empty tokens as the bytes allow: the most tokens per byte.
	n := uint32(1 << 16)
	many := hdr(2, n, 0, 0)
	for range n {
		many = append(many, token(0)...)
	}
	inputs["65536 empty tokens"] = many
	// A chat and a pipeline section claiming more than the file.
	one := hdr(2, 1, 0, FlagChat, append(token(1), 'a')...)
	for _, v := range []uint32{1 << 31, math.MaxUint32} {
		inputs["chat section length "+fmt.Sprint(v)] = le.AppendUint32(le.AppendUint32(append([]byte(nil), one...), v), 1)
	}
	pipe := hdr(2, 1, 0, FlagPipeline, append(token(1), 'a')...)
	inputs["pipeline section length 2^32-1"] = le.AppendUint32(le.AppendUint32(pipe, math.MaxUint32), 1)
	for name, b := range testenv.FuzzSeeds(t, filepath.Join("testdata", "fuzz", "FuzzParse")) {
		inputs["seed "+name] = b
	}
	// A 5-byte token header becomes a 32-byte Token and an entry of
	// validate's map of pieces (sized for every token at once), 17 bytes
	// per input byte at most (measured: 65536 empty tokens).
	const factor = 24
	for name, b := range inputs {
		testenv.CheckAllocBound(t, name, len(b), factor, func() { Parse(b) })
	}
}
