// Package hubtest is a fake Hugging Face hub for tests: an httptest server
// that answers the hub's API and resolve URLs as the real one does, and a
// second httptest server on another host playing the CDN that LFS files are
// redirected to, with faults to plant (a connection cut mid-file, a
// corrupted body, Range ignored or refused).
package hubtest

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path"
	"sort"
	"strings"
	"sync"
	"time"
)

// Repo is one model repo of the fake hub.
type Repo struct {
	Name    string
	Commit  string            // the commit main points at
	Refs    map[string]string // other branches and tags
	Files   map[string][]byte
	LFS     map[string]bool // files served through the CDN (sha256 ETag); others are git blobs (sha1)
	Gated   bool            // resolve needs a token with a grant
	Private bool            // invisible without a valid token
}

// Request is one request either server saw.
type Request struct {
	Server string // "hub" or "cdn"
	Method string
	Path   string
	Range  string
	Auth   string
}

// Hub is the fake hub. Set the fault fields before the request they affect;
// they are read under the lock.
type Hub struct {
	URL, CDNURL string
	hub, cdn    *httptest.Server

	mu      sync.Mutex
	repos   map[string]*Repo
	Tokens  map[string]bool // valid tokens
	Granted map[string]bool // tokens granted access to gated repos
	log     []Request

	CutAfter    int64         // CDN: abort the connection after this many body bytes (0: never)
	Cuts        int           // how many responses to cut (each cut decrements)
	CutBlob     string        // with CutAfter: cut only the blob of this sha256 ("" = any)
	Corrupt     bool          // CDN: flip one byte of every body
	IgnoreRange bool          // CDN: answer 200 with the whole file to a Range request
	Refuse416   int           // CDN: answer 416 to this many Range requests
	Slow        time.Duration // CDN: sleep this long per 1 KiB written
	Status      int           // hub: answer every request with this status (503, 429) while Fails > 0
	Fails       int
}

// New starts the hub and its CDN; Close stops them.
func New() *Hub {
	h := &Hub{repos: map[string]*Repo{}, Tokens: map[string]bool{}, Granted: map[string]bool{}}
	h.hub = httptest.NewServer(http.HandlerFunc(h.serveHub))
	h.cdn = httptest.NewServer(http.HandlerFunc(h.serveCDN))
	// The CDN on another host name than the hub, as in production
	// (huggingface.co → cdn-lfs.hf.co): localhost against 127.0.0.1.
	h.URL = h.hub.URL
	h.CDNURL = strings.Replace(h.cdn.URL, "127.0.0.1", "localhost", 1)
	return h
}

func (h *Hub) Close() { h.hub.Close(); h.cdn.Close() }

// Add adds a repo; files whose name ends in .safetensors, .gguf or .bin, or
// that are larger than 10 KiB, are LFS files. The commit is derived from
// the content.
func (h *Hub) Add(name string, files map[string][]byte) *Repo {
	r := &Repo{Name: name, Files: files, LFS: map[string]bool{}, Refs: map[string]string{}}
	hs := sha1.New()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b := files[n]
		fmt.Fprintf(hs, "%s\x00%x\x00", n, sha256.Sum256(b))
		switch path.Ext(n) {
		case ".safetensors", ".gguf", ".bin":
			r.LFS[n] = true
		}
		if len(b) > 10<<10 {
			r.LFS[n] = true
		}
	}
	hs.Write([]byte(name))
	r.Commit = hex.EncodeToString(hs.Sum(nil))
	h.mu.Lock()
	h.repos[name] = r
	h.mu.Unlock()
	return r
}

// Log is every request so far.
func (h *Hub) Log() []Request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Request(nil), h.log...)
}

// SHA256 is the hex sha256 of b; GitSHA1 the git blob hash.
func SHA256(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
func GitSHA1(b []byte) string {
	s := sha1.Sum(append([]byte(fmt.Sprintf("blob %d\x00", len(b))), b...))
	return hex.EncodeToString(s[:])
}

func (h *Hub) record(server string, r *http.Request) {
	h.mu.Lock()
	h.log = append(h.log, Request{server, r.Method, r.URL.Path, r.Header.Get("Range"), r.Header.Get("Authorization")})
	h.mu.Unlock()
}

func hubError(w http.ResponseWriter, status int, code, msg string) {
	if code != "" {
		w.Header().Set("X-Error-Code", code)
	}
	w.Header().Set("X-Error-Message", msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// lookup finds the repo and checks the token as the hub does; ok false
// means the error is written.
func (h *Hub) lookup(w http.ResponseWriter, r *http.Request, name string) (*Repo, string, bool) {
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	h.mu.Lock()
	repo := h.repos[name]
	valid := h.Tokens[tok]
	h.mu.Unlock()
	if tok != "" && !valid {
		hubError(w, 401, "", "Invalid credentials in Authorization header")
		return nil, "", false
	}
	if repo == nil || repo.Private && !valid {
		hubError(w, 401, "RepoNotFound", "Repository not found")
		return nil, "", false
	}
	return repo, tok, true
}

func (r *Repo) resolve(rev string) string {
	if rev == "main" || rev == "HEAD" || rev == r.Commit {
		return r.Commit
	}
	return r.Refs[rev]
}

// entry is a file as the tree and paths-info APIs describe it.
func (r *Repo) entry(name string) map[string]any {
	b := r.Files[name]
	e := map[string]any{"type": "file", "path": name, "oid": GitSHA1(b), "size": len(b)}
	if r.LFS[name] {
		e["lfs"] = map[string]any{"oid": SHA256(b), "size": len(b), "pointerSize": 134}
	}
	return e
}

func (h *Hub) serveHub(w http.ResponseWriter, r *http.Request) {
	h.record("hub", r)
	h.mu.Lock()
	if h.Fails > 0 {
		h.Fails--
		st := h.Status
		h.mu.Unlock()
		w.Header().Set("Retry-After", "0")
		hubError(w, st, "", http.StatusText(st))
		return
	}
	h.mu.Unlock()
	p := r.URL.Path
	if rest, ok := strings.CutPrefix(p, "/api/models/"); ok {
		parts := strings.SplitN(rest, "/", 4) // org, name, verb, rev
		if len(parts) < 4 {
			hubError(w, 404, "", "no such API")
			return
		}
		repo, _, ok := h.lookup(w, r, parts[0]+"/"+parts[1])
		if !ok {
			return
		}
		rev, _ := strings.CutSuffix(parts[3], "/")
		commit := repo.resolve(rev)
		if commit == "" {
			hubError(w, 404, "RevisionNotFound", "Invalid rev id: "+rev)
			return
		}
		names := make([]string, 0, len(repo.Files))
		for n := range repo.Files {
			names = append(names, n)
		}
		sort.Strings(names)
		w.Header().Set("Content-Type", "application/json")
		switch parts[2] {
		case "revision":
			sib := []map[string]string{}
			for _, n := range names {
				sib = append(sib, map[string]string{"rfilename": n})
			}
			json.NewEncoder(w).Encode(map[string]any{"id": repo.Name, "_id": "x", "modelId": repo.Name, "sha": commit,
				"private": repo.Private, "gated": repo.Gated, "siblings": sib, "tags": []string{}, "downloads": 0, "likes": 0})
		case "tree":
			es := []map[string]any{}
			for _, n := range names {
				es = append(es, repo.entry(n))
			}
			json.NewEncoder(w).Encode(es)
		case "paths-info":
			var body struct{ Paths []string }
			json.NewDecoder(r.Body).Decode(&body)
			es := []map[string]any{}
			for _, n := range body.Paths {
				if _, ok := repo.Files[n]; ok {
					es = append(es, repo.entry(n))
				}
			}
			json.NewEncoder(w).Encode(es)
		default:
			hubError(w, 404, "", "no such API")
		}
		return
	}
	// /{org}/{name}/resolve/{rev}/{path...}
	parts := strings.SplitN(strings.TrimPrefix(p, "/"), "/", 5)
	if len(parts) < 5 || parts[2] != "resolve" {
		hubError(w, 404, "", "not found")
		return
	}
	repo, tok, ok := h.lookup(w, r, parts[0]+"/"+parts[1])
	if !ok {
		return
	}
	if repo.Gated {
		h.mu.Lock()
		granted := h.Granted[tok]
		h.mu.Unlock()
		if tok == "" {
			hubError(w, 401, "GatedRepo", "Access to model "+repo.Name+" is restricted. You must have access to it and be authenticated to access it. Please log in.")
			return
		}
		if !granted {
			hubError(w, 403, "GatedRepo", "Access to model "+repo.Name+" is restricted and you are not in the authorized list.")
			return
		}
	}
	commit := repo.resolve(parts[3])
	if commit == "" {
		hubError(w, 404, "RevisionNotFound", "Invalid rev id: "+parts[3])
		return
	}
	name := parts[4]
	b, ok := repo.Files[name]
	if !ok {
		hubError(w, 404, "EntryNotFound", "Entry not found")
		return
	}
	w.Header().Set("X-Repo-Commit", commit)
	if repo.LFS[name] {
		sum := SHA256(b)
		w.Header().Set("X-Linked-Etag", `"`+sum+`"`)
		w.Header().Set("X-Linked-Size", fmt.Sprint(len(b)))
		w.Header().Set("ETag", `"`+sum+`"`)
		w.Header().Set("Location", h.CDNURL+"/blobs/"+sum+"?name="+path.Base(name))
		w.WriteHeader(http.StatusFound)
		return
	}
	w.Header().Set("ETag", `"`+GitSHA1(b)+`"`)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b))
}

func (h *Hub) serveCDN(w http.ResponseWriter, r *http.Request) {
	h.record("cdn", r)
	sum := strings.TrimPrefix(r.URL.Path, "/blobs/")
	var body []byte
	h.mu.Lock()
	for _, repo := range h.repos {
		for n, b := range repo.Files {
			if repo.LFS[n] && SHA256(b) == sum {
				body = b
			}
		}
	}
	corrupt, slow := h.Corrupt, h.Slow
	var cut int64
	if h.CutAfter > 0 && h.Cuts > 0 && (h.CutBlob == "" || h.CutBlob == sum) {
		h.Cuts--
		cut = h.CutAfter
	}
	if r.Header.Get("Range") != "" && h.Refuse416 > 0 {
		h.Refuse416--
		h.mu.Unlock()
		w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", len(body)))
		w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
		return
	}
	if h.IgnoreRange {
		r.Header.Del("Range")
	}
	h.mu.Unlock()
	if body == nil {
		http.Error(w, "no such blob", 404)
		return
	}
	if corrupt {
		body = append([]byte(nil), body...)
		body[len(body)/2] ^= 0x55
	}
	w.Header().Set("ETag", `"`+sum+`"`) // as the real CDN does
	cw := &cutWriter{ResponseWriter: w, left: cut, slow: slow}
	http.ServeContent(cw, r, "", time.Time{}, bytes.NewReader(body))
}

// cutWriter aborts the connection after left bytes (0: never) and sleeps
// per KiB when slow.
type cutWriter struct {
	http.ResponseWriter
	left int64
	slow time.Duration
}

func (c *cutWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), 1024)
		if c.left > 0 && int64(k) >= c.left {
			c.ResponseWriter.Write(p[:c.left])
			c.ResponseWriter.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
		m, err := c.ResponseWriter.Write(p[:k])
		n += m
		if err != nil {
			return n, err
		}
		if c.left > 0 {
			c.left -= int64(m)
		}
		p = p[k:]
		if c.slow > 0 {
			c.ResponseWriter.(http.Flusher).Flush()
			time.Sleep(c.slow)
		}
	}
	return n, nil
}
