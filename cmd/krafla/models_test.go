package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/krafla/krafla/hub/hubtest"
)

// storiesHub is a fake hub serving testdata/stories260K as
// karpathy/stories260K, with the environment pointed at it and at fresh
// cache and store folders.
func storiesHub(t *testing.T) (*hubtest.Hub, *hubtest.Repo, string) {
	t.Helper()
	files := map[string][]byte{"pytorch_model.bin": []byte("never fetched")}
	for _, n := range []string{"config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "stories260K", n))
		if err != nil {
			t.Fatal(err)
		}
		files[n] = b
	}
	h := hubtest.New()
	t.Cleanup(h.Close)
	r := h.Add("karpathy/stories260K", files)
	dir := t.TempDir()
	t.Setenv("HF_ENDPOINT", h.URL)
	t.Setenv("HF_HOME", filepath.Join(dir, "hf"))
	t.Setenv("HF_HUB_CACHE", filepath.Join(dir, "hf", "hub"))
	t.Setenv("KRAFLA_HOME", filepath.Join(dir, "krafla"))
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HF_HUB_OFFLINE", "")
	return h, r, filepath.Join(dir, "hf", "hub")
}

func TestRunByName(t *testing.T) {
	h, r, _ := storiesHub(t)
	stdout, stderr, err := runCLI("run", "karpathy/stories260K", "-p", "Once upon a time", "-n", "12")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if len(strings.TrimSpace(stdout)) < 20 || !strings.Contains(stderr, "pulling karpathy/stories260K") {
		t.Fatalf("stdout %q, stderr %q", stdout, stderr)
	}
	for _, q := range h.Log() {
		if strings.HasSuffix(q.Path, ".bin") {
			t.Errorf("fetched %s", q.Path)
		}
	}
	stdout, _, err = runCLI("list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct{ Name, Commit, Path string }
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil || len(rows) != 1 || rows[0].Name != "karpathy/stories260K:q8_0" || rows[0].Commit != r.Commit {
		t.Fatalf("list: %s (%v)", stdout, err)
	}
	stdout, _, err = runCLI("show", "karpathy/stories260K")
	if err != nil || !strings.Contains(stdout, r.Commit) || !strings.Contains(stdout, "huggingface.co/karpathy/stories260K") {
		t.Fatalf("show: %v\n%s", err, stdout)
	}
	// Offline: another type is converted from the HF cache, no request.
	n := len(h.Log())
	t.Setenv("HF_HUB_OFFLINE", "1")
	if _, stderr, err := runCLI("inspect", "karpathy/stories260K:q4_0"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	_, _, err = runCLI("run", "org/absent", "-p", "x")
	if err == nil || !strings.Contains(hubError(err).Error(), "HF_HUB_OFFLINE") {
		t.Errorf("offline, missing: %v", err)
	}
	if m := len(h.Log()); m != n {
		t.Errorf("offline made %d requests", m-n)
	}
	stdout, _, err = runCLI("rm", "karpathy/stories260K:q4_0")
	if err != nil || !strings.Contains(stdout, "removed karpathy/stories260K:q4_0") {
		t.Fatalf("rm: %v %s", err, stdout)
	}
	// A path that exists wins over a name: a folder named like a repo.
	wd, _ := os.Getwd()
	tmp := t.TempDir()
	os.Chdir(tmp)
	defer os.Chdir(wd)
	os.MkdirAll("karpathy", 0o755)
	os.WriteFile("karpathy/stories260K", []byte("not a model"), 0o644)
	if _, _, err := runCLI("inspect", "karpathy/stories260K"); err == nil {
		t.Error("inspect of an existing file named like a repo resolved the name")
	}
}

func TestPullErrorsHaveHints(t *testing.T) {
	h, _, _ := storiesHub(t)
	h.Add("org/gated", map[string][]byte{"config.json": []byte("{}"), "model.safetensors": []byte("x")}).Gated = true
	_, _, err := runCLI("pull", "org/gated")
	if err == nil || !strings.Contains(hubError(err).Error(), "HF_TOKEN") || !strings.Contains(hubError(err).Error(), "GatedRepo") {
		t.Errorf("gated: %v", err)
	}
	_, _, err = runCLI("pull", "no-slash")
	if _, ok := err.(usageError); !ok {
		t.Errorf("bad name: %v, want a usage error", err)
	}
}

const pullChildEnv = "KRAFLA_TEST_PULL_CHILD"

// TestKillPull SIGKILLs a real pull (this test binary re-executed as
// krafla) in the middle of the weights; the next pull resumes from the
// partial file with a Range request and ends with the right sha256.
func TestKillPull(t *testing.T) {
	if args, ok := os.LookupEnv(pullChildEnv); ok {
		os.Exit(execute(context.Background(), strings.Split(args, "\x1f"), os.Stdin, os.Stdout, os.Stderr))
	}
	h, r, cache := storiesHub(t)
	h.Slow = 2 * time.Millisecond // per KiB: the 1.1 MB weights take about 2 s
	sum := hubtest.SHA256(r.Files["model.safetensors"])
	part := filepath.Join(cache, "models--karpathy--stories260K", "blobs", sum+".incomplete")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillPull$")
	cmd.Env = append(os.Environ(), pullChildEnv+"=pull\x1fkarpathy/stories260K")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if st, err := os.Stat(part); err == nil && st.Size() > 100<<10 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the child did not start downloading")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	st, err := os.Stat(part)
	if err != nil || st.Size() >= int64(len(r.Files["model.safetensors"])) {
		t.Fatalf("after the kill: %v, %v; want a partial file", st, err)
	}
	kept := st.Size()
	h.Slow = 0
	if _, stderr, err := runCLI("pull", "karpathy/stories260K"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	b, err := os.ReadFile(filepath.Join(cache, "models--karpathy--stories260K", "blobs", sum))
	if err != nil {
		t.Fatal(err)
	}
	if s := sha256.Sum256(b); hex.EncodeToString(s[:]) != sum {
		t.Fatalf("sha256 %x, want %s", s, sum)
	}
	var ranged bool
	for _, q := range h.Log() {
		if q.Server == "cdn" && q.Range != "" {
			var start int64
			if _, err := fmtSscanf(q.Range, &start); err == nil && start > 0 && start <= kept {
				ranged = true
			}
		}
	}
	if !ranged {
		t.Errorf("no Range request resumed from the %d bytes kept: %+v", kept, h.Log())
	}
}

func fmtSscanf(r string, start *int64) (int, error) { return fmt.Sscanf(r, "bytes=%d-", start) }

// TestRunGGUFRepo pulls a -GGUF repo by name: only the file the tag (or
// the default order) chooses is downloaded, and it is imported and runs.
func TestRunGGUFRepo(t *testing.T) {
	h, _, _ := storiesHub(t)
	dir := t.TempDir()
	mlbPath := filepath.Join(dir, "s.mlb")
	if _, stderr, err := runCLI("convert", filepath.Join("..", "..", "testdata", "stories260K"), "-o", mlbPath, "--f16-scales"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	gg := filepath.Join(dir, "s.gguf")
	if _, stderr, err := runCLI("export", mlbPath, "-o", gg); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	b, err := os.ReadFile(gg)
	if err != nil {
		t.Fatal(err)
	}
	h.Add("org/stories260K-GGUF", map[string][]byte{
		"stories260K-Q8_0.gguf":        b,
		"stories260K-Q2_K.gguf":        []byte("never fetched"),
		"mmproj-stories260K-Q4_0.gguf": []byte("never fetched"),
		"README.md":                    []byte("# card"),
	})
	stdout, stderr, err := runCLI("run", "org/stories260K-GGUF", "-p", "Once upon a time", "-n", "8")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "chose stories260K-Q8_0.gguf") || len(strings.TrimSpace(stdout)) < 10 {
		t.Fatalf("stdout %q stderr %q", stdout, stderr)
	}
	for _, q := range h.Log() {
		if q.Method == "GET" && (strings.Contains(q.Path, "Q2_K") || strings.Contains(q.Path, "mmproj") || strings.Contains(q.Path, "README")) {
			t.Errorf("fetched %s", q.Path)
		}
	}
	if _, _, err := runCLI("pull", "org/stories260K-GGUF:Q5_K_M"); err == nil || !strings.Contains(err.Error(), "stories260K-Q8_0.gguf") {
		t.Errorf("unknown tag: %v, want the files listed", err)
	}
}
