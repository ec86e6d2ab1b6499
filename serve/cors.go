package serve

import (
	"net/http"
	"strings"
)

// defaultOrigins are the origins ollama allows without OLLAMA_ORIGINS
// (envconfig.AllowedOrigins): pages served from this machine, and the
// schemes of desktop and editor apps.
var defaultOrigins = func() []string {
	var o []string
	for _, h := range []string{"localhost", "127.0.0.1", "0.0.0.0"} {
		o = append(o, "http://"+h, "https://"+h, "http://"+h+":*", "https://"+h+":*")
	}
	return append(o, "app://*", "file://*", "tauri://*", "vscode-webview://*", "vscode-file://*")
}()

// corsHeaders are the request headers a browser may send (Access-Control-
// Allow-Headers of a preflight that lists none).
const corsHeaders = "Authorization, Content-Type, User-Agent, Accept, X-Requested-With, X-Stainless-Lang, X-Stainless-Package-Version, X-Stainless-Os, X-Stainless-Arch, X-Stainless-Retry-Count, X-Stainless-Runtime, X-Stainless-Runtime-Version, X-Stainless-Async, X-Stainless-Helper-Method, X-Stainless-Poll-Helper, X-Stainless-Custom-Poll-Interval, X-Stainless-Timeout"

// originAllowed matches origin against patterns where * stands for any run
// of characters ("*" alone: every origin).
func originAllowed(origin string, patterns []string) bool {
	for _, p := range patterns {
		if wildcard(p, origin) {
			return true
		}
	}
	return false
}

func wildcard(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, last) && len(s) >= len(last)
}

// cors answers browsers as ollama does: a request from an allowed origin
// gets Access-Control-Allow-Origin (and a preflight 204); one from another
// origin is refused with 403, so a web page cannot drive the models. It
// reports whether the request is answered already.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	if !originAllowed(origin, s.origins) {
		s.fail(w, r, &apiError{Status: http.StatusForbidden, Type: "invalid_request_error",
			Message: "origin " + quote(origin) + " is not allowed: add it to OLLAMA_ORIGINS or --origins"})
		return true
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS")
		allow := r.Header.Get("Access-Control-Request-Headers")
		if allow == "" {
			allow = corsHeaders
		}
		h.Set("Access-Control-Allow-Headers", allow)
		h.Set("Access-Control-Max-Age", "43200")
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	return false
}
