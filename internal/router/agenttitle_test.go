package router

import (
	"errors"
	"strings"
	"testing"
	"time"

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
