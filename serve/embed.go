package serve

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/krafla/krafla/embed"
	"github.com/krafla/krafla/mlt"
)

// embedState is an engine's embedder, built on the first embedding request
// and used by one request at a time; it has its own batch and caches, apart
// from the generation scheduler's slots, and shares only the weights.
type embedState struct {
	mu   sync.Mutex
	once sync.Once
	e    *embed.Embedder
	err  error
}

// maxEmbedInputs bounds the inputs of one request (OpenAI's limit).
const maxEmbedInputs = 2048

// embedGroup is how many inputs go to the embedder at once, so a request
// whose client has gone stops between groups.
const embedGroup = 64

// embedder returns the engine's embedder, building it on first use.
func (s *Server) embedder(e *engine) (*embed.Embedder, *apiError) {
	e.emb.once.Do(func() {
		e.emb.e, e.emb.err = embed.New(e.m, e.tok, embed.Options{Threads: s.cfg.Threads})
	})
	if e.emb.err != nil {
		return nil, errInternal(e.emb.err)
	}
	return e.emb.e, nil
}

// closeEmbedder stops the single-model engine's embedder (a catalog's
// engines close theirs in engine.close).
func (s *Server) closeEmbedder() {
	if e := s.eng.Load(); e != nil {
		e.closeEmbedder()
	}
}

// closeEmbedder stops the embedder's worker threads, once no request uses it.
func (e *engine) closeEmbedder() {
	e.emb.mu.Lock()
	if e.emb.e != nil {
		e.emb.e.Close()
	}
	e.emb.mu.Unlock()
}

// embedModel checks the body's model: required, and the one served (with a
// catalog, withModel has resolved it to e); ollama's endpoints also take
// the name with ":latest".
func (s *Server) embedModel(f fields, e *engine, ollama bool) *apiError {
	var name string
	ok, ae := f.str("model", &name)
	if ae != nil {
		return ae
	}
	if !ok || name == "" {
		return badParam("model", "required: the model id that /v1/models lists")
	}
	if ollama && s.reg == nil {
		if !nameMatches(s.cfg.Name, name) {
			return errModelNotFound(name)
		}
		return nil
	}
	return s.checkModel(name, e)
}

// embedInput is one input: text to tokenize, or token ids.
type embedInput struct {
	text  string
	ids   []int
	isIDs bool
}

// parseEmbedInput reads OpenAI's input: a string, an array of strings, an
// array of token ids, or an array of such arrays.
func parseEmbedInput(f fields, name string) ([]embedInput, *apiError) {
	raw, ok := f[name]
	if !ok || !f.has(name) {
		return nil, badParam(name, "is required")
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []embedInput{{text: one}}, nil
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil, badParam(name, "must be a string, an array of strings, an array of token ids or an array of arrays of token ids")
	}
	if len(list) > maxEmbedInputs {
		return nil, badParam(name, "%d inputs, more than the limit of %d", len(list), maxEmbedInputs)
	}
	var ids []int
	if len(list) > 0 && json.Unmarshal(raw, &ids) == nil {
		return []embedInput{{ids: ids, isIDs: true}}, nil
	}
	out := make([]embedInput, len(list))
	for i, r := range list {
		if json.Unmarshal(r, &out[i].text) == nil {
			continue
		}
		if json.Unmarshal(r, &out[i].ids) != nil {
			return nil, badParam(name, "input %d must be a string or an array of token ids", i)
		}
		out[i].isIDs = true
	}
	return out, nil
}

// embedRequest is what the three endpoints ask of the embedder.
type embedRequest struct {
	inputs     []embedInput
	truncate   bool // cut inputs longer than the context (ollama), else refuse them
	dimensions int  // 0: all
	param      string
}

// embedResult holds the vectors and the token count.
type embedResult struct {
	vecs   [][]float32
	tokens int
}

// runEmbed tokenizes, checks and embeds the request's inputs.
func (s *Server) runEmbed(r *http.Request, e *engine, req embedRequest) (*embedResult, *apiError) {
	em, ae := s.embedder(e)
	if ae != nil {
		return nil, ae
	}
	if req.dimensions < 0 || req.dimensions > em.Dim() {
		return nil, badParam("dimensions", "%d: must be between 1 and the model's %d", req.dimensions, em.Dim())
	}
	limit := min(e.ctx, em.MaxTokens())
	tail := trailingSpecials(e.tok)
	// The model's default prompt (config_sentence_transformers.json's
	// default_prompt_name), as sentence-transformers puts it before every
	// text; none for most models.
	prompt, err := em.Prompt("", "")
	if err != nil {
		return nil, errInternal(err)
	}
	// The prompt's tokens, not pooled where the model's include_prompt is
	// false; token-id inputs carry no prompt.
	promptToks := em.PromptTokens(prompt)
	res := &embedResult{}
	inputs := make([][]int, len(req.inputs))
	skips := make([]int, len(req.inputs))
	for i, in := range req.inputs {
		ids := in.ids
		if !in.isIDs {
			ids, _ = em.Tokenize(prompt, in.text)
			skips[i] = promptToks
		}
		for j, id := range ids {
			if id < 0 || id >= e.vocab {
				return nil, badParam(req.param, "input %d: token %d at index %d is outside the vocabulary of %d", i, id, j, e.vocab)
			}
		}
		if len(ids) == 0 {
			return nil, badParam(req.param, "input %d has no tokens", i)
		}
		if len(ids) > limit {
			if !req.truncate {
				return nil, &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: strPtr(req.param),
					Code:    strPtr("context_length_exceeded"),
					Message: fmt.Sprintf("%s: input %d has %d tokens, more than the context of %d", req.param, i, len(ids), limit)}
			}
			// Keep the start, and the special tokens the template puts
			// after the text (Qwen3-Embedding's EOS: the pooled one).
			keep := tail
			if in.isIDs || len(keep) >= limit {
				keep = nil
			}
			ids = append(ids[:limit-len(keep):limit-len(keep)], keep...)
		}
		inputs[i] = ids
		res.tokens += len(ids)
	}
	e.emb.mu.Lock()
	defer e.emb.mu.Unlock()
	for start := 0; start < len(inputs); start += embedGroup {
		if err := r.Context().Err(); err != nil {
			return nil, &apiError{Status: 499, Type: "invalid_request_error", Message: "the client went away"}
		}
		end := min(start+embedGroup, len(inputs))
		vs, err := em.EmbedSkip(inputs[start:end], skips[start:end])
		if err != nil {
			if errors.Is(err, embed.ErrTooLong) || errors.Is(err, embed.ErrPromptOnly) {
				return nil, badParam(req.param, "%v", err)
			}
			return nil, errInternal(err)
		}
		res.vecs = append(res.vecs, vs...)
	}
	for i := range res.vecs {
		res.vecs[i] = embed.Truncate(res.vecs[i], req.dimensions)
	}
	return res, nil
}

// trailingSpecials are the ids the tokenizer's single template puts after
// the text.
func trailingSpecials(tok *mlt.Tokenizer) []int {
	if tok.Post == nil {
		return nil
	}
	var out []int
	for _, it := range tok.Post.Single {
		if it.Seq == mlt.PostSeqA {
			out = out[:0]
			continue
		}
		for _, id := range it.IDs {
			out = append(out, int(id))
		}
	}
	return out
}

// embeddings serves POST /v1/embeddings as OpenAI defines it: input (a
// string, strings, token ids or arrays of them), encoding_format "float" or
// "base64" (little-endian float32, what the official clients ask for),
// dimensions; the response lists one embedding per input with usage.
// Inputs longer than the context are refused, naming the index.
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request, e *engine) {
	f, ae := s.readObject(w, r)
	if ae == nil {
		ae = s.embedModel(f, e, false)
	}
	req := embedRequest{param: "input"}
	if ae == nil {
		req.inputs, ae = parseEmbedInput(f, "input")
	}
	format := "float"
	if ae == nil {
		_, ae = f.str("encoding_format", &format)
	}
	if ae == nil && format != "float" && format != "base64" {
		ae = badParam("encoding_format", "%q: must be \"float\" or \"base64\"", format)
	}
	if ae == nil && len(req.inputs) == 0 {
		ae = badParam("input", "must hold at least one input")
	}
	if ae == nil {
		_, ae = f.integer("dimensions", &req.dimensions, 1, math.MaxInt32)
	}
	var res *embedResult
	if ae == nil {
		res, ae = s.runEmbed(r, e, req)
	}
	if ae != nil {
		s.fail(w, r, ae)
		return
	}
	type item struct {
		Object    string `json:"object"`
		Index     int    `json:"index"`
		Embedding any    `json:"embedding"`
	}
	data := make([]item, len(res.vecs))
	for i, v := range res.vecs {
		data[i] = item{Object: "embedding", Index: i, Embedding: v}
		if format == "base64" {
			b := make([]byte, 4*len(v))
			for k, x := range v {
				binary.LittleEndian.PutUint32(b[4*k:], math.Float32bits(x))
			}
			data[i].Embedding = base64.StdEncoding.EncodeToString(b)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list", "data": data, "model": e.name,
		"usage": map[string]int{"prompt_tokens": res.tokens, "total_tokens": res.tokens},
	})
}

// ollamaEmbed serves POST /api/embed as ollama defines it: input (a string
// or strings), truncate (default true: an input longer than the context is
// cut to it, keeping the template's final special tokens; false refuses
// it), dimensions; the response is {"model", "embeddings", "total_duration",
// "load_duration", "prompt_eval_count"}.
func (s *Server) ollamaEmbed(w http.ResponseWriter, r *http.Request, e *engine) {
	t0 := time.Now()
	f, ae := s.readObject(w, r)
	if ae == nil {
		ae = s.embedModel(f, e, true)
	}
	req := embedRequest{param: "input", truncate: true}
	if ae == nil {
		req.inputs, ae = parseEmbedInput(f, "input")
	}
	if ae == nil {
		for i, in := range req.inputs {
			if in.isIDs {
				ae = badParam("input", "input %d: ollama's input is a string or an array of strings", i)
				break
			}
		}
	}
	if ae == nil {
		_, ae = f.boolean("truncate", &req.truncate)
	}
	if ae == nil {
		_, ae = f.integer("dimensions", &req.dimensions, 1, math.MaxInt32)
	}
	res := &embedResult{vecs: [][]float32{}}
	if ae == nil && len(req.inputs) > 0 {
		res, ae = s.runEmbed(r, e, req)
	}
	if ae != nil {
		s.fail(w, r, ae)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"model": e.name, "embeddings": res.vecs, "total_duration": time.Since(t0).Nanoseconds(),
		"load_duration": 0, "prompt_eval_count": res.tokens,
	})
}

// ollamaEmbeddings serves ollama's older POST /api/embeddings: {"prompt":
// "text"} gives {"embedding": [...]} (an empty prompt an empty vector, as
// ollama answers); a prompt longer than the context is cut to it.
func (s *Server) ollamaEmbeddings(w http.ResponseWriter, r *http.Request, e *engine) {
	f, ae := s.readObject(w, r)
	if ae == nil {
		ae = s.embedModel(f, e, true)
	}
	var prompt string
	if ae == nil {
		_, ae = f.str("prompt", &prompt)
	}
	if ae == nil && prompt == "" {
		writeJSON(w, http.StatusOK, map[string]any{"embedding": []float32{}})
		return
	}
	var res *embedResult
	if ae == nil {
		res, ae = s.runEmbed(r, e, embedRequest{inputs: []embedInput{{text: prompt}}, truncate: true, param: "prompt"})
	}
	if ae != nil {
		s.fail(w, r, ae)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"embedding": res.vecs[0]})
}
