//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// claudeHome is the HOME the bridge's Claude runs with (see newBridge).
func (b *bridge) claudeHome() string { return filepath.Join(filepath.Dir(b.cfg), "home") }

// untrust removes every folder's trust from Claude's own config, as on a
// machine where the project was never opened in Claude Code.
func (b *bridge) untrust() {
	b.t.Helper()
	f := filepath.Join(b.claudeHome(), ".claude.json")
	raw, err := os.ReadFile(f)
	if err != nil {
		b.t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		b.t.Fatal(err)
	}
	cfg["projects"] = map[string]any{}
	raw, _ = json.Marshal(cfg)
	if err := os.WriteFile(f, raw, 0o600); err != nil {
		b.t.Fatal(err)
	}
}

// dialogChoice waits for the posted dialog whose text holds want and
// returns it with the custom_id of its choice labelled label.
func (b *bridge) dialogChoice(p *project, want, label string) (*fakediscord.Message, string) {
	b.t.Helper()
	msg := b.srv.WaitMessage(40*time.Second, "the dialog "+want, func(m *fakediscord.Message) bool {
		return m.ChannelID == p.channel && m.Author.Bot && strings.Contains(m.Content, p.agentSays()+" is asking this in its terminal") && strings.Contains(m.Content, want)
	})
	var id string
	for _, row := range msg.Components {
		comps, _ := row["components"].([]any)
		for _, c := range comps {
			if btn, ok := c.(map[string]any); ok && btn["label"] == label {
				id, _ = btn["custom_id"].(string)
			}
		}
	}
	if id == "" {
		b.t.Fatalf("no %q choice on %q (%v)", label, msg.Content, msg.Components)
	}
	return msg, id
}

// answerDialog clicks a dialog's choice as the owner and waits for the
// message to say it was answered.
func (b *bridge) answerDialog(msg *fakediscord.Message, id string) {
	b.t.Helper()
	b.srv.WaitResponse(b.srv.Click(msg.ID, id, b.owner), 5*time.Second)
	b.srv.WaitMessage(20*time.Second, "the dialog answered", func(m *fakediscord.Message) bool {
		return m.ID == msg.ID && (strings.Contains(m.Content, "✅ Answered") || strings.Contains(m.Content, "⚠️"))
	})
	if cur, _ := b.srv.Message(msg.ID); !strings.Contains(cur.Content, "✅ Answered") {
		b.t.Fatalf("the dialog was not answered: %q", cur.Content)
	}
}

// A project folder Claude Code never trusted: the trust dialog ("No, exit"
// highlighted, where Enter would exit Claude) is posted by itself with its
// choices; nothing is answered until the owner picks one, then the first
// message goes in.
func TestDialogTrustIsPostedAndAnsweredFromDiscord(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	b.untrust()
	p := b.projects[0]
	first := b.say(p, "hello after trust")
	start := time.Now()
	msg, yes := b.dialogChoice(p, "Quick safety check", "Yes, I trust this folder")
	t.Logf("trust dialog posted in %s", time.Since(start))
	if _, no := b.dialogChoice(p, "Quick safety check", "No, exit"); no == "" {
		t.Fatal("unreachable")
	}
	// Posted and waiting: the pane still shows the dialog, unanswered.
	time.Sleep(2 * time.Second)
	if screen, _ := b.tmux.Capture(t.Context(), b.panes()[0].ID, 0); !strings.Contains(screen, "❯ No, exit") {
		t.Fatalf("the dialog is not waiting for its person:\n%s", screen)
	}
	b.answerDialog(msg, yes)
	b.waitReply(p, "ok: hello after trust")
	b.waitReaction(first, "✅")
}

// A user whose settings name defaultMode "default" gets Claude Code's
// one-time auto-mode nudge; it is posted, answered "No" from Discord, the
// first message then goes in, and the user's settings are as they were.
func TestDialogAutoModeNudgeIsPostedAndTheSettingsStay(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	settings := filepath.Join(b.claudeHome(), ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
		t.Fatal(err)
	}
	orig := []byte("{\n  \"permissions\": { \"defaultMode\": \"default\" }\n}\n")
	if err := os.WriteFile(settings, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	p := b.projects[0]
	first := b.say(p, "hello after the nudge")
	msg, no := b.dialogChoice(p, "Make auto mode your default permission mode?", "No, keep manual mode")
	b.answerDialog(msg, no)
	b.waitReply(p, "ok: hello after the nudge")
	b.waitReaction(first, "✅")
	if now, err := os.ReadFile(settings); err != nil || !bytes.Equal(now, orig) {
		t.Fatalf("the user's settings changed:\n%s\n(%v)", now, err)
	}
}

// Over MCP the same nudge is a pending "dialog" with its choices, answered
// with claude_respond; the first message then goes in, and the user's
// settings stay as they were.
func TestDialogAutoModeNudgeOverMCP(t *testing.T) {
	t.Parallel()
	e := newMCP(t, nil)
	settings := filepath.Join(e.home, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
		t.Fatal(err)
	}
	orig := []byte(`{"permissions":{"defaultMode":"default"}}`)
	if err := os.WriteFile(settings, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	sid := e.start("hello behind the nudge", nil)
	p := e.waitPending(sid, "dialog")
	if len(p.Questions) != 1 || !strings.Contains(p.Questions[0].Question, "Make auto mode your default permission mode?") ||
		len(p.Questions[0].Options) != 2 || p.Questions[0].Options[1] != "No, keep manual mode" {
		t.Fatalf("pending dialog = %+v", p)
	}
	if err := e.respond(sid, p.ID, "No, keep manual mode"); err != nil {
		t.Fatal(err)
	}
	e.waitIdle(sid, "ok: hello behind the nudge")
	if now, err := os.ReadFile(settings); err != nil || !bytes.Equal(now, orig) {
		t.Fatalf("the user's settings changed:\n%s\n(%v)", now, err)
	}
}

// Over MCP, a folder Claude Code never trusted stops claude_start at once
// with the trust dialog named (there is no session id before it is
// answered); ccbridge answers nothing and leaves the pane to the person.
func TestDialogTrustOverMCPIsNamedAtOnce(t *testing.T) {
	t.Parallel()
	e := newMCP(t, nil)
	dir := filepath.Join(filepath.Dir(e.dir), "never-trusted")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := e.call("claude_start", map[string]any{"prompt": "hello", "workingDirectory": dir, "permissionMode": "default"}, nil)
	if err == nil || !strings.Contains(err.Error(), "Accessing workspace:") || !strings.Contains(err.Error(), "Yes, I trust this folder") {
		t.Fatalf("claude_start = %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("took %s", d)
	}
	panes, _ := e.tmux.ListPanes(t.Context())
	if len(panes) != 1 {
		t.Fatalf("panes = %+v", panes)
	}
	if screen, _ := e.tmux.Capture(t.Context(), panes[0].ID, 0); !strings.Contains(screen, "❯ No, exit") {
		t.Fatalf("the dialog was touched:\n%s", screen)
	}
}
