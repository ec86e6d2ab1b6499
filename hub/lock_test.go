package hub

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLockFileNoFlock runs the lock of systems without flock: it creates the
// lock file, its release can be called, and a folder that does not exist is
// an error, as with flock.
func TestLockFileNoFlock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := lockFileNoFlock(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("lock file not created: %v", err)
	}
	unlock()
	unlock2, err := lockFileNoFlock(p) // an existing lock file is reused
	if err != nil {
		t.Fatal(err)
	}
	unlock2()
	if _, err := lockFileNoFlock(filepath.Join(t.TempDir(), "missing", "x.lock")); err == nil {
		t.Error("a lock in a missing folder did not fail")
	}
}
