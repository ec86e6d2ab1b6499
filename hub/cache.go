package hub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/krafla/krafla/internal/atomicfile"
)

// RepoFolder is the cache folder name of a model repo: models--ORG--NAME
// (huggingface_hub's repo_folder_name).
func RepoFolder(repo string) string {
	return "models--" + strings.ReplaceAll(repo, "/", "--")
}

// repoDir is the repo's folder in the cache.
func (c *Client) repoDir(repo string) string { return filepath.Join(c.Cache, RepoFolder(repo)) }

// Snapshot is a repo's files at one commit, in the cache.
type Snapshot struct {
	Repo   string
	Commit string
	Dir    string   // snapshots/{commit}: the files, as symlinks into blobs
	Files  []string // the files present (a dangling link is not), sorted
}

// Path is the file's path on disk.
func (s *Snapshot) Path(file string) string { return filepath.Join(s.Dir, filepath.FromSlash(file)) }

// Has reports whether the snapshot holds file.
func (s *Snapshot) Has(file string) bool {
	i := sort.SearchStrings(s.Files, file)
	return i < len(s.Files) && s.Files[i] == file
}

// ReadRef is the commit refs/{rev} records for repo (or rev itself when it is
// a commit); "" when the cache has no such ref.
func (c *Client) ReadRef(repo, rev string) string {
	if IsCommit(rev) {
		return rev
	}
	if checkRepoPath(rev) != nil {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(c.repoDir(repo), "refs", filepath.FromSlash(rev)))
	if err != nil {
		return ""
	}
	s := strings.TrimSpace(string(b))
	if !IsCommit(s) {
		return ""
	}
	return s
}

// Cached is what the cache holds of repo at rev, without the network; an
// *Error with Code OfflineMissing when it holds nothing.
func (c *Client) Cached(repo, rev string) (*Snapshot, error) {
	commit := c.ReadRef(repo, rev)
	if commit == "" {
		return nil, &Error{Code: OfflineMissing, Repo: repo, Revision: rev,
			Message: fmt.Sprintf("not in the Hugging Face cache %s", c.Cache)}
	}
	s := &Snapshot{Repo: repo, Commit: commit, Dir: filepath.Join(c.repoDir(repo), "snapshots", commit)}
	err := filepath.WalkDir(s.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			return nil // a dangling link: the blob is missing
		}
		rel, err := filepath.Rel(s.Dir, p)
		if err != nil {
			return err
		}
		s.Files = append(s.Files, filepath.ToSlash(rel))
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(s.Files) == 0 {
		return nil, &Error{Code: OfflineMissing, Repo: repo, Revision: rev,
			Message: fmt.Sprintf("commit %s has no files in the Hugging Face cache %s", commit, c.Cache)}
	}
	if err != nil {
		return nil, err
	}
	sort.Strings(s.Files)
	return s, nil
}

// Pull brings the files of repo at rev that choose picks from the repo's
// listing into the cache and returns the snapshot (Files: the chosen ones).
// Files the cache already holds at that commit are not downloaded again
// (what another tool left half done is completed file by file); a chosen
// file the repo does not list is an EntryNotFound error before any
// download. Offline, the listing is the cache's, and the chosen files it
// lacks make an OfflineMissing error naming every one (Error.Missing).
func (c *Client) Pull(ctx context.Context, repo, rev string, choose func(files []string) ([]string, error)) (*Snapshot, error) {
	if c.Offline {
		s, err := c.Cached(repo, rev)
		if err != nil {
			return nil, err
		}
		want, err := choose(s.Files)
		if err != nil {
			return nil, err
		}
		var missing []string
		for _, f := range want {
			if !s.Has(f) {
				missing = append(missing, f)
			}
		}
		if len(missing) > 0 {
			e := &Error{Code: OfflineMissing, Repo: repo, Revision: rev, Missing: missing,
				Message: fmt.Sprintf("the Hugging Face cache %s holds %d of the %d files needed at commit %s; missing: %s",
					c.Cache, len(want)-len(missing), len(want), s.Commit, strings.Join(missing, ", "))}
			if len(missing) == 1 {
				e.Path = missing[0]
			}
			return nil, e
		}
		s.Files = want
		return s, nil
	}
	info, err := c.Info(ctx, repo, rev)
	if err != nil {
		return nil, err
	}
	want, err := choose(info.Files)
	if err != nil {
		return nil, err
	}
	listed := map[string]bool{}
	for _, f := range info.Files {
		listed[f] = true
	}
	var absent []string
	for _, f := range want {
		if !listed[f] {
			absent = append(absent, f)
		}
	}
	if len(absent) > 0 {
		// Refused before any download: the repo itself lacks them.
		return nil, &Error{Code: EntryNotFound, Repo: repo, Revision: info.Commit, Missing: absent,
			Message: "the repo lacks " + strings.Join(absent, ", ")}
	}
	s := &Snapshot{Repo: repo, Commit: info.Commit, Dir: filepath.Join(c.repoDir(repo), "snapshots", info.Commit)}
	for _, f := range want {
		if st, err := os.Stat(s.Path(f)); err == nil && st.Mode().IsRegular() {
			continue // the snapshot at this commit has it: the content cannot differ
		}
		if err := c.Download(ctx, repo, info.Commit, f); err != nil {
			return nil, err
		}
	}
	if rev != info.Commit {
		if err := c.writeRef(repo, rev, info.Commit); err != nil {
			return nil, err
		}
	}
	s.Files = append([]string(nil), want...)
	sort.Strings(s.Files)
	return s, nil
}

func (c *Client) writeRef(repo, rev, commit string) error {
	if err := checkRepoPath(rev); err != nil {
		return fmt.Errorf("revision %q: %w", rev, err)
	}
	p := filepath.Join(c.repoDir(repo), "refs", filepath.FromSlash(rev))
	if b, err := os.ReadFile(p); err == nil && strings.TrimSpace(string(b)) == commit {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return diskErr(err, repo, rev, "")
	}
	return diskErr(atomicfile.WriteFile(p, []byte(commit)), repo, rev, "")
}

// diskErr marks a write failing for want of space as DiskFull.
func diskErr(err error, repo, rev, path string) error {
	if err != nil && errors.Is(err, syscall.ENOSPC) {
		return &Error{Code: DiskFull, Repo: repo, Revision: rev, Path: path, Err: err}
	}
	return err
}

// Download brings one file of repo at commit into the cache:
// blobs/{etag} (downloaded through blobs/{etag}.incomplete, resumed with
// Range, hashed before it is renamed into place) and the symlink
// snapshots/{commit}/{path} to it. One process at a time downloads a blob
// (the lock file .locks/models--ORG--NAME/{etag}.lock, as huggingface_hub's).
func (c *Client) Download(ctx context.Context, repo, commit, path string) error {
	if err := checkRepoPath(path); err != nil {
		return &Error{Code: BadResponse, Repo: repo, Revision: commit, Path: path, Message: err.Error()}
	}
	m, err := c.Meta(ctx, repo, commit, path)
	if err != nil {
		return err
	}
	dir := c.repoDir(repo)
	blob := filepath.Join(dir, "blobs", m.ETag)
	if _, err := os.Stat(blob); err != nil {
		if err := c.fetchBlob(ctx, repo, commit, path, m, blob); err != nil {
			return err
		}
	}
	return diskErr(c.link(dir, commit, path, m.ETag), repo, commit, path)
}

// link makes snapshots/{commit}/{path} a relative symlink to blobs/{etag}
// (huggingface_hub's _create_symlink), replacing whatever was there.
func (c *Client) link(dir, commit, path, etag string) error {
	dst := filepath.Join(dir, "snapshots", commit, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	rel, err := filepath.Rel(filepath.Dir(dst), filepath.Join(dir, "blobs", etag))
	if err != nil {
		return err
	}
	if cur, err := os.Readlink(dst); err == nil && cur == rel {
		return nil
	}
	tmp := dst + ".krafla-link-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(rand.Uint64(), 36)
	os.Remove(tmp)
	if err := os.Symlink(rel, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// fetchBlob downloads the file into blob under the lock.
func (c *Client) fetchBlob(ctx context.Context, repo, commit, path string, m *FileMeta, blob string) error {
	fail := func(err error) error { return diskErr(err, repo, commit, path) }
	locks := filepath.Join(c.Cache, ".locks", RepoFolder(repo))
	if err := os.MkdirAll(locks, 0o755); err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(filepath.Dir(blob), 0o755); err != nil {
		return fail(err)
	}
	unlock, err := lockFile(filepath.Join(locks, m.ETag+".lock"))
	if err != nil {
		return fail(err)
	}
	defer unlock()
	if _, err := os.Stat(blob); err == nil {
		return nil // another process finished it while we waited
	}
	part := blob + ".incomplete"
	f, err := os.OpenFile(part, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	if err := c.fill(ctx, f, repo, commit, path, m); err != nil {
		return err
	}
	sum, err := hashFile(f, m)
	if err != nil {
		return fail(err)
	}
	if sum != m.ETag {
		f.Close()
		os.Remove(part)
		kind := "git sha1"
		if m.LFS {
			kind = "sha256"
		}
		return &Error{Code: HashMismatch, Repo: repo, Revision: commit, Path: path,
			Message: fmt.Sprintf("%s of the download is %s, the hub says %s", kind, sum, m.ETag)}
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	return fail(os.Rename(part, blob))
}

// hashFile is the file's sha256 (an LFS file) or git blob sha1.
func hashFile(f *os.File, m *FileMeta) (string, error) {
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	var h hash.Hash
	if m.LFS {
		h = sha256.New()
	} else {
		h = sha1.New()
		fmt.Fprintf(h, "blob %d\x00", st.Size())
	}
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, st.Size())); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// fill brings the partial file f up to the full size, resuming from what
// it holds with Range; a cut connection is retried with backoff, and
// each attempt that brought progressReset bytes resets the count.
func (c *Client) fill(ctx context.Context, f *os.File, repo, commit, path string, m *FileMeta) error {
	u := resolveURL(c.Endpoint, repo, commit, path)
	failures := 0
	var lastErr error
	for {
		st, err := f.Stat()
		if err != nil {
			return err
		}
		have := st.Size()
		if m.Size >= 0 && have > m.Size {
			if err := f.Truncate(0); err != nil {
				return err
			}
			have = 0
		}
		if m.Size >= 0 && have == m.Size {
			c.progress(path, have, m.Size)
			return nil
		}
		got, done, err := c.fetchRange(ctx, f, u, have, repo, commit, path, m)
		if done {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var he *Error
		if errors.As(err, &he) && he.Code != ConnectionLost || errors.Is(err, syscall.ENOSPC) {
			return diskErr(err, repo, commit, path)
		}
		if err != nil {
			lastErr = err
		}
		if got >= progressReset {
			failures = 0
		} else {
			failures++
		}
		if failures > c.Retries {
			have, _ := f.Seek(0, io.SeekEnd)
			return &Error{Code: ConnectionLost, Repo: repo, Revision: commit, Path: path,
				Message: fmt.Sprintf("%d of %d bytes kept in %s", have, m.Size, f.Name()), Err: lastErr}
		}
		if err := c.wait(ctx, failures, 0); err != nil {
			return err
		}
	}
}

// progressReset is how much an attempt must bring for the retries to count
// from zero again (a server cutting every few bytes must not go on forever).
const progressReset = 1 << 20

// fetchRange GETs the file from byte have on and appends it to f. It
// returns the bytes appended, whether the file is complete (for a file of
// unknown size: the body ended cleanly), and an error: an *Error for an
// answer that retrying will not change, anything else for a cut to retry.
func (c *Client) fetchRange(ctx context.Context, f *os.File, u string, have int64, repo, commit, path string, m *FileMeta) (int64, bool, error) {
	h := http.Header{"Accept-Encoding": {"identity"}}
	if have > 0 {
		h.Set("Range", fmt.Sprintf("bytes=%d-", have))
	}
	resp, err := c.request(ctx, http.MethodGet, u, h, true, repo, commit, path)
	if err != nil {
		var he *Error
		if errors.As(err, &he) && he.Code == ConnectionLost {
			return 0, false, he.Err // let fill count it as one failure
		}
		return 0, false, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusPartialContent:
		start, ok := contentRangeStart(resp.Header.Get("Content-Range"))
		if !ok || start != have {
			return 0, false, &Error{Code: BadResponse, Status: resp.StatusCode, Repo: repo, Revision: commit, Path: path,
				Message: fmt.Sprintf("asked for bytes %d-, got Content-Range %q", have, resp.Header.Get("Content-Range"))}
		}
	case http.StatusOK:
		// The whole file (a server ignoring Range): start over.
		if err := f.Truncate(0); err != nil {
			return 0, false, err
		}
		have = 0
	case http.StatusRequestedRangeNotSatisfiable:
		// The partial file is not a prefix the server can continue:
		// start over (a complete one was caught before asking).
		if err := f.Truncate(0); err != nil {
			return 0, false, err
		}
		return 0, false, errors.New("416 Range Not Satisfiable: restarting the file")
	default:
		return 0, false, responseError(resp, repo, commit, path)
	}
	if _, err := f.Seek(have, io.SeekStart); err != nil {
		return 0, false, err
	}
	limit := int64(1 << 62)
	if m.Size >= 0 {
		limit = m.Size - have
	}
	w := &progressWriter{f: f, c: c, path: path, done: have, total: m.Size}
	n, err := io.Copy(w, io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return n, false, err
	}
	if n > limit {
		f.Truncate(0)
		return n, false, &Error{Code: BadResponse, Repo: repo, Revision: commit, Path: path,
			Message: fmt.Sprintf("the body is longer than the %d bytes the hub announced", m.Size)}
	}
	if m.Size < 0 {
		return n, true, nil
	}
	if n < limit {
		return n, false, fmt.Errorf("body ended after %d of %d bytes", have+n, m.Size)
	}
	return n, true, nil
}

// contentRangeStart reads N from "bytes N-M/T".
func contentRangeStart(v string) (int64, bool) {
	rest, ok := strings.CutPrefix(v, "bytes ")
	if !ok {
		return 0, false
	}
	s, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n >= 0
}

func (c *Client) progress(path string, done, total int64) {
	if c.Progress != nil {
		c.Progress(path, done, total)
	}
}

type progressWriter struct {
	f           *os.File
	c           *Client
	path        string
	done, total int64
}

func (w *progressWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.done += int64(n)
	w.c.progress(w.path, w.done, w.total)
	return n, err
}
