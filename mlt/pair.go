package mlt

import "encoding/binary"

// The pair section (flag 8192; docs/FORMATS.md, "Model and tokenizer pair"):
// the id that the .mlb written with this tokenizer carries at its header's
// pair_id. Version 1's payload is those 16 bytes, which are not all zero.

// PairIDSize is the length of a pair id, as in the .mlb header.
const PairIDSize = 16

const pairVersion = 1

// SetPair records id as the pair's id and sets FlagPair to match; a zero id
// removes the section.
func (t *Tokenizer) SetPair(id [PairIDSize]byte) {
	t.Pair = id
	if id == [PairIDSize]byte{} {
		t.Flags &^= FlagPair
	} else {
		t.Flags |= FlagPair
	}
}

func parsePairSection(t *Tokenizer, version uint32, p []byte, off int64) error {
	if version != pairVersion {
		return formatErr(off-4, "pair section version %d is not supported (this reader knows %d)", version, pairVersion)
	}
	if len(p) != PairIDSize {
		return formatErr(off, "pair section: pair_id of %d bytes, want %d", len(p), PairIDSize)
	}
	copy(t.Pair[:], p)
	if t.Pair == [PairIDSize]byte{} {
		return formatErr(off, "pair section: pair_id is zero (a pair record names a nonzero id)")
	}
	return nil
}

func appendPairSection(t *Tokenizer, b []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, pairVersion)
	return append(b, t.Pair[:]...)
}
