package mlt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

var testPair = [PairIDSize]byte{0xa5, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0x5a}

// TestPairSection: flag 8192 and a 24-byte section (length 20, version 1,
// the id) after the last section; Parse gives the id back, and the bytes
// without it are the file as it was without the record.
func TestPairSection(t *testing.T) {
	for _, base := range []struct {
		name string
		tok  func() *Tokenizer
	}{{"plain", smallByteLevel}, {"after a pipeline section", smallByteLevelPipeline}, {"sentencepiece", func() *Tokenizer { return smallSentencePiece(FlagAddBOS) }}} {
		t.Run(base.name, func(t *testing.T) {
			plain := base.tok().Bytes()
			tk := base.tok()
			tk.SetPair(testPair)
			if tk.Flags&FlagPair == 0 {
				t.Fatal("SetPair did not set FlagPair")
			}
			b := tk.Bytes()
			want := append(append([]byte(nil), plain...), 20, 0, 0, 0, 1, 0, 0, 0)
			want = append(want, testPair[:]...)
			binary.LittleEndian.PutUint32(want[28:], binary.LittleEndian.Uint32(plain[28:])|FlagPair)
			if !bytes.Equal(b, want) {
				t.Fatalf("bytes with the pair section differ from the file without it plus flag 8192 and the section")
			}
			if !bytes.Equal(tk.BytesWithoutPair(), plain) {
				t.Error("BytesWithoutPair is not the file without the record")
			}
			back, err := Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			if back.Pair != testPair || !bytes.Equal(back.Bytes(), b) {
				t.Errorf("Parse: pair %x, want %x (and the same bytes back)", back.Pair, testPair)
			}
			// A file without the record parses without one, byte for byte.
			old, err := Parse(plain)
			if err != nil {
				t.Fatal(err)
			}
			if old.Pair != ([PairIDSize]byte{}) || old.Flags&FlagPair != 0 || !bytes.Equal(old.Bytes(), plain) {
				t.Errorf("file without the record: pair %x, flags %#x", old.Pair, old.Flags)
			}
			tk.SetPair([PairIDSize]byte{})
			if !bytes.Equal(tk.Bytes(), plain) {
				t.Error("SetPair(zero) does not remove the section")
			}
		})
	}
}

// TestPairSectionRefused: a malformed pair section is ML_E_FORMAT naming it.
func TestPairSectionRefused(t *testing.T) {
	tk := smallByteLevel()
	tk.SetPair(testPair)
	good := tk.Bytes()
	sec := len(good) - 24 // the section: u32 length, u32 version, 16 bytes
	for _, c := range []struct {
		name string
		b    func() []byte
		says string
	}{
		{"unknown version", func() []byte {
			b := bytes.Clone(good)
			b[sec+4] = 2
			return b
		}, "pair section version 2 is not supported"},
		{"id of 15 bytes", func() []byte {
			b := bytes.Clone(good[:len(good)-1])
			binary.LittleEndian.PutUint32(b[sec:], 19)
			return b
		}, "pair_id of 15 bytes, want 16"},
		{"id of 17 bytes", func() []byte {
			b := append(bytes.Clone(good), 0)
			binary.LittleEndian.PutUint32(b[sec:], 21)
			return b
		}, "pair_id of 17 bytes, want 16"},
		{"zero id", func() []byte {
			b := bytes.Clone(good)
			clear(b[sec+8:])
			return b
		}, "pair_id is zero"},
		{"flag without the section", func() []byte {
			return bytes.Clone(good[:sec])
		}, "pair section's 8-byte header is missing"},
		{"section cut short", func() []byte {
			return bytes.Clone(good[:len(good)-3])
		}, "pair section length 20 out of range"},
		{"section without the flag", func() []byte {
			b := bytes.Clone(good)
			binary.LittleEndian.PutUint32(b[28:], binary.LittleEndian.Uint32(b[28:])&^FlagPair)
			return b
		}, "24 trailing bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.b())
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("got %v, want ML_E_FORMAT saying %q", err, c.says)
			}
		})
	}
	// Validate refuses a record without its flag, and the flag without one.
	bad := smallByteLevel()
	bad.Pair = testPair
	if err := bad.Validate(); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "pair") {
		t.Errorf("Validate with the id but not the flag: %v", err)
	}
	bad = smallByteLevel()
	bad.Flags |= FlagPair
	if err := bad.Validate(); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "pair") {
		t.Errorf("Validate with the flag but no id: %v", err)
	}
}
