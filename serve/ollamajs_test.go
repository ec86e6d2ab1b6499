package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/infer"
)

// TestOllamaJS drives a server over a model store with the official ollama
// client (npm ollama 0.6.3, installed into testdata/ollamajs/node_modules by
// scripts/test.sh) as a user would: pull from the fake hub (streamed and
// not), list, show, chat streamed and not, generate (with a suffix too),
// ps, copy, delete and four errors. It skips without node or the package.
func TestOllamaJS(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found")
	}
	dir := filepath.Join("testdata", "ollamajs")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "ollama", "package.json")); err != nil {
		t.Skip("the ollama npm package is not installed: run scripts/test.sh, or npm install in serve/testdata/ollamajs")
	}
	runOllamaClient(t, "ResponseError", func(ctx context.Context, url string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, node, "e2e.mjs", url)
		cmd.Dir = dir
		return cmd
	})
}

// runOllamaClient serves a model store behind a fake hub holding org/tiny
// and karpathy/stories260K, runs a client program (e2e.mjs, or its Go twin
// testdata/ollamago) with the server's URL, and checks the RESULT line it
// prints against the stored models' greedy answers; errName is the name the
// client gives an HTTP error.
func runOllamaClient(t *testing.T, errName string, client func(ctx context.Context, url string) *exec.Cmd) {
	var err error
	h, _ := storiesRepo(t)
	// org/tiny: the synthetic checkpoint of the other tests with the ChatML
	// template beside it, converted by the pull.
	ck := t.TempDir()
	if err := hfgen.Write(ck, "llama3", hfgen.Options{Shape: "tiny", Seed: 3, Config: map[string]any{"max_position_embeddings": 2048}}); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"chat_template.jinja": []byte(chatML)}
	ents, _ := os.ReadDir(ck)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(ck, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	// Qwen2.5-Coder's FIM sentinels at fimPre..fimPad, for generate with a
	// suffix.
	if files["tokenizer.json"], err = addFIMTokens(files["tokenizer.json"]); err != nil {
		t.Fatal(err)
	}
	h.Add("org/tiny", files)
	st, url := storeServer(t, h)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := client(ctx, url)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s%s", cmd, err, stdout.String(), stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	res, ok := strings.CutPrefix(lines[len(lines)-1], "RESULT ")
	if !ok {
		t.Fatalf("no RESULT line in %q", stdout.String())
	}
	type answer struct {
		Content, Response, Role, Reason string
		Done                            bool
		Eval, Prompt, Parts             int
	}
	type failure struct {
		Status      int
		Name, Error string
	}
	var got struct {
		Pull struct {
			First, Last string
			Weights     *struct{ Total, Completed int64 }
		}
		Pull2 struct{ Status string }
		List  []struct {
			Name  string
			Size  int64
			Quant string
		}
		Show struct {
			Template     string
			Capabilities []string
			Layers       int
		}
		Chat, Stream, Generate, FIM  answer
		PS, AfterCopy, AfterDelete   []string
		NotFound, BadOption, BadPull failure
		NoFIM                        failure
		Version                      string
	}
	if err := json.Unmarshal([]byte(res), &got); err != nil {
		t.Fatalf("%v in %s", err, res)
	}
	t.Logf("%s", res)

	// What the answers must be, from the stored models.
	ms, err := st.List()
	if err != nil || len(ms) != 2 {
		t.Fatalf("store after the pulls: %v %v", ms, err)
	}
	paths := map[string]string{}
	for _, m := range ms {
		paths[m.Repo] = m.Path
	}
	tm, ttok, err := openFiles(paths["org/tiny"])
	if err != nil {
		t.Fatal(err)
	}
	defer tm.Close()
	stops := map[int]bool{}
	for _, id := range ttok.StopTokens() {
		stops[id] = true
	}
	if id, ok := ttok.Lookup("<|im_end|>"); ok {
		stops[id] = true
	}
	ids, stopped := greedyRef(t, tm, ttok.Encode("<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n", false), 8, 1, 0, stops)
	wantChat := answer{Content: ttok.Decode(ids), Role: "assistant", Done: true, Reason: map[bool]string{true: "stop", false: "length"}[stopped], Eval: len(ids)}
	if f, ok := ttok.FIM(); !ok || !slices.Equal(f.Prompt(ttok, "ab", "cd", false), fimWant) {
		t.Fatalf("org/tiny's FIM format %+v (found %v), want the prompt %v", f, ok, fimWant)
	}
	fstops := maps.Clone(stops)
	fstops[fimPad] = true
	fids, fstopped := greedyRef(t, tm, fimWant, 8, 100, 1<<30, fstops)
	wantFIM := answer{Response: ttok.Decode(fids), Done: true, Reason: map[bool]string{true: "stop", false: "length"}[fstopped], Eval: len(fids), Prompt: len(fimWant)}
	sm, stok, err := openFiles(paths["karpathy/stories260K"])
	if err != nil {
		t.Fatal(err)
	}
	defer sm.Close()
	sstops := map[int]bool{}
	for _, id := range stok.StopTokens() {
		sstops[id] = true
	}
	sprompt := stok.Encode("Once upon a time", infer.AddBOS(stok))
	gids, gstopped := greedyRef(t, sm, sprompt, 8, 1, 0, sstops)

	if got.Pull.First != "pulling manifest" || got.Pull.Last != "success" || got.Pull.Weights == nil ||
		got.Pull.Weights.Total != int64(len(files["model.safetensors"])) || got.Pull.Weights.Completed != got.Pull.Weights.Total {
		t.Errorf("pull: %+v (weights %+v), want manifest … success with model.safetensors at %d bytes", got.Pull, got.Pull.Weights, len(files["model.safetensors"]))
	}
	if got.Pull2.Status != "success" {
		t.Errorf("pull without stream: %+v", got.Pull2)
	}
	if len(got.List) != 2 || got.List[0].Name != "karpathy/stories260K:q8_0" || got.List[1].Name != "org/tiny:q8_0" || got.List[1].Quant != "Q8_0" || got.List[1].Size <= 0 {
		t.Errorf("list: %+v", got.List)
	}
	if got.Show.Template != chatML || got.Show.Layers != tm.Config().NLayers || len(got.Show.Capabilities) == 0 {
		t.Errorf("show: %+v", got.Show)
	}
	if got.Chat != wantChat {
		t.Errorf("chat: %+v, want %+v", got.Chat, wantChat)
	}
	if s := got.Stream; s.Content != wantChat.Content || !s.Done || s.Reason != wantChat.Reason || s.Eval != wantChat.Eval || s.Parts < 2 {
		t.Errorf("chat streamed: %+v, want %+v in several parts", s, wantChat)
	}
	if g := got.Generate; g.Response != stok.Decode(gids) || g.Eval != len(gids) || g.Prompt != len(sprompt) || (g.Reason == "stop") != gstopped {
		t.Errorf("generate: %+v, want %q (%d tokens, prompt %d, stopped %v)", g, stok.Decode(gids), len(gids), len(sprompt), gstopped)
	}
	if got.FIM != wantFIM || !slices.Contains(got.Show.Capabilities, "insert") {
		t.Errorf("generate with suffix: %+v, want %+v; show's capabilities %v, want insert among them", got.FIM, wantFIM, got.Show.Capabilities)
	}
	if f := got.NoFIM; f.Status != 400 || !strings.Contains(f.Error, "fill-in-the-middle") {
		t.Errorf("suffix for a model without FIM tokens: %+v", f)
	}
	if strings.Join(got.PS, ",") != "karpathy/stories260K:q8_0,org/tiny:q8_0" {
		t.Errorf("ps: %v", got.PS)
	}
	if strings.Join(got.AfterCopy, ",") != "karpathy/stories260K:q8_0,me/tiny:q8_0,org/tiny:q8_0" ||
		strings.Join(got.AfterDelete, ",") != "karpathy/stories260K:q8_0,org/tiny:q8_0" {
		t.Errorf("copy then delete: %v then %v", got.AfterCopy, got.AfterDelete)
	}
	if f := got.NotFound; f.Status != 404 || f.Name != errName || !strings.Contains(f.Error, "try pulling it first") {
		t.Errorf("unknown model: %+v", f)
	}
	if f := got.BadOption; f.Status != 400 || !strings.Contains(f.Error, "options.temperature") {
		t.Errorf("bad option: %+v", f)
	}
	if f := got.BadPull; !strings.Contains(f.Error, "org/missing") {
		t.Errorf("pull of a missing repo: %+v", f)
	}
	if got.Version != OllamaVersion {
		t.Errorf("version %q", got.Version)
	}
}
