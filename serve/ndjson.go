package serve

import (
	"encoding/json"
	"net/http"
	"time"
)

// ndjson writes ollama's streams: one JSON object a line, each flushed
// under a write deadline of its own (as sse does), so that a client that
// stops reading frees its handler and its slot.
type ndjson struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

// newNDJSON sends the status and headers at once; later errors are lines.
func newNDJSON(w http.ResponseWriter, timeout time.Duration) *ndjson {
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	n := &ndjson{w: w, rc: http.NewResponseController(w), timeout: timeout}
	_ = n.rc.SetWriteDeadline(time.Now().Add(timeout))
	_ = n.rc.Flush()
	return n
}

// line sends v and a newline.
func (n *ndjson) line(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_ = n.rc.SetWriteDeadline(time.Now().Add(n.timeout))
	if _, err := n.w.Write(append(b, '\n')); err != nil {
		return err
	}
	return n.rc.Flush()
}
