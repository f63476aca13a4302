package mcp

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/state"
)

// claude_interrupt on a session with no turn running leaves it as it is:
// not "interrupted" in claude_status (issue 20 item 9).
func TestInterruptOfAnIdleSessionLeavesItIdle(t *testing.T) {
	h := newHarness(t, nil)
	_, sid := h.start(t)
	var out InterruptOutput
	if text, isErr := h.call(t, "claude_interrupt", map[string]any{"sessionId": sid}, &out); isErr || out.Status != "idle" {
		t.Fatalf("claude_interrupt = %q %+v", text, out)
	}
	var st StatusOutput
	if h.call(t, "claude_status", map[string]any{"sessionId": sid}, &st); st.Status == "interrupted" {
		t.Fatalf("an idle session reads %q after claude_interrupt", st.Status)
	}
}

// The client is told ccbridge's version, which tools only read and which
// one destroys work, and the permission modes claude_start takes; a mode
// Claude Code does not have is refused before anything starts.
func TestServerInfoAnnotationsAndModes(t *testing.T) {
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := config.Parse("")
	srv := New(Options{Config: cfg, Store: store, Sessions: &fakeSessions{store: store}, ClaudeHome: t.TempDir(), Version: "1.2.3-test"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, ct := sdk.NewInMemoryTransports()
	go func() { _ = srv.Run(ctx, st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ServerInfo.Version; v != "1.2.3-test" {
		t.Errorf("serverInfo.version = %q", v)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		a := tool.Annotations
		switch tool.Name {
		case "claude_status", "claude_list":
			if a == nil || !a.ReadOnlyHint {
				t.Errorf("%s is not marked read-only: %+v", tool.Name, a)
			}
		case "claude_interrupt":
			if a == nil || a.DestructiveHint == nil || !*a.DestructiveHint {
				t.Errorf("claude_interrupt is not marked destructive: %+v", a)
			}
		case "claude_start":
			schema, _ := tool.InputSchema.(map[string]any)
			props, _ := schema["properties"].(map[string]any)
			mode, _ := props["permissionMode"].(map[string]any)
			enum, _ := mode["enum"].([]any)
			var got []string
			for _, e := range enum {
				got = append(got, e.(string))
			}
			// The modes, and manual: the CLI's word for default.
			if want := append(slices.Clone(config.PermissionModes), "manual"); !slices.Equal(got, want) {
				t.Errorf("permissionMode enum = %v, want %v", got, want)
			}
		}
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "claude_start", Arguments: map[string]any{"prompt": "hi", "workingDirectory": t.TempDir(), "permissionMode": "yolo"}})
	if err != nil || !res.IsError {
		t.Fatalf("a made-up mode was taken: %v %+v", err, res)
	}
	// In plain words, not the schema validator's.
	text := res.Content[0].(*sdk.TextContent).Text
	if want := `permissionMode "yolo" is not a permission mode; use one of default (or manual), acceptEdits, plan, auto, bypassPermissions, dontAsk`; text != want {
		t.Errorf("refusal:\n%s\nwant:\n%s", text, want)
	}
	if all, _ := store.Sessions.List(); len(all) != 0 {
		t.Errorf("a session was started with a made-up mode: %v", all)
	}
}

// claude_say to the conversation of a Discord session (its pane gone, its
// record still there) is refused: the Discord session resumes it on its
// next message, and two Claudes would write one transcript
// (security-2.md finding 16).
func TestSayToADiscordConversationIsRefused(t *testing.T) {
	h := newHarness(t, nil)
	if _, err := h.store.Sessions.Update(context.Background(), "srv-proj", func(s *state.Session) error {
		s.ClaudeSessionID, s.Cwd = "discord-sid", t.TempDir()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	h.sessions.mu.Lock()
	h.sessions.stopped = map[string]bool{"srv-proj": true}
	h.sessions.mu.Unlock()
	text, isErr := h.call(t, "claude_say", map[string]any{"sessionId": "discord-sid", "message": "hello"}, nil)
	if !isErr || !strings.Contains(text, "two Claudes") {
		t.Fatalf("claude_say = %q (error %v)", text, isErr)
	}
	if all, _ := h.store.Sessions.List(); len(all) != 1 {
		t.Errorf("a session was resumed: %v", all)
	}
	if d := h.sessions.deliveredTexts(); len(d) != 0 {
		t.Errorf("delivered: %q", d)
	}
}

// Stopped (SIGTERM) with a claude_say queued behind a dialog, the server
// loses nothing: the message is spooled, and the next server delivers it
// before anything else (issue 18 item 4).
func TestStopSpoolsAQueuedMessageForTheNextServer(t *testing.T) {
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := config.Parse("")
	home := t.TempDir()
	sessions := &fakeSessions{store: store, dialogs: 1 << 20}
	srv := New(Options{Config: cfg, Store: store, Sessions: sessions, ClaudeHome: home})
	ctx, signal := context.WithCancel(context.Background())
	st, ct := sdk.NewInMemoryTransports()
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(ctx, st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	h := &harness{store: store, sessions: sessions, srv: srv, cs: cs}
	// The start's own prompt is queued behind the dialog too.
	var out StartOutput
	if text, isErr := h.call(t, "claude_start", map[string]any{"prompt": "first", "workingDirectory": t.TempDir()}, &out); isErr {
		t.Fatal(text)
	}
	var say SayOutput
	if text, isErr := h.call(t, "claude_say", map[string]any{"sessionId": out.SessionID, "message": "second"}, &say); isErr || !say.Queued {
		t.Fatalf("claude_say = %q %+v", text, say)
	}
	signal()
	select {
	case err := <-ran:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Second):
		t.Fatal("Run did not return after the signal")
	}
	if d := sessions.deliveredTexts(); len(d) != 0 {
		t.Fatalf("delivered before the stop: %q", d)
	}
	if files, _ := os.ReadDir(srv.spoolDir()); len(files) != 1 {
		t.Fatalf("spool: %v", files)
	}

	// The next server, the dialog closed, delivers both, in order, once.
	next := &fakeSessions{store: store}
	srv2 := New(Options{Config: cfg, Store: store, Sessions: next, ClaudeHome: home})
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	st2, ct2 := sdk.NewInMemoryTransports()
	go func() { _ = srv2.Run(ctx2, st2) }()
	cs2, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx2, ct2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs2.Close()
	deadline := time.Now().Add(5 * time.Second)
	for len(next.deliveredTexts()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if d := next.deliveredTexts(); !slices.Equal(d, []string{"first", "second"}) {
		t.Fatalf("the next server delivered %q", d)
	}
	if files, _ := os.ReadDir(srv.spoolDir()); len(files) != 0 {
		t.Errorf("spool left: %v", files)
	}
}

// blockingSessions holds every Deliver until released: a pane whose lock
// another process holds.
type blockingSessions struct {
	*fakeSessions
	release chan struct{}
}

func (b blockingSessions) Deliver(ctx context.Context, key, text string) (time.Time, error) {
	<-b.release
	return b.fakeSessions.Deliver(ctx, key, text)
}

// A message still being typed when the server stops is spooled as
// unsure: the next server types it only if Claude never received it, so
// it is neither lost nor typed twice.
func TestStopSpoolsAMessageBeingTypedAsUnsure(t *testing.T) {
	for _, received := range []bool{true, false} {
		store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
		if err != nil {
			t.Fatal(err)
		}
		cfg, _ := config.Parse("")
		blocked := blockingSessions{&fakeSessions{store: store}, make(chan struct{})}
		srv := New(Options{Config: cfg, Store: store, Sessions: blocked, ClaudeHome: t.TempDir()})
		go func() { _, _ = srv.deliver(context.Background(), KeyPrefix+"0123456789abcdef", "held at the lock") }()
		deadline := time.Now().Add(5 * time.Second)
		for {
			srv.mu.Lock()
			typing := len(srv.sends[KeyPrefix+"0123456789abcdef"]) == 1 && srv.sends[KeyPrefix+"0123456789abcdef"][0].typing
			srv.mu.Unlock()
			if typing {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the message never started being typed")
			}
			time.Sleep(time.Millisecond)
		}
		// Stopping never waits for the delivery it interrupts (Claude Code
		// kills an MCP server ~500 ms after SIGINT); how fast it is, is
		// BenchmarkStopWithAMessageBeingTyped's.
		stopped := make(chan struct{})
		go func() { srv.stop(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(5 * time.Second):
			t.Fatal("stop waited for the message being typed")
		}
		close(blocked.release)

		next := &fakeSessions{store: store, noReceipt: !received}
		srv2 := New(Options{Config: cfg, Store: store, Sessions: next, ClaudeHome: t.TempDir()})
		srv2.deliverSpooled()
		want := []string{"held at the lock"}
		if received {
			want = nil
		}
		deadline = time.Now().Add(5 * time.Second)
		for len(next.deliveredTexts()) < len(want) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond) // nothing more comes
		if got := next.deliveredTexts(); !slices.Equal(got, want) {
			t.Errorf("received before=%v: the next server typed %q, want %q", received, got, want)
		}
	}
}

// BenchmarkStopWithAMessageBeingTyped times stop (spooling included, fsync
// and all) with a message held at another process's pane lock: Claude Code
// gives an MCP server about 100 ms after SIGTERM.
func BenchmarkStopWithAMessageBeingTyped(b *testing.B) {
	cfg, _ := config.Parse("")
	for b.Loop() {
		b.StopTimer()
		store, err := state.OpenStore(filepath.Join(b.TempDir(), "rt"))
		if err != nil {
			b.Fatal(err)
		}
		blocked := blockingSessions{&fakeSessions{store: store}, make(chan struct{})}
		srv := New(Options{Config: cfg, Store: store, Sessions: blocked, ClaudeHome: b.TempDir()})
		go func() { _, _ = srv.deliver(context.Background(), KeyPrefix+"0123456789abcdef", "held at the lock") }()
		for {
			srv.mu.Lock()
			typing := len(srv.sends[KeyPrefix+"0123456789abcdef"]) == 1 && srv.sends[KeyPrefix+"0123456789abcdef"][0].typing
			srv.mu.Unlock()
			if typing {
				break
			}
			time.Sleep(time.Millisecond)
		}
		b.StartTimer()
		srv.stop()
		b.StopTimer()
		close(blocked.release)
		b.StartTimer()
	}
}

// TestReview3SpooledMessageHasNoAge: a spooled message older than
// catch_up is never typed; the session's next claude_status or claude_say
// reports it as undelivered, with its age. A fresh one is typed.
func TestReview3SpooledMessageHasNoAge(t *testing.T) {
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := config.Parse("")
	key := KeyPrefix + "0123456789abcdef"
	old := New(Options{Config: cfg, Store: store, Sessions: &fakeSessions{store: store}, ClaudeHome: t.TempDir()})
	now := time.Now()
	if err := old.writeSpool(key, []spooledMsg{
		{Text: "now run the migration against prod", Given: now.Add(-30 * 24 * time.Hour)},
		{Text: "and tell me when done", Given: now.Add(-time.Minute)},
	}); err != nil {
		t.Fatal(err)
	}
	next := &fakeSessions{store: store}
	srv := New(Options{Config: cfg, Store: store, Sessions: next, ClaudeHome: t.TempDir()})
	srv.deliverSpooled()
	deadline := time.Now().Add(5 * time.Second)
	for len(next.deliveredTexts()) < 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // nothing more comes
	if got := next.deliveredTexts(); !slices.Equal(got, []string{"and tell me when done"}) {
		t.Errorf("typed %q, want the fresh message alone", got)
	}
	got := srv.takeUndelivered(key)
	if len(got) != 1 || !strings.Contains(got[0], `"now run the migration against prod"`) || !strings.Contains(got[0], "given 30 days ago; not typed") {
		t.Errorf("undelivered = %q", got)
	}
}
