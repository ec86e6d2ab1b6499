package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/krafla/krafla/gguf"
	"github.com/krafla/krafla/internal/testenv"
)

// writeGGUF writes a small valid GGUF with a long string array.
func writeGGUF(t *testing.T) string {
	t.Helper()
	toks := make([]string, 100)
	for i := range toks {
		toks[i] = "tok" + string(rune('a'+i%26))
	}
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: gguf.String("llama")},
		{Key: "llama.attention.layer_norm_rms_epsilon", Value: gguf.Float32(1e-5)},
		{Key: "tokenizer.ggml.tokens", Value: gguf.Array(toks)},
		{Key: "tokenizer.chat_template", Value: gguf.String(strings.Repeat("{{ x }}", 20))},
	}
	ts := []gguf.TensorInfo{{Name: "w", Type: gguf.Q8_0, Shape: []uint64{64, 3}}, {Name: "n", Type: gguf.F32, Shape: []uint64{64}}}
	path := filepath.Join(t.TempDir(), "m.gguf")
	w, err := gguf.Create(path, kvs, ts)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteTensor("w", make([]byte, 6*34))
	w.WriteTensor("n", make([]byte, 256))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestInspectGGUF(t *testing.T) {
	path := writeGGUF(t)
	var out, errw bytes.Buffer
	if rc := execute(context.Background(), []string{"inspect", path, "--tensors"}, nil, &out, &errw); rc != 0 {
		t.Fatalf("exit %d: %s", rc, errw.String())
	}
	for _, want := range []string{"valid GGUF file (version 3), llama, 2 tensors, 256 parameters", "100 elements: [toka tokb",
		"1e-05", "(140 bytes)", "Q8_0", "[64, 3]", "204", "bits per weight"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if rc := execute(context.Background(), []string{"inspect", path, "--json"}, nil, &out, &errw); rc != 0 {
		t.Fatalf("exit %d: %s", rc, errw.String())
	}
	var r ggufReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	// Q8_0 64×3: 6 blocks of 34 bytes; F32 64: 256 bytes.
	if r.Totals.DataBytes != 6*34+256 || r.Totals.Parameters != 256 || len(r.Tensors) != 0 || r.Metadata[2].Len != 100 || !r.Metadata[2].Cut {
		t.Errorf("report %+v", r)
	}
}

func TestInspectGGUFInvalid(t *testing.T) {
	b, err := os.ReadFile(writeGGUF(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"truncated", b[:200], "ML_E_FORMAT: gguf: "},
		{"big-endian", append([]byte("GGUF\x00\x00\x00\x03"), b[8:]...), "ML_E_FORMAT: gguf: "},
		{"version 1", append([]byte("GGUF\x01\x00\x00\x00"), b[8:]...), "ML_E_FORMAT: gguf: "},
		{"version 4", append([]byte("GGUF\x04\x00\x00\x00"), b[8:]...), "ML_E_FORMAT: gguf: "},
		{"missing", nil, "ML_E_IO: "},
	} {
		p := filepath.Join(dir, c.name+".gguf")
		if c.b == nil {
			p = filepath.Join(dir, "missing", "x.gguf")
		}
		if c.b != nil {
			os.WriteFile(p, c.b, 0o644)
		}
		var out, errw bytes.Buffer
		if rc := execute(context.Background(), []string{"inspect", p}, nil, &out, &errw); rc != 1 || !strings.Contains(errw.String(), c.want) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and %q", c.name, rc, errw.String(), c.want)
		}
	}
}

func TestInspectStories260KGGUF(t *testing.T) {
	p := testenv.Model(t, "stories260K.gguf")
	var out, errw bytes.Buffer
	if rc := execute(context.Background(), []string{"inspect", p, "--tensors"}, nil, &out, &errw); rc != 0 {
		t.Fatalf("exit %d: %s", rc, errw.String())
	}
	// From the model's README: 5 layers of dim 64, FFN 172, vocabulary 512, F32.
	for _, want := range []string{"48 tensors", "blk.4.ffn_down.weight", "[172, 64]", "512 elements", "llama.feed_forward_length"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
}
