// Package fakeresponses is a scripted fake of the OpenAI Responses API for
// the end-to-end tier: the real Codex CLI talks to it on loopback, through a
// custom model provider (base_url, env_key, wire_api = "responses"). It is
// the Codex counterpart of fakemodel and is scripted the same way: a
// scenario is chosen by a trigger word in the last typed user message, and
// each step answers one model request (text, function calls, a delay, an
// HTTP error). Every request is logged: it is the ground truth of what the
// model was told.
//
// What it models, as Codex CLI 0.171.0 was seen to use it:
//   - POST /v1/responses with stream:true, answered as server-sent events:
//     response.created, response.in_progress, then per output item
//     response.output_item.added, the content events
//     (content_part.added, output_text.delta, output_text.done,
//     content_part.done, or function_call_arguments.delta/.done) and
//     response.output_item.done, then response.completed carrying the
//     output and the usage (input, cached input, output, reasoning and total
//     tokens).
//   - The title request Codex sends beside the first turn of a thread
//     (text.format a JSON schema with a title property; no tools): answered
//     {"title": ...}, and kept apart from Requests.
//   - Function calls by name with JSON arguments. The tools Codex offers a
//     model it has no metadata for (any name but its own, e.g. "gpt-fake")
//     are plain functions: the shell is exec_command {"cmd": ...} (Exec,
//     ExecEscalated), and file edits are apply_patch run through it
//     (Patch). Codex's default model gets "code mode" tools instead, which
//     this fake does not model.
//   - HTTP errors in OpenAI's error shape, {"error":{"message","type",
//     "param","code"}}, with the type and code the real API uses for 400,
//     401, 429 and 500.
//   - Any other route is logged and answered 404 in the same shape.
//
// What it does not model: the Responses WebSocket transport (Codex tries it
// for the built-in OpenAI provider; through a custom provider it never did),
// non-streaming answers, reasoning items and their encrypted content,
// custom (freeform) tool calls such as code mode's exec, in-stream
// response.failed, rate-limit headers, previous_response_id (Codex sends
// the whole conversation, store:false) and compaction requests.
package fakeresponses

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// FunctionCall is a function_call output item.
type FunctionCall struct {
	Name      string
	Arguments any // marshalled to the JSON string the API sends
}

// Step is one model answer.
type Step struct {
	Texts  []string       // assistant message items, in order, before any calls
	Calls  []FunctionCall // function_call items
	Delay  time.Duration  // before the answer starts
	Status int            // non-zero: answer with this HTTP error instead
	ErrMsg string         // the error's message
	// Dynamic, when set, builds the step from the request (for arguments
	// that depend on what Codex sent).
	Dynamic func(Request) Step
}

// Text is a step of one or more assistant messages.
func Text(texts ...string) Step { return Step{Texts: texts} }

// Call is a step with optional text then one function call.
func Call(text, name string, args any) Step {
	s := Step{Calls: []FunctionCall{{Name: name, Arguments: args}}}
	if text != "" {
		s.Texts = []string{text}
	}
	return s
}

// Exec is a step that runs cmd through Codex's shell tool, exec_command,
// inside the sandbox: no approval dialog under approval_policy on-request.
func Exec(text, cmd string) Step {
	return Call(text, "exec_command", map[string]any{"cmd": cmd})
}

// ExecEscalated is Exec asking to run outside the sandbox, with the
// justification the approval dialog shows as its Reason.
func ExecEscalated(text, cmd, justification string) Step {
	return Call(text, "exec_command", map[string]any{"cmd": cmd, "sandbox_permissions": "require_escalated", "justification": justification})
}

// Patch is a step that edits files with patch (from "*** Begin Patch" to
// "*** End Patch"). Codex offers no apply_patch tool to a model it has no
// metadata for (an apply_patch function call is answered "unsupported
// call"); it intercepts apply_patch run through exec_command instead and
// applies the patch itself.
func Patch(text, patch string) Step {
	return Exec(text, "apply_patch <<'EOF'\n"+strings.TrimSuffix(patch, "\n")+"\nEOF\n")
}

// Error is a step answered with an HTTP error in OpenAI's shape. Steps are
// chosen by the conversation, not by a counter, so every retry gets the
// same error; Codex 0.171.0 sends a 400 or a 429 once, a 401 six times, and
// retries a 5xx without end (Esc stops it). Use Dynamic for an error that
// clears.
func Error(status int, msg string) Step { return Step{Status: status, ErrMsg: msg} }

// Request is one logged API request.
type Request struct {
	Method, Path string
	Header       http.Header
	Model        string
	Stream       bool
	// Title marks the title request Codex sends beside each turn.
	Title bool
	Body  map[string]any
	// LastUserText is the text of the last user message Codex sent as
	// typed, its own context messages (environment, instructions) skipped.
	LastUserText string
	// Outputs are the function_call_output items after the last typed user
	// message, in order.
	Outputs []Output
	// Done is when the answer was written out in full (zero until then).
	Done time.Time
}

// ToolNames are the names of the tools the request offers (namespaces and
// hosted tools by their name or type).
func (r Request) ToolNames() []string {
	tools, _ := r.Body["tools"].([]any)
	var names []string
	for _, t := range tools {
		tm, _ := t.(map[string]any)
		name, _ := tm["name"].(string)
		if name == "" {
			name, _ = tm["type"].(string)
		}
		names = append(names, name)
	}
	return names
}

// Output is a function_call_output Codex sent back.
type Output struct {
	CallID string
	Output string
}

// Server is the fake API.
type Server struct {
	URL string

	mu        sync.Mutex // guards the fields below
	scenarios []scenario
	requests  []Request
	seq       int
	title     string
	usage     *Usage // usage.go
}

type scenario struct {
	trigger string
	steps   []Step
}

// New starts a fake on loopback, closed when the test ends. Codex's
// base_url is URL + "/v1".
func New(t testing.TB) *Server {
	s := &Server{title: "Fake title"}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}

// Script registers a scenario: a user message containing trigger is
// answered step by step; after the last step the fake answers a final text
// that quotes the last function output.
func (s *Server) Script(trigger string, steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scenarios = append(s.scenarios, scenario{trigger: trigger, steps: steps})
}

// SetTitle sets the title answered to title requests.
func (s *Server) SetTitle(title string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.title = title
}

// Requests returns the turn requests (not title requests) so far.
func (s *Server) Requests() []Request {
	return s.filter(func(r Request) bool { return r.Path == responsesPath && !r.Title })
}

// TitleRequests returns the title requests so far.
func (s *Server) TitleRequests() []Request {
	return s.filter(func(r Request) bool { return r.Title })
}

// AllRequests returns every request on every route, in arrival order.
func (s *Server) AllRequests() []Request { return s.filter(func(Request) bool { return true }) }

func (s *Server) filter(keep func(Request) bool) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.requests {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// WaitRequest waits for a turn request that satisfies pred.
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
	for _, r := range s.AllRequests() {
		fmt.Fprintf(&b, "\n  %s %s title=%v user=%q outputs=%+v", r.Method, r.Path, r.Title, r.LastUserText, r.Outputs)
	}
	return b.String()
}

const responsesPath = "/v1/responses"

// ServeHTTP implements the routes Codex calls.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.URL.Path == responsesPath {
		s.responses(w, r)
		return
	}
	s.log(Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()})
	writeJSON(w, http.StatusNotFound, apiError(http.StatusNotFound, "no route "+r.Method+" "+r.URL.Path))
}

func (s *Server) log(req Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
	return len(s.requests) - 1
}

func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		s.log(Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()})
		writeJSON(w, http.StatusBadRequest, apiError(http.StatusBadRequest, "bad json: "+err.Error()))
		return
	}
	req := parseRequest(body)
	req.Method, req.Path, req.Header = r.Method, r.URL.Path, r.Header.Clone()
	idx := s.log(req)
	defer func() {
		s.mu.Lock()
		s.requests[idx].Done = time.Now()
		s.mu.Unlock()
	}()

	s.mu.Lock()
	step := s.next(body, req)
	usage := s.usage
	s.seq++
	seq := s.seq
	s.mu.Unlock()

	if step.Delay > 0 {
		select {
		case <-time.After(step.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if step.Status != 0 {
		writeJSON(w, step.Status, apiError(step.Status, step.ErrMsg))
		return
	}
	streamResponse(w, seq, req.Model, step, usage)
}

// next picks the step for a request; the caller holds s.mu.
func (s *Server) next(body map[string]any, req Request) Step {
	if req.Title {
		title, _ := json.Marshal(map[string]string{"title": s.title})
		return Text(string(title))
	}
	for _, sc := range s.scenarios {
		if !strings.Contains(req.LastUserText, sc.trigger) {
			continue
		}
		i := answersSince(inputItems(body))
		if i < len(sc.steps) {
			if st := sc.steps[i]; st.Dynamic != nil {
				return st.Dynamic(req)
			}
			return sc.steps[i]
		}
		last := "none"
		if n := len(req.Outputs); n > 0 {
			last = req.Outputs[n-1].Output
		}
		return Text("Done. Last tool output: " + last)
	}
	return Text("ok: " + req.LastUserText)
}

func parseRequest(body map[string]any) Request {
	req := Request{Body: body}
	req.Model, _ = body["model"].(string)
	req.Stream, _ = body["stream"].(bool)
	req.Title = isTitle(body)
	items := inputItems(body)
	u := lastTypedUser(items)
	if u >= 0 {
		req.LastUserText = messageText(items[u])
	}
	for _, it := range items[u+1:] {
		if it["type"] == "function_call_output" {
			id, _ := it["call_id"].(string)
			req.Outputs = append(req.Outputs, Output{CallID: id, Output: outputText(it["output"])})
		}
	}
	return req
}

// isTitle tells the title request: Codex asks for JSON matching a schema
// with a title property.
func isTitle(body map[string]any) bool {
	text, _ := body["text"].(map[string]any)
	format, _ := text["format"].(map[string]any)
	if format["type"] != "json_schema" {
		return false
	}
	schema, _ := format["schema"].(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	_, ok := props["title"]
	return ok
}

func inputItems(body map[string]any) []map[string]any {
	raw, _ := body["input"].([]any)
	items := make([]map[string]any, 0, len(raw))
	for _, it := range raw {
		m, _ := it.(map[string]any)
		items = append(items, m)
	}
	return items
}

// contextTags open the user messages Codex writes itself, not the user.
var contextTags = []string{"<environment_context>", "<user_instructions>", "# AGENTS.md", "<skills_instructions>", "<hook_prompt"}

// lastTypedUser finds the last user message that the user typed.
func lastTypedUser(items []map[string]any) int {
	for i := len(items) - 1; i >= 0; i-- {
		it := items[i]
		if it["role"] != "user" || (it["type"] != nil && it["type"] != "message") {
			continue
		}
		text := messageText(it)
		typed := text != ""
		for _, tag := range contextTags {
			if strings.HasPrefix(text, tag) {
				typed = false
			}
		}
		if typed {
			return i
		}
	}
	return -1
}

// answersSince counts the model's answers after the last typed user
// message: each run of assistant items (messages, function calls,
// reasoning) is one answer.
func answersSince(items []map[string]any) int {
	n, inRun := 0, false
	for _, it := range items[lastTypedUser(items)+1:] {
		assistant := it["role"] == "assistant" || it["type"] == "function_call" || it["type"] == "reasoning"
		if assistant && !inRun {
			n++
		}
		inRun = assistant
	}
	return n
}

func messageText(it map[string]any) string {
	var parts []string
	switch c := it["content"].(type) {
	case string:
		parts = append(parts, c)
	case []any:
		for _, p := range c {
			pm, _ := p.(map[string]any)
			if t, ok := pm["text"].(string); ok {
				parts = append(parts, t)
			}
		}
	}
	return strings.TrimSpace(strings.Join(parts, "\n"))
}

// outputText is a function output: a string, or content items.
func outputText(o any) string {
	switch v := o.(type) {
	case string:
		return v
	case []any:
		var parts []string
		for _, p := range v {
			pm, _ := p.(map[string]any)
			if t, ok := pm["text"].(string); ok {
				parts = append(parts, t)
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
