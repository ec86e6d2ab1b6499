package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client talks to one hub endpoint and writes into one cache folder.
type Client struct {
	Endpoint string        // "https://huggingface.co" or a mirror (HF_ENDPOINT)
	Token    string        // sent as Authorization: Bearer to the endpoint's host only
	Cache    string        // the HF hub cache folder (HF_HUB_CACHE)
	Offline  bool          // never touch the network (HF_HUB_OFFLINE)
	HTTP     *http.Client  // nil: a client with proxies from the environment
	Retries  int           // attempts after the first for a failed request or a cut body
	Backoff  time.Duration // the first retry's wait; doubled each time, with jitter

	// Progress, when set, is told about a download as bytes arrive: the
	// file's path in the repo, the bytes it has (resumed ones included)
	// and its size (0 if unknown). done == total marks the end.
	Progress func(path string, done, total int64)
}

// maxJSON bounds a JSON answer from the hub (a repo listing is small).
const maxJSON = 64 << 20

// RepoInfo is what the hub says of a repo at a revision.
type RepoInfo struct {
	Repo   string
	Commit string   // the revision resolved to a commit hash
	Files  []string // every file of the repo at that commit, by path
}

// Info lists a repo's files at rev and resolves rev to a commit:
// GET /api/models/{repo}/revision/{rev}.
func (c *Client) Info(ctx context.Context, repo, rev string) (*RepoInfo, error) {
	if c.Offline {
		return nil, &Error{Code: OfflineMissing, Repo: repo, Revision: rev, Message: "HF_HUB_OFFLINE is set: the hub is not asked"}
	}
	u := c.Endpoint + "/api/models/" + repo + "/revision/" + url.PathEscape(rev)
	resp, err := c.request(ctx, http.MethodGet, u, nil, false, repo, rev, "")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, responseError(resp, repo, rev, "")
	}
	var v struct {
		SHA      string `json:"sha"`
		Siblings []struct {
			Name string `json:"rfilename"`
		} `json:"siblings"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxJSON)).Decode(&v); err != nil {
		return nil, &Error{Code: BadResponse, Repo: repo, Revision: rev, Message: "repo info is not the JSON expected", Err: err}
	}
	if !IsCommit(v.SHA) {
		return nil, &Error{Code: BadResponse, Repo: repo, Revision: rev, Message: fmt.Sprintf("repo info: sha %q is not a commit hash", v.SHA)}
	}
	info := &RepoInfo{Repo: repo, Commit: v.SHA}
	for _, s := range v.Siblings {
		if err := checkRepoPath(s.Name); err != nil {
			return nil, &Error{Code: BadResponse, Repo: repo, Revision: rev, Message: "repo info: " + err.Error()}
		}
		info.Files = append(info.Files, s.Name)
	}
	return info, nil
}

// checkRepoPath refuses a file path that could leave the snapshot folder.
func checkRepoPath(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || strings.ContainsRune(p, 0) {
		return fmt.Errorf("file path %q is not a relative path", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." {
			return fmt.Errorf("file path %q has an empty, . or .. part", p)
		}
	}
	return nil
}

// FileMeta is what HEAD /{repo}/resolve/{rev}/{path} tells of one file.
type FileMeta struct {
	Commit string // X-Repo-Commit
	ETag   string // X-Linked-Etag (sha256 of an LFS file) or ETag (git blob sha1), unquoted
	Size   int64  // X-Linked-Size or Content-Length; -1 if unknown
	LFS    bool   // the ETag came from X-Linked-Etag: it is the sha256 of the content
}

func resolveURL(endpoint, repo, rev, path string) string {
	parts := strings.Split(path, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return endpoint + "/" + repo + "/resolve/" + url.PathEscape(rev) + "/" + strings.Join(parts, "/")
}

// Meta asks the hub for a file's ETag, size and commit (huggingface_hub's
// get_hf_file_metadata): a HEAD that follows redirects on the hub's own host
// (a renamed repo) and stops at one to another host (the CDN), whose
// X-Linked-* headers say what the CDN will serve.
func (c *Client) Meta(ctx context.Context, repo, rev, path string) (*FileMeta, error) {
	h := http.Header{"Accept-Encoding": {"identity"}}
	resp, err := c.request(ctx, http.MethodHead, resolveURL(c.Endpoint, repo, rev, path), h, false, repo, rev, path)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		return nil, responseError(resp, repo, rev, path)
	}
	m := &FileMeta{Commit: resp.Header.Get("X-Repo-Commit"), Size: -1}
	if e := resp.Header.Get("X-Linked-Etag"); e != "" {
		m.ETag, m.LFS = normalizeETag(e), true
	} else {
		m.ETag = normalizeETag(resp.Header.Get("ETag"))
	}
	s := resp.Header.Get("X-Linked-Size")
	if s == "" && resp.StatusCode == http.StatusOK {
		s = resp.Header.Get("Content-Length")
	}
	if s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return nil, &Error{Code: BadResponse, Repo: repo, Revision: rev, Path: path, Message: fmt.Sprintf("size %q is not a byte count", s)}
		}
		m.Size = n
	}
	if !validETag(m.ETag) {
		return nil, &Error{Code: BadResponse, Repo: repo, Revision: rev, Path: path, Message: fmt.Sprintf("ETag %q is not a hex sha1 or sha256 (is HF_ENDPOINT a hub?)", m.ETag)}
	}
	if m.LFS && len(m.ETag) != 64 {
		return nil, &Error{Code: BadResponse, Repo: repo, Revision: rev, Path: path, Message: fmt.Sprintf("X-Linked-Etag %q is not a sha256", m.ETag)}
	}
	if m.Commit != "" && !IsCommit(m.Commit) {
		return nil, &Error{Code: BadResponse, Repo: repo, Revision: rev, Path: path, Message: fmt.Sprintf("X-Repo-Commit %q is not a commit hash", m.Commit)}
	}
	return m, nil
}

// normalizeETag strips a weak marker and the quotes (huggingface_hub's _normalize_etag).
func normalizeETag(e string) string {
	return strings.Trim(strings.TrimPrefix(strings.TrimSpace(e), "W/"), `"`)
}

// validETag: the ETag names a blob file, so it must be plain hex of a hash's length.
func validETag(e string) bool {
	if len(e) != 40 && len(e) != 64 {
		return false
	}
	for _, c := range e {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// retryable reports whether a status is worth asking again.
func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusBadGateway ||
		status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout || status == http.StatusInternalServerError
}

// request sends one request with retries (network errors, 429 and 5xx,
// honouring Retry-After) and returns the last response.
func (c *Client) request(ctx context.Context, method, u string, h http.Header, followCross bool, repo, rev, path string) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := c.send(ctx, method, u, h, followCross)
		if err == nil && !retryable(resp.StatusCode) {
			return resp, nil
		}
		if ctx.Err() != nil {
			if resp != nil {
				resp.Body.Close()
			}
			return nil, ctx.Err()
		}
		var after time.Duration
		if err == nil {
			after = retryAfter(resp.Header.Get("Retry-After"))
			if attempt >= c.Retries {
				return resp, nil
			}
			resp.Body.Close()
		} else if attempt >= c.Retries {
			return nil, &Error{Code: ConnectionLost, Repo: repo, Revision: rev, Path: path,
				Message: fmt.Sprintf("after %d attempts", attempt+1), Err: err}
		}
		if err := c.wait(ctx, attempt, after); err != nil {
			return nil, err
		}
	}
}

// retryAfter reads a Retry-After header in seconds (an HTTP date is rare
// from the hub and read as no hint); capped at a minute.
func retryAfter(v string) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0
	}
	return min(time.Duration(n)*time.Second, time.Minute)
}

// wait sleeps before retry number attempt+1: Backoff·2^attempt with jitter,
// capped at 30 s, or the server's Retry-After if longer.
func (c *Client) wait(ctx context.Context, attempt int, after time.Duration) error {
	d := c.Backoff << min(attempt, 10)
	d = min(time.Duration(float64(d)*(0.5+rand.Float64())), 30*time.Second)
	d = max(d, after)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// send does one request, following redirects itself so that the token goes
// to the endpoint's host only: a redirect to another host (the CDN) gets no
// Authorization header. Without followCross such a redirect is returned
// as the response (HEAD reads the X-Linked-* headers from it).
func (c *Client) send(ctx context.Context, method, u string, h http.Header, followCross bool) (*http.Response, error) {
	ep, err := url.Parse(c.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("HF_ENDPOINT %q: %w", c.Endpoint, err)
	}
	hc := http.Client{Transport: http.DefaultTransport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if c.HTTP != nil {
		hc.Transport, hc.Timeout, hc.Jar = c.HTTP.Transport, c.HTTP.Timeout, c.HTTP.Jar
	}
	for hops := 0; ; hops++ {
		req, err := http.NewRequestWithContext(ctx, method, u, nil)
		if err != nil {
			return nil, err
		}
		for k, v := range h {
			req.Header[k] = v
		}
		req.Header.Set("User-Agent", "krafla-hub/1")
		if c.Token != "" && req.URL.Scheme == ep.Scheme && req.URL.Host == ep.Host {
			req.Header.Set("Authorization", "Bearer "+c.Token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		loc := resp.Header.Get("Location")
		if resp.StatusCode < 300 || resp.StatusCode > 399 || loc == "" {
			return resp, nil
		}
		next, err := req.URL.Parse(loc)
		if err != nil {
			resp.Body.Close()
			return nil, fmt.Errorf("redirect to %q: %w", loc, err)
		}
		if next.Host != ep.Host && !followCross {
			return resp, nil
		}
		if hops >= 10 {
			resp.Body.Close()
			return nil, errors.New("more than 10 redirects")
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		u = next.String()
	}
}
