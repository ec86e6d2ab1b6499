// Package testenv holds helpers for tests: it finds the test data that lives
// outside the repository and reads the CPU time benchmarks report against.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RepoRoot returns the directory holding go.mod, searching upward from the
// current directory (go test runs in the package directory).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testenv: go.mod not found above the test directory")
		}
		dir = parent
	}
}

// SharedBase returns the folder of the shared test data: $KRAFLA_SHARED when
// set, else ../shared beside the repository (which may not exist).
func SharedBase(t testing.TB) string {
	t.Helper()
	if base := os.Getenv("KRAFLA_SHARED"); base != "" {
		return base
	}
	return filepath.Join(filepath.Dir(RepoRoot(t)), "shared")
}

// Shared returns the path of ../shared/<elem...> beside the repository, or
// $KRAFLA_SHARED/<elem...> when that variable is set. The test is skipped when
// the path does not exist, so a user's clone without shared/ still passes.
func Shared(t testing.TB, elem ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{SharedBase(t)}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("testenv: %s not available: %v", p, err)
	}
	return p
}

// DirNames returns the names of the entries of dir, sorted, failing the test
// when dir cannot be read.
func DirNames(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// ModelPath returns the path of testdata/<name> in the repository (the real
// stories260K model, as a checkpoint folder and as GGUF, ships there), or of
// shared/models/<name> when the repository lacks it; that path may not exist.
func ModelPath(t testing.TB, name string) string {
	t.Helper()
	if p := filepath.Join(RepoRoot(t), "testdata", name); exists(p) {
		return p
	}
	return filepath.Join(SharedBase(t), "models", name)
}

// Model is ModelPath, skipping the test when neither copy exists.
func Model(t testing.TB, name string) string {
	t.Helper()
	p := ModelPath(t, name)
	if !exists(p) {
		t.Skipf("testenv: %s not available", p)
	}
	return p
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// OpenAIVersion is the official openai npm client scripts/test.sh installs
// into the cache folder (KRAFLA_OPENAI).
const OpenAIVersion = "7.59.0"

// OpenAI finds the installed openai client's folder: $KRAFLA_OPENAI, else
// the cache folder scripts/test.sh fills; the test skips without it or node.
// Scripts run with that folder as their working directory resolve "openai".
func OpenAI(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("KRAFLA_OPENAI")
	if dir == "" {
		if cache, err := os.UserCacheDir(); err == nil {
			dir = filepath.Join(cache, "krafla", "openai-"+OpenAIVersion)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json")); err != nil {
		t.Skipf("the openai npm client is not installed (scripts/test.sh installs openai@%s; or set KRAFLA_OPENAI): %v", OpenAIVersion, err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH")
	}
	return dir
}
