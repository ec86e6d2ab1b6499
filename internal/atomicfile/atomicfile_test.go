package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// deadPID is above every system's PID limit (Linux's is at most 2^22), so no
// process has it.
const deadPID = 99999999

func TestCommit(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "m.mlb")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Create(target)
	if err != nil {
		t.Fatal(err)
	}
	want := `^\.m\.mlb\.krafla-tmp-` + strconv.Itoa(os.Getpid()) + `-[0-9]+$`
	if base := filepath.Base(f.Name()); !regexp.MustCompile(want).MatchString(base) || filepath.Dir(f.Name()) != dir {
		t.Fatalf("temporary file %s: want %s in %s", f.Name(), want, dir)
	}
	if _, err := f.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "old" {
		t.Fatalf("target reads %q before Commit, want the old %q", b, "old")
	}
	var verified []byte
	if err := f.Commit(func(tmp string) error { verified, err = os.ReadFile(tmp); return err }); err != nil {
		t.Fatal(err)
	}
	if string(verified) != "new" {
		t.Errorf("verify read %q, want the complete %q", verified, "new")
	}
	b, err := os.ReadFile(target)
	if err != nil || string(b) != "new" {
		t.Fatalf("target: got %q, %v, want %q", b, err, "new")
	}
	if st, _ := os.Stat(target); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	assertOnly(t, dir, "m.mlb")
	if err := f.Commit(nil); err == nil {
		t.Error("a second Commit succeeded")
	}
	f.Abort() // after Commit: nothing happens
	assertOnly(t, dir, "m.mlb")
}

func TestAbortAndFailedVerify(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "m.mlt")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Create(target)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half"))
	f.Abort()
	assertOnly(t, dir, "m.mlt")

	f, err = Create(target)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("bad"))
	bad := errors.New("verification failed")
	if err := f.Commit(func(string) error { return bad }); !errors.Is(err, bad) {
		t.Fatalf("Commit: got %v, want the verify error", err)
	}
	assertOnly(t, dir, "m.mlt")
	if b, _ := os.ReadFile(target); string(b) != "old" {
		t.Errorf("target %q after a failed verify, want the old %q", b, "old")
	}

	if err := WriteFile(target, []byte("whole")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "whole" {
		t.Errorf("WriteFile: target %q, want %q", b, "whole")
	}
	assertOnly(t, dir, "m.mlt")
	if err := WriteFile(filepath.Join(dir, "nowhere", "x"), nil); err == nil {
		t.Error("WriteFile into a missing folder succeeded")
	}
}

// TestStale: Create removes exactly the leftovers of its own target, written
// before this process started by a process that no longer runs, and reports
// each; it keeps everything else.
func TestStale(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "m.mlb")
	old := start.Add(-time.Hour)
	dead := strconv.Itoa(deadPID)
	files := []struct {
		name   string
		mtime  time.Time
		remove bool
	}{
		{".m.mlb.krafla-tmp-" + dead + "-123", old, true},
		{".m.mlb.krafla-tmp-" + dead + "-4", old, true},
		{".m.mlb.krafla-tmp-" + dead + "-5", start.Add(time.Hour), false},            // newer than this process
		{".m.mlb.krafla-tmp-" + strconv.Itoa(os.Getpid()) + "-6", old, false},        // this process's own
		{".m.mlb.krafla-tmp-" + strconv.Itoa(os.Getppid()) + "-7", old, false},       // a running process's
		{".other.mlb.krafla-tmp-" + dead + "-8", old, false},                         // another target
		{".m.krafla-tmp-" + dead + "-9", old, false},                                 // another target
		{".m.mlb.mlb.krafla-tmp-" + dead + "-9", old, false},                         // another target
		{".m.mlb.tmp123", old, false},                                                // not this naming
		{"m.mlb.krafla-tmp-" + dead + "-10", old, false},                             // no leading dot
		{".m.mlb.krafla-tmp-" + dead + "-11.bak", old, false},                        // suffix
		{".m.mlb.krafla-tmp-" + dead + "-x", old, false},                             // not a number
		{".m.mlb.krafla-tmp--12", old, false},                                        // no PID
		{".m.mlb.krafla-tmp-" + dead + "-12.krafla-tmp-" + dead + "-13", old, false}, // of target .m.mlb.krafla-tmp-...
		{"m.mlb", old, false},
		{".m.mlb.krafla-tmp-0-15", old, false},         // PID 0 is no writer's
		{".m.mlb.krafla-tmp-4294967297-16", old, true}, // above every PID
		// the target itself
	}
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte(f.name), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, f.mtime, f.mtime); err != nil {
			t.Fatal(err)
		}
	}
	sub := filepath.Join(dir, ".m.mlb.krafla-tmp-"+dead+"-14") // a folder is never removed
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(sub, old, old)

	var got []string
	OnStale(func(s Stale) {
		pid := strconv.Itoa(s.PID)
		if s.Err != nil || s.Target != target || !strings.Contains(s.Path, "-"+pid+"-") || s.Size != int64(len(filepath.Base(s.Path))) {
			t.Errorf("report %+v: want no error, target %s, the PID of the name, size of the name", s, target)
		}
		if !strings.Contains(s.String(), "removed "+s.Path) || !strings.Contains(s.String(), "interrupted process "+pid) {
			t.Errorf("report %q does not say what was removed and why", s)
		}
		got = append(got, filepath.Base(s.Path))
	})
	defer OnStale(nil)
	f, err := Create(target)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()

	var want []string
	for _, f := range files {
		_, err := os.Stat(filepath.Join(dir, f.name))
		if f.remove {
			want = append(want, f.name)
			if err == nil {
				t.Errorf("%s: kept, want it removed", f.name)
			}
		} else if err != nil {
			t.Errorf("%s: %v, want it kept", f.name, err)
		}
	}
	if _, err := os.Stat(sub); err != nil {
		t.Errorf("folder %s: %v, want it kept", sub, err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("reported %q, want %q", got, want)
	}
}

// assertOnly fails unless dir holds exactly the named files.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, names) {
		t.Errorf("%s holds %q, want %q", dir, got, names)
	}
}

// TestPrepareRename: a prepared file is complete beside the target, which is
// untouched until Rename; Rename needs Prepare first; Abort after Prepare
// removes it.
func TestPrepareRename(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "m.mlt")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Create(target)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Rename(); err == nil {
		t.Error("Rename before Prepare succeeded")
	}
	f.Abort()
	f, err = Create(target)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("new"))
	if err := f.Prepare(nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(f.Name()); string(b) != "new" {
		t.Errorf("prepared file reads %q, want %q", b, "new")
	}
	if b, _ := os.ReadFile(target); string(b) != "old" {
		t.Errorf("target reads %q after Prepare, want the old %q", b, "old")
	}
	if err := f.Rename(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Errorf("target reads %q after Rename, want %q", b, "new")
	}
	assertOnly(t, dir, "m.mlt")
	g, err := Create(target)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Prepare(nil); err != nil {
		t.Fatal(err)
	}
	g.Abort()
	assertOnly(t, dir, "m.mlt")
}

// TestAdopt: Leftovers lists a dead writer's file, and Adopt renames it onto
// the target and reports it as completed, not removed.
func TestAdopt(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "m.mlt")
	left := filepath.Join(dir, ".m.mlt"+marker+strconv.Itoa(deadPID)+"-7")
	if err := os.WriteFile(left, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(left, old, old)
	ls := Leftovers(target)
	if len(ls) != 1 || ls[0].Path != left || ls[0].PID != deadPID {
		t.Fatalf("Leftovers: %+v, want %s", ls, left)
	}
	var got []Stale
	OnStale(func(s Stale) { got = append(got, s) })
	defer OnStale(nil)
	if err := Adopt(ls[0]); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Errorf("target reads %q, want %q", b, "new")
	}
	assertOnly(t, dir, "m.mlt")
	if len(got) != 1 || !got[0].Adopted || !strings.Contains(got[0].String(), "completed the interrupted write of process "+strconv.Itoa(deadPID)) {
		t.Errorf("reports %v", got)
	}
}
