package daemon

import (
	"github.com/ccbridge/ccbridge/internal/agent/claude"
	"github.com/ccbridge/ccbridge/internal/agent/codex"
	"github.com/ccbridge/ccbridge/internal/config"
)

// agentTitle names a project's agent for people, as its adapter does
// ("Claude", "Codex"): the router says it in its notices without
// learning which agent runs.
func agentTitle(p config.Project) string { return speaker(p.AgentName()) }

// speaker names an agent the config or a session's record names ("" is
// Claude) for people.
func speaker(agent string) string {
	if agent == config.AgentCodex {
		return codex.Codex{}.Speaker()
	}
	return claude.Claude{}.Speaker()
}

// resumeHint is how a person continues a conversation of p's agent in a
// terminal.
func resumeHint(p config.Project, id string) string {
	if p.AgentName() == config.AgentCodex {
		return "codex resume " + id
	}
	return "claude --resume " + id
}
