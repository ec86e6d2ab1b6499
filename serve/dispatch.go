package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// handler is a route's handler: e is the engine of the request's model (nil
// for a route that names none).
type handler = func(w http.ResponseWriter, r *http.Request, e *engine)

// withModel makes h a route that needs a model: with a catalog, the
// dispatcher reads the body's "model" (or ollama's older "name") and
// "keep_alive", puts the body back for h's readBody, holds the model
// (loading it, or waiting while it loads) while h runs, and lets it go
// after with the request's keep_alive. In single-model mode h gets the one
// engine (and checks the name itself, as before).
func (s *Server) withModel(h handler) handler {
	return func(w http.ResponseWriter, r *http.Request, e *engine) {
		if s.reg == nil {
			h(w, r, e)
			return
		}
		body, ae := s.readBody(w, r)
		var name string
		var keep *time.Duration
		if ae == nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
			name, keep, ae = peekModel(body)
		}
		var l *loaded
		var load time.Duration
		if ae == nil {
			l, load, ae = s.reg.acquire(r.Context(), name)
		}
		if ae != nil {
			s.fail(w, r, ae)
			return
		}
		defer s.reg.release(l, keep)
		h(w, r.WithContext(context.WithValue(r.Context(), loadKey{}, load)), l.e)
	}
}

type loadKey struct{}

// loadDuration is how long the request waited for its model to load (0
// when it was loaded, and in single-model mode).
func loadDuration(r *http.Request) time.Duration {
	d, _ := r.Context().Value(loadKey{}).(time.Duration)
	return d
}

// peekModel reads the model a body names and its keep_alive; the handler
// decodes the rest (and the same fields again) with its own checks.
func peekModel(body []byte) (string, *time.Duration, *apiError) {
	f, ae := decodeObject(body)
	if ae != nil {
		return "", nil, ae
	}
	var name string
	if _, ae := f.str("model", &name); ae != nil {
		return "", nil, ae
	}
	if name == "" {
		if _, ae := f.str("name", &name); ae != nil {
			return "", nil, ae
		}
	}
	if name == "" {
		return "", nil, badParam("model", "required: a model name as GET /api/tags or /v1/models list it")
	}
	keep, ae := keepAlive(f)
	return name, keep, ae
}

// keepAlive decodes ollama's keep_alive: a duration string ("5m", "1h",
// "0", "-1s"), or a number of seconds; negative keeps the model loaded.
func keepAlive(f fields) (*time.Duration, *apiError) {
	if !f.has("keep_alive") {
		return nil, nil
	}
	raw := f["keep_alive"]
	var d time.Duration
	var secs float64
	var str string
	switch {
	case json.Unmarshal(raw, &secs) == nil:
	case json.Unmarshal(raw, &str) == nil:
		var err error
		if d, err = time.ParseDuration(str); err == nil {
			break
		}
		if secs, err = strconv.ParseFloat(str, 64); err != nil {
			return nil, badParam("keep_alive", "%s is not a duration (\"5m\", \"1h\", \"0\", \"-1\") or a number of seconds", quote(str))
		}
	default:
		return nil, badParam("keep_alive", "must be a duration string or a number of seconds")
	}
	if secs != 0 {
		if math.IsNaN(secs) || math.IsInf(secs, 0) {
			return nil, badParam("keep_alive", "must be finite")
		}
		if secs*1e9 >= math.MaxInt64 || secs*1e9 <= math.MinInt64 {
			secs = math.Copysign(1e9, secs) // about 31 years: for good
		}
		d = time.Duration(secs * 1e9)
	}
	if d < 0 {
		d = -1
	}
	return &d, nil
}

// ollamaPath reports whether path is ollama's API, whose errors are
// {"error": "message"}.
func ollamaPath(path string) bool { return path == "/" || strings.HasPrefix(path, "/api/") }

// fail sends ae in the shape the path's clients read: ollama's or OpenAI's.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, ae *apiError) {
	if ollamaPath(r.URL.Path) {
		writeOllamaError(w, ae)
		return
	}
	writeError(w, ae)
}

// writeOllamaError sends {"error": "message"} with ae's status.
func writeOllamaError(w http.ResponseWriter, ae *apiError) {
	if ae.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(ae.RetryAfter))
	}
	writeJSON(w, ae.Status, map[string]string{"error": ae.Message})
}

// DefaultMemory is 75% of the machine's RAM (MemTotal of /proc/meminfo), or
// 0 when unknown.
func DefaultMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		if err != nil || kb <= 0 {
			return 0
		}
		return kb << 10 * 3 / 4
	}
	return 0
}
