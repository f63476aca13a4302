package mcp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/history"
	"github.com/ccbridge/ccbridge/internal/prompt"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

// StartInput is claude_start's input.
type StartInput struct {
	Prompt             string   `json:"prompt" jsonschema:"the first message to Claude"`
	WorkingDirectory   string   `json:"workingDirectory" jsonschema:"absolute path of the directory Claude works in"`
	Model              string   `json:"model,omitempty" jsonschema:"model alias or name (--model); Claude's own default otherwise"`
	PermissionMode     string   `json:"permissionMode,omitempty" jsonschema:"Claude Code's permission mode (--permission-mode)"`
	AllowedTools       []string `json:"allowedTools,omitempty" jsonschema:"tools allowed without asking, e.g. Bash(npm test *) (--allowedTools)"`
	DisallowedTools    []string `json:"disallowedTools,omitempty" jsonschema:"tools Claude may not use (--disallowedTools)"`
	AppendSystemPrompt string   `json:"appendSystemPrompt,omitempty" jsonschema:"text appended to Claude's system prompt"`
	Worktree           string   `json:"worktree,omitempty" jsonschema:"name of a git worktree (and branch) to create and run in"`
	// AgentName goes to the core as given: which agent runs is its.
	AgentName string `json:"agent,omitempty" jsonschema:"the coding agent to run (default claude); another runs with its own config: permissionMode does not apply to it, and allowedTools, disallowedTools and appendSystemPrompt are refused"`
}

// StartOutput is claude_start's output.
type StartOutput struct {
	SessionID string `json:"sessionId" jsonschema:"Claude's own session id"`
	Status    string `json:"status"`
	AgentName string `json:"agent" jsonschema:"the coding agent the session runs"`
}

// SayInput is claude_say's input.
type SayInput struct {
	SessionID      string `json:"sessionId" jsonschema:"a session id from claude_start or claude_list"`
	Message        string `json:"message"`
	PermissionMode string `json:"permissionMode,omitempty" jsonschema:"switch to this permission mode first"`
}

// SayOutput is claude_say's output.
type SayOutput struct {
	SessionID string `json:"sessionId"`
	Status    string `json:"status"`
	Resumed   bool   `json:"resumed,omitempty" jsonschema:"the session's pane was gone and it was resumed"`
	Queued    bool   `json:"queued,omitempty" jsonschema:"held back (a dialog is open, or earlier messages wait in Claude's own queue): it is delivered when its turn comes"`
	// Undelivered reports earlier queued messages that never went in.
	Undelivered []string `json:"undelivered,omitempty" jsonschema:"earlier queued messages of this session that could not be delivered, with why (each reported once)"`
}

// StatusInput is claude_status's input.
type StatusInput struct {
	SessionID   string `json:"sessionId"`
	OutputLines int    `json:"outputLines,omitempty" jsonschema:"how many recent lines of Claude's text to return (default 20)"`
}

// ToolUse is one tool call of a session.
type ToolUse struct {
	ToolName string `json:"toolName"`
	Status   string `json:"status" jsonschema:"running, done or error"`
}

// StatusOutput is claude_status's output.
type StatusOutput struct {
	SessionID       string          `json:"sessionId"`
	AgentName       string          `json:"agent" jsonschema:"the coding agent the session runs"`
	Status          string          `json:"status" jsonschema:"active, awaiting_input, idle, error or interrupted"`
	Result          string          `json:"result,omitempty" jsonschema:"Claude's reply to the last message, once the turn ended"`
	RecentOutput    []string        `json:"recentOutput"`
	PendingQuestion *prompt.Pending `json:"pendingQuestion,omitempty"`
	ToolUseEvents   []ToolUse       `json:"toolUseEvents"`
	CostUSD         *float64        `json:"costUsd,omitempty"`
	TurnCount       int             `json:"turnCount"`
	IsActive        bool            `json:"isActive" jsonschema:"Claude runs in ccbridge's tmux"`
	WorkingDir      string          `json:"workingDirectory,omitempty"`
	Undelivered     []string        `json:"undelivered,omitempty" jsonschema:"queued messages that could not be delivered, with why (each reported once)"`
	WebURL          string          `json:"webUrl,omitempty" jsonschema:"the session in ccbridge's read-only web view (its conversation live, its diff and files); whoever holds the link can read the session until it expires: do not share it"`
	WebURLExpires   string          `json:"webUrlExpires,omitempty" jsonschema:"when webUrl stops working (RFC 3339)"`
}

// RespondInput is claude_respond's input.
type RespondInput struct {
	SessionID string   `json:"sessionId"`
	ID        string   `json:"id" jsonschema:"the pendingQuestion id from claude_status"`
	Answers   []string `json:"answers" jsonschema:"one answer per question: allow, deny, deny: <instructions>; approve, approve-manual, reject, reject: <feedback>; or an option label (comma-joined for multiSelect, free text for Other)"`
}

// RespondOutput is claude_respond's output.
type RespondOutput struct {
	Decided bool   `json:"decided"`
	Outcome string `json:"outcome"`
}

// SessionInput names a session.
type SessionInput struct {
	SessionID string `json:"sessionId"`
}

// InterruptOutput is claude_interrupt's output.
type InterruptOutput struct {
	Status string `json:"status"`
}

// ListInput is claude_list's input.
type ListInput struct {
	WorkingDirectory string `json:"workingDirectory,omitempty" jsonschema:"only sessions in this directory or below it"`
	Limit            int    `json:"limit,omitempty" jsonschema:"at most this many (default 20)"`
}

// ListEntry is one session of Claude Code's history.
type ListEntry struct {
	SessionID        string    `json:"sessionId"`
	WorkingDirectory string    `json:"workingDirectory"`
	FirstPrompt      string    `json:"firstPrompt,omitempty"`
	Time             time.Time `json:"time"`
	IsActive         bool      `json:"isActive"`
	Status           string    `json:"status,omitempty"`
	AgentName        string    `json:"agent" jsonschema:"the coding agent the session runs"`
}

// ListOutput is claude_list's output.
type ListOutput struct {
	Sessions []ListEntry `json:"sessions"`
}

func (s *Server) addTools() {
	readOnly := &sdk.ToolAnnotations{ReadOnlyHint: true}
	destructive := true
	sdk.AddTool(s.srv, &sdk.Tool{Name: "claude_start", Description: "Start a new interactive Claude Code session in its own tmux window, with ccbridge's hooks, and give it a first message. Returns Claude's session id.",
		InputSchema: withChoices(schemaFor[StartInput]())}, s.start)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "claude_say", Description: "Send a message to a Claude Code session, as typed in its terminal. A session whose terminal is gone is resumed first.",
		InputSchema: withChoices(schemaFor[SayInput]())}, s.say)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "claude_status", Description: "A session's state (active, awaiting_input, idle, error, interrupted), its recent output, tool calls, the reply to the last message, and the prompt it waits on, if any.",
		Annotations: readOnly}, s.status)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "claude_respond", Description: "Answer the prompt a session waits on (see pendingQuestion in claude_status). The first answer wins, from here, the terminal or Discord."}, s.respond)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "claude_interrupt", Description: "Interrupt a session's running turn (Escape). A session with no turn running is left as it is.",
		Annotations: &sdk.ToolAnnotations{DestructiveHint: &destructive}}, s.interrupt)
	sdk.AddTool(s.srv, &sdk.Tool{Name: "claude_list", Description: "Claude Code's session history, newest first, marking the sessions running in ccbridge's tmux.",
		Annotations: readOnly}, s.list)
}

// toolError is an error the client reads as a tool result.
func toolError(format string, a ...any) error { return fmt.Errorf(format, a...) }

func (s *Server) start(ctx context.Context, _ *sdk.CallToolRequest, in StartInput) (*sdk.CallToolResult, StartOutput, error) {
	if strings.TrimSpace(in.Prompt) == "" {
		return nil, StartOutput{}, toolError("prompt is empty")
	}
	dir, err := workDir(in.WorkingDirectory)
	if err != nil {
		return nil, StartOutput{}, err
	}
	key := newKey()
	t := s.target(key, dir, in.AgentName)
	t.Model, t.PermissionMode = in.Model, config.NormalizePermissionMode(in.PermissionMode)
	if len(in.AllowedTools) > 0 {
		t.Args = append(t.Args, "--allowedTools", strings.Join(in.AllowedTools, ","))
	}
	if len(in.DisallowedTools) > 0 {
		t.Args = append(t.Args, "--disallowedTools", strings.Join(in.DisallowedTools, ","))
	}
	if in.AppendSystemPrompt != "" {
		t.Args = append(t.Args, "--append-system-prompt", in.AppendSystemPrompt)
	}
	if in.Worktree != "" {
		t.Isolation, t.ThreadName, t.ThreadID = "worktree", in.Worktree, strings.TrimPrefix(key, KeyPrefix)
	}
	s.markStarted(key)
	if err := s.ensure(ctx, t); err != nil { // dialog.go
		return nil, StartOutput{}, toolError("could not start the session in %s: %v", dir, err)
	}
	// The prompt goes in first: some agents (Codex) report their session
	// id only with the first prompt.
	if _, err := s.deliver(ctx, key, in.Prompt); err != nil {
		started := "the session started"
		if rec, _ := s.opt.Store.Sessions.Get(key); rec.ClaudeSessionID != "" {
			started += " (session " + rec.ClaudeSessionID + ")"
		}
		return nil, StartOutput{}, toolError("%s but the prompt was not delivered: %v", started, err)
	}
	sid, err := s.waitSessionID(ctx, key)
	if err != nil {
		return nil, StartOutput{}, err
	}
	st := s.state(ctx, key, sid)
	return nil, StartOutput{SessionID: sid, Status: st.Status, AgentName: st.AgentName}, nil
}

// target is a session of this front end: Claude's own configuration
// applies but for what the caller gives; no Discord system prompt, no
// progress messages. agentName goes to the core as given ("": its
// default).
func (s *Server) target(key, dir, agentName string) session.Target {
	return session.Target{Key: key, Window: "mcp-" + strings.TrimPrefix(key, KeyPrefix)[:8], Dir: dir,
		TmuxSession: TmuxSession, Progress: "off", Plain: true, Agent: agentName}
}

func workDir(d string) (string, error) {
	if d == "" {
		return "", toolError("workingDirectory is required")
	}
	if !filepath.IsAbs(d) {
		return "", toolError("workingDirectory must be an absolute path: %q", d)
	}
	fi, err := os.Stat(d)
	if err != nil || !fi.IsDir() {
		return "", toolError("workingDirectory %s is not a directory", d)
	}
	return filepath.Clean(d), nil
}

// waitSessionID waits for the SessionStart hook to record Claude's own
// session id.
func (s *Server) waitSessionID(ctx context.Context, key string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opt.SessionIDWait)
	defer cancel()
	events, _ := s.opt.Store.Sessions.Watch(ctx)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if rec, err := s.opt.Store.Sessions.Get(key); err == nil && rec.ClaudeSessionID != "" {
			return rec.ClaudeSessionID, nil
		}
		select {
		case <-ctx.Done():
			return "", toolError("Claude started but its SessionStart hook never reported a session id (are ccbridge's hook binaries installed next to ccbridge?)")
		case <-events:
		case <-tick.C:
		}
	}
}

// find returns the session record of a Claude session id, preferring one
// with a live pane.
func (s *Server) find(ctx context.Context, sid string) (string, state.Session, bool) {
	all, _ := s.opt.Store.Sessions.List()
	var key string
	var rec state.Session
	for k, r := range all {
		if r.ClaudeSessionID != sid {
			continue
		}
		if st, err := s.opt.Sessions.Status(ctx, k); err == nil && st.State != "stopped" {
			return k, r, true
		}
		if key == "" || strings.HasPrefix(k, KeyPrefix) {
			key, rec = k, r
		}
	}
	return key, rec, key != ""
}

func (s *Server) say(ctx context.Context, _ *sdk.CallToolRequest, in SayInput) (*sdk.CallToolResult, SayOutput, error) {
	if in.SessionID == "" || strings.TrimSpace(in.Message) == "" {
		return nil, SayOutput{}, toolError("sessionId and message are required")
	}
	key, resumed, err := s.live(ctx, in.SessionID)
	if err != nil {
		return nil, SayOutput{}, err
	}
	if in.PermissionMode != "" {
		if err := s.opt.Sessions.SetMode(ctx, key, config.NormalizePermissionMode(in.PermissionMode)); err != nil {
			return nil, SayOutput{}, toolError("could not switch to %s mode: %v", in.PermissionMode, err)
		}
	}
	queued, err := s.deliver(ctx, key, in.Message)
	if err != nil {
		return nil, SayOutput{}, toolError("message not delivered: %v", err)
	}
	out := SayOutput{SessionID: in.SessionID, Resumed: resumed, Queued: queued, Status: s.state(ctx, key, in.SessionID).Status,
		Undelivered: s.takeUndelivered(key)}
	return nil, out, nil
}

// live returns the key of a session with a live pane, resuming the Claude
// session (--resume) in a new window when its pane is gone.
func (s *Server) live(ctx context.Context, sid string) (key string, resumed bool, err error) {
	key, rec, ok := s.find(ctx, sid)
	var agentName string // the core's default for a conversation it has no record of
	if ok {
		st, err := s.opt.Sessions.Status(ctx, key)
		if err == nil && st.State != "stopped" {
			return key, false, nil
		}
		agentName = st.AgentName
	}
	if why := s.heldElsewhere(sid); why != "" {
		return "", false, toolError("session %s %s: continuing it here too would run two Claudes on one conversation. Send the message there, or start a new session with claude_start", sid, why)
	}
	dir := rec.Cwd
	if !ok || !strings.HasPrefix(key, KeyPrefix) {
		// Not one of ours (started by hand, or a Discord session's
		// conversation): resume it under a key of this front end.
		h, found := s.history(sid)
		if !found && !ok {
			return "", false, toolError("unknown session %s: not in Claude Code's history (see claude_list)", sid)
		}
		if found {
			dir = h.Cwd
			// A conversation of Codex's records goes on with Codex.
			agentName = cmp.Or(agentName, h.AgentName)
		}
		key = KeyPrefix + safeID(sid)
	}
	if dir == "" {
		return "", false, toolError("session %s has no known working directory", sid)
	}
	t := s.target(key, dir, agentName)
	t.Resume = sid
	s.markStarted(key)
	if err := s.ensure(ctx, t); err != nil { // dialog.go
		return "", false, toolError("could not resume session %s: %v", sid, err)
	}
	return key, true, nil
}

// safeID keeps the characters a state key takes.
func safeID(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return -1
	}, s)
}

func (s *Server) status(ctx context.Context, _ *sdk.CallToolRequest, in StatusInput) (*sdk.CallToolResult, StatusOutput, error) {
	key, _, ok := s.find(ctx, in.SessionID)
	var conv *history.Conversation
	if !ok {
		h, found := s.history(in.SessionID)
		if !found {
			return nil, StatusOutput{}, toolError("unknown session %s", in.SessionID)
		}
		conv = &h
	}
	st := s.stateLines(ctx, key, in.SessionID, in.OutputLines, conv)
	st.Undelivered = s.takeUndelivered(key)
	if key != "" && s.opt.Web != nil {
		// Only a session ccbridge runs has pages: a transcript from the
		// history alone has none.
		url, expires := s.opt.Web.SessionLink(key)
		st.WebURL, st.WebURLExpires = url, expires.UTC().Format(time.RFC3339)
	}
	return nil, st, nil
}

// takeUndelivered returns, once, the queued messages of a session that
// could not be delivered: the client was told they were queued, so it
// must hear that they were lost.
func (s *Server) takeUndelivered(key string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.undelivered[key]
	delete(s.undelivered, key)
	return out
}

func (s *Server) state(ctx context.Context, key, sid string) StatusOutput {
	return s.stateLines(ctx, key, sid, 0, nil)
}

// stateLines builds a session's status from its record, its hooks' turn
// and request records and its transcript: never from the screen. conv is
// the session's history entry when the caller already looked it up.
func (s *Server) stateLines(ctx context.Context, key, sid string, lines int, conv *history.Conversation) StatusOutput {
	if lines <= 0 {
		lines = 20
	}
	// A session ccbridge has no record of is one of Claude Code's history.
	out := StatusOutput{SessionID: sid, Status: "idle", RecentOutput: []string{}, ToolUseEvents: []ToolUse{}, AgentName: config.DefaultAgent}
	var rec state.Session
	if key != "" {
		rec, _ = s.opt.Store.Sessions.Get(key)
		if st, err := s.opt.Sessions.Status(ctx, key); err == nil {
			out.IsActive = st.State != "stopped"
			out.AgentName = cmp.Or(st.AgentName, out.AgentName)
		}
	}
	out.WorkingDir = rec.Cwd
	path := rec.TranscriptPath
	if path == "" && conv == nil {
		if h, ok := s.history(sid); ok {
			conv = &h
		}
	}
	if path == "" && conv != nil {
		path, out.WorkingDir = conv.Path, conv.Cwd
	}
	if conv != nil && key == "" {
		// A conversation of the agents' records only: theirs names it.
		out.AgentName = cmp.Or(conv.AgentName, out.AgentName)
	}
	if path != "" {
		s.recent(&out, path, lines) // recent.go
	}
	// The cost comes from the statusLine figures ccbridge's hook caches.
	if statuses, err := state.OpenStatuses(s.opt.Store.Dir); err == nil {
		if st, err := statuses.Get(sid); err == nil && st.CostUSD > 0 {
			cost := st.CostUSD
			out.CostUSD = &cost
		}
	}
	if id, req, ok := s.pending(key, sid); ok {
		p := prompt.Describe(id, req)
		out.PendingQuestion, out.Status = &p, "awaiting_input"
		return out
	}
	if p, ok := s.screenDialog(ctx, key); ok && out.IsActive { // dialog.go
		out.PendingQuestion, out.Status = &p, "awaiting_input"
		return out
	}
	switch {
	case s.interruptedNow(key, rec):
		out.Status = "interrupted"
	case rec.Busy && out.IsActive:
		out.Status = "active"
	case out.Status == "interrupted":
	default:
		if turn, err := s.opt.Store.Turns.Get(state.TurnKey(sid, rec.LastPromptID)); err == nil && rec.LastPromptID != "" {
			out.Result = turn.Reply
			if turn.Error != "" {
				out.Status = "error"
			}
		}
	}
	return out
}

// interruptedNow reports whether claude_interrupt stopped the session and
// Claude has accepted no prompt since, from wherever it was typed.
func (s *Server) interruptedNow(key string, rec state.Session) bool {
	s.mu.Lock()
	at, ok := s.interrupted[key]
	s.mu.Unlock()
	if !ok {
		return false
	}
	for _, p := range rec.Prompts {
		if p.NotBefore(at) {
			return false
		}
	}
	return true
}

// pending finds the oldest pending request of a session.
func (s *Server) pending(key, sid string) (string, state.Request, bool) {
	all, _ := s.opt.Store.Requests.List()
	best := ""
	for id, r := range all {
		if r.Status != state.RequestPending || (r.ClaudeSessionID != sid && (key == "" || r.Session != key)) {
			continue
		}
		if best == "" || r.Created.Before(all[best].Created) {
			best = id
		}
	}
	return best, all[best], best != ""
}

func (s *Server) respond(ctx context.Context, _ *sdk.CallToolRequest, in RespondInput) (*sdk.CallToolResult, RespondOutput, error) {
	if strings.HasPrefix(in.ID, dialogPrefix) {
		out, err := s.respondDialog(ctx, in) // dialog.go
		return nil, out, err
	}
	key, _, _ := s.find(ctx, in.SessionID)
	req, err := s.opt.Store.Requests.Get(in.ID)
	if err != nil || (req.ClaudeSessionID != in.SessionID && (key == "" || req.Session != key)) {
		return nil, RespondOutput{}, toolError("no pending question with id %q in session %s", in.ID, in.SessionID)
	}
	if req.Status != state.RequestPending {
		return nil, RespondOutput{}, toolError("question %s is no longer pending: %s", in.ID, prompt.Outcome(req))
	}
	updated, err := prompt.Answer(ctx, s.opt.Store.Requests, in.ID, in.Answers, Who, Via)
	var ae *prompt.AnswerError
	switch {
	case errors.As(err, &ae):
		return nil, RespondOutput{}, toolError("%s", ae.Msg)
	case errors.Is(err, prompt.ErrStale):
		cur, _ := s.opt.Store.Requests.Get(in.ID)
		return nil, RespondOutput{}, toolError("question %s is no longer pending: %s", in.ID, prompt.Outcome(cur))
	case err != nil:
		return nil, RespondOutput{}, toolError("could not answer: %v", err)
	}
	s.opt.Log.Info("prompt answered over MCP", "request", in.ID, "session", in.SessionID)
	return nil, RespondOutput{Decided: true, Outcome: updated.Outcome}, nil
}

func (s *Server) interrupt(ctx context.Context, _ *sdk.CallToolRequest, in SessionInput) (*sdk.CallToolResult, InterruptOutput, error) {
	key, _, ok := s.find(ctx, in.SessionID)
	if !ok {
		return nil, InterruptOutput{}, toolError("unknown session %s", in.SessionID)
	}
	if s.idle(ctx, key) {
		// Nothing runs: an Escape would do nothing, and the session
		// must not read as interrupted.
		return nil, InterruptOutput{Status: "idle"}, nil
	}
	if err := s.opt.Sessions.InterruptTurn(ctx, key); err != nil {
		if errors.Is(err, session.ErrNoPane) {
			return nil, InterruptOutput{}, toolError("session %s is not running in ccbridge's tmux", in.SessionID)
		}
		return nil, InterruptOutput{}, toolError("could not interrupt: %v", err)
	}
	s.mu.Lock()
	s.interrupted[key] = time.Now()
	s.mu.Unlock()
	return nil, InterruptOutput{Status: "interrupted"}, nil
}
