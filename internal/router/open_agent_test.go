package router

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

// agentsAsTheDaemonNamesThem are the core's answers for an agent the
// router never learns: its name for people and how a person resumes one
// of its conversations in a terminal.
func agentsAsTheDaemonNamesThem(r *Router) {
	r.opt.AgentTitle = func(p config.Project) string {
		if p.AgentName() == config.AgentCodex {
			return "Codex"
		}
		return "Claude"
	}
	r.opt.ResumeHint = func(p config.Project, id string) string {
		if p.AgentName() == config.AgentCodex {
			return "codex resume " + id
		}
		return "claude --resume " + id
	}
}

// /open runs the agent of the project whose channel it ran in (issue 29):
// in a Codex project's channel the folder's session is a Codex one, its
// notices say so, and it stays one after a restart; /close names Codex's
// way to resume. In the panel channel (no project) it runs the default.
func TestOpenRunsTheChannelsProjectAgent(t *testing.T) {
	f := newOpenRouterWith(t, true, "", `  agent = "codex"`)
	agentsAsTheDaemonNamesThem(f.r)
	dir := filepath.Join(f.root, "api")
	f.command(channel, "", openName, map[string]string{"path": "api"})
	key := session.ThreadKey("home", session.OpenedProject, openedID)
	f.l.waitFor(t, "send 🟢 Codex is running in `"+dir+"`. Write here to talk to it.")
	if got := f.lastEdit(t); !strings.Contains(got, "its messages go to a Codex session started there") {
		t.Fatalf("answer: %s", got)
	}
	if tt := f.ss.last(t); tt.Agent != config.AgentCodex || tt.Dir != dir {
		t.Fatalf("target = %+v", tt)
	}
	if o, err := f.reg.Opened.Get(openedID); err != nil || o.Agent != config.AgentCodex {
		t.Fatalf("record = %+v, %v", o, err)
	}

	again := f.start(t)
	agentsAsTheDaemonNamesThem(again)
	ev := msg("after the restart")
	ev.ChannelID, ev.ParentID = openedID, channel
	again.HandleMessage(ev)
	f.l.waitFor(t, `deliver `+key+` "after the restart"`)
	if tt := f.ss.last(t); tt.Agent != config.AgentCodex {
		t.Fatalf("after a restart the target = %+v", tt)
	}

	if _, err := f.reg.Sessions.Update(context.Background(), key, func(g *state.Registered) error { g.ClaudeSessionID = "abc-123"; return nil }); err != nil {
		t.Fatal(err)
	}
	again.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: openedID, ParentID: channel, User: chat.User{ID: owner}, Name: closeName}, fakeResponder{l: f.l})
	f.l.waitFor(t, "stop "+key)
	if got := f.lastEdit(t); !strings.Contains(got, "Codex stopped") || !strings.Contains(got, "`codex resume abc-123`") {
		t.Fatalf("/close answer: %s", got)
	}
}

// In the panel channel, which is no project's, /open runs the default
// agent, and says Claude as before.
func TestOpenInThePanelRunsTheDefaultAgent(t *testing.T) {
	f := newOpenRouterWith(t, true, "", `  agent = "codex"`)
	agentsAsTheDaemonNamesThem(f.r)
	f.command(panelChannel, "", openName, map[string]string{"path": "web"})
	f.l.waitFor(t, "send 🟢 Claude is running in `"+filepath.Join(f.root, "web")+"`. Write here to talk to it.")
	if tt := f.ss.last(t); tt.Agent != config.AgentClaude {
		t.Fatalf("target = %+v", tt)
	}
}
