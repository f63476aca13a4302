// Package fakemodel is a scripted fake of the Anthropic Messages API for the
// end-to-end tier: the real Claude Code CLI talks to it on loopback. A
// scenario is chosen by a trigger word in the last typed user message; each
// step answers one model request (text, tool calls, delays, API errors).
// Every request is logged: it is the ground truth of what the model was told.
package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// ToolCall is a tool_use block.
type ToolCall struct {
	Name  string
	Input any
}

// Step is one assistant message.
type Step struct {
	Texts  []string   // text blocks, in order, before any tool calls
	Tools  []ToolCall // tool_use blocks
	Delay  time.Duration
	Status int    // non-zero: answer with this HTTP error instead
	ErrMsg string // the error's message
	// Dynamic, when set, builds the step from the request (for inputs that
	// depend on what Claude said, such as the plan file's path).
	Dynamic func(Request) Step
}

// Text is a step of one or more text blocks.
func Text(texts ...string) Step { return Step{Texts: texts} }

// Tool is a step with optional text then one tool call.
func Tool(text, name string, input any) Step {
	s := Step{Tools: []ToolCall{{Name: name, Input: input}}}
	if text != "" {
		s.Texts = []string{text}
	}
	return s
}

// Request is one logged API request.
type Request struct {
	Path     string
	Model    string
	Stream   bool
	HasTools bool
	Body     map[string]any
	// LastUserText is the typed text of the last user message that holds
	// typed text, system reminders removed.
	LastUserText string
	// ToolResults are the tool_result blocks of the last user message.
	ToolResults []ToolResult
	// MidTurn is a message the user sent while a tool ran: Claude Code
	// absorbs it into the running turn, beside the tool result.
	MidTurn string
	// Done is when the answer was written out in full (zero until then).
	Done time.Time
}

// ToolResult is a tool_result the CLI sent back.
type ToolResult struct {
	ToolUseID string
	Content   string
	IsError   bool
}

// Server is the fake API.
type Server struct {
	URL string

	mu        sync.Mutex // guards the fields below
	scenarios []scenario
	requests  []Request
	toolSeq   int
	msgSeq    int
	cached    bool
	usage     *Usage // usage.go
	headers   map[string]string
}

type scenario struct {
	trigger string
	steps   []Step
}

// New starts a fake on loopback, closed when the test ends.
func New(t testing.TB) *Server {
	s := &Server{}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}

// Script registers a scenario: a user message containing trigger is
// answered step by step; after the last step the fake answers a final text
// that quotes the last tool result.
func (s *Server) Script(trigger string, steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scenarios = append(s.scenarios, scenario{trigger: trigger, steps: steps})
}

// Requests returns the agent-loop requests (those offering tools) so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.requests {
		if r.HasTools {
			out = append(out, r)
		}
	}
	return out
}

// WaitRequest waits for an agent-loop request that satisfies pred.
func (s *Server) WaitRequest(t testing.TB, timeout time.Duration, what string, pred func(Request) bool) Request {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for _, r := range s.Requests() {
			if pred(r) {
				return r
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the model never received %s; requests: %s", what, s.summary())
	return Request{}
}

func (s *Server) summary() string {
	var b strings.Builder
	for _, r := range s.Requests() {
		fmt.Fprintf(&b, "\n  user=%q results=%+v", r.LastUserText, r.ToolResults)
	}
	return b.String()
}

// ServeHTTP implements the routes Claude Code calls.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		writeJSON(w, 200, map[string]any{"input_tokens": 10})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		s.messages(w, r)
	default:
		writeJSON(w, 200, map[string]any{})
	}
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeJSON(w, 400, apiError("bad json: "+err.Error()))
		return
	}
	req := parseRequest(r.URL.Path, body)
	s.mu.Lock()
	s.requests = append(s.requests, req)
	idx := len(s.requests) - 1
	defer func() {
		s.mu.Lock()
		s.requests[idx].Done = time.Now()
		s.mu.Unlock()
	}()
	step := s.next(body, req)
	cached := s.cached
	usage, headers := s.usage, s.headers
	s.msgSeq++
	msgID := fmt.Sprintf("msg_fake_%d", s.msgSeq)
	var toolIDs []string
	for range step.Tools {
		s.toolSeq++
		toolIDs = append(toolIDs, fmt.Sprintf("toolu_fake_%03d", s.toolSeq))
	}
	s.mu.Unlock()

	if step.Delay > 0 {
		select {
		case <-time.After(step.Delay):
		case <-r.Context().Done():
			return
		}
	}
	for k, v := range headers {
		w.Header().Set(k, v)
	}
	if step.Status != 0 {
		writeJSON(w, step.Status, apiErrorFor(step.Status, step.ErrMsg))
		return
	}
	content := buildContent(step, toolIDs)
	stop := "end_turn"
	if len(step.Tools) > 0 {
		stop = "tool_use"
	}
	if !req.Stream {
		writeJSON(w, 200, map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": req.Model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 5, "output_tokens": 10}})
		return
	}
	streamUsage(w, msgID, req.Model, content, stop, cached, usage)
}

// ReportCache makes answers report prompt-cache reads and writes in their
// usage, as the real API does for a cached conversation. Claude Code then
// treats the conversation as cached: /model asks "Switch model?" first.
func (s *Server) ReportCache(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cached = on
}

// next picks the step for a request; the caller holds s.mu.
func (s *Server) next(body map[string]any, req Request) Step {
	if !req.HasTools {
		return Text("Fake title")
	}
	msgs, _ := body["messages"].([]any)
	userIdx := lastTypedUser(msgs)
	for _, sc := range s.scenarios {
		if !strings.Contains(req.LastUserText, sc.trigger) {
			continue
		}
		i := 0
		for _, m := range msgs[userIdx+1:] {
			if mm, _ := m.(map[string]any); mm["role"] == "assistant" {
				i++
			}
		}
		if i < len(sc.steps) {
			if st := sc.steps[i]; st.Dynamic != nil {
				return st.Dynamic(req)
			}
			return sc.steps[i]
		}
		last := "none"
		if n := len(req.ToolResults); n > 0 {
			last = req.ToolResults[n-1].Content
		}
		final := "Done. Last tool result: " + last
		if req.MidTurn != "" {
			// A real model answers the message as it goes on, as Claude
			// Code asks it to; a fake that ignored it would make a message
			// sent mid-turn look lost.
			final += "\nok: " + req.MidTurn
		}
		return Text(final)
	}
	return Text("ok: " + req.LastUserText)
}

// midTurn is how Claude Code 2.1.328 hands the model a message typed while
// a tool ran (claude-code-protocol.md §6.3).
var midTurn = regexp.MustCompile(`(?s)^The user sent a new message while you were working:\n(.*?)\n\nThis is how Claude Code surfaces`)

var reminder = regexp.MustCompile(`(?s)<system-reminder>.*?</system-reminder>`)

func parseRequest(path string, body map[string]any) Request {
	req := Request{Path: path, Body: body}
	req.Model, _ = body["model"].(string)
	req.Stream, _ = body["stream"].(bool)
	tools, _ := body["tools"].([]any)
	req.HasTools = len(tools) > 0
	msgs, _ := body["messages"].([]any)
	if i := lastTypedUser(msgs); i >= 0 {
		req.LastUserText = typedText(msgs[i])
	}
	// The tool results answering the last assistant message: Claude may
	// send them with further user messages after them (after a plan
	// approval, an "Exited Plan Mode" note).
	start := len(msgs)
	for start > 0 {
		if m, _ := msgs[start-1].(map[string]any); m["role"] == "assistant" {
			break
		}
		start--
	}
	for _, msg := range msgs[start:] {
		m, _ := msg.(map[string]any)
		blocks, _ := m["content"].([]any)
		for _, b := range blocks {
			bm, _ := b.(map[string]any)
			if bm["type"] == "text" {
				text, _ := bm["text"].(string)
				if m := midTurn.FindStringSubmatch(text); m != nil {
					req.MidTurn = m[1]
				}
			}
			if bm["type"] != "tool_result" {
				continue
			}
			id, _ := bm["tool_use_id"].(string)
			isErr, _ := bm["is_error"].(bool)
			req.ToolResults = append(req.ToolResults, ToolResult{ToolUseID: id, Content: contentText(bm["content"]), IsError: isErr})
		}
	}
	return req
}

// lastTypedUser finds the last user message carrying typed text. A message
// that carries tool results is not typed, even with text beside them (after
// ToolSearch, Claude adds "Tool loaded."), nor is one of system reminders only.
func lastTypedUser(msgs []any) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		if m["role"] == "user" && !hasToolResult(m) && strings.TrimSpace(typedText(m)) != "" {
			return i
		}
	}
	return -1
}

func hasToolResult(m map[string]any) bool {
	blocks, _ := m["content"].([]any)
	for _, b := range blocks {
		if bm, _ := b.(map[string]any); bm["type"] == "tool_result" {
			return true
		}
	}
	return false
}

func typedText(msg any) string {
	m, _ := msg.(map[string]any)
	var parts []string
	switch c := m["content"].(type) {
	case string:
		parts = append(parts, c)
	case []any:
		for _, b := range c {
			bm, _ := b.(map[string]any)
			if bm["type"] == "text" {
				t, _ := bm["text"].(string)
				parts = append(parts, t)
			}
		}
	}
	text := reminder.ReplaceAllString(strings.Join(parts, "\n"), "")
	return strings.TrimSpace(text)
}

func contentText(c any) string {
	switch v := c.(type) {
	case string:
		return v
	case []any:
		var parts []string
		for _, b := range v {
			bm, _ := b.(map[string]any)
			if t, ok := bm["text"].(string); ok {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

func buildContent(step Step, toolIDs []string) []map[string]any {
	var content []map[string]any
	for _, t := range step.Texts {
		content = append(content, map[string]any{"type": "text", "text": t})
	}
	for i, tc := range step.Tools {
		content = append(content, map[string]any{"type": "tool_use", "id": toolIDs[i], "name": tc.Name, "input": tc.Input})
	}
	return content
}

func stream(w http.ResponseWriter, msgID, model string, content []map[string]any, stop string, cached bool) {
	usage := map[string]any{"input_tokens": 5, "output_tokens": 1}
	if cached {
		usage["cache_creation_input_tokens"], usage["cache_read_input_tokens"] = 3000, 2000
	}
	streamWith(w, msgID, model, content, stop, usage, 40)
}

func streamWith(w http.ResponseWriter, msgID, model string, content []map[string]any, stop string, usage map[string]any, outputTokens int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	f, _ := w.(http.Flusher)
	send := func(event string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if f != nil {
			f.Flush()
		}
	}
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": msgID, "type": "message", "role": "assistant",
		"model": model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	for i, block := range content {
		switch block["type"] {
		case "text":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": block["text"]}})
		case "tool_use":
			in, _ := json.Marshal(block["input"])
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}})
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": outputTokens}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

func apiError(msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": msg}}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
