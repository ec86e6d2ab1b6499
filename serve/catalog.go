package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/mlt"
)

// ModelEntry is a model a Catalog can serve.
type ModelEntry struct {
	Name     string // as clients name it: ORG/NAME:TAG (krafla list), or a file's name without .mlb
	Path     string // the .mlb (its tokenizer beside it)
	Bytes    int64  // the files' size
	Modified time.Time
	Type     string // the weights' type (q8_0, q4_0, a GGUF quant); "" when unknown
	Source   string // where it came from ("org/name@commit"), for /api/show
	Commit   string // the hub commit converted, when known
}

// Digest identifies this version of the entry for ollama's digest fields:
// the sha256 of its name, path, size and time (hashing the weights on every
// listing would read gigabytes).
func (m ModelEntry) Digest() string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%d\x00%d\x00%s", m.Name, m.Path, m.Bytes, m.Modified.UnixNano(), m.Commit)))
	return hex.EncodeToString(h[:])
}

// Catalog is where a server finds the models it serves by name.
type Catalog interface {
	// Models lists every model that can be served.
	Models() ([]ModelEntry, error)
	// Open loads an entry's weights and tokenizer.
	Open(m ModelEntry) (*infer.Model, *mlt.Tokenizer, error)
}

// PullProgress is one step of a pull, as ollama's /api/pull streams it.
type PullProgress struct {
	Status    string // "pulling manifest", "pulling FILE", "converting …", "success"
	Digest    string // the file being downloaded
	Total     int64  // its size (0: unknown)
	Completed int64  // bytes it has
}

// Manager is a Catalog whose models can be pulled, removed and copied
// (the model store); a Catalog without it refuses those requests.
type Manager interface {
	Catalog
	Pull(ctx context.Context, name string, progress func(PullProgress)) (ModelEntry, error)
	Delete(name string) error
	Copy(src, dst string) error
}

// errUnknownModel is what a Manager returns for a name it does not hold.
type errUnknownModel struct{ name string }

func (e errUnknownModel) Error() string { return fmt.Sprintf("model %q not found", e.name) }

// DirCatalog serves every .mlb file of a folder (its .mlt beside it), named
// by the file name without .mlb.
type DirCatalog struct {
	Dir  string
	Load func(path string) (*infer.Model, *mlt.Tokenizer, error)
}

func (d *DirCatalog) Models() ([]ModelEntry, error) {
	paths, err := filepath.Glob(filepath.Join(d.Dir, "*.mlb"))
	if err != nil {
		return nil, err
	}
	var out []ModelEntry
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		n := st.Size()
		if t, err := os.Stat(strings.TrimSuffix(p, ".mlb") + ".mlt"); err == nil {
			n += t.Size()
		}
		out = append(out, ModelEntry{Name: strings.TrimSuffix(filepath.Base(p), ".mlb"), Path: p, Bytes: n, Modified: st.ModTime(), Source: p})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (d *DirCatalog) Open(m ModelEntry) (*infer.Model, *mlt.Tokenizer, error) { return d.Load(m.Path) }

// singleCatalog is the one model of single-model mode (ollama's listing
// endpoints show it).
type singleCatalog struct{ entry ModelEntry }

func (c singleCatalog) Models() ([]ModelEntry, error) { return []ModelEntry{c.entry}, nil }
func (c singleCatalog) Open(ModelEntry) (*infer.Model, *mlt.Tokenizer, error) {
	return nil, nil, fmt.Errorf("serve: single-model mode loads its model once")
}

// splitTag splits NAME:TAG at the last colon after the last slash.
func splitTag(name string) (base, tag string) {
	i := strings.LastIndexByte(name, ':')
	if i < 0 || i < strings.LastIndexByte(name, '/') {
		return name, ""
	}
	return name[:i], name[i+1:]
}

// findModel is the entry a request's model names: the exact name (case
// aside); else, for a name without a tag or with ollama's ":latest", the
// entry of that base name, its q8_0 first (the store's default type), else
// the first listed.
func findModel(list []ModelEntry, name string) (ModelEntry, bool) {
	for _, m := range list {
		if strings.EqualFold(m.Name, name) {
			return m, true
		}
	}
	base, tag := splitTag(name)
	if tag != "" && !strings.EqualFold(tag, "latest") {
		return ModelEntry{}, false
	}
	var best *ModelEntry
	bestQ8 := false
	for i := range list {
		mb, mt := splitTag(list[i].Name)
		if !strings.EqualFold(mb, base) {
			continue
		}
		if q8 := strings.EqualFold(mt, "q8_0"); best == nil || q8 && !bestQ8 {
			best, bestQ8 = &list[i], q8
		}
	}
	if best == nil {
		return ModelEntry{}, false
	}
	return *best, true
}
