//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/testutil/claudetest"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
	"github.com/ccbridge/ccbridge/internal/testutil/tmuxtest"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// dialogAfterPaste is the real tmux driver with one twist: right after the
// first paste it lets Claude's permission dialog open (by releasing the
// PreToolUse hook that holds it back) and waits until the dialog is on the
// screen. What the session manager does next is what it does when a
// dialog opens between its paste and its Enter.
type dialogAfterPaste struct {
	*tmux.Server
	t       *testing.T
	pane    string
	release string
	done    bool
}

func (d *dialogAfterPaste) opened() {
	if d.done {
		return
	}
	d.done = true
	if err := os.WriteFile(d.release, nil, 0o600); err != nil {
		d.t.Error(err)
	}
	tmuxtest.WaitScreen(d.t, d.Server, d.pane, "Do you want to proceed?", long)
}

func (d *dialogAfterPaste) PasteTextIf(ctx context.Context, pane string, g tmux.Guard, text string) error {
	err := d.Server.PasteTextIf(ctx, pane, g, text)
	d.opened()
	return err
}

// A real Claude Code permission dialog opens between ccbridge's paste and
// its Enter: the Enter must not reach it (Enter picks "1. Yes", and the
// command would run unapproved).
func TestSessionEnterNeverAnswersADialogThatOpensAfterThePaste(t *testing.T) {
	t.Parallel()
	srv := tmuxtest.New(t)
	model := fakemodel.New(t)
	dir := t.TempDir()
	canary := filepath.Join(dir, "canary")
	started, release := filepath.Join(dir, "hook-started"), filepath.Join(dir, "hook-release")
	model.Script("make the canary", fakemodel.Tool("", "Bash", map[string]any{"command": "touch " + canary, "description": "Make the canary"}))
	// A PreToolUse hook holds the tool call back until the test releases
	// it; then Claude asks for permission.
	hold := fmt.Sprintf("touch %s; while [ ! -e %s ]; do sleep 0.05; done", started, release)
	settings := fmt.Sprintf(`{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":%q,"timeout":120}]}]}}`, hold)
	c := claudetest.Start(t, claudetest.Options{Tmux: srv, Session: "race", Dir: dir, ModelURL: model.URL, Settings: []byte(settings)})

	m, key := managerFor(t, srv, c.Pane)
	ctx := context.Background()
	if _, err := m.Deliver(ctx, key, "make the canary"); err != nil {
		t.Fatal(err)
	}
	waitFile(t, started)

	// Claude is busy in the hook with its input box shown: a message typed
	// now is pasted into the box, and then the dialog opens.
	m, _ = managerFor(t, &dialogAfterPaste{Server: srv, t: t, pane: c.Pane, release: release}, c.Pane)
	_, err := m.Deliver(ctx, key, "a message sent while Claude works")
	if !errors.Is(err, session.ErrDialogOpen) {
		t.Errorf("Deliver = %v, want ErrDialogOpen", err)
	}

	// Answer the dialog "No" (Escape): if ccbridge's Enter had approved
	// it, the command ran and its result went to the model instead.
	screen, _ := srv.Capture(ctx, c.Pane, 0)
	if !strings.Contains(screen, "Do you want to proceed?") {
		t.Fatalf("the dialog is gone (answered by ccbridge's Enter?); screen:\n%s", screen)
	}
	if err := srv.SendKeysIf(ctx, c.Pane, tmux.Guard{With: []string{"Do you want to proceed?"}}, tmux.KeyEscape); err != nil {
		t.Fatalf("answering No: %v", err)
	}
	deadline := time.Now().Add(long)
	for {
		for _, r := range model.Requests() {
			if len(r.ToolResults) > 0 && !r.ToolResults[0].IsError {
				t.Fatalf("the command ran: Enter approved the dialog (tool result %q)", r.ToolResults[0].Content)
			}
		}
		if s, _ := srv.Capture(ctx, c.Pane, 0); strings.Contains(s, "Interrupted") && !strings.Contains(s, "Do you want to proceed?") {
			break
		}
		if time.Now().After(deadline) {
			s, _ := srv.Capture(ctx, c.Pane, 0)
			t.Fatalf("the dialog was never answered No; screen:\n%s", s)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("the unapproved command ran")
	}
	// End Claude before its HOME is removed.
	if err := m.Stop(ctx, key); err != nil {
		t.Fatal(err)
	}
}

// managerFor returns a session manager driving an existing Claude pane
// under the session key "e2e-race".
func managerFor(t *testing.T, panes session.Panes, pane string) (*session.Manager, string) {
	t.Helper()
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(`
[[servers]]
name = "e2e"
token_env = "X"
guild_id = "100000000000000001"
owner_ids = ["100000000000000002"]
  [[servers.projects]]
  name = "race"
  channel_id = "100000000000000003"
  path = "/tmp"
`)
	if err != nil {
		t.Fatal(err)
	}
	const key = "e2e-race"
	if _, err := store.Sessions.Update(context.Background(), key, func(s *state.Session) error { s.PaneID = pane; return nil }); err != nil {
		t.Fatal(err)
	}
	m, err := session.New(session.Options{Config: cfg, Store: store, Panes: panes, HookStop: "/bin/true", HookPretool: "/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	return m, key
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(long)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// command runs a slash command and waits for its answer containing want.
func (b *bridge) command(p *project, name string, opts map[string]any, want string) *fakediscord.Message {
	b.t.Helper()
	it := b.srv.Command(p.channel, name, b.owner, opts)
	r := b.srv.WaitResponse(it, 5*time.Second)
	return b.srv.WaitMessage(long, "the /"+name+" answer containing "+want, func(m *fakediscord.Message) bool {
		return m.ID == r.OriginalID && strings.Contains(m.Content, want)
	})
}

// /model on a cached conversation: Claude asks "Switch model?", ccbridge
// answers it, and the next message uses the new model.
func TestSessionModelSwitchesACachedConversation(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	b.model.ReportCache(true)
	p := b.projects[0]
	b.say(p, "a cached conversation")
	b.waitReply(p, "ok: a cached conversation")
	b.command(p, "model", map[string]any{"name": "sonnet"}, "Model: sonnet")
	b.say(p, "which model now")
	r := b.model.WaitRequest(t, long, "a request after /model", func(r fakemodel.Request) bool { return strings.HasSuffix(r.LastUserText, "which model now") })
	if !strings.Contains(r.Model, "sonnet") {
		t.Fatalf("model after /model sonnet = %q", r.Model)
	}
	b.waitReply(p, "which model now")
}

// /screen after a short conversation shows its last reply and the input
// box in one message, without the tall blank region or tmux hints.
func TestSessionScreenShowsTheLastReply(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.say(p, "hello screen")
	b.waitReply(p, "ok: hello screen")
	// The reply is posted from Claude's Stop, which can come before Claude
	// has drawn it (and ended its turn) on its screen.
	tmuxtest.WaitScreen(t, b.tmux, b.pane(p), "● ok: hello screen", 30*time.Second)
	screen := b.command(p, "screen", nil, "manual mode on")
	if !strings.Contains(screen.Content, "● ok: hello screen") {
		t.Fatalf("/screen does not show the last reply:\n%s", screen.Content)
	}
	if n := len([]rune(screen.Content)); n > 2000 || strings.Contains(screen.Content, "\n\n\n") || strings.Contains(screen.Content, "focus-events") {
		t.Fatalf("/screen (%d characters) has blank runs or the focus-events hint:\n%s", n, screen.Content)
	}
}

// A daemon killed after starting Claude but before recording its pane:
// the next daemon adopts the pane (it is tagged) instead of starting a
// second Claude in the same directory.
func TestSessionRestartAdoptsAnUnrecordedPane(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.say(p, "before the crash")
	b.waitReply(p, "ok: before the crash")
	b.kill()
	if _, err := b.store.Sessions.Update(context.Background(), p.key, func(s *state.Session) error { s.PaneID = ""; return nil }); err != nil {
		t.Fatal(err)
	}
	b.start()
	b.say(p, "after the crash")
	b.waitReply(p, "ok: after the crash")
	if panes := b.panes(); len(panes) != 1 || panes[0].Tag != p.key {
		t.Fatalf("panes after restart = %+v, want the one tagged %s", panes, p.key)
	}
}

// /mode walks Claude's Shift+Tab cycle one confirmed step at a time and
// answers only when the footer shows the mode.
func TestSessionModeSwitchesTheRunningSession(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.say(p, "hello modes")
	b.waitReply(p, "ok: hello modes")
	b.command(p, "mode", map[string]any{"mode": "plan"}, "Permission mode: plan")
	rec, _ := b.store.Sessions.Get(p.key)
	screen, err := b.tmux.Capture(context.Background(), rec.PaneID, 0)
	if err != nil || session.ModeShown(screen) != "plan" {
		t.Fatalf("footer after /mode plan (%v):\n%s", err, screen)
	}
	b.command(p, "mode", map[string]any{"mode": "default"}, "Permission mode: default")
	screen, _ = b.tmux.Capture(context.Background(), rec.PaneID, 0)
	if session.ModeShown(screen) != "default" {
		t.Fatalf("footer after /mode default:\n%s", screen)
	}
}

// With [claude].command naming nothing on PATH (the usual first-run case
// under a service manager), the first message is answered within seconds,
// naming the command and the PATH, not after start_timeout.
func TestSessionMissingClaudeIsNamedAtOnce(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	b.kill()
	raw, err := os.ReadFile(b.cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := regexp.MustCompile(`(?m)^command = .*$`).ReplaceAllString(string(raw), `command = "claude-not-installed-e2e"`)
	if err := os.WriteFile(b.cfg, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	b.start()
	waitOutput(t, b.out, "claude-not-installed-e2e", 5*time.Second)
	p := b.projects[0]
	start := time.Now()
	b.say(p, "hello")
	msg := b.srv.WaitMessage(20*time.Second, "the start failure", func(m *fakediscord.Message) bool {
		return m.ChannelID == p.channel && m.Author.Bot && strings.Contains(m.Content, "Could not start Claude")
	})
	// Short enough for a phone: the command and what to do, the PATH only
	// in the log.
	if !strings.Contains(msg.Content, `"claude-not-installed-e2e" is not on the PATH the sessions get`) || !strings.Contains(msg.Content, "[claude].command to its full path") ||
		strings.Contains(msg.Content, "PATH=") {
		t.Fatalf("the failure does not name the command and the fix, or carries the PATH: %q", msg.Content)
	}
	waitOutput(t, b.out, "PATH=", 5*time.Second)
	t.Logf("named in %s", time.Since(start))
	if len(b.panes()) != 0 {
		t.Fatalf("panes left: %+v", b.panes())
	}
}

// The daemon (for Discord) and `ccbridge mcp` send into one session at the
// same moment: every message reaches Claude whole, as its own prompt, once.
func TestSessionDaemonAndMCPNeverInterleave(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.say(p, "warm up")
	b.waitReply(p, "ok: warm up")
	sid := b.waitSessionID(p.key)
	e := mcpWithBridge(t, b, nil)
	const each = 4
	var texts []string
	for i := range each {
		texts = append(texts, fmt.Sprintf("from discord number %d", i), fmt.Sprintf("from mcp number %d", i))
	}
	done := make(chan error, 1)
	go func() {
		for i := range each {
			if err := e.call("claude_say", map[string]any{"sessionId": sid, "message": fmt.Sprintf("from mcp number %d", i)}, nil); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for i := range each {
		b.say(p, fmt.Sprintf("from discord number %d", i))
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, text := range texts {
		b.model.WaitRequest(t, long, "a request for "+text, func(r fakemodel.Request) bool { return r.LastUserText == text })
	}
	seen := map[string]int{}
	for _, r := range b.model.Requests() {
		if !strings.Contains(r.LastUserText, " number ") {
			continue
		}
		if !slices.Contains(texts, r.LastUserText) {
			t.Errorf("Claude got a prompt that is not one message: %q", r.LastUserText)
		}
		seen[r.LastUserText]++
	}
	for _, text := range texts {
		if seen[text] == 0 {
			t.Errorf("%q never reached Claude", text)
		}
	}
}
