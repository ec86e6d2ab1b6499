package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// apiError is an error in OpenAI's shape, with the HTTP status it is sent
// with: {"error": {"message", "type", "param", "code"}}.
type apiError struct {
	Status  int     `json:"-"`
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
	// RetryAfter, when positive, is sent as the Retry-After header (seconds).
	RetryAfter int `json:"-"`
}

func (e *apiError) Error() string { return e.Message }

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// badParam is a 400 naming the parameter.
func badParam(param, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error",
		Message: param + ": " + fmt.Sprintf(format, args...), Param: strPtr(param)}
}

// badRequest is a 400 about the request as a whole.
func badRequest(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: fmt.Sprintf(format, args...)}
}

func errNotFound(msg, code string) *apiError {
	return &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Message: msg, Code: strPtr(code)}
}

func errMethod(method, path string) *apiError {
	return &apiError{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error",
		Message: fmt.Sprintf("method %s is not allowed on %s", method, path), Code: strPtr("method_not_allowed")}
}

func errUnauthorized(msg string) *apiError {
	return &apiError{Status: http.StatusUnauthorized, Type: "invalid_request_error", Message: msg, Code: strPtr("invalid_api_key")}
}

func errUnavailable(msg string, retryAfter int) *apiError {
	return &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Message: msg, Code: strPtr("unavailable"), RetryAfter: retryAfter}
}

func errTooLarge(limit int64) *apiError {
	return &apiError{Status: http.StatusRequestEntityTooLarge, Type: "invalid_request_error",
		Message: fmt.Sprintf("the request body exceeds the limit of %d bytes", limit), Code: strPtr("request_too_large")}
}

func errInternal(err error) *apiError {
	return &apiError{Status: http.StatusInternalServerError, Type: "server_error", Message: err.Error()}
}

// writeError sends e as OpenAI's error JSON.
func writeError(w http.ResponseWriter, e *apiError) {
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	writeJSON(w, e.Status, struct {
		Error *apiError `json:"error"`
	}{e})
}

// writeJSON sends v with the status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"message":"encoding the response failed","type":"server_error","param":null,"code":null}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
