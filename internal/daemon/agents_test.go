package daemon

import (
	"testing"

	"github.com/ccbridge/ccbridge/internal/config"
)

// The router names a Codex project's agent as Codex CLI, any other's as
// Claude Code (issue 29).
func TestAgentTitleIsTheAdapters(t *testing.T) {
	for agent, want := range map[string]string{"": "Claude Code", config.AgentClaude: "Claude Code", config.AgentCodex: "Codex CLI"} {
		if got := agentTitle(config.Project{Agent: agent}); got != want {
			t.Errorf("agentTitle(%q) = %q, want %q", agent, got, want)
		}
	}
}
