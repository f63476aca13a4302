package router

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/session"
)

// What the router says about a project's agent names it as the core hands
// it (Options.AgentTitle), not "Claude": a Codex project's start failure,
// its wait on a prompt and its terminal dialogs say Codex (issue 29).
func TestNoticesNameTheProjectsAgent(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	r.opt.AgentTitle = func(p config.Project) string {
		if p.Name == "api" {
			return "Codex"
		}
		return "Claude"
	}
	ss.dialogs = 1
	r.HandleMessage(msg("after the dialog"))
	l.waitFor(t, "react m1 ✅")
	if !has(l.all(), "send ⏳ Codex is waiting on a prompt") {
		t.Errorf("wait notice: ops = %q", l.all())
	}
	if got := startFailure(r.agentTitle("home", "api"), session.Target{Dir: "/w"}, errors.New("boom")); !strings.HasPrefix(got, "⚠️ Could not start Codex in `/w`") {
		t.Errorf("start failure = %q", got)
	}
	if m := dialogMessage("inst1", "home-api", "Codex", session.Dialog{Text: "Trust?", Choices: []string{"Yes", "No"}}, time.Now()); !strings.HasPrefix(m.Content, "❓ Codex is asking this in its terminal") {
		t.Errorf("dialog = %q", m.Content)
	}
}

func has(ops []string, prefix string) bool {
	for _, op := range ops {
		if strings.HasPrefix(op, prefix) {
			return true
		}
	}
	return false
}

// The answers of /thread, /stop, and of a command with no session running,
// name the project's agent (issue 29): a Codex project's say Codex.
func TestCommandAnswersNameTheProjectsAgent(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	r.opt.AgentTitle = func(config.Project) string { return "Codex" }
	answer := func(name string, opts map[string]string) string {
		t.Helper()
		r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: name, Options: opts}, fakeResponder{l: l})
		ops := l.all()
		return ops[len(ops)-1]
	}
	if got := answer("thread", map[string]string{"name": "side"}); !strings.Contains(got, "its messages go to a Codex session of their own.") {
		t.Errorf("/thread: %s", got)
	}
	if got := answer("stop", nil); !strings.Contains(got, "⏹ Interrupted Codex. Send a message to continue.") {
		t.Errorf("/stop: %s", got)
	}
	ss.noPane = true
	if got := answer("new", nil); !strings.Contains(got, "No Codex session is running in this channel. Send a message to start one.") {
		t.Errorf("/new without a session: %s", got)
	}
}
