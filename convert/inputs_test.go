package convert

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/convert/hfgen"
)

// TestUnsafeAndUnsupportedInputs: a folder whose weights krafla does not read
// is refused with a message that names the file, the reason and what to do,
// whether or not config.json is there; safetensors beside them win.
func TestUnsafeAndUnsupportedInputs(t *testing.T) {
	pickleWant := []string{"pickle", "can execute code", "safetensors and GGUF", "save_pretrained", "safe_serialization=True", "huggingface.co/spaces/safetensors/convert"}
	tests := []struct {
		name   string
		files  []string // created empty
		config bool     // a config.json beside them
		want   []string // all must appear in the error
	}{
		{"pytorch_model.bin", []string{"pytorch_model.bin"}, true, append([]string{"pytorch_model.bin"}, pickleWant...)},
		{"bin shards", []string{"pytorch_model-00001-of-00002.bin", "pytorch_model-00002-of-00002.bin", "pytorch_model.bin.index.json"}, true,
			append([]string{"pytorch_model-00001-of-00002.bin and pytorch_model-00002-of-00002.bin"}, pickleWant...)},
		{"model.pt", []string{"model.pt"}, false, append([]string{"model.pt"}, pickleWant...)},
		{"consolidated.00.pth", []string{"consolidated.00.pth", "params.json"}, false, append([]string{"consolidated.00.pth"}, pickleWant...)},
		{"upper-case .CKPT", []string{"last.CKPT"}, false, append([]string{"last.CKPT"}, pickleWant...)},
		{"onnx", []string{"model.onnx"}, true, []string{"model.onnx", "ONNX", "safetensors weights instead"}},
		{"onnx folder", []string{"onnx/model.onnx"}, true, []string{"onnx" + string(filepath.Separator), "ONNX"}},
		{"gguf only", []string{"model-Q4_K_M.gguf"}, false, []string{"model-Q4_K_M.gguf", "a GGUF file, not a checkpoint folder", "krafla convert "}},
		{"shards without index", []string{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}, true,
			[]string{"model-00001-of-00002.safetensors and model-00002-of-00002.safetensors", "no model.safetensors.index.json", "download it"}},
		{"consolidated.safetensors", []string{"consolidated.safetensors"}, true, []string{"consolidated.safetensors", "native Mistral layout"}},
		{"other safetensors", []string{"weights.safetensors"}, true, []string{"weights.safetensors", "not named model.safetensors"}},
		{"nothing", []string{"README.md"}, true, []string{"neither model.safetensors nor model.safetensors.index.json found"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range append(tc.files, map[bool]string{true: "config.json"}[tc.config]) {
				if f == "" {
					continue
				}
				p := filepath.Join(dir, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out := filepath.Join(t.TempDir(), "out.mlb")
			_, err := Convert(context.Background(), dir, Options{Out: out})
			if err == nil {
				t.Fatalf("got nil error, want one containing %q", tc.want)
			}
			for _, w := range append(tc.want, dir) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want it to contain %q", err, w)
				}
			}
			if left, _ := os.ReadDir(filepath.Dir(out)); len(left) != 0 {
				t.Errorf("files left behind: %v", left)
			}
		})
	}
}

// TestSafetensorsBesideOthers: a checkpoint with model.safetensors converts
// even when pickle or ONNX copies of the weights sit beside it (the Hub keeps
// both in many repositories); the pickle is never opened.
func TestSafetensorsBesideOthers(t *testing.T) {
	dir := t.TempDir()
	if err := hfgen.Write(dir, "llama", hfgen.Options{NoTokenizer: true}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"pytorch_model.bin", "training_args.bin", "model.onnx", "model.gguf"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("not weights"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Convert(context.Background(), dir, Options{Out: filepath.Join(t.TempDir(), "o.mlb"), NoTokenizer: true}); err != nil {
		t.Fatal(err)
	}
}

// TestMissingShard names the shard the index lists but the folder lacks.
func TestMissingShard(t *testing.T) {
	dir := t.TempDir()
	if err := hfgen.Write(dir, "llama", hfgen.Options{Shards: 3, NoTokenizer: true}); err != nil {
		t.Fatal(err)
	}
	missing := "model-00002-of-00003.safetensors"
	if err := os.Remove(filepath.Join(dir, missing)); err != nil {
		t.Fatal(err)
	}
	_, err := Convert(context.Background(), dir, Options{Out: filepath.Join(t.TempDir(), "o.mlb"), NoTokenizer: true})
	for _, w := range []string{dir, "the shard " + missing + " is missing", "model.safetensors.index.json lists it for", "download it again"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("got %v, want an error containing %q", err, w)
		}
	}
}
