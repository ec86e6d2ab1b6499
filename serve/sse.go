package serve

import (
	"encoding/json"
	"net/http"
	"time"
)

// sse writes server-sent events: "data: JSON" lines, each flushed under a
// write deadline of its own, so that a client that stops reading frees its
// handler (and with it the slot) instead of blocking it forever.
type sse struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

// newSSE sends the status and headers at once, so that the client knows the
// request was accepted before the first token; later errors are events.
func newSSE(w http.ResponseWriter, timeout time.Duration) *sse {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // proxies such as nginx must not hold events back
	w.WriteHeader(http.StatusOK)
	s := &sse{w: w, rc: http.NewResponseController(w), timeout: timeout}
	_ = s.flush()
	return s
}

func (s *sse) flush() error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	return s.rc.Flush()
}

// event sends v as one data line.
func (s *sse) event(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.raw(b)
}

func (s *sse) raw(b []byte) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	buf := make([]byte, 0, len(b)+8)
	buf = append(append(append(buf, "data: "...), b...), "\n\n"...)
	if _, err := s.w.Write(buf); err != nil {
		return err
	}
	return s.rc.Flush()
}

// done ends the stream as OpenAI does.
func (s *sse) done() error { return s.raw([]byte("[DONE]")) }

// errorEvent is a failure after the stream began, in the shape the official
// clients raise: data: {"error": {...}}.
func errorEvent(e *apiError) any {
	return struct {
		Error *apiError `json:"error"`
	}{e}
}
