package mcp

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

// dialogSessionsFake shows a dialog on every session's screen until it is
// answered.
type dialogSessionsFake struct {
	*fakeSessions
	mu       sync.Mutex
	dialog   *session.Dialog
	answered []string
}

func (f *dialogSessionsFake) Dialog(context.Context, string) (session.Dialog, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dialog == nil {
		return session.Dialog{}, false, nil
	}
	return *f.dialog, true, nil
}

func (f *dialogSessionsFake) AnswerDialog(_ context.Context, key, hash string, choice int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dialog == nil || f.dialog.Hash != hash {
		return session.ErrDialogChanged
	}
	f.answered = append(f.answered, fmt.Sprintf("%s %d", key, choice))
	f.dialog = nil
	return nil
}

// The auto-mode nudge (a dialog no hook reports) is a pending "dialog"
// with its choices; claude_respond presses the one named, once.
func TestDialogIsAPendingQuestionAnsweredWithRespond(t *testing.T) {
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := config.Parse("")
	sessions := &dialogSessionsFake{fakeSessions: &fakeSessions{store: store}}
	srv := New(Options{Config: cfg, Store: store, Sessions: sessions, ClaudeHome: t.TempDir()})
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := sdk.NewInMemoryTransports()
	done := make(chan struct{})
	go func() { _ = srv.Run(ctx, st); close(done) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(); cancel(); <-done })
	h := &harness{store: store, sessions: sessions.fakeSessions, srv: srv, cs: cs}
	key, sid := h.start(t)

	sessions.mu.Lock()
	sessions.dialog = &session.Dialog{Hash: "00112233aabbccdd", Text: "Make auto mode your default permission mode?",
		Choices: []string{"Yes, set auto mode as my default permission mode", "No, keep manual mode"}}
	sessions.mu.Unlock()
	var out StatusOutput
	h.call(t, "claude_status", map[string]any{"sessionId": sid}, &out)
	p := out.PendingQuestion
	if out.Status != "awaiting_input" || p == nil || p.Type != KindDialog || p.ID != "dialog-00112233aabbccdd" ||
		len(p.Questions) != 1 || len(p.Questions[0].Options) != 2 || !strings.Contains(p.Questions[0].Question, "auto mode") {
		t.Fatalf("status = %+v (%+v)", out, p)
	}
	if text, isErr := h.call(t, "claude_respond", map[string]any{"sessionId": sid, "id": p.ID, "answers": []string{"Maybe"}}, nil); !isErr || !strings.Contains(text, "not a choice") {
		t.Fatalf("a wrong answer: %q", text)
	}
	var res RespondOutput
	if text, isErr := h.call(t, "claude_respond", map[string]any{"sessionId": sid, "id": p.ID, "answers": []string{"No, keep manual mode"}}, &res); isErr || !res.Decided {
		t.Fatalf("respond: %q %+v", text, res)
	}
	if text, isErr := h.call(t, "claude_respond", map[string]any{"sessionId": sid, "id": p.ID, "answers": []string{"No, keep manual mode"}}, nil); !isErr || !strings.Contains(text, "no longer pending") {
		t.Fatalf("a second answer: %q", text)
	}
	if sessions.answered == nil || sessions.answered[0] != key+" 1" || len(sessions.answered) != 1 {
		t.Fatalf("answered %q", sessions.answered)
	}
	var after StatusOutput
	h.call(t, "claude_status", map[string]any{"sessionId": sid}, &after)
	if after.PendingQuestion != nil || after.Status == "awaiting_input" {
		t.Fatalf("still pending: %+v", after)
	}
}

// startDialogSessions stops every start at the trust dialog, before any
// session id exists.
type startDialogSessions struct{ *fakeSessions }

func (f startDialogSessions) Ensure(ctx context.Context, t session.Target) (string, bool, error) {
	t.OnDialog(session.Dialog{Hash: "aa", Text: "Accessing workspace:\n/w", Choices: []string{"No, exit", "Yes, I trust this folder"}})
	<-ctx.Done()
	return "%1", false, ctx.Err()
}

// A Claude that stops at the trust dialog before it has a session id ends
// claude_start at once, naming the dialog; nothing is answered.
func TestStartAtATrustDialogEndsAtOnceNamingIt(t *testing.T) {
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := config.Parse("")
	sessions := startDialogSessions{&fakeSessions{store: store}}
	srv := New(Options{Config: cfg, Store: store, Sessions: sessions, ClaudeHome: t.TempDir()})
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := sdk.NewInMemoryTransports()
	done := make(chan struct{})
	go func() { _ = srv.Run(ctx, st); close(done) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(); cancel(); <-done })
	h := &harness{store: store, sessions: sessions.fakeSessions, srv: srv, cs: cs}
	text, isErr := h.call(t, "claude_start", map[string]any{"prompt": "hi", "workingDirectory": t.TempDir()}, nil)
	if !isErr || !strings.Contains(text, "Accessing workspace:") || !strings.Contains(text, "Yes, I trust this folder") || !strings.Contains(text, "never answers it for you") {
		t.Fatalf("claude_start = %q", text)
	}
	if got := sessions.deliveredTexts(); len(got) != 0 {
		t.Fatalf("delivered %q", got)
	}
}

// claude_respond presses a dialog only in a session this server started:
// a Discord session's dialog, found by its Claude session id, is the
// Discord channel's to answer (security-3 finding 1).
func TestRespondRefusesADiscordSessionsDialog(t *testing.T) {
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := config.Parse("")
	sessions := &dialogSessionsFake{fakeSessions: &fakeSessions{store: store}}
	srv := New(Options{Config: cfg, Store: store, Sessions: sessions, ClaudeHome: t.TempDir()})
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := sdk.NewInMemoryTransports()
	done := make(chan struct{})
	go func() { _ = srv.Run(ctx, st); close(done) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(); cancel(); <-done })
	h := &harness{store: store, sessions: sessions.fakeSessions, srv: srv, cs: cs}
	if _, err := store.Sessions.Update(ctx, "srv-proj", func(s *state.Session) error {
		s.ClaudeSessionID, s.Cwd, s.PaneID = "discord-sid", t.TempDir(), "%7"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sessions.mu.Lock()
	sessions.dialog = &session.Dialog{Hash: "00112233aabbccdd", Text: "Make auto mode your default permission mode?",
		Choices: []string{"Yes, set auto mode as my default permission mode", "No, keep manual mode"}}
	sessions.mu.Unlock()
	text, isErr := h.call(t, "claude_respond", map[string]any{"sessionId": "discord-sid", "id": "dialog-00112233aabbccdd", "answers": []string{"1"}}, nil)
	if !isErr || !strings.Contains(text, "no pending question") {
		t.Fatalf("claude_respond = %q (error %v)", text, isErr)
	}
	sessions.mu.Lock()
	defer sessions.mu.Unlock()
	if len(sessions.answered) != 0 {
		t.Fatalf("answered %q", sessions.answered)
	}
}
