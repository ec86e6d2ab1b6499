package serve

import (
	"net/http"
	"strings"
)

func (s *Server) modelObject() map[string]any {
	return map[string]any{"id": s.cfg.Name, "object": "model", "created": s.created, "owned_by": "krafla"}
}

// models serves GET /v1/models: the one model this server runs.
func (s *Server) models(w http.ResponseWriter, r *http.Request, e *engine) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{s.modelObject()}})
}

// model serves GET /v1/models/ID.
func (s *Server) model(w http.ResponseWriter, r *http.Request, e *engine) {
	id := strings.TrimPrefix(r.URL.Path, "/v1/models/")
	if ae := s.checkModel(id); ae != nil {
		writeError(w, ae)
		return
	}
	writeJSON(w, http.StatusOK, s.modelObject())
}
