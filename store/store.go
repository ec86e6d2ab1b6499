// Package store keeps the models krafla converted from Hugging Face repos:
// $KRAFLA_HOME/models/{ORG}--{NAME}/{commit}/{type}/model.mlb (with
// model.mlt and meta.json, written last, marking the entry complete).
// Resolve turns a name (hub.Ref) into a model file: the store, else the
// Hugging Face cache (converted without the network), else a pull.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/krafla/krafla/convert"
	"github.com/krafla/krafla/hub"
	"github.com/krafla/krafla/internal/atomicfile"
	"github.com/krafla/krafla/quantize"
)

// Dir is the store's folder: $KRAFLA_HOME/models, else
// $XDG_DATA_HOME/krafla/models, else ~/.local/share/krafla/models.
func Dir(getenv func(string) string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	if h := getenv("KRAFLA_HOME"); h != "" {
		return filepath.Join(h, "models")
	}
	if x := getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "krafla", "models")
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".local", "share", "krafla", "models")
}

// Store is the model store with the hub client it pulls through.
type Store struct {
	Dir      string
	Hub      *hub.Client
	Progress io.Writer // convert's progress bar (drawn on a terminal only)
	Log      io.Writer // one line per step ("downloading", "converting"); nil = quiet
	Threads  int
}

// Meta is an entry's meta.json: where the model came from.
type Meta struct {
	Repo     string    `json:"repo"`
	Revision string    `json:"revision"` // as asked ("main")
	Commit   string    `json:"commit"`
	Type     string    `json:"type"`   // q8_0, q4_0, or a GGUF file's quant
	Source   string    `json:"source"` // the files converted: the checkpoint, or the .gguf name
	Created  time.Time `json:"created"`
}

// Model is one entry of the store.
type Model struct {
	Meta
	Path  string // the .mlb
	Bytes int64  // .mlb and .mlt together
}

// Name is the model's name as the user can type it: ORG/NAME:TYPE.
func (m *Model) Name() string { return m.Repo + ":" + m.Type }

func (s *Store) repoDir(repo string) string {
	return filepath.Join(s.Dir, strings.ReplaceAll(repo, "/", "--"))
}

func (s *Store) logf(format string, a ...any) {
	if s.Log != nil {
		fmt.Fprintf(s.Log, format+"\n", a...)
	}
}

// List is every complete entry, by name then newest first.
func (s *Store) List() ([]*Model, error) {
	metas, err := filepath.Glob(filepath.Join(s.Dir, "*", "*", "*", "meta.json"))
	if err != nil {
		return nil, err
	}
	var out []*Model
	for _, p := range metas {
		m, err := readModel(filepath.Dir(p))
		if err != nil {
			continue // a damaged entry is not listed; rm removes it by name
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name() != out[j].Name() {
			return out[i].Name() < out[j].Name()
		}
		return out[i].Created.After(out[j].Created)
	})
	return out, nil
}

func readModel(dir string) (*Model, error) {
	b, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return nil, err
	}
	m := &Model{Path: filepath.Join(dir, "model.mlb")}
	if err := json.Unmarshal(b, &m.Meta); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "meta.json"), err)
	}
	for _, f := range []string{"model.mlb", "model.mlt"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err == nil {
			m.Bytes += st.Size()
		} else if f == "model.mlb" {
			return nil, err
		}
	}
	return m, nil
}

// Find is the stored model for ref, without the network: the entry for
// ref's commit (a commit, or what the Hugging Face cache's ref says), else
// the newest entry of that repo and type; nil when there is none. An empty
// tag matches any type (q8_0 first).
func (s *Store) Find(ref hub.Ref) (*Model, error) {
	all, err := s.List()
	if err != nil {
		return nil, err
	}
	commit := ""
	if s.Hub != nil {
		commit = s.Hub.ReadRef(ref.Repo, ref.Rev())
	} else if hub.IsCommit(ref.Rev()) {
		commit = ref.Rev()
	}
	var best *Model
	score := func(m *Model) int {
		n := 0
		if m.Commit == commit {
			n += 4
		}
		if m.Revision == ref.Rev() {
			n += 2
		}
		if ref.Tag == "" && m.Type == "q8_0" {
			n++
		}
		return n
	}
	for _, m := range all {
		if m.Repo != ref.Repo || ref.Tag != "" && !strings.EqualFold(m.Type, ref.Tag) {
			continue
		}
		if hub.IsCommit(ref.Rev()) && m.Commit != ref.Rev() {
			continue
		}
		if best == nil || score(m) > score(best) {
			best = m
		}
	}
	return best, nil
}

// Remove deletes the entries of ref (every commit; with a tag, that type
// only) and returns them; none is an error.
func (s *Store) Remove(ref hub.Ref) ([]*Model, error) {
	all, err := s.List()
	if err != nil {
		return nil, err
	}
	var gone []*Model
	for _, m := range all {
		if m.Repo != ref.Repo || ref.Tag != "" && !strings.EqualFold(m.Type, ref.Tag) ||
			ref.Revision != "" && m.Commit != ref.Revision && m.Revision != ref.Revision {
			continue
		}
		if err := os.RemoveAll(filepath.Dir(m.Path)); err != nil {
			return gone, err
		}
		gone = append(gone, m)
	}
	if len(gone) == 0 {
		return nil, fmt.Errorf("%s is not in the store %s (see krafla list)", ref, s.Dir)
	}
	// Drop folders left empty.
	os.Remove(filepath.Dir(filepath.Dir(gone[0].Path)))
	os.Remove(s.repoDir(ref.Repo))
	return gone, nil
}

// Resolve is the model for ref: the store's; else converted from the
// Hugging Face cache without the network; else, unless the hub client is
// offline, pulled and converted.
func (s *Store) Resolve(ctx context.Context, ref hub.Ref) (*Model, error) {
	if m, err := s.Find(ref); err != nil || m != nil {
		return m, err
	}
	return s.get(ctx, ref, true)
}

// Pull brings ref into the store as it is on the hub now: the hub says
// which commit the revision is (offline, or when the hub cannot be
// reached, the Hugging Face cache's ref does), the files it needs that the
// cache lacks are downloaded, and they are converted. An entry already in
// the store for that commit is kept as is.
func (s *Store) Pull(ctx context.Context, ref hub.Ref) (*Model, error) {
	return s.get(ctx, ref, false)
}

const indexFile = "model.safetensors.index.json"

// readSmall reads a file of at most max bytes.
func readSmall(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("%s: larger than %d bytes", path, max)
	}
	return b, err
}

func (s *Store) get(ctx context.Context, ref hub.Ref, cacheFirst bool) (*Model, error) {
	var choice *Choice
	choose := func(files []string) ([]string, error) {
		c, err := Choose(ref.Repo, files, ref.Tag)
		if err != nil {
			return nil, err
		}
		choice = c
		return c.Files, nil
	}
	off := *s.Hub
	off.Offline = true
	// In the cache, a checkpoint's index names every shard the model
	// needs, whichever of them the cache holds.
	chooseCached := func(files []string) ([]string, error) {
		if _, err := choose(files); err != nil {
			return nil, err
		}
		if choice.Kind == Checkpoint {
			if c, err := off.Cached(ref.Repo, ref.Rev()); err == nil && c.Has(indexFile) {
				b, err := readSmall(c.Path(indexFile), 64<<20)
				if err == nil {
					err = choice.IndexedShards(b)
				}
				if err != nil {
					return nil, fmt.Errorf("%s in the Hugging Face cache: %w", ref, err)
				}
			}
		}
		return choice.Files, nil
	}
	fromCache := func() (*hub.Snapshot, error) {
		choice = nil
		snap, err := off.Pull(ctx, ref.Repo, ref.Rev(), chooseCached)
		if err == nil {
			s.logf("found %s in the Hugging Face cache %s", ref, s.Hub.Cache)
		}
		return snap, err
	}
	fromHub := func() (*hub.Snapshot, error) {
		choice = nil
		s.logf("pulling %s from %s", ref, s.Hub.Endpoint)
		return s.Hub.Pull(ctx, ref.Repo, ref.Rev(), choose)
	}
	var snap *hub.Snapshot
	var err error
	var he *hub.Error
	switch {
	case s.Hub.Offline:
		snap, err = fromCache()
	case cacheFirst:
		snap, err = fromCache()
		if err != nil && errors.As(err, &he) && he.Code == hub.OfflineMissing {
			if len(he.Missing) > 0 {
				s.logf("the Hugging Face cache lacks %s of %s: downloading what is missing", strings.Join(he.Missing, ", "), ref)
			}
			snap, err = fromHub()
		}
	default:
		snap, err = fromHub()
		if err != nil && errors.As(err, &he) && he.Code == hub.ConnectionLost {
			if snap2, err2 := fromCache(); err2 == nil {
				s.logf("the hub cannot be reached (%v): using the cached copy", err)
				snap, err = snap2, nil
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if choice.Note != "" {
		s.logf("%s", choice.Note)
	}
	dir := filepath.Join(s.repoDir(ref.Repo), snap.Commit, choice.Type)
	if m, err := readModel(dir); err == nil {
		return m, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	opt := convert.Options{Out: filepath.Join(dir, "model.mlb"), Threads: max(s.Threads, 1), Progress: s.Progress, Log: s.Log}
	src, source := snap.Dir, "safetensors checkpoint"
	switch {
	case choice.Kind == GGUF:
		src, source = snap.Path(choice.GGUF), choice.GGUF
		// K-quant and IQ4 blocks are kept bit for bit (a Q4_K_M file runs as
		// llama.cpp runs it), Q8_0 and Q4_0 ones as the default keeps them
		if opt.Type, err = convert.GGUFImportType(src); err != nil {
			return nil, err
		}
	case choice.Type == "q4_0":
		opt.Type = quantize.TypeQ4_0
	default:
		opt.Type = quantize.TypeQ8_0
	}
	s.logf("converting %s (%s) to %s", ref.Repo, source, opt.Out)
	if _, err := convert.Convert(ctx, src, opt); err != nil {
		return nil, err
	}
	meta := Meta{Repo: ref.Repo, Revision: ref.Rev(), Commit: snap.Commit, Type: choice.Type, Source: source, Created: time.Now().UTC()}
	b, _ := json.MarshalIndent(meta, "", "  ")
	if err := atomicfile.WriteFile(filepath.Join(dir, "meta.json"), append(b, '\n')); err != nil {
		return nil, err
	}
	return readModel(dir)
}
