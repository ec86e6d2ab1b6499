package serve

import (
	"net/http"
)

// tokenize serves POST /tokenize in llama-server's shape:
// {"content": "text", "add_special": false, "with_pieces": false} gives
// {"tokens": [ids]}, or [{"id", "piece"}] with with_pieces.
func (s *Server) tokenize(w http.ResponseWriter, r *http.Request, e *engine) {
	f, ae := s.readObject(w, r)
	var content string
	var special, pieces bool
	if ae == nil {
		_, ae = f.str("content", &content)
	}
	if ae == nil {
		_, ae = f.boolean("add_special", &special)
	}
	if ae == nil {
		_, ae = f.boolean("with_pieces", &pieces)
	}
	if ae != nil {
		writeError(w, ae)
		return
	}
	ids := e.tok.Encode(content, special)
	if !pieces {
		if ids == nil {
			ids = []int{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"tokens": ids})
		return
	}
	out := make([]map[string]any, len(ids))
	for i, id := range ids {
		out[i] = map[string]any{"id": id, "piece": e.tok.Decode([]int{id})}
	}
	writeJSON(w, http.StatusOK, map[string]any{"tokens": out})
}

// detokenize serves POST /detokenize: {"tokens": [ids]} gives {"content": "text"}.
func (s *Server) detokenize(w http.ResponseWriter, r *http.Request, e *engine) {
	f, ae := s.readObject(w, r)
	var ids []int
	if ae == nil {
		_, ae = f.decode("tokens", "an array of token ids", &ids)
	}
	if ae == nil {
		for i, id := range ids {
			if id < 0 || id >= len(e.tok.Tokens) {
				ae = badParam("tokens", "token %d at index %d is outside the vocabulary of %d", id, i, len(e.tok.Tokens))
				break
			}
		}
	}
	if ae != nil {
		writeError(w, ae)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"content": e.tok.Decode(ids)})
}
