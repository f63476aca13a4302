package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ccbridge/ccbridge/internal/approval"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

// fakeSessions is a session manager whose panes are all alive.
type fakeSessions struct {
	store *state.Store

	mu        sync.Mutex
	dialogs   int  // Deliver answers ErrDialogOpen this many times
	queued    int  // Screen shows Claude Code's own queue this many times
	queueOpen bool // Screen shows Claude Code's own queue until cleared
	delivered []string
	stopped   map[string]bool  // sessions whose pane is gone
	noReceipt bool             // WaitReceipt finds none
	targets   []session.Target // as Ensure was given them
	ensureErr error            // Ensure's answer, when set
	// sidOnPrompt: the session id is reported with the first prompt, as
	// Codex fires SessionStart, not when the pane is up.
	sidOnPrompt bool
}

func (f *fakeSessions) Ensure(ctx context.Context, t session.Target) (string, bool, error) {
	if f.ensureErr != nil {
		return "", false, f.ensureErr
	}
	_, err := f.store.Sessions.Update(ctx, t.Key, func(s *state.Session) error {
		s.Cwd, s.ClaudeSessionID, s.PaneID = t.Dir, "sid-"+t.Key[len(KeyPrefix):], "%1"
		f.mu.Lock()
		f.targets = append(f.targets, t)
		if f.sidOnPrompt {
			s.ClaudeSessionID = ""
		}
		f.mu.Unlock()
		// As the core records it: Claude's is the default, named by none.
		s.Agent = t.Agent
		if t.Agent == config.AgentClaude {
			s.Agent = ""
		}
		return nil
	})
	return "%1", true, err
}
func (f *fakeSessions) Deliver(ctx context.Context, key, text string) (time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dialogs > 0 {
		f.dialogs--
		return time.Time{}, session.ErrDialogOpen
	}
	if f.sidOnPrompt {
		if _, err := f.store.Sessions.Update(ctx, key, func(s *state.Session) error {
			s.ClaudeSessionID = "sid-" + key[len(KeyPrefix):]
			return nil
		}); err != nil {
			return time.Time{}, err
		}
	}
	f.delivered = append(f.delivered, text)
	return time.Now(), nil
}

func (f *fakeSessions) deliveredTexts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.delivered)
}
func (f *fakeSessions) WaitReceipt(context.Context, string, time.Time, string, time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.noReceipt {
		return session.ErrNoReceipt
	}
	return nil
}
func (f *fakeSessions) PressEnter(context.Context, string) error { return nil }
func (f *fakeSessions) Screen(context.Context, string, int) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.queueOpen || f.queued > 0 {
		if f.queued > 0 {
			f.queued--
		}
		return "❯ earlier\n  ⎿  Queued · ctrl+x ctrl+s to send now", nil
	}
	return "", nil
}
func (f *fakeSessions) InterruptTurn(context.Context, string) error   { return nil }
func (f *fakeSessions) SetMode(context.Context, string, string) error { return nil }
func (f *fakeSessions) Status(_ context.Context, key string) (session.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var name string
	if rec, err := f.store.Sessions.Get(key); err == nil {
		name = cmp.Or(rec.Agent, config.AgentClaude)
	}
	if f.stopped[key] {
		return session.Status{State: "stopped", AgentName: name}, nil
	}
	return session.Status{State: "idle", AgentName: name}, nil
}

type harness struct {
	store    *state.Store
	sessions *fakeSessions
	srv      *Server
	cs       *sdk.ClientSession
}

func newHarness(t *testing.T, opt *sdk.ClientOptions) *harness {
	t.Helper()
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := config.Parse("")
	sessions := &fakeSessions{store: store}
	srv := New(Options{Config: cfg, Store: store, Sessions: sessions, ClaudeHome: t.TempDir(), CodexHome: t.TempDir()})
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := sdk.NewInMemoryTransports()
	done := make(chan struct{})
	go func() { _ = srv.Run(ctx, st); close(done) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, opt).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(); cancel(); <-done })
	return &harness{store: store, sessions: sessions, srv: srv, cs: cs}
}

func (h *harness) call(t *testing.T, name string, args map[string]any, out any) (string, bool) {
	t.Helper()
	res, err := h.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text += tc.Text
		}
	}
	if out != nil && !res.IsError {
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, out)
	}
	return text, res.IsError
}

// addRequest records a pending prompt of a session, as the hook does.
func (h *harness) addRequest(t *testing.T, key, sid, tool string, input any) string {
	t.Helper()
	b, _ := json.Marshal(input)
	id, _ := state.NewRequestID()
	if _, err := h.store.Requests.Create(context.Background(), id, state.Request{Session: key, ClaudeSessionID: sid, ToolName: tool,
		ToolInput: b, Status: state.RequestPending, Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return id
}

func (h *harness) start(t *testing.T) (key, sid string) {
	t.Helper()
	var out StartOutput
	if text, isErr := h.call(t, "claude_start", map[string]any{"prompt": "hi", "workingDirectory": t.TempDir()}, &out); isErr {
		t.Fatal(text)
	}
	return KeyPrefix + strings.TrimPrefix(out.SessionID, "sid-"), out.SessionID
}

// claude_say into an open dialog says at once that the message is queued,
// and delivers it when the dialog closes.
func TestSayQueuedBehindADialog(t *testing.T) {
	h := newHarness(t, nil)
	_, sid := h.start(t)
	h.sessions.mu.Lock()
	h.sessions.dialogs = 2
	h.sessions.mu.Unlock()
	var out SayOutput
	if text, isErr := h.call(t, "claude_say", map[string]any{"sessionId": sid, "message": "after the dialog"}, &out); isErr || !out.Queued {
		t.Fatalf("claude_say = %q %+v", text, out)
	}
	if slices.Contains(h.sessions.deliveredTexts(), "after the dialog") {
		t.Fatal("delivered while the dialog was open")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(h.sessions.deliveredTexts(), "after the dialog") {
		if time.Now().After(deadline) {
			t.Fatalf("never delivered; delivered %q", h.sessions.deliveredTexts())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// claude_say behind messages waiting in Claude Code's own queue does not
// block the call until the turn ends: it says the message is queued, and
// delivers it once the queue has drained.
func TestSayQueuedBehindClaudesQueue(t *testing.T) {
	h := newHarness(t, nil)
	_, sid := h.start(t)
	h.sessions.mu.Lock()
	h.sessions.queued = 20 // two seconds of polling
	h.sessions.mu.Unlock()
	var out SayOutput
	if text, isErr := h.call(t, "claude_say", map[string]any{"sessionId": sid, "message": "after the queue"}, &out); isErr || !out.Queued {
		t.Fatalf("claude_say = %q %+v", text, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(h.sessions.deliveredTexts(), "after the queue") {
		if time.Now().After(deadline) {
			t.Fatalf("never delivered; delivered %q", h.sessions.deliveredTexts())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Messages queued behind Claude Code's own queue reach Claude in the order
// they were said, not in whichever order their waits see the queue drain.
func TestSaysQueuedKeepTheirOrder(t *testing.T) {
	h := newHarness(t, nil)
	_, sid := h.start(t)
	h.sessions.mu.Lock()
	h.sessions.queueOpen = true
	h.sessions.mu.Unlock()
	for _, m := range []string{"A", "B", "C"} {
		var out SayOutput
		if text, isErr := h.call(t, "claude_say", map[string]any{"sessionId": sid, "message": m}, &out); isErr || !out.Queued {
			t.Fatalf("claude_say %s = %q %+v", m, text, out)
		}
	}
	time.Sleep(150 * time.Millisecond) // every wait has polled the queue
	h.sessions.mu.Lock()
	h.sessions.queueOpen = false
	h.sessions.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for len(h.sessions.deliveredTexts()) < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("never delivered; delivered %q", h.sessions.deliveredTexts())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := h.sessions.deliveredTexts(); !slices.Equal(got, []string{"hi", "A", "B", "C"}) {
		t.Fatalf("delivered %q, want hi A B C", got)
	}
}

// A queued message that never goes in (the dialog stayed open past the
// prompt timeout) is reported, once, by the next claude_status.
func TestUndeliveredQueuedMessageIsReported(t *testing.T) {
	h := newHarness(t, nil)
	_, sid := h.start(t)
	h.srv.opt.Config.Claude.PromptTimeout.Duration = 1500 * time.Millisecond
	h.sessions.mu.Lock()
	h.sessions.dialogs = 1000
	h.sessions.mu.Unlock()
	var out SayOutput
	if text, isErr := h.call(t, "claude_say", map[string]any{"sessionId": sid, "message": "lost message"}, &out); isErr || !out.Queued {
		t.Fatalf("claude_say = %q %+v", text, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	var st StatusOutput
	for len(st.Undelivered) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the lost message was never reported")
		}
		time.Sleep(50 * time.Millisecond)
		h.call(t, "claude_status", map[string]any{"sessionId": sid}, &st)
	}
	if len(st.Undelivered) != 1 || !strings.Contains(st.Undelivered[0], `"lost message"`) || !strings.Contains(st.Undelivered[0], "dialog stayed open") {
		t.Fatalf("undelivered = %q", st.Undelivered)
	}
	st = StatusOutput{}
	if h.call(t, "claude_status", map[string]any{"sessionId": sid}, &st); len(st.Undelivered) != 0 {
		t.Fatalf("reported twice: %q", st.Undelivered)
	}
}

// After claude_interrupt, a prompt typed anywhere (the terminal, Discord)
// starts a turn: the session is active again, not interrupted.
func TestInterruptedUntilTheNextPrompt(t *testing.T) {
	h := newHarness(t, nil)
	key, sid := h.start(t)
	// A turn runs.
	if _, err := h.store.Sessions.Update(context.Background(), key, func(s *state.Session) error { s.Busy = true; return nil }); err != nil {
		t.Fatal(err)
	}
	var st StatusOutput
	if text, isErr := h.call(t, "claude_interrupt", map[string]any{"sessionId": sid}, nil); isErr {
		t.Fatal(text)
	}
	// The Stop hook of the interrupted turn.
	if _, err := h.store.Sessions.Update(context.Background(), key, func(s *state.Session) error { s.Busy = false; return nil }); err != nil {
		t.Fatal(err)
	}
	if h.call(t, "claude_status", map[string]any{"sessionId": sid}, &st); st.Status != "interrupted" {
		t.Fatalf("status after the interrupt = %q", st.Status)
	}
	// The UserPromptSubmit hook of a prompt typed in the terminal.
	if _, err := h.store.Sessions.Update(context.Background(), key, func(s *state.Session) error {
		s.Busy = true
		s.AddPrompt(state.Prompt{At: time.Now(), Text: "go on"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if h.call(t, "claude_status", map[string]any{"sessionId": sid}, &st); st.Status != "active" {
		t.Fatalf("status after a new prompt = %q, want active", st.Status)
	}
}

// claude_status of a session known only from Claude Code's history reads
// its directory and transcript from there.
func TestStatusOfAHistorySession(t *testing.T) {
	h := newHarness(t, nil)
	dir := filepath.Join(h.srv.projects(), "-w-app")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	line := `{"type":"user","cwd":"/w/app","sessionId":"old","message":{"role":"user","content":"fix it"}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "old.jsonl"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	var st StatusOutput
	if text, isErr := h.call(t, "claude_status", map[string]any{"sessionId": "old"}, &st); isErr || st.WorkingDir != "/w/app" || st.IsActive {
		t.Fatalf("claude_status = %q %+v", text, st)
	}
}

func TestToolsListed(t *testing.T) {
	h := newHarness(t, nil)
	res, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if got := strings.Join(names, ","); got != "claude_interrupt,claude_list,claude_respond,claude_say,claude_start,claude_status" {
		t.Fatalf("tools = %s", got)
	}
}

func TestToolErrors(t *testing.T) {
	h := newHarness(t, nil)
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"claude_start", map[string]any{"prompt": "x", "workingDirectory": "relative"}, "absolute path"},
		{"claude_start", map[string]any{"prompt": "x", "workingDirectory": "/no/such/dir"}, "not a directory"},
		{"claude_status", map[string]any{"sessionId": "nope"}, "unknown session"},
		{"claude_interrupt", map[string]any{"sessionId": "nope"}, "unknown session"},
		{"claude_say", map[string]any{"sessionId": "nope", "message": "hi"}, "unknown session"},
		{"claude_respond", map[string]any{"sessionId": "nope", "id": "x", "answers": []string{"allow"}}, "no pending question"},
	} {
		text, isErr := h.call(t, tc.tool, tc.args, nil)
		if !isErr || !strings.Contains(text, tc.want) {
			t.Errorf("%s %v: %q (error %v), want %q", tc.tool, tc.args, text, isErr, tc.want)
		}
	}
}

func TestRespondThroughStatus(t *testing.T) {
	h := newHarness(t, nil)
	key, sid := h.start(t)
	id := h.addRequest(t, key, sid, "Bash", map[string]any{"command": "rm -rf build"})
	var st StatusOutput
	h.call(t, "claude_status", map[string]any{"sessionId": sid}, &st)
	if st.Status != "awaiting_input" || st.PendingQuestion == nil || st.PendingQuestion.ID != id || !strings.Contains(st.PendingQuestion.Questions[0].Question, "rm -rf build") {
		t.Fatalf("status = %+v", st)
	}
	if text, isErr := h.call(t, "claude_respond", map[string]any{"sessionId": sid, "id": id, "answers": []string{"maybe"}}, nil); !isErr || !strings.Contains(text, "not among the options") {
		t.Fatalf("a wrong answer: %q", text)
	}
	if text, isErr := h.call(t, "claude_respond", map[string]any{"sessionId": sid, "id": id, "answers": []string{"deny: not that"}}, nil); isErr {
		t.Fatal(text)
	}
	r, _ := h.store.Requests.Get(id)
	d, _ := approval.Decode(r)
	if r.Status != state.RequestDecided || d.Behavior != "deny" || d.Message != "not that" || r.Via != Via {
		t.Fatalf("request = %+v, decision %+v", r, d)
	}
	if text, isErr := h.call(t, "claude_respond", map[string]any{"sessionId": sid, "id": id, "answers": []string{"allow"}}, nil); !isErr || !strings.Contains(text, "no longer pending") {
		t.Fatalf("a second answer: %q", text)
	}
}

func TestElicitation(t *testing.T) {
	asked := make(chan *sdk.ElicitParams, 4)
	h := newHarness(t, &sdk.ClientOptions{ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		asked <- req.Params
		if strings.Contains(req.Params.Message, "decline") {
			return &sdk.ElicitResult{Action: "decline"}, nil
		}
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": "deny", "text": "use make clean"}}, nil
	}})
	key, sid := h.start(t)
	id := h.addRequest(t, key, sid, "Bash", map[string]any{"command": "rm -rf build"})
	select {
	case p := <-asked:
		if !strings.Contains(p.Message, "rm -rf build") {
			t.Errorf("elicitation message %q", p.Message)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no elicitation")
	}
	waitRequest(t, h.store, id, func(r state.Request) bool { return r.Status == state.RequestDecided })
	r, _ := h.store.Requests.Get(id)
	if d, _ := approval.Decode(r); d.Message != "use make clean" {
		t.Fatalf("decision %+v", d)
	}

	declined := h.addRequest(t, key, sid, "Bash", map[string]any{"command": "echo decline"})
	select {
	case <-asked:
	case <-time.After(10 * time.Second):
		t.Fatal("no elicitation")
	}
	// Not one of this server's sessions: never elicited.
	h.addRequest(t, "discord-p", "other", "Bash", map[string]any{"command": "echo other"})
	select {
	case p := <-asked:
		t.Fatalf("elicited a prompt of another session: %q", p.Message)
	case <-time.After(2 * elicitPoll):
	}
	if r, _ := h.store.Requests.Get(declined); r.Status != state.RequestPending {
		t.Fatalf("a declined elicitation decided: %s", r.Status)
	}
}

func waitRequest(t *testing.T, store *state.Store, id string, ok func(state.Request) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if r, err := store.Requests.Get(id); err == nil && ok(r) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("request %s never reached the state", id)
}

// A prompt answered elsewhere while its form is open: the form is
// withdrawn (the client's handler is cancelled), and nothing is decided
// twice.
func TestElicitationWithdrawn(t *testing.T) {
	withdrawn := make(chan struct{})
	opened := make(chan struct{}, 1)
	h := newHarness(t, &sdk.ClientOptions{ElicitationHandler: func(ctx context.Context, _ *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		opened <- struct{}{}
		select {
		case <-ctx.Done():
			close(withdrawn)
			return nil, ctx.Err()
		case <-time.After(15 * time.Second): // fail, not hang
			return &sdk.ElicitResult{Action: "cancel"}, nil
		}
	}})
	key, sid := h.start(t)
	id := h.addRequest(t, key, sid, "Bash", map[string]any{"command": "make"})
	select {
	case <-opened:
	case <-time.After(10 * time.Second):
		t.Fatal("no elicitation")
	}
	if _, err := h.store.Requests.Update(context.Background(), id, func(r *state.Request) error { r.Status = state.RequestTerminal; return nil }); err != nil {
		t.Fatal(err)
	}
	select {
	case <-withdrawn:
	case <-time.After(10 * time.Second):
		t.Fatal("the form stayed open after the prompt was answered in the terminal")
	}
}
