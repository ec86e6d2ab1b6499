package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/krafla/krafla/imatrix"
	"github.com/krafla/krafla/mlb/mlbtest"
	"github.com/krafla/krafla/mlt"
)

// runTestModel converts a synthetic tiny Llama 3 checkpoint (with its tokenizer)
// for the tests of run, ppl, imatrix and bench, and returns the .mlb path.
func runTestModel(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	if err := runSynth("llama3", synthOptions{Output: ck, Shape: "tiny", DType: "bf16", Seed: 1, Shards: 1}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "tiny.mlb")
	if err := runConvert(context.Background(), ck, convertOptions{Output: out, Type: "q8_0", Threads: 1}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	return out
}

// runCLI runs the command line through the cobra root.
func runCLI(args ...string) (stdout, stderr string, err error) {
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err = root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

func writeRunText(t *testing.T, words int) string {
	t.Helper()
	var b strings.Builder
	w := strings.Fields("the lava flows under the ice and the fire of the mountain warms the valley below")
	for i := range words {
		b.WriteString(w[(i*7)%len(w)])
		b.WriteByte(' ')
	}
	p := filepath.Join(t.TempDir(), "text.txt")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunGenerates(t *testing.T) {
	model := runTestModel(t)
	out1, errOut, err := runCLI("run", model, "-p", "The lava", "-n", "12", "--threads", "1", "--seed", "7")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out1) == "" {
		t.Errorf("run printed no text")
	}
	for _, want := range []string{"cache: ", "prefill: ", "tokens/s"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q: want it to contain %q", errOut, want)
		}
	}
	if strings.Contains(errOut, "cpu: ") {
		t.Errorf("stderr %q: the cpu line is for -v only", errOut)
	}
	if _, errV, err := runCLI("run", model, "-p", "The lava", "-n", "12", "--threads", "1", "--seed", "7", "-v"); err != nil {
		t.Fatal(err)
	} else if i := strings.Index(errV, "\ncpu: "); i < 0 {
		t.Errorf("-v stderr %q: want a cpu line", errV)
	} else if f := strings.Fields(errV[i+1:]); len(f) < 2 {
		t.Errorf("-v cpu line %q: want the seconds of CPU", errV[i+1:])
	} else if sec, err := strconv.ParseFloat(f[1], 64); err != nil || sec < 0 || sec > 60 || runtime.GOOS == "linux" && sec == 0 {
		// Linux's process clock counts nanoseconds (printed to the
		// microsecond): a run takes some; getrusage elsewhere may read 0.
		t.Errorf("-v cpu line %q: want the seconds of CPU (above 0 on Linux)", errV[i+1:])
	}
	out2, _, err := runCLI("run", model, "-p", "The lava", "-n", "12", "--threads", "3", "--seed", "7")
	if err != nil {
		t.Fatal(err)
	}
	if out1 != out2 {
		t.Errorf("seed 7 with 1 and 3 threads: got %q and %q, want the same text", out1, out2)
	}
	_, errOut, err = runCLI("run", model, "-p", "The lava", "-n", "-1", "--temp", "0", "--ctx", "12")
	if err != nil {
		t.Fatalf("generation to a full context: %v", err)
	}
	if !strings.Contains(errOut, "context of 12 positions is full") {
		t.Errorf("stderr %q: want it to say the context is full", errOut)
	}
	// No prompt: with a tokenizer that adds BOS (the synthetic one does not:
	// give it one), generation starts from BOS alone; -p "" is the same, and
	// -v shows the one prompt token.
	tp := strings.TrimSuffix(model, ".mlb") + ".mlt"
	tok, err := mlt.Open(tp)
	if err != nil {
		t.Fatal(err)
	}
	tok.Flags |= mlt.FlagAddBOS
	tok.BOS = tok.EOS
	if err := tok.Write(tp); err != nil {
		t.Fatal(err)
	}
	outBOS, errOut, err := runCLI("run", model, "-n", "6", "--temp", "0", "-v")
	if err != nil {
		t.Fatalf("run without -p: %v", err)
	}
	if want := fmt.Sprintf("prompt tokens: [%d]\n", tok.BOS); !strings.Contains(errOut, want) {
		t.Errorf("run without -p: stderr %q, want %q", errOut, want)
	}
	if outEmpty, _, err := runCLI("run", model, "-p", "", "-n", "6", "--temp", "0"); err != nil || outEmpty != outBOS {
		t.Errorf("run -p \"\": got %q, %v; want %q as without -p", outEmpty, err, outBOS)
	}
	imat := filepath.Join(t.TempDir(), "run.imatrix")
	// hfgen's tokenizer has the ChatML tokens but no template: give one.
	tf := filepath.Join(t.TempDir(), "chatml.jinja")
	if err := os.WriteFile(tf, []byte(chatMLJinja), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI("run", model, "--chat", "--template", tf, "-p", "Hi", "-n", "2", "--temp", "0", "--imatrix", imat); err != nil {
		t.Errorf("--chat: %v", err)
	}
	// The prompt is prefilled with the logits of its last token only, so the
	// classifier sees fewer tokens than the layers.
	if f, err := imatrix.Open(imat); err != nil {
		t.Errorf("run --imatrix: %v", err)
	} else if f.LayerTokens < 3 || f.ClassifierTokens != 2 {
		t.Errorf("run --imatrix: %d layer tokens, %d classifier tokens; want ≥ 3 and 2", f.LayerTokens, f.ClassifierTokens)
	}
}

func TestRunLogits(t *testing.T) {
	model := runTestModel(t)
	path := filepath.Join(t.TempDir(), "l.f32")
	_, errOut, err := runCLI("run", model, "-p", "The lava flows", "-n", "0", "--logits", path, "-v")
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// -v prints the prompt ids; the file holds one row of vocab floats per id.
	line := errOut[strings.Index(errOut, "prompt tokens: "):]
	line = line[:strings.IndexByte(line, '\n')]
	n := len(strings.Fields(line)) - 2
	if want := int64(n * 320 * 4); st.Size() != want {
		t.Errorf("logits file: %d bytes, want %d (%d tokens × vocab 320 × 4)", st.Size(), want, n)
	}
	if !strings.Contains(errOut, "kernels: ") {
		t.Errorf("-v: stderr %q does not name the kernel variant", errOut)
	}
	if got := st.Mode().Perm(); got != 0o644 {
		t.Errorf("logits file mode: got %v, want -rw-r--r--", got)
	}
}

func TestRunBadInput(t *testing.T) {
	model := runTestModel(t)
	// A model with a vocabulary of 67, and the tiny tokenizer of 320 tokens.
	small := mlbtest.Write(t, t.TempDir(), mlbtest.Base(), 1)
	bad := filepath.Join(t.TempDir(), "bad.mlb")
	if err := os.WriteFile(bad, []byte("MLB1 too short"), 0o644); err != nil {
		t.Fatal(err)
	}
	short := writeRunText(t, 5)
	// The tokenizer without its pair record, so that the vocabulary check is
	// what refuses it beside the small model (with the record, the pair
	// check would first: pair_test.go).
	paired, err := mlt.Open(strings.TrimSuffix(model, ".mlb") + ".mlt")
	if err != nil {
		t.Fatal(err)
	}
	tok := filepath.Join(t.TempDir(), "plain.mlt")
	if err := os.WriteFile(tok, paired.BytesWithoutPair(), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		args  []string
		usage bool
		want  string
	}{
		{"no prompt and no BOS", []string{"run", model}, true, "adds no BOS token"}, // the synthetic tokenizer adds none
		{"ctx above max_seq", []string{"run", model, "-p", "x", "--ctx", "100000"}, false, "max_seq 256"},
		{"prompt longer than ctx", []string{"run", model, "-p", "the lava flows under the ice", "--ctx", "3"}, false, "more than the context of 3"},
		{"tokenizer larger than vocab", []string{"run", small, "-t", tok, "-p", "x"}, false, "more than the model's vocab of 67"},
		{"invalid model", []string{"run", bad, "-p", "x"}, false, "ML_E_FORMAT"},
		{"missing tokenizer", []string{"run", small, "-p", "x"}, false, "no tokenizer beside the model"},
		{"bad temp", []string{"run", model, "-p", "x", "--temp", "-1"}, true, "--temp"},
		{"bad threads", []string{"run", model, "-p", "x", "--threads", "0"}, true, "--threads"},
		{"imatrix short text", []string{"imatrix", model, "-f", short, "--chunk", "64"}, false, "shorter than one chunk"},
		{"ppl short text", []string{"ppl", model, "-f", short, "--chunk", "64"}, false, "shorter than one chunk"},
		{"ppl chunk above max_seq", []string{"ppl", model, "-f", short, "--chunk", "300"}, false, "max_seq 256"},
		{"ppl no file", []string{"ppl", model}, true, "-f is required"},
		{"logits in a missing folder", []string{"run", model, "-p", "x", "--logits", filepath.Join(t.TempDir(), "no", "l.f32")}, true, "does not exist"},
		{"run imatrix is a folder", []string{"run", model, "-p", "x", "--imatrix", t.TempDir()}, true, "is a folder"},
		{"imatrix output in a missing folder", []string{"imatrix", model, "-f", short, "-o", filepath.Join(t.TempDir(), "no", "m.imatrix")}, true, "does not exist"},
		{"ppl chunk above ctx", []string{"ppl", model, "-f", short, "--chunk", "128", "--ctx", "64"}, true, "more than --ctx 64"},
		{"ppl kld invalid", []string{"ppl", model, "-f", short, "--chunk", "4", "--kld", bad}, false, "ML_E_FORMAT"},
		{"ppl kld other model", []string{"ppl", model, "-f", short, "--chunk", "4", "--kld", small}, false, "not the same model"},
		{"bench too long", []string{"bench", model, "-p", "300"}, false, "max_seq 256"},
		{"bench reps", []string{"bench", model, "-r", "0"}, true, "-r 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runCLI(tc.args...)
			if err == nil {
				t.Fatalf("%v: got no error", tc.args)
			}
			var ue usageError
			if got := errors.As(err, &ue); got != tc.usage {
				t.Errorf("usage error: got %v, want %v (%v)", got, tc.usage, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q: want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestImatrixAndPPL(t *testing.T) {
	model := runTestModel(t)
	text := writeRunText(t, 300)
	out := filepath.Join(t.TempDir(), "m.imatrix")
	if _, _, err := runCLI("imatrix", model, "-f", text, "--chunk", "64", "-o", out); err != nil {
		t.Fatal(err)
	}
	f, err := imatrix.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	if f.NLayers != 2 || f.Dim != 64 || f.LayerTokens == 0 || f.LayerTokens%64 != 0 {
		t.Errorf("imatrix: %d layers, dim %d, %d tokens; want 2, 64, a multiple of 64", f.NLayers, f.Dim, f.LayerTokens)
	}
	stdout, _, err := runCLI("ppl", model, "-f", text, "--chunk", "64", "--kld", model)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"perplexity: ", "KL divergence: mean 0.000000", "top-1 agreement: 100.00%"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("ppl output %q: want %q", stdout, want)
		}
	}
	// The default chunk of 512 does not fit this model's max_seq of 256:
	// the default becomes the longest chunk that does.
	stdout, _, err = runCLI("ppl", model, "-f", text)
	if err != nil {
		t.Fatal(err)
	}
	if want := "chunks of 256,"; !strings.Contains(stdout, want) {
		t.Errorf("ppl output %q: want %q", stdout, want)
	}
}

func TestBench(t *testing.T) {
	model := runTestModel(t)
	stdout, _, err := runCLI("bench", model, "-p", "16", "-n", "4", "-r", "2", "--threads", "1,2")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pp16", "tg4", "t/s (median)"} {
		if c := strings.Count(stdout, want); c == 0 || (want != "t/s (median)" && c != 2) {
			t.Errorf("bench table %q: %q appears %d times", stdout, want, c)
		}
	}
}

// TestRunPromptTemplate: with a post-processor template `[BOS] $A [EOS]`
// (flag 2048), run's prompt starts with the template's BOS and does not end
// with its EOS: a sequence that has ended is nothing to continue.
func TestRunPromptTemplate(t *testing.T) {
	model := runTestModel(t)
	tp := strings.TrimSuffix(model, ".mlb") + ".mlt"
	tok, err := mlt.Open(tp)
	if err != nil {
		t.Fatal(err)
	}
	bos, eos := int32(1), int32(2)
	tok.Flags &^= mlt.FlagAddBOS
	tok.SetPost(&mlt.Post{
		Single: []mlt.PostItem{{Seq: mlt.PostSpecial, IDs: []int32{bos}}, {Seq: mlt.PostSeqA}, {Seq: mlt.PostSpecial, IDs: []int32{eos}}},
		Pair:   []mlt.PostItem{{Seq: mlt.PostSeqA}, {Seq: mlt.PostSeqB}},
	})
	if err := tok.Write(tp); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := runCLI("run", model, "-p", "The lava", "-n", "2", "--temp", "0", "-v")
	if err != nil {
		t.Fatal(err)
	}
	want := append([]int{int(bos)}, tok.Encode("The lava", false)...)
	if !strings.Contains(errOut, fmt.Sprintf("prompt tokens: %v\n", want)) {
		t.Errorf("stderr %q: want the prompt tokens %v (BOS, the text, no EOS)", errOut, want)
	}
}
