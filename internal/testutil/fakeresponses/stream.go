package fakeresponses

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Usage is the token usage the fake reports in response.completed: what
// Codex turns into the rollout's token_count.
type Usage struct {
	InputTokens           int
	CachedInputTokens     int
	OutputTokens          int
	ReasoningOutputTokens int
}

// defaultUsage is a small usage, so that token_count is never empty.
var defaultUsage = Usage{InputTokens: 120, CachedInputTokens: 0, OutputTokens: 12}

// SetUsage makes every later answer report u (nil: the default small usage).
func (s *Server) SetUsage(u *Usage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usage = u
}

func (u Usage) json() map[string]any {
	return map[string]any{
		"input_tokens":          u.InputTokens,
		"input_tokens_details":  map[string]any{"cached_tokens": u.CachedInputTokens},
		"output_tokens":         u.OutputTokens,
		"output_tokens_details": map[string]any{"reasoning_tokens": u.ReasoningOutputTokens},
		"total_tokens":          u.InputTokens + u.OutputTokens,
	}
}

// streamResponse writes step as the event stream of one response.
func streamResponse(w http.ResponseWriter, seq int, model string, step Step, u *Usage) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	n := 0
	send := func(event string, data map[string]any) {
		data["type"] = event
		data["sequence_number"] = n
		n++
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, marshal(data))
		if f != nil {
			f.Flush()
		}
	}
	respID := fmt.Sprintf("resp_fake_%d", seq)
	resp := map[string]any{"id": respID, "object": "response", "created_at": time.Now().Unix(), "status": "in_progress",
		"model": model, "output": []any{}, "usage": nil}
	send("response.created", map[string]any{"response": resp})
	send("response.in_progress", map[string]any{"response": resp})

	var output []any
	for i, text := range step.Texts {
		id := fmt.Sprintf("msg_fake_%d_%d", seq, i)
		idx := len(output)
		send("response.output_item.added", map[string]any{"output_index": idx,
			"item": map[string]any{"id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
		loc := map[string]any{"item_id": id, "output_index": idx, "content_index": 0}
		send("response.content_part.added", with(loc, "part", map[string]any{"type": "output_text", "text": "", "annotations": []any{}}))
		send("response.output_text.delta", with(loc, "delta", text))
		send("response.output_text.done", with(loc, "text", text))
		part := map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
		send("response.content_part.done", with(loc, "part", part))
		item := map[string]any{"id": id, "type": "message", "status": "completed", "role": "assistant", "content": []any{part}}
		send("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		output = append(output, item)
	}
	for i, c := range step.Calls {
		id := fmt.Sprintf("fc_fake_%d_%d", seq, i)
		callID := fmt.Sprintf("call_fake_%d_%d", seq, i)
		args := marshal(c.Arguments)
		idx := len(output)
		send("response.output_item.added", map[string]any{"output_index": idx,
			"item": map[string]any{"id": id, "type": "function_call", "status": "in_progress", "call_id": callID, "name": c.Name, "arguments": ""}})
		loc := map[string]any{"item_id": id, "output_index": idx}
		send("response.function_call_arguments.delta", with(loc, "delta", args))
		send("response.function_call_arguments.done", with(loc, "arguments", args))
		item := map[string]any{"id": id, "type": "function_call", "status": "completed", "call_id": callID, "name": c.Name, "arguments": args}
		send("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		output = append(output, item)
	}
	usage := defaultUsage
	if u != nil {
		usage = *u
	}
	done := map[string]any{}
	for k, v := range resp {
		done[k] = v
	}
	done["status"], done["output"], done["usage"] = "completed", output, usage.json()
	send("response.completed", map[string]any{"response": done})
}

// marshal is JSON as the real API writes it: no HTML escaping of <, > and &
// (a patch's heredoc keeps its <<).
func marshal(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// with copies base and adds one field.
func with(base map[string]any, k string, v any) map[string]any {
	m := make(map[string]any, len(base)+1)
	for bk, bv := range base {
		m[bk] = bv
	}
	m[k] = v
	return m
}

// apiError is the body the real API sends with an HTTP error status.
func apiError(status int, msg string) map[string]any {
	typ, code := "invalid_request_error", any(nil)
	switch status {
	case http.StatusUnauthorized:
		code = "invalid_api_key"
	case http.StatusNotFound:
		code = "not_found"
	case http.StatusTooManyRequests:
		typ, code = "requests", "rate_limit_exceeded"
	default:
		if status >= 500 {
			typ = "server_error"
		}
	}
	return map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}}
}
