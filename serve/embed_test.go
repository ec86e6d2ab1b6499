package serve

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/krafla/krafla/convert"
	"github.com/krafla/krafla/convert/hfgen"
	"github.com/krafla/krafla/embed"
	"github.com/krafla/krafla/infer"
	"github.com/krafla/krafla/mlt"
)

// embedServer serves a synthetic Qwen3-Embedding-style model (last-token
// pooling, EOS appended by the template) with a context of 32, and returns
// its URL and an embedder of its own on the same model, for the expected
// vectors.
func embedServer(t *testing.T) (string, *embed.Embedder, *mlt.Tokenizer) {
	t.Helper()
	out := embedModelPath(t)
	m, err := infer.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := mlt.Open(convert.TokenizerPath(out))
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(Config{Name: "emb", Ctx: 32, Parallel: 1, Threads: 2})
	if err := s.Start(m, tok); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	e, err := embed.New(m, tok, embed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		hs.Close()
		s.Close()
		e.Close()
		m.Close()
	})
	return hs.URL, e, tok
}

// embedModelPath converts the synthetic embedding model into a folder of
// its own (emb.mlb and emb.mlt) and returns the .mlb path.
func embedModelPath(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "hf")
	if err := hfgen.Write(src, "qwen3", hfgen.Options{Seed: 4, Embedding: "last"}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "models", "emb.mlb")
	if err := os.Mkdir(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := convert.Convert(context.Background(), src, convert.Options{Out: out, Threads: 1}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEmbeddingsCatalog: with a catalog the embedding endpoints load the
// model the body names (ollama's ":latest" too) and answer with its vectors.
func TestEmbeddingsCatalog(t *testing.T) {
	path := embedModelPath(t)
	load := func(p string) (*infer.Model, *mlt.Tokenizer, error) {
		m, err := infer.Open(p)
		if err != nil {
			return nil, nil, err
		}
		tok, err := mlt.Open(convert.TokenizerPath(p))
		if err != nil {
			m.Close()
			return nil, nil, err
		}
		return m, tok, nil
	}
	s := NewServer(Config{Catalog: &DirCatalog{Dir: filepath.Dir(path), Load: load}, Parallel: 1, Ctx: 64})
	hs := httptest.NewServer(s.Handler())
	defer func() { hs.Close(); s.Close() }()
	m, tok, err := load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	e, err := embed.New(m, tok, embed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ids, _ := e.Tokenize("", "the fox")
	want, err := e.Embed([][]int{ids})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"emb", "emb:latest"} {
		resp, b := post(t, hs.URL+"/api/embed", map[string]any{"model": name, "input": "the fox"})
		var r struct {
			Model      string
			Embeddings [][]float32
		}
		if resp.StatusCode != 200 || json.Unmarshal(b, &r) != nil || len(r.Embeddings) != 1 {
			t.Fatalf("%s: status %d: %s", name, resp.StatusCode, b)
		}
		sameVec(t, name, r.Embeddings[0], want[0])
	}
	resp, b := post(t, hs.URL+"/v1/embeddings", map[string]any{"model": "emb", "input": "the fox"})
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"model":"emb"`) {
		t.Errorf("/v1/embeddings: status %d: %s", resp.StatusCode, b)
	}
	resp, b = post(t, hs.URL+"/v1/embeddings", map[string]any{"model": "nope", "input": "x"})
	if resp.StatusCode != 404 {
		t.Errorf("unknown model: status %d: %s", resp.StatusCode, b)
	}
}

func sameVec(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: value %d = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func TestEmbeddingsEndpoints(t *testing.T) {
	url, e, tok := embedServer(t)
	vec := func(ids []int) []float32 {
		v, err := e.Embed([][]int{ids})
		if err != nil {
			t.Fatal(err)
		}
		return v[0]
	}
	text := func(s string) []int { ids, _ := e.Tokenize("", s); return ids }
	type oaResp struct {
		Object string
		Data   []struct {
			Object    string
			Index     int
			Embedding json.RawMessage
		}
		Model string
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
			TotalTokens  int `json:"total_tokens"`
		}
	}
	decode := func(b []byte) oaResp {
		var r oaResp
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		return r
	}
	floats := func(raw json.RawMessage) []float32 {
		var v []float32
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}

	t.Run("string", func(t *testing.T) {
		resp, b := post(t, url+"/v1/embeddings", map[string]any{"model": "emb", "input": "hello world"})
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		r := decode(b)
		ids := text("hello world")
		if r.Object != "list" || r.Model != "emb" || len(r.Data) != 1 || r.Data[0].Object != "embedding" || r.Usage.PromptTokens != len(ids) || r.Usage.TotalTokens != len(ids) {
			t.Errorf("response %s", b)
		}
		sameVec(t, "string input", floats(r.Data[0].Embedding), vec(ids))
	})
	t.Run("strings as base64", func(t *testing.T) {
		in := []string{"the fox", "a much longer sentence than the first one"}
		_, b := post(t, url+"/v1/embeddings", map[string]any{"model": "emb", "input": in, "encoding_format": "base64"})
		r := decode(b)
		if len(r.Data) != 2 {
			t.Fatalf("response %s", b)
		}
		for i, d := range r.Data {
			var s string
			if err := json.Unmarshal(d.Embedding, &s); err != nil {
				t.Fatal(err)
			}
			raw, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]float32, len(raw)/4)
			for k := range got {
				got[k] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*k:]))
			}
			if d.Index != i {
				t.Errorf("index %d at %d", d.Index, i)
			}
			sameVec(t, in[i], got, vec(text(in[i])))
		}
	})
	t.Run("token ids", func(t *testing.T) {
		ids := []int{10, 20, 30, 40}
		for _, in := range []any{ids, [][]int{ids, {5}}} {
			_, b := post(t, url+"/v1/embeddings", map[string]any{"model": "emb", "input": in})
			r := decode(b)
			if len(r.Data) == 0 {
				t.Fatalf("response %s", b)
			}
			sameVec(t, "ids", floats(r.Data[0].Embedding), vec(ids))
		}
	})
	t.Run("dimensions", func(t *testing.T) {
		_, b := post(t, url+"/v1/embeddings", map[string]any{"model": "emb", "input": "the fox", "dimensions": 16})
		r := decode(b)
		sameVec(t, "dimensions 16", floats(r.Data[0].Embedding), embed.Truncate(vec(text("the fox")), 16))
	})
	long := strings.Repeat("lorem ipsum dolor ", 10) // more than 32 tokens
	ids := text(long)
	if len(ids) <= 32 {
		t.Fatalf("the long text has only %d tokens", len(ids))
	}
	t.Run("ollama embed truncates", func(t *testing.T) {
		resp, b := post(t, url+"/api/embed", map[string]any{"model": "emb", "input": []string{"the fox", long}})
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		var r struct {
			Model           string
			Embeddings      [][]float32
			PromptEvalCount int `json:"prompt_eval_count"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		// The first 31 tokens and the template's EOS.
		cut := append(append([]int(nil), ids[:31]...), int(tok.EOS))
		if len(r.Embeddings) != 2 || r.Model != "emb" || r.PromptEvalCount != len(text("the fox"))+32 {
			t.Fatalf("response %s", b)
		}
		sameVec(t, "short", r.Embeddings[0], vec(text("the fox")))
		sameVec(t, "truncated", r.Embeddings[1], vec(cut))
		_, b = post(t, url+"/api/embed", map[string]any{"model": "emb", "input": "the fox"})
		if err := json.Unmarshal(b, &r); err != nil || len(r.Embeddings) != 1 {
			t.Fatalf("one string: %s", b)
		}
		_, b = post(t, url+"/api/embed", map[string]any{"model": "emb", "input": []string{}})
		if string(b) != `{"embeddings":[],"load_duration":0,"model":"emb","prompt_eval_count":0,"total_duration":`+string(b[strings.LastIndex(string(b), ":")+1:]) {
			t.Errorf("no input: %s", b)
		}
	})
	t.Run("ollama embeddings", func(t *testing.T) {
		_, b := post(t, url+"/api/embeddings", map[string]any{"model": "emb", "prompt": "the fox"})
		var r struct{ Embedding []float32 }
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		sameVec(t, "legacy", r.Embedding, vec(text("the fox")))
		_, b = post(t, url+"/api/embeddings", map[string]any{"model": "emb", "prompt": ""})
		if strings.TrimSpace(string(b)) != `{"embedding":[]}` {
			t.Errorf("empty prompt: %s", b)
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		want := vec(text("hello world"))
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, b := post(t, url+"/v1/embeddings", map[string]any{"model": "emb", "input": []string{"hello world", long[:20]}})
				sameVec(t, "concurrent", floats(decode(b).Data[0].Embedding), want)
			}()
		}
		wg.Wait()
	})
	for _, tc := range []struct {
		name, path string
		body       any
		status     int
		want       string
	}{
		{"too long", "/v1/embeddings", map[string]any{"model": "emb", "input": []string{"a", long}}, 400, "input: input 1 has"},
		{"ollama truncate false", "/api/embed", map[string]any{"model": "emb", "input": []string{long}, "truncate": false}, 400, "input 0 has"},
		{"no input", "/v1/embeddings", map[string]any{"model": "emb"}, 400, "input: is required"},
		{"empty list", "/v1/embeddings", map[string]any{"model": "emb", "input": []string{}}, 400, "at least one input"},
		{"bad input", "/v1/embeddings", map[string]any{"model": "emb", "input": 3}, 400, "must be a string"},
		{"bad format", "/v1/embeddings", map[string]any{"model": "emb", "input": "x", "encoding_format": "hex"}, 400, "encoding_format"},
		{"dimensions", "/v1/embeddings", map[string]any{"model": "emb", "input": "x", "dimensions": 65}, 400, "the model's 64"},
		{"id outside the vocabulary", "/v1/embeddings", map[string]any{"model": "emb", "input": []int{1, 1 << 20}}, 400, "token 1048576 at index 1"},
		{"other model", "/v1/embeddings", map[string]any{"model": "other", "input": "x"}, 404, "does not exist"},
		{"no model", "/api/embed", map[string]any{"input": "x"}, 400, "model: required"},
		{"ollama ids", "/api/embed", map[string]any{"model": "emb", "input": []int{1, 2}}, 400, "a string or an array of strings"},
		{"get", "/v1/embeddings", nil, 405, "not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var status int
			var b []byte
			if tc.body == nil {
				resp, err := httpGet(url + tc.path)
				if err != nil {
					t.Fatal(err)
				}
				status, b = resp.status, resp.body
			} else {
				resp, body := post(t, url+tc.path, tc.body)
				status, b = resp.StatusCode, body
			}
			if status != tc.status || !strings.Contains(string(b), tc.want) {
				t.Errorf("status %d %s, want %d with %q", status, b, tc.status, tc.want)
			}
		})
	}
}

type getResp struct {
	status int
	body   []byte
}

func httpGet(url string) (getResp, error) {
	resp, err := http.Get(url)
	if err != nil {
		return getResp{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return getResp{resp.StatusCode, b}, err
}

// TestEmbeddingsPoolings: /v1/embeddings and /api/embed pool as the served
// checkpoint's sentence-transformers files say, for every mode. The
// checkpoints' default prompt is the query prompt (default_prompt_name), so
// the server puts it before every text; where include_prompt is false its
// tokens, counted here independently (hfgen's tokenizer adds no BOS: the
// prompt's own tokens), are left out of pooling, and token-id inputs (no
// prompt) pool every token. Vectors have the bits of the library's.
func TestEmbeddingsPoolings(t *testing.T) {
	for _, tc := range []struct {
		pool    string
		exclude bool
	}{{"last", false}, {"mean", false}, {"cls", false}, {"max", false}, {"last", true}, {"mean", true}, {"max", true}} {
		name := tc.pool
		if tc.exclude {
			name += "/exclude-prompt"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "hf")
			if err := hfgen.Write(src, "qwen3", hfgen.Options{Seed: 8, Embedding: tc.pool, ExcludePrompt: tc.exclude}); err != nil {
				t.Fatal(err)
			}
			stFile := filepath.Join(src, "config_sentence_transformers.json")
			var st map[string]any
			b, err := os.ReadFile(stFile)
			if err == nil {
				err = json.Unmarshal(b, &st)
			}
			if err != nil {
				t.Fatal(err)
			}
			st["default_prompt_name"] = "query"
			if b, err = json.Marshal(st); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(stFile, b, 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "e.mlb")
			if _, err := convert.Convert(context.Background(), src, convert.Options{Out: out, Threads: 1}); err != nil {
				t.Fatal(err)
			}
			m, err := infer.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := mlt.Open(convert.TokenizerPath(out))
			if err != nil {
				t.Fatal(err)
			}
			s := NewServer(Config{Name: "emb", Ctx: 256, Parallel: 1, Threads: 2})
			if err := s.Start(m, tok); err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(s.Handler())
			e, err := embed.New(m, tok, embed.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { hs.Close(); s.Close(); e.Close(); m.Close() }()
			prompt, _ := tok.Embed.Prompt("query")
			skip := 0
			if tc.exclude {
				skip = len(tok.Encode(prompt, false))
			}
			texts := []string{"the fox", "a longer line of text, with a comma"}
			var in [][]int
			for _, s := range texts {
				ids, _ := e.Tokenize(prompt, s)
				in = append(in, ids)
			}
			want, err := e.EmbedSkip(in, []int{skip, skip})
			if err != nil {
				t.Fatal(err)
			}
			ids := []int{5, 6, 7, 8}
			wantIDs, err := e.Embed([][]int{ids})
			if err != nil {
				t.Fatal(err)
			}
			resp, b := post(t, hs.URL+"/v1/embeddings", map[string]any{"model": "emb", "input": texts})
			var r struct {
				Data []struct{ Embedding []float32 }
			}
			if resp.StatusCode != 200 || json.Unmarshal(b, &r) != nil || len(r.Data) != 2 {
				t.Fatalf("/v1/embeddings: status %d: %s", resp.StatusCode, b)
			}
			for i := range texts {
				sameVec(t, "/v1/embeddings "+texts[i], r.Data[i].Embedding, want[i])
			}
			resp, b = post(t, hs.URL+"/v1/embeddings", map[string]any{"model": "emb", "input": ids})
			if resp.StatusCode != 200 || json.Unmarshal(b, &r) != nil || len(r.Data) != 1 {
				t.Fatalf("/v1/embeddings of ids: status %d: %s", resp.StatusCode, b)
			}
			sameVec(t, "/v1/embeddings of token ids", r.Data[0].Embedding, wantIDs[0])
			resp, b = post(t, hs.URL+"/api/embed", map[string]any{"model": "emb", "input": texts})
			var o struct{ Embeddings [][]float32 }
			if resp.StatusCode != 200 || json.Unmarshal(b, &o) != nil || len(o.Embeddings) != 2 {
				t.Fatalf("/api/embed: status %d: %s", resp.StatusCode, b)
			}
			for i := range texts {
				sameVec(t, "/api/embed "+texts[i], o.Embeddings[i], want[i])
			}
		})
	}
}
