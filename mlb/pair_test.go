package mlb_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlb/mlbtest"
)

var testPairID = [mlb.PairIDSize]byte{0x3f, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0xee}

// TestPairRecord: a header with the pair record is written at offsets 164
// (pair_version 1) and 168 (the id), and Open and ReadHeader give it back.
func TestPairRecord(t *testing.T) {
	h := mlbtest.Base()
	h.SetPair(testPairID)
	b := validBytes(t, h)
	if v := binary.LittleEndian.Uint32(b[mlb.PairVersionOffset:]); v != 1 {
		t.Errorf("pair_version at 164: got %d, want 1", v)
	}
	if got := b[mlb.PairIDOffset : mlb.PairIDOffset+mlb.PairIDSize]; !bytes.Equal(got, testPairID[:]) {
		t.Errorf("pair_id at 168: got %x, want %x", got, testPairID)
	}
	f, err := openBytes(t, b)
	if err != nil {
		t.Fatal(err)
	}
	if f.Header.PairVersion != 1 || f.Header.PairID != testPairID {
		t.Errorf("Open: pair %d %x, want 1 %x", f.Header.PairVersion, f.Header.PairID, testPairID)
	}
	p := filepath.Join(t.TempDir(), "m.mlb")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rh, err := mlb.ReadHeader(p)
	if err != nil || rh.PairID != testPairID || rh.PairVersion != 1 {
		t.Errorf("ReadHeader: %v, pair %+v", err, rh)
	}
	h.SetPair([mlb.PairIDSize]byte{})
	if h.PairVersion != 0 {
		t.Errorf("SetPair(zero): pair_version %d, want 0", h.PairVersion)
	}
}

// TestNoPairRecord: a file without the record is what every writer wrote
// before the extension, zeros from 164 on, and loads with no record.
func TestNoPairRecord(t *testing.T) {
	b := validBytes(t, mlbtest.Base())
	if !bytes.Equal(b[160:mlb.HeaderSize], make([]byte, mlb.HeaderSize-160)) {
		t.Fatalf("header bytes 160..255 of a file without extensions are %x, want zeros", b[160:mlb.HeaderSize])
	}
	f, err := openBytes(t, b)
	if err != nil {
		t.Fatal(err)
	}
	if f.Header.PairVersion != 0 || f.Header.PairID != ([mlb.PairIDSize]byte{}) {
		t.Errorf("pair %d %x, want none", f.Header.PairVersion, f.Header.PairID)
	}
	if !bytes.Equal(f.Header.Marshal(), b[:mlb.HeaderSize]) {
		t.Error("the header does not marshal back to the file's bytes")
	}
}

// TestPairRecordRefused: a malformed record is ML_E_FORMAT naming the field
// at its offset, from Open, ReadHeader and the writer alike.
func TestPairRecordRefused(t *testing.T) {
	good := mlbtest.Base()
	good.SetPair(testPairID)
	for _, c := range []struct {
		name  string
		spoil func(b []byte)
		off   int64
		field string
	}{
		{"unknown pair_version", func(b []byte) { b[mlb.PairVersionOffset] = 2 }, mlb.PairVersionOffset, "pair_version 2 is unknown"},
		{"pair_version in its high byte", func(b []byte) { b[mlb.PairVersionOffset+3] = 1 }, mlb.PairVersionOffset, "pair_version"},
		{"zero id", func(b []byte) { clear(b[mlb.PairIDOffset : mlb.PairIDOffset+mlb.PairIDSize]) }, mlb.PairIDOffset, "pair_id is zero"},
		{"id without version", func(b []byte) { binary.LittleEndian.PutUint32(b[mlb.PairVersionOffset:], 0) }, mlb.PairIDOffset, "pair_id is set but pair_version is 0"},
		{"last id byte without version", func(b []byte) {
			binary.LittleEndian.PutUint32(b[mlb.PairVersionOffset:], 0)
			clear(b[mlb.PairIDOffset : mlb.PairIDOffset+mlb.PairIDSize-1])
		}, mlb.PairIDOffset, "pair_id is set"},
		{"byte after the record", func(b []byte) { b[mlb.ReservedStart] = 1 }, mlb.ReservedStart, "reserved"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := validBytes(t, good)
			c.spoil(b)
			for _, how := range []string{"Open", "ReadHeader"} {
				var err error
				if how == "Open" {
					_, err = openBytes(t, b)
				} else {
					p := filepath.Join(t.TempDir(), "m.mlb")
					if err := os.WriteFile(p, b, 0o644); err != nil {
						t.Fatal(err)
					}
					_, err = mlb.ReadHeader(p)
				}
				wantCode(t, err, mlb.CodeFormat, mlb.ErrFormat)
				var e *mlb.Error
				if !errors.As(err, &e) || e.Offset != c.off || !strings.Contains(err.Error(), c.field) {
					t.Errorf("%s: %v; want %q at offset %d", how, err, c.field, c.off)
				}
			}
			if c.off == mlb.ReservedStart {
				return
			}
			var h mlb.Header
			if err := h.Unmarshal(b); err != nil {
				t.Fatal(err)
			}
			_, err := mlb.Create(filepath.Join(t.TempDir(), "w.mlb"), &h)
			wantCode(t, err, mlb.CodeFormat, mlb.ErrFormat)
			if !strings.Contains(err.Error(), c.field) {
				t.Errorf("Create: %v; want %q", err, c.field)
			}
		})
	}
}
