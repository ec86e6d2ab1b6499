package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/gguf/gguftest"
	"github.com/krafla/krafla/hub/hubtest"
	"github.com/krafla/krafla/internal/testenv"
)

// TestSplitGGUF: krafla convert takes a split set by its first file (the
// output named after the set), and krafla pull ORG/REPO:TAG brings a split
// set from the hub; the model tells the story the unsplit file tells.
func TestSplitGGUF(t *testing.T) {
	src := testenv.Model(t, "stories260K.gguf")
	dir := t.TempDir()
	paths, err := gguftest.Split(src, filepath.Join(dir, "stories260K-Q8_0"), 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	out, stderr, err := runCLI("convert", paths[0])
	if err != nil || !strings.Contains(out, "wrote stories260K-Q8_0.gguf.mlb") || !strings.Contains(stderr, "split set of 3 files") {
		t.Fatalf("convert the first split: %v\n%s%s", err, out, stderr)
	}
	if _, _, err := runCLI("convert", paths[1], "-o", "x.mlb"); err == nil || !strings.Contains(err.Error(), "give the first split") {
		t.Errorf("convert the second split: %v", err)
	}
	if out, _, err := runCLI("inspect", paths[1]); err != nil || !strings.Contains(out, "split 2 of 3 of a set") {
		t.Errorf("inspect the second split: %v\n%s", err, out)
	}
	os.Chdir(wd)

	h, _, _ := storiesHub(t)
	files := map[string][]byte{"stories260K-Q2_K.gguf": []byte("never fetched")}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(p)] = b
	}
	h.Add("org/stories260K-GGUF", files)
	out, stderr, err = runCLI("pull", "org/stories260K-GGUF:Q8_0")
	if err != nil || !strings.HasPrefix(out, "org/stories260K-GGUF:q8_0: ") {
		t.Fatalf("pull: %v\n%s%s", err, out, stderr)
	}
	var got []string
	for _, q := range h.Log() {
		if q.Method == "GET" && strings.Contains(q.Path, "/resolve/") {
			got = append(got, filepath.Base(q.Path))
		}
	}
	if want := "stories260K-Q8_0-00001-of-00003.gguf stories260K-Q8_0-00002-of-00003.gguf stories260K-Q8_0-00003-of-00003.gguf"; strings.Join(got, " ") != want {
		t.Errorf("downloaded %v, want %s", got, want)
	}
	out, stderr, err = runCLI("run", "org/stories260K-GGUF:q8_0", "--temp", "0", "-n", "60", "--no-huge-pages")
	const story = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park."
	if err != nil || !strings.HasPrefix(out, story) {
		t.Fatalf("run: %v\n%q %s", err, out, stderr)
	}
}

// TestPullHelp: pull --help teaches the name forms and every environment
// variable the hub client reads (the "done when").
func TestPullHelp(t *testing.T) {
	out, _, err := runCLI("pull", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"ORG/NAME[:TAG][@REVISION]", ":TAG", "@REVISION", "q4_0", "Q4_K_M", "-00001-of-0000N.gguf",
		"HF_TOKEN", "HF_ENDPOINT", "HF_HOME", "HF_HUB_CACHE", "HF_HUB_OFFLINE", "HTTPS_PROXY", "KRAFLA_HOME"} {
		if !strings.Contains(out, s) {
			t.Errorf("pull --help does not mention %s", s)
		}
	}
}

// TestRunFromOtherToolsCache: what another tool downloaded (here
// @huggingface/hub's snapshotDownload, from the fake hub) runs by name at
// once, offline, without a request.
func TestRunFromOtherToolsCache(t *testing.T) {
	h, r, cache := storiesHub(t)
	var dl struct{ Dir, Error string }
	hubtest.HFJS(t, &dl, "download", r.Name, h.URL, cache)
	if dl.Error != "" {
		t.Fatal(dl.Error)
	}
	n := len(h.Log())
	t.Setenv("HF_HUB_OFFLINE", "1")
	out, stderr, err := runCLI("run", r.Name, "--temp", "0", "-n", "60", "--no-huge-pages")
	const story = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park."
	if err != nil || !strings.HasPrefix(out, story) || !strings.Contains(stderr, "found karpathy/stories260K in the Hugging Face cache") {
		t.Fatalf("run: %v\n%q %s", err, out, stderr)
	}
	if len(h.Log()) != n {
		t.Errorf("offline run made %d requests", len(h.Log())-n)
	}
}
