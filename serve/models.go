package serve

import (
	"net/http"
	"strings"
)

func (s *Server) modelObject(name string, created int64) map[string]any {
	return map[string]any{"id": name, "object": "model", "created": created, "owned_by": "krafla"}
}

// models serves GET /v1/models: the one model this server runs, or every
// model of the catalog.
func (s *Server) models(w http.ResponseWriter, r *http.Request, e *engine) {
	if s.reg == nil {
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{s.modelObject(s.cfg.Name, s.created)}})
		return
	}
	list, err := s.reg.cat.Models()
	if err != nil {
		writeError(w, errInternal(err))
		return
	}
	data := []any{}
	for _, m := range list {
		data = append(data, s.modelObject(m.Name, m.Modified.Unix()))
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

// model serves GET /v1/models/ID.
func (s *Server) model(w http.ResponseWriter, r *http.Request, e *engine) {
	id := strings.TrimPrefix(r.URL.Path, "/v1/models/")
	if s.reg != nil {
		list, err := s.reg.cat.Models()
		if err != nil {
			writeError(w, errInternal(err))
			return
		}
		m, ok := findModel(list, id)
		if !ok {
			writeError(w, errModelNotFound(id))
			return
		}
		writeJSON(w, http.StatusOK, s.modelObject(m.Name, m.Modified.Unix()))
		return
	}
	if ae := s.checkModel(id, e); ae != nil {
		writeError(w, ae)
		return
	}
	writeJSON(w, http.StatusOK, s.modelObject(s.cfg.Name, s.created))
}
