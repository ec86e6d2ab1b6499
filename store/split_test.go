package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/krafla/krafla/convert"
	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/gguf/gguftest"
	"github.com/krafla/krafla/hub"
	"github.com/krafla/krafla/hub/hubtest"
	"github.com/krafla/krafla/internal/testenv"
	"github.com/krafla/krafla/quantize"
)

// sameFiles fails unless the two files hold the same bytes.
func sameFiles(t *testing.T, got, want string) {
	t.Helper()
	a, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("%s (%d bytes) differs from %s (%d bytes)", got, len(a), want, len(b))
	}
}

// downloads is the files of repo whose content was fetched (a GET of the
// resolve URL), in order.
func downloads(h *hubtest.Hub, repo string) []string {
	var out []string
	for _, r := range h.Log() {
		if p, ok := strings.CutPrefix(r.Path, "/"+repo+"/resolve/"); ok && r.Method == "GET" {
			_, file, _ := strings.Cut(p, "/")
			out = append(out, file)
		}
	}
	return out
}

// TestPullSplitGGUF: a -GGUF repo whose Q8_0 model is a split set of three
// files (written from the real stories260K.gguf): the tag chooses the set,
// exactly its three files are downloaded (a connection cut in the middle
// of one resumed with Range), and the model in the store is bit-identical
// to the unsplit file's conversion. Offline, a cache that lost one split
// names it.
func TestPullSplitGGUF(t *testing.T) {
	src := testenv.Model(t, "stories260K.gguf")
	dir := t.TempDir()
	paths, err := gguftest.Split(src, filepath.Join(dir, "stories260K-Q8_0"), 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"README.md": []byte("# GGUF"), "stories260K-Q2_K.gguf": []byte("never downloaded"),
		"mmproj-stories260K-Q8_0.gguf": []byte("never downloaded")}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files["Q8_0/"+filepath.Base(p)] = b
	}
	h := hubtest.New()
	defer h.Close()
	repo := h.Add("org/stories260K-GGUF", files)
	h.CutAfter, h.Cuts = 200<<10, 1 // the first split is cut after 200 KiB
	s := newStore(t, h)
	ctx := context.Background()
	ref := hub.Ref{Repo: "org/stories260K-GGUF", Tag: "q8_0"}
	m, err := s.Resolve(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Q8_0/stories260K-Q8_0-00001-of-00003.gguf", "Q8_0/stories260K-Q8_0-00001-of-00003.gguf",
		"Q8_0/stories260K-Q8_0-00002-of-00003.gguf", "Q8_0/stories260K-Q8_0-00003-of-00003.gguf"}
	if got := downloads(h, repo.Name); !reflect.DeepEqual(got, want) {
		t.Errorf("downloaded %v, want %v (the first twice: cut, then resumed)", got, want)
	}
	resumed := false
	for _, r := range h.Log() {
		resumed = resumed || r.Server == "cdn" && r.Range == "bytes=204800-"
	}
	if !resumed {
		t.Error("the cut split was not resumed with Range: bytes=204800-")
	}
	if m.Type != "q8_0" || m.Commit != repo.Commit || m.Source != "Q8_0/stories260K-Q8_0-00001-of-00003.gguf" {
		t.Errorf("meta %+v", m.Meta)
	}
	one := filepath.Join(dir, "one.mlb")
	if _, err := convert.ConvertGGUF(ctx, src, convert.Options{Out: one, Threads: 1}); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, m.Path, one)
	sameFiles(t, convert.TokenizerPath(m.Path), convert.TokenizerPath(one))

	// Offline, a fresh store over a cache that lost split 2's blob.
	snap := filepath.Join(s.Hub.Cache, hub.RepoFolder(repo.Name), "snapshots", repo.Commit, "Q8_0")
	blob, err := filepath.EvalSymlinks(filepath.Join(snap, "stories260K-Q8_0-00002-of-00003.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(blob)
	off := *s.Hub
	off.Offline = true
	s2 := &Store{Dir: t.TempDir(), Hub: &off}
	n := len(h.Log())
	_, err = s2.Resolve(ctx, ref)
	var he *hub.Error
	if !errors.As(err, &he) || he.Code != hub.OfflineMissing || !reflect.DeepEqual(he.Missing, []string{"Q8_0/stories260K-Q8_0-00002-of-00003.gguf"}) {
		t.Errorf("offline with a split lost: %v", err)
	}
	if len(h.Log()) != n {
		t.Errorf("offline made %d requests", len(h.Log())-n)
	}
}

// TestPullSplitGGUFIncomplete: a repo holding only some files of a set is
// refused naming the others, before any download.
func TestPullSplitGGUFIncomplete(t *testing.T) {
	h := hubtest.New()
	defer h.Close()
	h.Add("org/x-GGUF", map[string][]byte{"x-Q4_0-00001-of-00003.gguf": []byte("GGUF"), "x-Q4_0-00003-of-00003.gguf": []byte("GGUF")})
	s := newStore(t, h)
	_, err := s.Resolve(context.Background(), hub.Ref{Repo: "org/x-GGUF"})
	if err == nil || !strings.Contains(err.Error(), "lacks x-Q4_0-00002-of-00003.gguf") {
		t.Errorf("err = %v, want the missing split named", err)
	}
	if d := downloads(h, "org/x-GGUF"); len(d) != 0 {
		t.Errorf("downloaded %v", d)
	}
}

// TestPartialShardCache: a cache holding only some shards of a sharded
// checkpoint (another tool interrupted). Offline, resolution names exactly
// the shards it lacks, by the index it holds or, without the index, by the
// shards' names; online, only those are downloaded, the rest used as
// cached, and the model equals the full checkpoint's conversion.
func TestPartialShardCache(t *testing.T) {
	ck := t.TempDir()
	if err := hfgen.Write(ck, "llama", hfgen.Options{Seed: 3, Shards: 3}); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	es, _ := os.ReadDir(ck)
	for _, e := range es {
		b, err := os.ReadFile(filepath.Join(ck, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	for _, n := range []string{"model-00001-of-00003.safetensors", "model-00003-of-00003.safetensors", "model.safetensors.index.json", "config.json"} {
		if files[n] == nil {
			t.Fatalf("hfgen wrote no %s (%d files)", n, len(files))
		}
	}
	const name = "org/sharded"
	h := hubtest.New()
	defer h.Close()
	repo := h.Add(name, files)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		cached  []string // what the interrupted tool left
		missing []string
	}{
		{"index cached", []string{"config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors.index.json", "model-00002-of-00003.safetensors"},
			[]string{"model-00001-of-00003.safetensors", "model-00003-of-00003.safetensors"}},
		{"no index", []string{"config.json", "tokenizer.json", "tokenizer_config.json", "model-00001-of-00003.safetensors"},
			[]string{"model-00002-of-00003.safetensors", "model-00003-of-00003.safetensors", "model.safetensors.index.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t, h)
			// The other tool: the same cache layout, some files only.
			part := *s.Hub
			if _, err := part.Pull(ctx, name, "main", func([]string) ([]string, error) { return tc.cached, nil }); err != nil {
				t.Fatal(err)
			}
			off := *s.Hub
			off.Offline = true
			so := &Store{Dir: s.Dir, Hub: &off}
			n := len(h.Log())
			_, err := so.Resolve(ctx, hub.Ref{Repo: name})
			var he *hub.Error
			if !errors.As(err, &he) || he.Code != hub.OfflineMissing || !reflect.DeepEqual(he.Missing, tc.missing) {
				t.Fatalf("offline: %v; want missing %v", err, tc.missing)
			}
			for _, f := range tc.missing {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("offline error does not name %s: %v", f, err)
				}
			}
			if len(h.Log()) != n {
				t.Errorf("offline made %d requests", len(h.Log())-n)
			}
			// Online: only what is missing is downloaded.
			var log bytes.Buffer
			s.Log = &log
			m, err := s.Resolve(ctx, hub.Ref{Repo: name})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range h.Log()[n:] {
				if p, ok := strings.CutPrefix(r.Path, "/"+name+"/resolve/"+repo.Commit+"/"); ok {
					got = append(got, p)
				}
			}
			// Each missing file: a HEAD, then a GET (an LFS file's is
			// redirected to the CDN); nothing of the others.
			var wantReq []string
			for _, f := range tc.missing {
				wantReq = append(wantReq, f, f)
			}
			if !reflect.DeepEqual(got, wantReq) {
				t.Errorf("online requests %v, want %v", got, wantReq)
			}
			if !strings.Contains(log.String(), "lacks "+strings.Join(tc.missing, ", ")) {
				t.Errorf("log %q does not say what the cache lacked", log.String())
			}
			full := filepath.Join(t.TempDir(), "full.mlb")
			if _, err := convert.Convert(ctx, ck, convert.Options{Out: full, Type: quantize.TypeQ8_0, Threads: 1}); err != nil {
				t.Fatal(err)
			}
			sameFiles(t, m.Path, full)
		})
	}
}

// TestIndexedShards: the shards an index maps tensors to join the choice,
// whatever their names; names with a folder or of other files do not.
func TestIndexedShards(t *testing.T) {
	c := &Choice{Kind: Checkpoint, Files: []string{"config.json", "weights-b.safetensors"}}
	idx := `{"metadata": {"total_size": 8}, "weight_map": {"a": "weights-a.safetensors", "b": "weights-b.safetensors",
		"c": "weights-a.safetensors", "d": "../evil.safetensors", "e": "sub/x.safetensors", "f": "pytorch_model.bin"}}`
	if err := c.IndexedShards([]byte(idx)); err != nil {
		t.Fatal(err)
	}
	if want := []string{"config.json", "weights-a.safetensors", "weights-b.safetensors"}; !reflect.DeepEqual(c.Files, want) {
		t.Errorf("files %v, want %v", c.Files, want)
	}
	if err := c.IndexedShards([]byte("{")); err == nil || !strings.Contains(err.Error(), "model.safetensors.index.json") {
		t.Errorf("bad index: %v", err)
	}
}

// TestInterruptedHFJSDownload: @huggingface/hub's snapshotDownload (npm)
// of a sharded checkpoint is cut in the middle of the third shard, as an
// interrupted download of another tool leaves a cache. Offline, krafla
// names what the cache lacks; online it downloads only the files the
// other tool did not finish, resuming the third shard from the partial
// file the library left, and the model equals the full checkpoint's.
func TestInterruptedHFJSDownload(t *testing.T) {
	ck := t.TempDir()
	if err := hfgen.Write(ck, "llama", hfgen.Options{Seed: 5, Shards: 3}); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	es, _ := os.ReadDir(ck)
	for _, e := range es {
		b, err := os.ReadFile(filepath.Join(ck, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	const name = "org/sharded"
	third := "model-00003-of-00003.safetensors"
	h := hubtest.New()
	defer h.Close()
	repo := h.Add(name, files)
	// Two cuts: the library's probe (Range: bytes=0-0, too short to cut)
	// takes one; the download proper is cut half way.
	s := newStore(t, h)
	partial := filepath.Join(s.Hub.Cache, hub.RepoFolder(name), "blobs", hubtest.SHA256(files[third])+".incomplete")
	var st os.FileInfo
	// Under load the library can see the cut before it has written a byte
	// (once in 20 runs at GOMAXPROCS=2, load 6.6): an empty partial file
	// leaves nothing to resume, so the interrupted download is tried again.
	for attempt := 1; ; attempt++ {
		h.CutAfter, h.Cuts, h.CutBlob = int64(len(files[third])/2), 2, hubtest.SHA256(files[third])
		var dl struct{ Dir, Error string }
		hubtest.HFJS(t, &dl, "download", name, h.URL, s.Hub.Cache)
		if dl.Error == "" {
			t.Fatalf("snapshotDownload was not interrupted: %+v", dl)
		}
		var err error
		st, err = os.Stat(partial)
		if err == nil && st.Size() > 0 {
			break
		}
		if attempt == 3 {
			t.Fatalf("the library left no partial third shard in %d tries: %v", attempt, err)
		}
		t.Logf("try %d: the library kept nothing of the cut shard (%v); again", attempt, err)
	}
	h.Cuts = 0
	kept := st.Size()
	off := *s.Hub
	off.Offline = true
	_, err := (&Store{Dir: s.Dir, Hub: &off}).Resolve(context.Background(), hub.Ref{Repo: name})
	var he *hub.Error
	if !errors.As(err, &he) || he.Code != hub.OfflineMissing || !reflect.DeepEqual(he.Missing, []string{third, "model.safetensors.index.json"}) {
		t.Fatalf("offline: %v; want %s and the index missing", err, third)
	}
	n := len(h.Log())
	m, err := s.Resolve(context.Background(), hub.Ref{Repo: name})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	resumed := false
	for _, r := range h.Log()[n:] {
		if p, ok := strings.CutPrefix(r.Path, "/"+name+"/resolve/"+repo.Commit+"/"); ok && r.Method == "GET" {
			got[p] = true
		}
		resumed = resumed || r.Server == "cdn" && r.Range == fmt.Sprintf("bytes=%d-", kept)
	}
	for f := range files {
		done := f == "config.json" || f == "generation_config.json" || strings.HasPrefix(f, "model-0000") && f != third
		if got[f] == done {
			t.Errorf("%s: downloaded %v, want %v (the library had finished it: %v)", f, got[f], !done, done)
		}
	}
	if !resumed {
		t.Errorf("the third shard was not resumed from the library's %d bytes", kept)
	}
	full := filepath.Join(t.TempDir(), "full.mlb")
	if _, err := convert.Convert(context.Background(), ck, convert.Options{Out: full, Type: quantize.TypeQ8_0, Threads: 1}); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, m.Path, full)
}
