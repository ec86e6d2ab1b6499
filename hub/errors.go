package hub

import (
	"fmt"
	"net/http"
	"strings"
)

// Error codes: the hub's own X-Error-Code values, and krafla's for failures
// that happen on this side.
const (
	RepoNotFound     = "RepoNotFound"     // hub: no such repo, or private and no (valid) token
	RevisionNotFound = "RevisionNotFound" // hub: no such branch, tag or commit
	EntryNotFound    = "EntryNotFound"    // hub: no such file at that revision
	GatedRepo        = "GatedRepo"        // hub: access must be requested (401 without token, 403 not granted)
	Forbidden        = "Forbidden"        // 403 without a code (token lacks the permission)
	HashMismatch     = "HashMismatch"     // the body's sha256 (or git sha1) is not the ETag
	ConnectionLost   = "ConnectionLost"   // the retries ran out; the partial file stays to resume
	DiskFull         = "DiskFull"         // no space left while writing a blob
	OfflineMissing   = "OfflineMissing"   // offline and the cache lacks what is needed
	BadResponse      = "BadResponse"      // the hub said something we cannot use
)

// Error is a failure of the hub or of a download, with the hub's
// X-Error-Code (or one of ours) in Code.
type Error struct {
	Code     string
	Status   int    // HTTP status, 0 when not from a response
	Repo     string // the repo, when known
	Revision string
	Path     string   // the file, when the failure is about one
	Message  string   // the hub's X-Error-Message, or our detail
	Missing  []string // OfflineMissing, EntryNotFound: every file the cache (or repo) lacks
	Err      error    // the underlying error, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("hub: ")
	where := e.Repo
	if e.Path != "" {
		where += "/" + e.Path
	}
	if e.Revision != "" {
		where += "@" + e.Revision
	}
	if where != "" {
		b.WriteString(where + ": ")
	}
	b.WriteString(e.Code)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Hint is the way out of the failure, one or two sentences for a user.
func (e *Error) Hint() string {
	switch e.Code {
	case RepoNotFound:
		return fmt.Sprintf("check the name at https://huggingface.co/%s; a private repo looks the same without a token: set HF_TOKEN (or run `huggingface-cli login`)", e.Repo)
	case RevisionNotFound:
		return fmt.Sprintf("no branch, tag or commit %q in %s; omit @REVISION for main", e.Revision, e.Repo)
	case EntryNotFound:
		return "the file is not in the repo at that revision"
	case GatedRepo:
		if e.Status == http.StatusUnauthorized {
			return fmt.Sprintf("the repo is gated: request access at https://huggingface.co/%s, then set HF_TOKEN to a token of that account (https://huggingface.co/settings/tokens)", e.Repo)
		}
		return fmt.Sprintf("the token's account has not been granted access yet: request it at https://huggingface.co/%s and wait for approval", e.Repo)
	case Forbidden:
		return "the token lacks the permission to read this repo (a fine-grained token needs read access to it)"
	case ConnectionLost:
		return "run the same command again to resume: what was downloaded is kept"
	case DiskFull:
		return "free some space (or point HF_HUB_CACHE elsewhere) and run the same command again to resume"
	case HashMismatch:
		return "the partial file was deleted; run the same command again to download it afresh"
	case OfflineMissing:
		if len(e.Missing) > 1 {
			return "unset HF_HUB_OFFLINE to download them (the files the cache holds are used as they are)"
		}
		return "unset HF_HUB_OFFLINE to download it"
	}
	return ""
}

// responseError turns a failed response into an *Error, reading the
// hub's X-Error-Code and X-Error-Message as huggingface_hub's
// hf_raise_for_status does.
func responseError(resp *http.Response, repo, rev, path string) *Error {
	code := resp.Header.Get("X-Error-Code")
	msg := resp.Header.Get("X-Error-Message")
	e := &Error{Code: code, Status: resp.StatusCode, Repo: repo, Revision: rev, Path: path, Message: msg}
	switch {
	case code == RepoNotFound, code == RevisionNotFound, code == EntryNotFound, code == GatedRepo:
	case resp.StatusCode == http.StatusUnauthorized:
		e.Code = RepoNotFound // the hub answers 401 for a private or missing repo
	case resp.StatusCode == http.StatusForbidden:
		e.Code = Forbidden
	case resp.StatusCode == http.StatusNotFound && path != "":
		e.Code = EntryNotFound
	case resp.StatusCode == http.StatusNotFound:
		e.Code = RepoNotFound
	default:
		if e.Code == "" {
			e.Code = BadResponse
		}
		if e.Message == "" {
			e.Message = resp.Status
		}
	}
	return e
}
