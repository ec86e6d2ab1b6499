package serve

import (
	"testing"
)

// FuzzOllamaRequest feeds arbitrary bodies to ollama's decoders (/api/chat,
// /api/generate, and the dispatcher's peek at model and keep_alive): never
// a panic, errors are 4xx with a message, and an accepted request fits the
// context with its parameters in range.
func FuzzOllamaRequest(f *testing.F) {
	for _, seed := range []string{
		`{"model":"tiny","messages":[{"role":"user","content":"hi"}],"options":{"temperature":0.2,"top_k":3,"num_predict":4,"stop":["a"],"seed":-1},"keep_alive":"5m"}`,
		`{"model":"tiny:latest","prompt":"hi","raw":true,"stream":false,"format":"json","options":{"repeat_penalty":1.3,"repeat_last_n":-1,"num_ctx":20}}`,
		`{"model":"tiny","prompt":"hi","system":"s","think":false,"format":{"type":"object","properties":{"a":{"type":"integer"}}}}`,
		`{"model":"tiny","messages":[],"keep_alive":0}`, `{"model":"tiny","prompt":"","keep_alive":-1}`,
		`{"name":"tiny","prompt":"x","suffix":"y","context":[1]}`, `{"model":"tiny","messages":[{"role":"user","content":"x","images":[]}]}`,
		`{"model":"tiny","prompt":"x","system":"s","template":"{{ range .Messages }}<{{ .Role }}>{{ .Content }}{{ end }}{{ .Response }}"}`,
		`{"model":"tiny","prompt":"ab","suffix":"cd","raw":true,"options":{"num_ctx":12}}`, `{"model":"tiny","prompt":"","suffix":"x","system":"s"}`,
		`{"model":"tiny","prompt":"a","suffix":"b","template":"{{ .Prompt }}{{ .Suffix }}"}`,
		`{"model":1}`, `[]`, `null`, `{`, `{"keep_alive":1e999}`, `{"model":"tiny","think":"high","messages":[{"role":"user","content":"` + "\xff" + `"}]}`,
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	s, _ := startServer(f, Config{Ctx: 64})
	// and a model with FIM sentinels, for suffix
	sf, _ := fimModel(f, 64)
	f.Fuzz(func(t *testing.T, body []byte, isChat bool) {
		name, keep, ae := peekModel(body)
		if ae == nil && (name == "" || keep != nil && *keep < -1) {
			t.Fatalf("peek accepted model %q keep_alive %v", name, keep)
		}
		checkOllamaDecode(t, s, body, isChat)
		checkOllamaDecode(t, sf, body, isChat)
	})
}

// checkOllamaDecode is FuzzOllamaRequest's check of one server's decoder
// (slots of 64 positions).
func checkOllamaDecode(t *testing.T, s *Server, body []byte, isChat bool) {
	t.Helper()
	e := s.eng.Load()
	q, ae := s.decodeOllama(body, e, isChat)
	if ae != nil {
		if ae.Status < 400 || ae.Status > 499 || ae.Message == "" {
			t.Fatalf("error %+v: want a 4xx with a message", ae)
		}
		return
	}
	if q.load {
		return
	}
	p := q.p
	switch {
	case len(q.prompt) == 0 || len(q.prompt) >= 64:
		t.Fatalf("accepted a prompt of %d tokens for a context of 64", len(q.prompt))
	case !(p.temperature >= 0 && p.temperature <= 100), !(p.topP >= 0 && p.topP <= 1), !(p.minP >= 0 && p.minP <= 1):
		t.Fatalf("accepted temperature %v top_p %v min_p %v", p.temperature, p.topP, p.minP)
	case p.topK < 0, p.maxTokens < 0, len(p.stop) > maxOllamaStop, p.repeatLastN < -1, !(p.repeatPenalty >= 0):
		t.Fatalf("accepted %+v", p)
	case q.numCtx > 0 && q.numCtx < 64 && len(q.prompt)+p.maxTokens > q.numCtx:
		t.Fatalf("num_ctx %d: prompt %d + up to %d tokens", q.numCtx, len(q.prompt), p.maxTokens)
	}
	for _, id := range q.prompt {
		if id < 0 || id >= e.vocab {
			t.Fatalf("token %d outside the vocabulary", id)
		}
	}
}
