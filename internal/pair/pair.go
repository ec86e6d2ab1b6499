// Package pair keeps a model and its tokenizer together: convert writes the
// same pair id into the .mlb header (pair_id) and the .mlt (its pair section),
// renames the two files in an order a reader can check, and every command that
// loads a model with its tokenizer refuses two files whose ids differ
// (docs/FORMATS.md, "Model and tokenizer pair").
//
// The commit protocol (Commit): both files are written to temporary files
// beside their targets, synced and verified; then the .mlb is renamed and the
// folder synced, then the .mlt is renamed and the folder synced. A process
// killed at any moment therefore leaves one of three states:
//
//   - before the first rename: the old pair, and leftover temporary files
//     that the next writer removes;
//   - between the renames: the new model, the old tokenizer (or none), and the
//     new tokenizer complete in its temporary file. The ids differ, so no
//     reader uses the two together; OpenTokenizer (every loader) and the next
//     Commit complete the pair by renaming that leftover into place, after
//     checking that it parses and carries the model's id;
//   - after the second rename: the new pair.
//
// So what a reader gets is the old pair or the new one, never one of each.
package pair

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"

	"github.com/krafla/krafla/internal/atomicfile"
	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlt"
)

// ID is a pair id: 16 bytes, never all zero (zero means "no record").
type ID = [mlb.PairIDSize]byte

// domain separates pair ids from any other SHA-256 of the same bytes.
const domain = "krafla .mlb/.mlt pair id, version 1\x00"

// Derive returns the pair id of a model with header h and the tokenizer tok:
// the first 16 bytes of SHA-256(domain ‖ the 256-byte header with its pair
// record zeroed ‖ the .mlt bytes without the pair section). It depends only on
// what the files say, so converting the same input twice gives the same bytes;
// a model whose header differs (another type, another shape) or a tokenizer
// that differs in any byte gets another id.
func Derive(h *mlb.Header, tok *mlt.Tokenizer) ID {
	hh := *h
	hh.SetPair(ID{})
	s := sha256.New()
	s.Write([]byte(domain))
	s.Write(hh.Marshal())
	s.Write(tok.BytesWithoutPair())
	var id ID
	copy(id[:], s.Sum(nil))
	if id == (ID{}) { // never in practice; zero would read as "no record"
		id[len(id)-1] = 1
	}
	return id
}

// Bind derives the pair's id and records it in both h and tok.
func Bind(h *mlb.Header, tok *mlt.Tokenizer) ID {
	id := Derive(h, tok)
	h.SetPair(id)
	tok.SetPair(id)
	return id
}

// ErrMismatch is matched (errors.Is) by every *Error.
var ErrMismatch = errors.New("model and tokenizer are not a pair")

// Error says that a model and a tokenizer were not written together.
type Error struct {
	Model, Tokenizer     string // the files
	ModelID, TokenizerID ID     // their records; zero where a file has none
	// Pending is a complete temporary tokenizer with the model's id, left by
	// an interrupted convert, that could not be renamed into place.
	Pending    string
	PendingErr error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s and %s are not a pair: ", e.Model, e.Tokenizer)
	switch {
	case e.TokenizerID == ID{}:
		s += fmt.Sprintf("the model was written with the tokenizer of pair %s, and the tokenizer has no pair record (written by krafla tokenize, or by a krafla older than the record)", short(e.ModelID))
	case e.ModelID == ID{}:
		s += fmt.Sprintf("the tokenizer was written with the model of pair %s, and the model has no pair record (converted with --no-tokenizer, or by a krafla older than the record)", short(e.TokenizerID))
	default:
		s += fmt.Sprintf("the model is of pair %s, the tokenizer of pair %s", short(e.ModelID), short(e.TokenizerID))
	}
	if e.Pending != "" {
		s += fmt.Sprintf("; the model's own tokenizer is %s, left by an interrupted convert, and could not be renamed into place (%v)", e.Pending, e.PendingErr)
	}
	return s + "; a convert was interrupted between the two files, or one of them is another convert's: re-run krafla convert to write both (or give the model's own tokenizer with -t)"
}

// Is matches ErrMismatch.
func (e *Error) Is(target error) bool { return target == ErrMismatch }

func short(id ID) string { return hex.EncodeToString(id[:]) }

// Check returns nil when the model's and the tokenizer's records agree: both
// name the same id, or neither file has a record (files written before the
// record existed load as they always did). Otherwise it returns an *Error
// naming both files.
func Check(model string, modelID ID, tokenizer string, tokenizerID ID) error {
	if modelID == tokenizerID {
		return nil
	}
	return &Error{Model: model, Tokenizer: tokenizer, ModelID: modelID, TokenizerID: tokenizerID}
}

// Hook, when set, is called at the named points of Commit ("prepared": both
// temporary files complete, nothing renamed; "model renamed"; "tokenizer
// renamed"). Tests set it to stop a process there; nothing else does.
var Hook func(point string)

func hook(point string) {
	if Hook != nil {
		Hook(point)
	}
}

// Commit finishes a pair: w is the model's writer, every tensor written, and
// its header was bound to tok (Bind). It completes an earlier interrupted
// commit at the same paths first (so its leftover is not lost), prepares the
// model (sync, loader verification) and the tokenizer (sync, parse back),
// then renames the model, then the tokenizer (see the package comment). On an
// error before the first rename both targets are untouched.
func Commit(w *mlb.Writer, tok *mlt.Tokenizer, tokPath string) error {
	id := w.Header().PairID
	if tok.Pair != id || id == (ID{}) {
		w.Abort()
		return fmt.Errorf("pair: internal error: %s and %s are not bound to one id", w.Path(), tokPath)
	}
	if err := tok.Validate(); err != nil {
		w.Abort()
		return withPath(err, tokPath)
	}
	Complete(w.Path(), tokPath)
	if err := w.Prepare(); err != nil {
		return err
	}
	t, err := atomicfile.Create(tokPath)
	if err != nil {
		w.Abort()
		return &mlt.Error{Code: mlt.ErrIO, Path: tokPath, Offset: -1, Msg: "cannot write file", Err: err}
	}
	_, err = t.Write(tok.Bytes())
	if err == nil {
		err = t.Prepare(func(tmp string) error {
			back, err := mlt.Open(tmp)
			if err == nil && back.Pair != id {
				err = fmt.Errorf("pair: %s: written tokenizer reads back with another pair id", tokPath)
			}
			return err
		})
	} else {
		t.Abort()
	}
	if err != nil {
		w.Abort()
		var e *mlt.Error
		if !errors.As(err, &e) {
			err = &mlt.Error{Code: mlt.ErrIO, Path: tokPath, Offset: -1, Msg: "cannot write file", Err: err}
		}
		return err
	}
	hook("prepared")
	if err := w.Commit(); err != nil {
		t.Abort()
		return err
	}
	hook("model renamed")
	if err := t.Rename(); err != nil {
		return fmt.Errorf("pair: %s is written but its tokenizer %s could not be renamed into place (%v): the two are not a pair; re-run krafla convert", w.Path(), tokPath, err)
	}
	hook("tokenizer renamed")
	return nil
}

func withPath(err error, path string) error {
	var e *mlt.Error
	if errors.As(err, &e) && e.Path == "" {
		e.Path = path
	}
	return err
}

// Complete finishes a commit that was interrupted between its two renames:
// when the model at model has a pair record and a dead writer's leftover
// temporary file of tokenizer parses and carries that id while the tokenizer
// in place does not, the leftover is renamed into place (and reported through
// atomicfile.OnStale). It returns the leftover it renamed, "" when there was
// nothing to complete, and the leftover it could not rename with the error.
func Complete(model, tokenizer string) (done, pending string, err error) {
	h, herr := mlb.ReadHeader(model)
	if herr != nil || h.PairVersion != 1 {
		return "", "", nil
	}
	return complete(h.PairID, tokenizer)
}

func complete(id ID, tokenizer string) (done, pending string, err error) {
	// Listing the folder is cheap; parsing a tokenizer is not (about a
	// second for Gemma 3's 262,145 tokens), so the usual case, no leftover,
	// parses nothing.
	left := atomicfile.Leftovers(tokenizer)
	if len(left) == 0 {
		return "", "", nil
	}
	if cur, err := mlt.Open(tokenizer); err == nil && cur.Pair == id {
		return "", "", nil
	}
	for _, s := range left {
		t, terr := mlt.Open(s.Path)
		if terr != nil || t.Pair != id {
			continue // not this model's tokenizer, or incomplete: the next writer removes it
		}
		if err := atomicfile.Adopt(s); err != nil {
			if errors.Is(err, os.ErrNotExist) { // another reader completed it first
				return "", "", nil
			}
			return "", s.Path, err
		}
		return s.Path, "", nil
	}
	return "", "", nil
}

// OpenTokenizer opens the tokenizer at path for the model at model, whose
// header's pair id is modelID, and refuses it (an *Error) unless the two are a
// pair. A pair left half-committed by an interrupted convert is completed
// first (see Complete).
func OpenTokenizer(model string, modelID ID, path string) (*mlt.Tokenizer, error) {
	tok, err := mlt.Open(path)
	if err == nil && tok.Pair == modelID {
		return tok, nil
	}
	var pending string
	var perr error
	if modelID != (ID{}) {
		var done string
		done, pending, perr = complete(modelID, path)
		if done != "" {
			tok, err = mlt.Open(path)
		}
	}
	if err != nil {
		return nil, err
	}
	if err := Check(model, modelID, path, tok.Pair); err != nil {
		e := err.(*Error)
		e.Pending, e.PendingErr = pending, perr
		return nil, e
	}
	return tok, nil
}
