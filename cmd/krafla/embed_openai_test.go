package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/krafla/krafla/convert"
	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/internal/testenv"
	"github.com/krafla/krafla/mlt"
	"github.com/krafla/krafla/serve"
)

// TestOpenAIClientEmbeddings: the official openai client's
// embeddings.create() (which asks for base64 unless told otherwise) gets
// from krafla serve exactly the vectors krafla embed prints.
func TestOpenAIClientEmbeddings(t *testing.T) {
	dir := testenv.OpenAI(t)
	path := embedModel(t)
	m, err := infer.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tok, err := mlt.Open(convert.TokenizerPath(path))
	if err != nil {
		t.Fatal(err)
	}
	s := serve.NewServer(serve.Config{Name: "emb", Parallel: 1})
	if err := s.Start(m, tok); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var mu sync.Mutex
	var bodies []string
	h := s.Handler()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()

	texts := []string{"The capital of China is Beijing.", "hello world", "a fox"}
	script := `
const OpenAI = require(process.env.OPENAI_DIR + '/node_modules/openai').default;
const client = new OpenAI({ baseURL: process.env.BASE_URL + '/v1', apiKey: 'none', maxRetries: 0 });
(async () => {
  const r = await client.embeddings.create({ model: 'emb', input: JSON.parse(process.env.TEXTS) });
  process.stdout.write(JSON.stringify({ data: r.data.map(d => Array.from(d.embedding)), usage: r.usage, model: r.model }));
})().catch(e => { console.error(e); process.exit(1); });
`
	cmd := exec.Command("node", "-e", script)
	tj, _ := json.Marshal(texts)
	cmd.Env = append(os.Environ(), "OPENAI_DIR="+dir, "BASE_URL="+hs.URL, "TEXTS="+string(tj))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v: %s", err, stderr.String())
	}
	var got struct {
		Data  [][]float64
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		}
		Model string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(bodies) != 1 || !strings.Contains(bodies[0], `"encoding_format":"base64"`) {
		t.Errorf("the client's requests %q: want one asking for base64", bodies)
	}

	cli, errs, code := runEmbedCLI(t, append([]string{path, "--json"}, texts...)...)
	if code != 0 {
		t.Fatalf("krafla embed: exit %d: %s", code, errs)
	}
	var want struct {
		Embeddings [][]float32
		Tokens     []int
	}
	if err := json.Unmarshal([]byte(cli), &want); err != nil {
		t.Fatal(err)
	}
	if len(got.Data) != len(want.Embeddings) || got.Model != "emb" {
		t.Fatalf("client got %d vectors (model %q), krafla embed printed %d", len(got.Data), got.Model, len(want.Embeddings))
	}
	total := 0
	for _, n := range want.Tokens {
		total += n
	}
	if got.Usage.PromptTokens != total {
		t.Errorf("usage.prompt_tokens %d, want %d", got.Usage.PromptTokens, total)
	}
	for i := range got.Data {
		if len(got.Data[i]) != len(want.Embeddings[i]) {
			t.Fatalf("vector %d: %d values, want %d", i, len(got.Data[i]), len(want.Embeddings[i]))
		}
		for k, x := range got.Data[i] {
			if math.Float32bits(float32(x)) != math.Float32bits(want.Embeddings[i][k]) || float64(float32(x)) != x {
				t.Fatalf("vector %d value %d: the client got %v, krafla embed printed %v", i, k, x, want.Embeddings[i][k])
			}
		}
	}
}
