package pair_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/krafla/krafla/internal/atomicfile"
	"github.com/krafla/krafla/internal/pair"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlb/mlbtest"
	"github.com/krafla/krafla/mlt"
)

// deadPID is above every system's PID limit (Linux's is at most 2^22), so no
// process has it: a leftover named for it was left by a dead writer.
const deadPID = "99999999"

// byteTokenizer is a minimal valid byte-level tokenizer; eos tells two apart.
func byteTokenizer(eos int32) *mlt.Tokenizer {
	t := &mlt.Tokenizer{Kind: mlt.KindByteLevel, BOS: -1, EOS: eos}
	for c := range 256 {
		t.Tokens = append(t.Tokens, mlt.Token{Bytes: []byte{byte(c)}})
	}
	return t
}

func TestDerive(t *testing.T) {
	h, tok := mlbtest.Base(), byteTokenizer(1)
	id := pair.Derive(&h, tok)
	if id == (pair.ID{}) {
		t.Fatal("zero id")
	}
	if again := pair.Derive(&h, byteTokenizer(1)); again != id {
		t.Errorf("the same header and tokenizer give %x and %x, want one id", id, again)
	}
	h4 := h
	h4.WType = mlb.WTypeQ4_0
	if pair.Derive(&h4, tok) == id {
		t.Error("a Q4_0 header gives the Q8_0 one's id")
	}
	if pair.Derive(&h, byteTokenizer(2)) == id {
		t.Error("a tokenizer with another eos gives the same id")
	}
	// The id does not depend on a record already there.
	hb, tb := h, byteTokenizer(1)
	if got := pair.Bind(&hb, tb); got != id || hb.PairID != id || hb.PairVersion != 1 || tb.Pair != id || tb.Flags&mlt.FlagPair == 0 {
		t.Fatalf("Bind: id %x, header %d %x, tokenizer %x flags %#x; want %x in both", got, hb.PairVersion, hb.PairID, tb.Pair, tb.Flags, id)
	}
	if again := pair.Derive(&hb, tb); again != id {
		t.Errorf("Derive of bound files: %x, want %x", again, id)
	}
}

func TestCheck(t *testing.T) {
	a, b := pair.ID{1}, pair.ID{2}
	for _, c := range []struct {
		name       string
		model, tok pair.ID
		ok         bool
		says       string
	}{
		{"neither has a record", pair.ID{}, pair.ID{}, true, ""},
		{"same id", a, a, true, ""},
		{"other ids", a, b, false, "the model is of pair 01000000000000000000000000000000, the tokenizer of pair 02000000000000000000000000000000"},
		{"tokenizer without a record", a, pair.ID{}, false, "the tokenizer has no pair record"},
		{"model without a record", pair.ID{}, b, false, "the model has no pair record"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := pair.Check("d/m.mlb", c.model, "d/m.mlt", c.tok)
			if c.ok {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, pair.ErrMismatch) {
				t.Fatalf("got %v, want ErrMismatch", err)
			}
			for _, want := range []string{"d/m.mlb and d/m.mlt are not a pair", c.says, "re-run krafla convert"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q does not say %q", err, want)
				}
			}
		})
	}
}

// halfPair leaves dir as a convert killed between its two renames does: the
// new model (bound to the tokenizer with eos 2) at m.mlb, the old tokenizer
// (eos 1, bound to another model) at m.mlt, and the new tokenizer complete in
// a dead writer's temporary file. It returns the paths and the new pair.
func halfPair(t *testing.T, dir string) (model, tokPath, leftover string, newTok []byte, id pair.ID) {
	t.Helper()
	model, tokPath = filepath.Join(dir, "m.mlb"), filepath.Join(dir, "m.mlt")
	oldH, oldTok := mlbtest.Base(), byteTokenizer(1)
	oldH.WType = mlb.WTypeQ4_0
	pair.Bind(&oldH, oldTok)
	if err := oldTok.Write(tokPath); err != nil {
		t.Fatal(err)
	}
	h, tok := mlbtest.Base(), byteTokenizer(2)
	id = pair.Bind(&h, tok)
	w, err := mlb.Create(model, &h)
	if err != nil {
		t.Fatal(err)
	}
	if err := mlbtest.Fill(w, 1); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	newTok = tok.Bytes()
	leftover = filepath.Join(dir, ".m.mlt.krafla-tmp-"+deadPID+"-1")
	writeOld(t, leftover, newTok)
	return model, tokPath, leftover, newTok, id
}

// writeOld writes b at path with a modification time before this process
// started, as a leftover of an earlier process has.
func writeOld(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

func reports(t *testing.T) *[]atomicfile.Stale {
	var got []atomicfile.Stale
	atomicfile.OnStale(func(s atomicfile.Stale) { got = append(got, s) })
	t.Cleanup(func() { atomicfile.OnStale(nil) })
	return &got
}

// TestOpenTokenizerCompletes: the loader finds the half-renamed pair, renames
// the model's own tokenizer into place, says so, and returns it.
func TestOpenTokenizerCompletes(t *testing.T) {
	got := reports(t)
	model, tokPath, leftover, newTok, id := halfPair(t, t.TempDir())
	tok, err := pair.OpenTokenizer(model, id, tokPath)
	if err != nil {
		t.Fatal(err)
	}
	if tok.Pair != id {
		t.Errorf("tokenizer of pair %x, want %x", tok.Pair, id)
	}
	if b, _ := os.ReadFile(tokPath); !bytes.Equal(b, newTok) {
		t.Error("m.mlt is not the model's own tokenizer after OpenTokenizer")
	}
	if _, err := os.Stat(leftover); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("leftover still there: %v", err)
	}
	if len(*got) != 1 || !(*got)[0].Adopted || !strings.Contains((*got)[0].String(), "completed the interrupted write of process "+deadPID) {
		t.Errorf("reports %v, want one completion", *got)
	}
}

// TestOpenTokenizerRefuses: without the model's own tokenizer complete in a
// dead writer's leftover, the half pair is refused and nothing is renamed.
func TestOpenTokenizerRefuses(t *testing.T) {
	for _, c := range []struct {
		name  string
		spoil func(t *testing.T, leftover string, newTok []byte)
	}{
		{"no leftover", func(t *testing.T, leftover string, _ []byte) { os.Remove(leftover) }},
		{"leftover cut short", func(t *testing.T, leftover string, b []byte) { writeOld(t, leftover, b[:len(b)-1]) }},
		{"leftover of another pair", func(t *testing.T, leftover string, _ []byte) {
			h, tok := mlbtest.Base(), byteTokenizer(3)
			pair.Bind(&h, tok)
			writeOld(t, leftover, tok.Bytes())
		}},
		{"leftover of a running writer", func(t *testing.T, leftover string, b []byte) {
			os.Remove(leftover)
			writeOld(t, filepath.Join(filepath.Dir(leftover), ".m.mlt.krafla-tmp-"+strconv.Itoa(os.Getppid())+"-1"), b)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := reports(t)
			dir := t.TempDir()
			model, tokPath, leftover, newTok, id := halfPair(t, dir)
			old, _ := os.ReadFile(tokPath)
			c.spoil(t, leftover, newTok)
			_, err := pair.OpenTokenizer(model, id, tokPath)
			if !errors.Is(err, pair.ErrMismatch) {
				t.Fatalf("got %v, want ErrMismatch", err)
			}
			if !strings.Contains(err.Error(), model+" and "+tokPath+" are not a pair") {
				t.Errorf("message %q does not name both files", err)
			}
			if b, _ := os.ReadFile(tokPath); !bytes.Equal(b, old) {
				t.Error("m.mlt changed")
			}
			if len(*got) != 0 {
				t.Errorf("reports %v, want none", *got)
			}
		})
	}
}

// TestOpenTokenizerNoTokenizer: the first convert to a path, killed between
// its renames, leaves no m.mlt at all; the loader completes that too.
func TestOpenTokenizerNoTokenizer(t *testing.T) {
	model, tokPath, _, newTok, id := halfPair(t, t.TempDir())
	os.Remove(tokPath)
	if _, err := pair.OpenTokenizer(model, id, tokPath); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(tokPath); !bytes.Equal(b, newTok) {
		t.Error("m.mlt is not the model's own tokenizer")
	}
}

// TestCommit: Commit writes both files, both bound to one id; before its
// first rename it has completed the earlier half-renamed pair at the same
// paths (so a kill of this commit leaves a whole pair, not the old model's
// tokenizer lost), and it renames the model before the tokenizer.
func TestCommit(t *testing.T) {
	dir := t.TempDir()
	model, tokPath, leftover, halfTok, _ := halfPair(t, dir)
	h, tok := mlbtest.Base(), byteTokenizer(4)
	h.ScaleF16 = 1
	id := pair.Bind(&h, tok)
	w, err := mlb.Create(model, &h)
	if err != nil {
		t.Fatal(err)
	}
	if err := mlbtest.Fill(w, 2); err != nil {
		t.Fatal(err)
	}
	var seen []string
	pair.Hook = func(p string) {
		m, _ := mlb.ReadHeader(model)
		tk, _ := os.ReadFile(tokPath)
		seen = append(seen, p)
		switch p {
		case "prepared":
			if _, err := os.Stat(leftover); !errors.Is(err, os.ErrNotExist) || !bytes.Equal(tk, halfTok) {
				t.Errorf("at %q the earlier pair is not completed", p)
			}
			if m.PairID == id {
				t.Errorf("at %q the model is renamed already", p)
			}
		case "model renamed":
			if m.PairID != id || !bytes.Equal(tk, halfTok) {
				t.Errorf("at %q: model of pair %x, tokenizer the earlier one %v; want the new model beside the earlier tokenizer", p, m.PairID, bytes.Equal(tk, halfTok))
			}
		}
	}
	defer func() { pair.Hook = nil }()
	if err := pair.Commit(w, tok, tokPath); err != nil {
		t.Fatal(err)
	}
	if want := []string{"prepared", "model renamed", "tokenizer renamed"}; strings.Join(seen, ",") != strings.Join(want, ",") {
		t.Errorf("points %v, want %v", seen, want)
	}
	f, err := mlb.Open(model)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	back, err := pair.OpenTokenizer(model, f.Header.PairID, tokPath)
	if err != nil || back.Pair != id || f.Header.PairID != id {
		t.Fatalf("after Commit: %v, model %x, tokenizer %x; want both %x", err, f.Header.PairID, back.Pair, id)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("%d files in the folder, want m.mlb and m.mlt", len(ents))
	}
}
