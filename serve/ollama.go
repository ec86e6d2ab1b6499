package serve

// ollama's HTTP API (github.com/ollama/ollama docs/api.md) beside OpenAI's:
// the listing and management endpoints here, /api/chat and /api/generate
// in ollama_gen.go. Errors are {"error": "message"} with the status ollama
// uses; streams are newline-delimited JSON.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/krafla/krafla/chat"
	"github.com/krafla/krafla/infer"
)

// OllamaVersion is what GET /api/version answers: the ollama API version
// whose endpoints and fields this server follows (clients compare it to
// decide what they may send).
const OllamaVersion = "0.9.0"

func ollamaTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// entries lists the models the server can serve: the catalog's, or the one
// model of single-model mode.
func (s *Server) entries() ([]ModelEntry, error) {
	if s.reg != nil {
		return s.reg.cat.Models()
	}
	e := s.eng.Load()
	m := ModelEntry{Name: s.cfg.Name, Modified: time.Unix(s.created, 0)}
	if e != nil {
		m.Bytes = e.m.WeightBytes()
	}
	return []ModelEntry{m}, nil
}

// details is ollama's "details" object of a model.
func details(m ModelEntry, e *engine) map[string]any {
	d := map[string]any{"parent_model": "", "format": "mlb", "family": "", "families": nil,
		"parameter_size": "", "quantization_level": strings.ToUpper(m.Type)}
	if e != nil {
		d["parameter_size"] = paramSize(parameterCount(e.m.Config()))
	}
	return d
}

// parameterCount is the weights' element count of a transformer of this
// shape: embeddings, the classifier unless shared, and per layer the
// attention and gated feed-forward matrices (norms and biases aside).
func parameterCount(c infer.Config) int64 {
	n := int64(c.Vocab) * int64(c.Dim)
	if !c.SharedClassifier {
		n *= 2
	}
	per := int64(c.Dim)*int64(c.QDim)*2 + int64(c.Dim)*int64(c.KVDim)*2 + 3*int64(c.Dim)*int64(c.HiddenDim)
	return n + int64(c.NLayers)*per
}

func paramSize(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1fK", float64(n)/1e3)
}

func tagObject(m ModelEntry, e *engine) map[string]any {
	return map[string]any{"name": m.Name, "model": m.Name, "modified_at": ollamaTime(m.Modified), "size": m.Bytes,
		"digest": m.Digest(), "details": details(m, e)}
}

// ollamaTags serves GET /api/tags: every model that can be served.
func (s *Server) ollamaTags(w http.ResponseWriter, r *http.Request, e *engine) {
	list, err := s.entries()
	if err != nil {
		writeOllamaError(w, errInternal(err))
		return
	}
	models := []any{}
	for _, m := range list {
		models = append(models, tagObject(m, e))
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": models})
}

// forever is the expiry /api/ps shows for a model kept for good (ollama
// shows a far date too).
var forever = time.Date(2318, 1, 1, 0, 0, 0, 0, time.UTC)

// ollamaPS serves GET /api/ps: the loaded models, their memory and expiry.
func (s *Server) ollamaPS(w http.ResponseWriter, r *http.Request, e *engine) {
	models := []any{}
	add := func(m ModelEntry, bytes int64, expires time.Time, ctx int, e *engine) {
		o := tagObject(m, e)
		delete(o, "modified_at")
		if expires.IsZero() {
			expires = forever
		}
		o["size"], o["size_vram"], o["expires_at"], o["context_length"] = bytes, 0, ollamaTime(expires), ctx
		models = append(models, o)
	}
	if s.reg == nil {
		if e != nil {
			list, _ := s.entries()
			sched := e.sched
			add(list[0], e.m.WeightBytes()+int64(len(sched.slots))*sched.slots[0].sess.CacheBytes(), time.Time{}, e.ctx, e)
		}
	} else {
		for _, p := range s.reg.loadedModels() {
			add(p.entry, p.bytes, p.expires, p.ctx, nil)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": models})
}

// ollamaVersion serves GET /api/version.
func (s *Server) ollamaVersion(w http.ResponseWriter, r *http.Request, e *engine) {
	writeJSON(w, http.StatusOK, map[string]string{"version": OllamaVersion})
}

// ollamaShow serves POST /api/show: the model's details, template,
// parameters and capabilities (the model is loaded to read them).
func (s *Server) ollamaShow(w http.ResponseWriter, r *http.Request, e *engine) {
	f, ae := s.readObject(w, r)
	name := ""
	if ae == nil {
		_, ae = f.str("model", &name)
	}
	if ae == nil && name == "" {
		_, ae = f.str("name", &name)
	}
	if ae == nil && name == "" {
		ae = badParam("model", "required")
	}
	var entry ModelEntry
	if ae == nil {
		entry, ae = s.entryOf(name, e)
	}
	if ae != nil {
		writeOllamaError(w, ae)
		return
	}
	c := e.m.Config()
	caps := []string{"completion"}
	if e.fim != nil {
		caps = append(caps, "insert") // ollama's name for suffix (fill-in-the-middle)
	}
	tmpl := ""
	if e.chat != nil {
		tmpl = e.chat.Source
		if chat.ToolFormat(tmpl) != "" {
			caps = append(caps, "tools")
		}
		if strings.Contains(tmpl, "<think>") {
			caps = append(caps, "thinking")
		}
	}
	var params []string
	if e.chat != nil {
		for id := range e.chatIDs {
			params = append(params, fmt.Sprintf("stop %q", e.tok.Decode([]int{id})))
		}
	}
	info := map[string]any{
		"general.architecture":           "krafla",
		"general.parameter_count":        parameterCount(c),
		"krafla.context_length":          c.MaxSeq,
		"krafla.embedding_length":        c.Dim,
		"krafla.block_count":             c.NLayers,
		"krafla.attention.head_count":    c.NHeads,
		"krafla.attention.head_count_kv": c.NKVHeads,
		"krafla.feed_forward_length":     c.HiddenDim,
		"krafla.vocab_size":              c.Vocab,
		"krafla.slot_context_length":     e.ctx,
	}
	out := map[string]any{
		"modelfile":    fmt.Sprintf("# served by krafla from %s\nFROM %s\n", entry.Source, entry.Path),
		"parameters":   strings.Join(params, "\n"),
		"template":     tmpl,
		"details":      details(entry, e),
		"model_info":   info,
		"capabilities": caps,
		"modified_at":  ollamaTime(entry.Modified),
	}
	if e.chat == nil {
		out["template"] = ""
	}
	writeJSON(w, http.StatusOK, out)
}

// entryOf is the catalog entry of the engine a request named (single-model
// mode: the name must be the model's).
func (s *Server) entryOf(name string, e *engine) (ModelEntry, *apiError) {
	list, err := s.entries()
	if err != nil {
		return ModelEntry{}, errInternal(err)
	}
	if s.reg == nil {
		if !nameMatches(s.cfg.Name, name) {
			return ModelEntry{}, errModelNotFound(name)
		}
		return list[0], nil
	}
	for _, m := range list {
		if m.Name == e.name {
			return m, nil
		}
	}
	return ModelEntry{}, errModelNotFound(name)
}

// nameMatches reports whether a request's name means the model served
// (the name itself, or with ollama's ":latest").
func nameMatches(served, name string) bool {
	_, ok := findModel([]ModelEntry{{Name: served}}, name)
	return ok
}

// manager is the catalog's Manager, or a 400 saying the server has none.
func (s *Server) manager(what string) (Manager, *apiError) {
	if s.reg != nil {
		if m, ok := s.reg.cat.(Manager); ok {
			return m, nil
		}
		return nil, badRequest("%s: this server serves a folder of models (--models); use the model store (krafla serve without a model)", what)
	}
	return nil, badRequest("%s: this server serves one model (krafla serve MODEL); start krafla serve without a model to serve the store", what)
}

// nameField decodes the model a management request names: "model", else
// ollama's older "name".
func nameField(f fields) (string, *apiError) {
	var name string
	if _, ae := f.str("model", &name); ae != nil {
		return "", ae
	}
	if name == "" {
		if _, ae := f.str("name", &name); ae != nil {
			return "", ae
		}
	}
	if name == "" {
		return "", badParam("model", "required")
	}
	return name, nil
}

func managerError(err error, name string) *apiError {
	var unknown errUnknownModel
	if errors.As(err, &unknown) {
		return errModelNotFound(name)
	}
	return badRequest("%v", err)
}

// ollamaDelete serves DELETE /api/delete {"model"}: the model leaves the
// store (unloaded first when idle).
func (s *Server) ollamaDelete(w http.ResponseWriter, r *http.Request, e *engine) {
	f, ae := s.readObject(w, r)
	var name string
	if ae == nil {
		name, ae = nameField(f)
	}
	var mg Manager
	if ae == nil {
		mg, ae = s.manager("delete")
	}
	if ae == nil {
		if list, err := mg.Models(); err == nil {
			if m, ok := findModel(list, name); ok {
				s.reg.unloadName(m.Name)
			}
		}
		if err := mg.Delete(name); err != nil {
			ae = managerError(err, name)
		}
	}
	if ae != nil {
		writeOllamaError(w, ae)
		return
	}
	s.logf("deleted %s", name)
	w.WriteHeader(http.StatusOK)
}

// ollamaCopy serves POST /api/copy {"source", "destination"}.
func (s *Server) ollamaCopy(w http.ResponseWriter, r *http.Request, e *engine) {
	f, ae := s.readObject(w, r)
	var src, dst string
	if ae == nil {
		_, ae = f.str("source", &src)
	}
	if ae == nil {
		_, ae = f.str("destination", &dst)
	}
	if ae == nil && src == "" {
		ae = badParam("source", "required")
	}
	if ae == nil && dst == "" {
		ae = badParam("destination", "required")
	}
	var mg Manager
	if ae == nil {
		mg, ae = s.manager("copy")
	}
	if ae == nil {
		if err := mg.Copy(src, dst); err != nil {
			ae = managerError(err, src)
		}
	}
	if ae != nil {
		writeOllamaError(w, ae)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// ollamaPull serves POST /api/pull {"model", "stream"}: the store pulls the
// model from the hub, streaming status lines ({"status"}, and while a file
// downloads {"status", "digest", "total", "completed"}), then
// {"status": "success"}; a failure after the stream began is a last
// {"error"} line. With "stream": false, one answer at the end.
func (s *Server) ollamaPull(w http.ResponseWriter, r *http.Request, e *engine) {
	f, ae := s.readObject(w, r)
	var name string
	if ae == nil {
		name, ae = nameField(f)
	}
	stream := true
	if ae == nil {
		_, ae = f.boolean("stream", &stream)
	}
	var mg Manager
	if ae == nil {
		mg, ae = s.manager("pull")
	}
	if c, ok := mg.(interface{ CheckName(string) error }); ae == nil && ok {
		if err := c.CheckName(name); err != nil {
			ae = badParam("model", "%v", err)
		}
	}
	if ae != nil {
		writeOllamaError(w, ae)
		return
	}
	// The pull runs in its own goroutine; progress reaches this handler,
	// the only writer, through a channel that drops the download updates
	// a slow client cannot take (status changes are kept).
	events := make(chan PullProgress, 64)
	type outcome struct {
		m   ModelEntry
		err error
	}
	done := make(chan outcome, 1)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		m, err := mg.Pull(ctx, name, func(p PullProgress) {
			if p.Digest == "" || p.Completed == p.Total {
				select {
				case events <- p:
				case <-ctx.Done():
				}
				return
			}
			select {
			case events <- p:
			default:
			}
		})
		done <- outcome{m, err}
	}()
	var nd *ndjson
	if stream {
		nd = newNDJSON(w, s.cfg.WriteTimeout)
		if nd.line(map[string]any{"status": "pulling manifest"}) != nil {
			return
		}
	}
	var last time.Time
	for {
		select {
		case p := <-events:
			if nd == nil {
				continue
			}
			if p.Digest != "" && p.Completed != p.Total && time.Since(last) < 100*time.Millisecond {
				continue
			}
			last = time.Now()
			o := map[string]any{"status": p.Status}
			if p.Digest != "" {
				o["digest"], o["total"], o["completed"] = p.Digest, p.Total, p.Completed
			}
			if nd.line(o) != nil {
				return
			}
		case res := <-done:
			for drained := false; !drained && nd != nil; {
				select {
				case p := <-events:
					if p.Digest == "" || p.Completed == p.Total {
						o := map[string]any{"status": p.Status}
						if p.Digest != "" {
							o["digest"], o["total"], o["completed"] = p.Digest, p.Total, p.Completed
						}
						if nd.line(o) != nil {
							return
						}
					}
				default:
					drained = true
				}
			}
			if res.err != nil {
				s.logf("pull %s: %v", name, res.err)
				ae := &apiError{Status: http.StatusInternalServerError, Message: "pull " + name + ": " + res.err.Error()}
				if nd == nil {
					writeOllamaError(w, ae)
				} else {
					_ = nd.line(map[string]string{"error": ae.Message})
				}
				return
			}
			s.logf("pulled %s as %s", name, res.m.Name)
			if nd == nil {
				writeJSON(w, http.StatusOK, map[string]string{"status": "success"})
				return
			}
			_ = nd.line(map[string]any{"status": "success"})
			return
		case <-r.Context().Done():
			return
		}
	}
}
