package store

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/krafla/krafla/internal/atomicfile"
)

// Copy stores m again under the repo name repo (ORG/NAME), as ollama's copy
// makes an alias: the same commit and type, its files hard-linked (copied
// where links fail), meta.json written last. The copy's Source names m.
func (s *Store) Copy(m *Model, repo string) (*Model, error) {
	if repo == m.Repo {
		return nil, fmt.Errorf("store: %s is already named %s", m.Name(), repo)
	}
	dir := filepath.Join(s.repoDir(repo), m.Commit, m.Type)
	if _, err := os.Stat(filepath.Join(dir, "meta.json")); err == nil {
		return nil, fmt.Errorf("store: %s:%s exists already", repo, m.Type)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	src := filepath.Dir(m.Path)
	for _, f := range []string{"model.mlb", "model.mlt"} {
		from, to := filepath.Join(src, f), filepath.Join(dir, f)
		if _, err := os.Stat(from); os.IsNotExist(err) && f == "model.mlt" {
			continue
		}
		os.Remove(to) // a partial copy of an earlier attempt
		if os.Link(from, to) == nil {
			continue
		}
		if err := copyFile(from, to); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	meta := m.Meta
	meta.Repo, meta.Source, meta.Created = repo, m.Name()+" ("+m.Source+")", time.Now().UTC()
	b, _ := json.MarshalIndent(meta, "", "  ")
	if err := atomicfile.WriteFile(filepath.Join(dir, "meta.json"), append(b, '\n')); err != nil {
		return nil, err
	}
	return readModel(dir)
}

// copyFile copies from to to through a temporary file renamed into place.
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(to), ".copy-*")
	if err != nil {
		return err
	}
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), to)
}
