package store

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/krafla/krafla/hub"
)

// fakeEntry writes a complete store entry by hand (meta.json last).
func fakeEntry(t *testing.T, s *Store, repo, commit, typ string, mlb []byte) *Model {
	t.Helper()
	dir := filepath.Join(s.repoDir(repo), commit, typ)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "model.mlb"), mlb, 0o644)
	os.WriteFile(filepath.Join(dir, "model.mlt"), []byte("tok"), 0o644)
	b, _ := json.Marshal(Meta{Repo: repo, Revision: "main", Commit: commit, Type: typ, Source: "safetensors checkpoint"})
	os.WriteFile(filepath.Join(dir, "meta.json"), b, 0o644)
	m, err := readModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCopy(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	commit := "0123456789abcdef0123456789abcdef01234567"
	m := fakeEntry(t, s, "org/a", commit, "q8_0", []byte("weights"))
	c, err := s.Copy(m, "me/alias")
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != "me/alias:q8_0" || c.Commit != commit || c.Bytes != m.Bytes || c.Source != "org/a:q8_0 (safetensors checkpoint)" {
		t.Errorf("copy %+v", c)
	}
	if _, err := s.Copy(m, "me/alias"); err == nil {
		t.Error("a second copy to the same name succeeded")
	}
	if _, err := s.Copy(m, "org/a"); err == nil {
		t.Error("a copy onto itself succeeded")
	}
	all, _ := s.List()
	if len(all) != 2 {
		t.Fatalf("list after the copy: %d entries", len(all))
	}
	// Removing the original leaves the copy whole.
	if _, err := s.Remove(mustRef(t, "org/a")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(c.Path)
	if err != nil || !bytes.Equal(b, []byte("weights")) {
		t.Errorf("the copy after rm of the original: %q %v", b, err)
	}
}

func mustRef(t *testing.T, s string) hub.Ref {
	r, err := hub.ParseRef(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
