package mlt

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Tests of session 14's mutation pass (mutrest14): the two format.go limits
// that session 9 left "not equivalent; not tested" for their memory.

// memAvailable returns /proc/meminfo's MemAvailable in bytes, or 0 where it
// cannot be read (not Linux).
func memAvailable() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// TestOpenSizeLimit14: Open refuses a file above 2^31 bytes by its size,
// before reading it, and reads one of exactly 2^31 bytes (format.go's
// `st.Size() > maxFile`; `>=` refuses that one by size too). The files are
// sparse (no disk), all zeros, so the 2^31-byte one is read (2 GiB of
// memory for a moment) and then refused by Parse for its magic, at offset 0,
// not by Open's size rule (offset -1). Skipped with -short or with less
// than 6 GiB of memory available.
func TestOpenSizeLimit14(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a 2 GiB file")
	}
	if memAvailable() < 6<<30 {
		t.Skip("needs 6 GiB of available memory (reads a 2 GiB file)")
	}
	dir := t.TempDir()
	sizeMsg := "is larger than any tokenizer (limit 2147483648)"
	for _, c := range []struct {
		size   int64
		bySize bool
	}{
		{1<<31 + 1, true},
		{1 << 31, false},
	} {
		p := filepath.Join(dir, "big"+strconv.FormatInt(c.size, 10)+".mlt")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(c.size); err != nil {
			f.Close()
			t.Skipf("cannot make a sparse file of %d bytes: %v", c.size, err)
		}
		f.Close()
		_, err = Open(p)
		os.Remove(p)
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrFormat) {
			t.Fatalf("%d bytes: got %v, want an ML_E_FORMAT *Error", c.size, err)
		}
		if got := strings.Contains(e.Msg, sizeMsg); got != c.bySize {
			t.Errorf("%d bytes: error %q; refused by size: %v, want %v", c.size, err, got, c.bySize)
		}
		if c.bySize && e.Offset != -1 || !c.bySize && e.Offset == -1 {
			t.Errorf("%d bytes: error %q at offset %d (want -1 only for the size rule)", c.size, err, e.Offset)
		}
		if e.Path != p {
			t.Errorf("%d bytes: error path %q, want %q", c.size, e.Path, p)
		}
	}
}

// TestValidateVocabLimit14: Validate allows exactly MaxVocab (2^24) tokens
// and refuses one more (format.go's `len(t.Tokens) > MaxVocab`; `>=`
// refuses the limit itself). Token 0 has the unknown attr 9, so the limit
// case fails right after the count check, on token 0, without building the
// vocabulary maps: the 2^24 zero tokens (512 MiB, read once each but never
// written but for token 0) are all the memory it takes.
func TestValidateVocabLimit14(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 512 MiB")
	}
	for _, c := range []struct {
		n    int
		says string
	}{
		{MaxVocab + 1, "n_vocab 16777217 out of range 1..16777216"},
		{MaxVocab, "token 0: unknown attr 9"},
	} {
		tk := &Tokenizer{Kind: KindByteLevel, Tokens: make([]Token, c.n)}
		tk.Tokens[0].Attr = 9
		err := tk.Validate()
		if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%d tokens: got %v, want ML_E_FORMAT saying %q", c.n, err, c.says)
		}
		tk.Tokens = nil
	}
}
