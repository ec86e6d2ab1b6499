package mlt

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// Tests from the mutants gremlins left alive in mlt/sections.go and
// mlt/format.go (docs/RELIABILITY.md, "mlt sections.go and format.go,
// session 8"): each fails with the mutant it names planted.

// withPairSection returns smallByteLevel's image with flag pair set and sec
// appended as the pair section's bytes (length field included).
func withPairSection(sec ...byte) []byte {
	b := smallByteLevel().Bytes()
	binary.LittleEndian.PutUint32(b[28:], FlagPair)
	return append(b, sec...)
}

// TestSectionHeaderBoundaries: a section header of exactly 8 bytes is there
// (sections.go `left < sectionHeaderSize`; `<=` calls it missing), and a
// section of length 4 (the version, no payload) is in range and reaches the
// section's parser, which judges the version and the payload
// (`n < 4`; `<=` refuses the length instead).
func TestSectionHeaderBoundaries(t *testing.T) {
	for _, c := range []struct {
		name string
		b    []byte
		says string
	}{
		{"length 4, version 1", withPairSection(4, 0, 0, 0, 1, 0, 0, 0), "pair_id of 0 bytes"},
		{"length 4, version 2", withPairSection(4, 0, 0, 0, 2, 0, 0, 0), "pair section version 2 is not supported"},
		{"length 3", withPairSection(3, 0, 0, 0, 1, 0, 0, 0), "pair section length 3 out of range 4..4"},
		{"length 5 past the end", withPairSection(5, 0, 0, 0, 1, 0, 0, 0), "pair section length 5 out of range 4..4"},
		{"7 bytes", withPairSection(4, 0, 0, 0, 1, 0, 0), "8-byte header is missing (7 bytes left)"},
	} {
		_, err := Parse(c.b)
		if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: got %v, want ML_E_FORMAT saying %q", c.name, err, c.says)
		}
	}
}
