package serve

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/krafla/krafla/hub"
	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/mlt"
	"github.com/krafla/krafla/store"
)

// StoreCatalog serves the model store's models by the names krafla list
// shows (ORG/NAME:TYPE), pulls through the store's hub client, removes and
// copies entries.
type StoreCatalog struct {
	Store *store.Store
	Load  func(path string) (*infer.Model, *mlt.Tokenizer, error)
}

func entryOf(m *store.Model) ModelEntry {
	return ModelEntry{Name: m.Name(), Path: m.Path, Bytes: m.Bytes, Modified: m.Created, Type: m.Type, Commit: m.Commit,
		Source: fmt.Sprintf("%s@%s (%s)", m.Repo, m.Commit, m.Source)}
}

func (c *StoreCatalog) Models() ([]ModelEntry, error) {
	ms, err := c.Store.List()
	if err != nil {
		return nil, err
	}
	out := make([]ModelEntry, 0, len(ms))
	seen := map[string]bool{}
	for _, m := range ms {
		if seen[m.Name()] { // List gives the newest entry of a name first
			continue
		}
		seen[m.Name()] = true
		out = append(out, entryOf(m))
	}
	return out, nil
}

func (c *StoreCatalog) Open(m ModelEntry) (*infer.Model, *mlt.Tokenizer, error) {
	return c.Load(m.Path)
}

// ref parses a name as a hub reference; ollama's ":latest" is no tag.
func storeRef(name string) (hub.Ref, error) {
	if b, t := splitTag(name); strings.EqualFold(t, "latest") {
		name = b
	}
	return hub.ParseRef(name)
}

// CheckName refuses, before a pull starts, a name that is not a hub reference.
func (c *StoreCatalog) CheckName(name string) error {
	_, err := storeRef(name)
	return err
}

// Pull brings name into the store (store.Pull), telling progress what it
// downloads; the calls come from the pull's goroutine.
func (c *StoreCatalog) Pull(ctx context.Context, name string, progress func(PullProgress)) (ModelEntry, error) {
	ref, err := storeRef(name)
	if err != nil {
		return ModelEntry{}, err
	}
	if c.Store.Hub == nil {
		return ModelEntry{}, fmt.Errorf("serve: the store has no hub client")
	}
	var mu sync.Mutex
	h := *c.Store.Hub
	h.Progress = func(path string, done, total int64) {
		mu.Lock()
		defer mu.Unlock()
		progress(PullProgress{Status: "pulling " + path, Digest: path, Total: total, Completed: done})
	}
	st := *c.Store
	st.Hub, st.Progress = &h, nil
	st.Log = lineWriter(func(line string) {
		mu.Lock()
		defer mu.Unlock()
		progress(PullProgress{Status: line})
	})
	m, err := st.Pull(ctx, ref)
	if err != nil {
		if h := hubHint(err); h != "" {
			return ModelEntry{}, fmt.Errorf("%w (%s)", err, h)
		}
		return ModelEntry{}, err
	}
	return entryOf(m), nil
}

func hubHint(err error) string {
	var he *hub.Error
	if !errors.As(err, &he) {
		return ""
	}
	return he.Hint()
}

// find is the store's entry of an exact or ollama-style name.
func (c *StoreCatalog) find(name string) (*store.Model, error) {
	list, err := c.Models()
	if err != nil {
		return nil, err
	}
	e, ok := findModel(list, name)
	if !ok {
		return nil, errUnknownModel{name}
	}
	ms, err := c.Store.List()
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if m.Path == e.Path {
			return m, nil
		}
	}
	return nil, errUnknownModel{name}
}

func (c *StoreCatalog) Delete(name string) error {
	m, err := c.find(name)
	if err != nil {
		return err
	}
	_, err = c.Store.Remove(hub.Ref{Repo: m.Repo, Tag: m.Type})
	return err
}

// Copy stores src again as dst: ORG/NAME, or ORG/NAME:TYPE with src's type
// (the store names a model by its type).
func (c *StoreCatalog) Copy(src, dst string) error {
	m, err := c.find(src)
	if err != nil {
		return err
	}
	ref, err := storeRef(dst)
	if err != nil {
		return fmt.Errorf("destination: %w", err)
	}
	if ref.Revision != "" || ref.Tag != "" && !strings.EqualFold(ref.Tag, m.Type) {
		return fmt.Errorf("destination %q: the store names a model ORG/NAME:TYPE by its type; give ORG/NAME or ORG/NAME:%s", dst, m.Type)
	}
	_, err = c.Store.Copy(m, ref.Repo)
	return err
}

// lineWriter calls fn with each line written (a line may arrive in pieces).
type lineWriter func(line string)

func (f lineWriter) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			f(l)
		}
	}
	return len(p), nil
}
