// Package hub downloads files from the Hugging Face hub into the Hugging Face
// cache, laid out exactly as the huggingface_hub Python library lays it out
// (models--ORG--NAME/{blobs,snapshots,refs}), so that what other tools
// downloaded is used as is and what krafla downloads is used by them.
//
// The protocol is the hub's own: GET /api/models/{repo}/revision/{rev} lists
// the files and gives the commit; HEAD /{repo}/resolve/{commit}/{path} gives a
// file's ETag (the sha256 of an LFS file, from X-Linked-Etag, or the git blob
// sha1), its size and, for LFS files, a redirect to a CDN on another host;
// GET fetches it. Downloads resume with Range from blobs/{etag}.incomplete,
// in the same run and in the next one; every blob is hashed before it is
// renamed into place. Errors are *Error values carrying the hub's
// X-Error-Code. The package knows nothing of krafla's model files.
package hub

import (
	"fmt"
	"regexp"
	"strings"
)

// Ref is a model name as a user writes it: REPO[:TAG][@REVISION].
type Ref struct {
	Repo     string // "org/name"
	Tag      string // what to take from the repo ("q4_0", "Q4_K_M"); "" for the default
	Revision string // branch, tag or commit; "" means main
}

// Rev is the revision to resolve: r.Revision, or "main".
func (r Ref) Rev() string {
	if r.Revision == "" {
		return "main"
	}
	return r.Revision
}

func (r Ref) String() string {
	s := r.Repo
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Revision != "" {
		s += "@" + r.Revision
	}
	return s
}

// repoPart is one half of org/name as the hub allows it.
var repoPart = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$`)
var tagRe = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
var revRe = regexp.MustCompile(`^[A-Za-z0-9._/-]{1,200}$`)

// ParseRef parses REPO[:TAG][@REVISION]; the error says which part is wrong.
func ParseRef(s string) (Ref, error) {
	var r Ref
	rest := s
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		r.Revision, rest = rest[i+1:], rest[:i]
		if !revRe.MatchString(r.Revision) || strings.Contains(r.Revision, "..") {
			return Ref{}, fmt.Errorf("%q: revision %q: want a branch, tag or commit (letters, digits, . _ - /)", s, r.Revision)
		}
	}
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		r.Tag, rest = rest[i+1:], rest[:i]
		if !tagRe.MatchString(r.Tag) {
			return Ref{}, fmt.Errorf("%q: tag %q: want letters, digits, . _ -", s, r.Tag)
		}
	}
	org, name, ok := strings.Cut(rest, "/")
	if !ok || !repoPart.MatchString(org) || !repoPart.MatchString(name) || strings.Contains(rest, "..") {
		return Ref{}, fmt.Errorf("%q: want ORG/NAME[:TAG][@REVISION], e.g. HuggingFaceTB/SmolLM2-135M-Instruct:q4_0", s)
	}
	r.Repo = rest
	return r, nil
}

// IsCommit reports whether rev is a full commit hash (40 hex digits).
func IsCommit(rev string) bool {
	if len(rev) != 40 {
		return false
	}
	for _, c := range rev {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
