package hub

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/hub/hubtest"
)

func hfjs(t *testing.T, v any, args ...string) { t.Helper(); hubtest.HFJS(t, v, args...) }

// TestHFJS: what @huggingface/hub's snapshotDownload put in a cache (from
// the fake hub) is used by krafla offline, and scanCacheDir of that library
// reads a cache krafla wrote.
func TestHFJS(t *testing.T) {
	h, r, c := newHub(t)
	var dl struct{ Dir string }
	jsCache := t.TempDir()
	hfjs(t, &dl, "download", "org/tiny", h.URL, jsCache)
	if want := filepath.Join(jsCache, "models--org--tiny", "snapshots", r.Commit); dl.Dir != want {
		t.Errorf("snapshotDownload put the snapshot in %s, want %s", dl.Dir, want)
	}
	n := len(h.Log())
	off := &Client{Cache: jsCache, Offline: true}
	s, err := off.Pull(context.Background(), "org/tiny", "main", all)
	if err != nil {
		t.Fatal(err)
	}
	if s.Commit != r.Commit || len(s.Files) != len(r.Files) {
		t.Fatalf("krafla reads %+v from the npm cache, want commit %s and %d files", s, r.Commit, len(r.Files))
	}
	for name, want := range r.Files {
		b, err := os.ReadFile(s.Path(name))
		if err != nil || !bytes.Equal(b, want) {
			t.Errorf("%s from the npm cache: %v", name, err)
		}
	}
	if len(h.Log()) != n {
		t.Error("the offline pull made requests")
	}

	if _, err := c.Pull(context.Background(), "org/tiny", "main", all); err != nil {
		t.Fatal(err)
	}
	var scan struct {
		Repos []struct {
			ID         struct{ Name, Type string }
			FilesCount int
			Size       int64
			Revisions  []struct {
				CommitOid string
				Refs      []string
				Files     []struct {
					Path string
					Blob struct {
						Path string
						Size int64
					}
				}
			}
		}
		Warnings []string
	}
	hfjs(t, &scan, "scan", c.Cache)
	if len(scan.Warnings) != 0 || len(scan.Repos) != 1 {
		t.Fatalf("scanCacheDir of krafla's cache: %+v", scan)
	}
	repo := scan.Repos[0]
	if repo.ID.Name != "org/tiny" || repo.ID.Type != "model" || len(repo.Revisions) != 1 {
		t.Fatalf("scanCacheDir: %+v", repo)
	}
	rev := repo.Revisions[0]
	if rev.CommitOid != r.Commit || strings.Join(rev.Refs, ",") != "main" {
		t.Errorf("revision %s refs %v, want %s refs main", rev.CommitOid, rev.Refs, r.Commit)
	}
	// scanCacheDir does not descend into snapshot subfolders: the two top files.
	if len(rev.Files) != 2 {
		t.Fatalf("files %+v, want config.json and model.safetensors", rev.Files)
	}
	for _, f := range rev.Files {
		name := filepath.Base(f.Path)
		want := r.Files[name]
		etag := hubtest.GitSHA1(want)
		if r.LFS[name] {
			etag = hubtest.SHA256(want)
		}
		if f.Blob.Size != int64(len(want)) || filepath.Base(f.Blob.Path) != etag {
			t.Errorf("%s: blob %s of %d bytes, want %s of %d", name, f.Blob.Path, f.Blob.Size, etag, len(want))
		}
	}
}
