package mlt

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
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

// TestSectionErrorOffsets: a section parser's errors point into the file: the
// version field (sections.go passes the payload's offset, off+8; `off-8`
// moves them 16 bytes back) and the payload.
func TestSectionErrorOffsets(t *testing.T) {
	base := len(smallByteLevel().Bytes())
	for _, c := range []struct {
		name string
		b    []byte
		off  int64
	}{
		{"version", withPairSection(20, 0, 0, 0, 2, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16), int64(base + 4)},
		{"payload", withPairSection(8, 0, 0, 0, 1, 0, 0, 0, 1, 2, 3, 4), int64(base + 8)},
	} {
		_, err := Parse(c.b)
		var e *Error
		if !errors.As(err, &e) || e.Offset != c.off {
			t.Errorf("%s: got %v, want an *Error at offset %d", c.name, err, c.off)
		}
	}
}

// image encodes a tokenizer that need not be valid (Bytes does not validate).
func image(kind Kind, bos, eos int32, flags uint32, toks []Token, merges [][3]uint32) []byte {
	return (&Tokenizer{Kind: kind, BOS: bos, EOS: eos, Flags: flags, Tokens: toks, Merges: merges}).Bytes()
}

// TestParseExactFit: counts and lengths that end exactly at the end of the
// file are in range (format.go's `> rest`, `off+tokenHeaderSize > size`,
// `n > size-off`, `nMerges*mergeSize > size-off`; `>=` calls such a file
// truncated), and the limits themselves are allowed (`nVocab > MaxVocab`,
// `n > MaxTokenLen`, `len(b) < headerSize`).
func TestParseExactFit(t *testing.T) {
	le := binary.LittleEndian
	// One empty added token, nothing after it: the structure fits exactly,
	// so the error is validate's.
	one := image(KindByteLevel, -1, -1, 0, []Token{{Attr: AttrAdded}}, nil)
	hdr := image(KindByteLevel, -1, -1, 0, nil, nil)
	le.PutUint32(hdr[12:], 1)
	vmax := image(KindByteLevel, -1, -1, 0, nil, nil)
	le.PutUint32(vmax[12:], MaxVocab)
	for _, c := range []struct {
		name string
		b    []byte
		says string
	}{
		{"one empty token", one, "token 0: empty added token"},
		{"header only", hdr, "n_vocab 1 and n_merges 0 need at least 5 bytes, the file has 0"},
		{"31 bytes", hdr[:31], "file of 31 bytes is shorter than the 32-byte header"},
		{"n_vocab at the limit", vmax, "n_vocab 16777216 and n_merges 0 need at least"},
	} {
		_, err := Parse(c.b)
		if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: got %v, want ML_E_FORMAT saying %q", c.name, err, c.says)
		}
	}
	// A token of exactly MaxTokenLen bytes, last in the file, no merges.
	tk := smallByteLevel()
	tk.Merges = nil
	long := make([]byte, MaxTokenLen)
	for i := range long {
		long[i] = 'a' + byte(i%26)
	}
	tk.Tokens = append(tk.Tokens, Token{Attr: AttrAdded, Bytes: long})
	p, err := Parse(tk.Bytes())
	if err != nil {
		t.Fatalf("token of MaxTokenLen bytes at the end: %v", err)
	}
	if got := p.Tokens[len(p.Tokens)-1].Bytes; string(got) != string(long) {
		t.Errorf("long token read back as %d bytes", len(got))
	}
	if err := tk.Validate(); err != nil {
		t.Errorf("Validate, token of MaxTokenLen bytes: %v", err)
	}
	tk.Tokens[len(tk.Tokens)-1].Bytes = append(long, 'z')
	if err := tk.Validate(); err == nil || !strings.Contains(err.Error(), "length 65537 above the limit") {
		t.Errorf("Validate, token of MaxTokenLen+1 bytes: %v", err)
	}
}

// TestValidateEdges: the ids just past the vocabulary are out of range
// (`int(t.BOS) >= n`, `int(t.EOS) >= n`, `int64(id) >= int64(n)`; `>` lets
// them through), bos 0 is a bos (`t.BOS < 0`), byte token 0 is seen
// (`byteSeen[...] >= 0`), and merge errors name the merge's offset
// (mergeOff = off - n_merges·12).
func TestValidateEdges(t *testing.T) {
	good := smallByteLevel().Bytes()
	n := len(smallByteLevel().Tokens) // 260
	le := binary.LittleEndian
	put := func(src []byte, off int, v uint32) []byte {
		b := append([]byte(nil), src...)
		le.PutUint32(b[off:], v)
		return b
	}
	lastMerge := len(good) - mergeSize
	sp := smallSentencePiece(0)
	sp.Tokens[0x41] = Token{Attr: AttrByte, Bytes: []byte{0}}
	for _, c := range []struct {
		name string
		b    []byte
		says string
		off  int64
	}{
		{"bos = n_vocab", put(good, 20, uint32(n)), "bos id 260 out of range (-1 or 0..259)", 20},
		{"eos = n_vocab", put(good, 24, uint32(n)), "eos id 260 out of range (-1 or 0..259)", 24},
		{"merge names n_vocab", put(good, lastMerge+8, uint32(n)), "merge 2 names token 260, which does not exist (n_vocab 260)", int64(lastMerge)},
		{"merge does not concatenate", put(good, lastMerge+8, 'x'), "merge 2: \"he\" + \"ll\" does not make token 120", int64(lastMerge)},
		{"first merge", put(good, lastMerge-2*mergeSize+8, uint32(n)), "merge 0 names token 260", int64(lastMerge - 2*mergeSize)},
		{"duplicate byte token 0", sp.Bytes(), "token 65: byte token <0x00> duplicates token 0", -1},
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", c.name, r)
				}
			}()
			_, err := Parse(c.b)
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.says) || e.Offset != c.off {
				t.Errorf("%s: got %v, want ML_E_FORMAT saying %q at offset %d", c.name, err, c.says, c.off)
			}
		}()
	}
	// bos 0 with add_bos is valid.
	b0 := smallByteLevel()
	b0.BOS, b0.Flags = 0, FlagAddBOS
	if _, err := Parse(b0.Bytes()); err != nil {
		t.Errorf("add_bos with bos 0: %v", err)
	}
}

// TestErrorString: the offset is printed when it is 0 (`e.Offset >= 0`) and
// left out when -1; the path comes first.
func TestErrorString(t *testing.T) {
	for _, c := range []struct {
		e    *Error
		want string
	}{
		{&Error{Code: ErrFormat, Offset: 0, Msg: "bad magic"}, "mlt: bad magic at offset 0x0"},
		{&Error{Code: ErrFormat, Path: "a.mlt", Offset: 0x1c, Msg: "m"}, "mlt: a.mlt: m at offset 0x1c"},
		{&Error{Code: ErrIO, Offset: -1, Msg: "cannot open", Err: errors.New("no")}, "mlt: cannot open: no"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}

// TestOpenTooLarge: a file above the 2 GiB limit is refused from its size,
// before anything is read (a sparse file: no disk is used), naming the file.
func TestOpenTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.mlt")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1<<31 + 1); err != nil {
		f.Close()
		t.Skipf("cannot make a sparse file of 2 GiB + 1: %v", err)
	}
	f.Close()
	_, err = Open(path)
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "file of 2147483649 bytes is larger than any tokenizer (limit 2147483648)") || !strings.Contains(err.Error(), path) {
		t.Errorf("Open(2 GiB + 1): got %v, want ML_E_FORMAT naming the size and the file", err)
	}
}
