// Package atomicfile writes a file so that a reader, or a crash at any moment,
// sees either the old file or the complete new one: the bytes go to a
// temporary file beside the target, which is synced and renamed into place.
//
// The temporary file's name says what it is and whose it is:
//
//	.NAME.krafla-tmp-PID-RAND
//
// for the target NAME in the same folder, written by process PID (RAND keeps
// two writers of one process apart). A process killed while writing (SIGKILL,
// power loss) leaves that file behind; the next Create for the same target
// removes such leftovers, and only those: names that match the pattern for
// that exact target, last modified before this process started, whose PID is
// not a running process (other than this one). Each removal is reported to the
// function given to OnStale, so the command can say so.
//
// Two files that must change together are written with Prepare (synced,
// verified, left beside the target) and Rename, in an order their reader can
// check; a reader that finds the second left behind by a dead writer can
// finish the job with Leftovers and Adopt (internal/pair does this for a
// model and its tokenizer).
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync/atomic"
	"time"
)

// marker sits between the target's name and the writer's PID.
const marker = ".krafla-tmp-"

// start is this process's start, near enough: a leftover must be older.
var start = time.Now()

// Stale is a leftover temporary file that Create found for its target.
type Stale struct {
	Path    string    // the temporary file
	Target  string    // the file it was being written as
	PID     int       // the process that wrote it
	Size    int64     // bytes
	ModTime time.Time // its last write
	Err     error     // non-nil when the removal failed
	Adopted bool      // renamed onto Target by Adopt instead of removed
}

func (s Stale) String() string {
	if s.Adopted {
		return fmt.Sprintf("completed the interrupted write of process %d: renamed %s (%s), complete, onto %s", s.PID, s.Path, sizeString(s.Size), s.Target)
	}
	if s.Err != nil {
		return fmt.Sprintf("cannot remove %s, a temporary file of %s left by interrupted process %d: %v", s.Path, s.Target, s.PID, s.Err)
	}
	return fmt.Sprintf("removed %s (%s), a temporary file of %s left by interrupted process %d", s.Path, sizeString(s.Size), s.Target, s.PID)
}

func sizeString(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%d bytes", n)
}

var onStale atomic.Pointer[func(Stale)]

// OnStale sets the function told about every leftover temporary file Create
// removes (or fails to remove); nil stops the reports. Commands set it once,
// to print the report.
func OnStale(fn func(Stale)) {
	if fn == nil {
		onStale.Store(nil)
		return
	}
	onStale.Store(&fn)
}

// File is a temporary file that becomes the target when committed.
type File struct {
	*os.File        // the temporary file, open for writing
	target   string // where Commit puts it
	prepared bool   // synced, closed and verified: only the rename is left
	done     bool
}

// Create removes the target's leftover temporary files (see the package
// comment) and creates a new temporary file beside target.
func Create(target string) (*File, error) {
	removeStale(target)
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+marker+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return nil, err
	}
	return &File{File: f, target: target}, nil
}

// Target returns the path the file is committed to.
func (f *File) Target() string { return f.target }

// Commit syncs and closes the temporary file, makes it readable by all
// (0644, as an ordinary file; CreateTemp makes it private), calls verify (when
// not nil) on its closed path, and renames it onto the target. On any error
// the temporary file is removed and the target is untouched.
func (f *File) Commit(verify func(tmp string) error) error {
	if err := f.Prepare(verify); err != nil {
		return err
	}
	return f.Rename()
}

// Prepare is Commit without the rename: the temporary file is synced, closed,
// made readable and verified, and stays where it is until Rename (or Abort).
// Two files that must change together (a model and its tokenizer) are both
// prepared before either is renamed. On any error the temporary file is
// removed.
func (f *File) Prepare(verify func(tmp string) error) error {
	if f.done || f.prepared {
		return fmt.Errorf("atomicfile: %s: prepared, committed or aborted already", f.target)
	}
	err := f.Sync()
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && verify != nil {
		err = verify(f.Name())
	}
	if err != nil {
		f.Abort()
		return err
	}
	f.prepared = true
	return nil
}

// Rename puts a prepared file in place of the target and syncs the folder, so
// the rename is durable before anything that follows it. On error the
// temporary file is removed and the target is untouched.
func (f *File) Rename() error {
	if f.done || !f.prepared {
		return fmt.Errorf("atomicfile: %s: rename of a file not prepared, or committed or aborted already", f.target)
	}
	if err := os.Rename(f.Name(), f.target); err != nil {
		f.Abort()
		return err
	}
	f.done = true
	syncDir(filepath.Dir(f.target))
	return nil
}

// Abort closes and removes the temporary file; the target is untouched. It
// does nothing after Commit or Abort.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	if !f.prepared {
		f.Close()
	}
	os.Remove(f.Name())
}

// WriteFile writes b to path atomically.
func WriteFile(path string, b []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Abort()
		return err
	}
	return f.Commit(nil)
}

// syncDir makes a rename in dir durable. Some systems cannot open or sync a
// folder; the rename is then as durable as the system makes it.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	d.Sync()
	d.Close()
}

// stalePattern matches the temporary files of the target named base.
func stalePattern(base string) *regexp.Regexp {
	return regexp.MustCompile(`^\.` + regexp.QuoteMeta(base) + regexp.QuoteMeta(marker) + `([0-9]{1,10})-[0-9]{1,20}$`)
}

// Leftovers lists the temporary files of target that the next Create removes:
// those of processes that are no longer running (see the package comment).
func Leftovers(target string) []Stale { return leftovers(target) }

// Adopt completes what the interrupted writer of s had left to do: it renames
// the leftover s.Path onto s.Target and syncs the folder. Only a caller that
// has checked the leftover is complete (and the one the target's partner
// needs) may adopt it; the adoption is reported to OnStale's function.
func Adopt(s Stale) error {
	if err := os.Rename(s.Path, s.Target); err != nil {
		return err
	}
	syncDir(filepath.Dir(s.Target))
	s.Adopted = true
	if fn := onStale.Load(); fn != nil {
		(*fn)(s)
	}
	return nil
}

// leftovers lists the temporary files of target that Create removes.
func leftovers(target string) []Stale {
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	re := stalePattern(base)
	var out []Stale
	for _, e := range ents {
		m := re.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() {
			continue
		}
		pid, err := strconv.Atoi(m[1])
		if err != nil || pid == os.Getpid() || alive(pid) {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.ModTime().Before(start) {
			continue
		}
		out = append(out, Stale{Path: filepath.Join(dir, e.Name()), Target: target, PID: pid,
			Size: info.Size(), ModTime: info.ModTime()})
	}
	return out
}

func removeStale(target string) {
	for _, s := range leftovers(target) {
		if err := os.Remove(s.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.Err = err
		} else if err != nil {
			continue // another process removed it first
		}
		if fn := onStale.Load(); fn != nil {
			(*fn)(s)
		}
	}
}
