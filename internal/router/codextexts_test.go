package router

import (
	"slices"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
)

// codexRouter is newRouter whose project runs Codex, named as the core
// names it.
func codexRouter(t *testing.T) (*Router, *fakeSessions, *log) {
	t.Helper()
	r, ss, _, l, _ := newRouter(t)
	cfg := *r.conf()
	cfg.Servers = slices.Clone(cfg.Servers)
	cfg.Servers[0].Projects = slices.Clone(cfg.Servers[0].Projects)
	cfg.Servers[0].Projects[0].Agent = config.AgentCodex
	r.Reconfigure(&cfg)
	r.opt.AgentTitle = func(p config.Project) string {
		if p.AgentName() == config.AgentCodex {
			return "Codex"
		}
		return "Claude"
	}
	return r, ss, l
}

// /stop, /status and a command with no session say Codex in a Codex
// project (issue 29); a Claude project's wording is unchanged.
func TestCommandsNameTheProjectsAgent(t *testing.T) {
	r, ss, _ := codexRouter(t)
	tg := target{key: "home-api", rt: r.routeTable()[channel]}
	run := func(name string) string { return r.runCommand(chat.CommandEvent{Name: name}, tg).Content }
	if got := run("stop"); got != "⏹ Interrupted Codex. Send a message to continue." {
		t.Errorf("/stop = %q", got)
	}
	ss.state = "stopped"
	if got := run("status"); !strings.HasSuffix(got, "Send a message to start Codex.") {
		t.Errorf("/status = %q", got)
	}
	ss.noPane = true
	if got := run("stop"); got != "No Codex session is running in this channel. Send a message to start one." {
		t.Errorf("/stop without a session = %q", got)
	}

	claude, cs, _, _, _ := newRouter(t)
	ctg := target{key: "home-api", rt: claude.routeTable()[channel]}
	if got := claude.runCommand(chat.CommandEvent{Name: "stop"}, ctg).Content; got != "⏹ Interrupted Claude. Send a message to continue." {
		t.Errorf("Claude's /stop = %q", got)
	}
	cs.noPane = true
	if got := claude.runCommand(chat.CommandEvent{Name: "stop"}, ctg).Content; got != "No Claude session is running in this channel. Send a message to start one." {
		t.Errorf("Claude's /stop without a session = %q", got)
	}
}
