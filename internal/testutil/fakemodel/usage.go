package fakemodel

import "net/http"

// Usage is the token usage the fake reports for every answer: what Claude
// Code's statusLine turns into context_window figures and cost.
type Usage struct {
	InputTokens              int
	CacheCreationInputTokens int
	CacheReadInputTokens     int
	OutputTokens             int
}

// SetUsage makes every later answer report u (nil: the default small usage).
func (s *Server) SetUsage(u *Usage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usage = u
}

// SetHeaders adds response headers to every later answer (for example the
// anthropic-ratelimit-unified-* headers of a claude.ai plan).
func (s *Server) SetHeaders(h map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.headers = h
}

// streamUsage is stream with the usage the test set, if any.
func streamUsage(w http.ResponseWriter, msgID, model string, content []map[string]any, stop string, cached bool, u *Usage) {
	if u == nil {
		stream(w, msgID, model, content, stop, cached)
		return
	}
	streamWith(w, msgID, model, content, stop, map[string]any{"input_tokens": u.InputTokens, "output_tokens": 1,
		"cache_creation_input_tokens": u.CacheCreationInputTokens, "cache_read_input_tokens": u.CacheReadInputTokens}, u.OutputTokens)
}

// apiErrorFor is the error body the real API sends for an HTTP status.
func apiErrorFor(status int, msg string) map[string]any {
	e := apiError(msg)
	switch status {
	case http.StatusTooManyRequests:
		e["error"].(map[string]any)["type"] = "rate_limit_error"
	case http.StatusUnauthorized:
		e["error"].(map[string]any)["type"] = "authentication_error"
	}
	return e
}
