package daemon

import (
	"testing"

	"github.com/ccbridge/ccbridge/internal/config"
)

// The router names a Codex project's agent as Codex, any other's as
// Claude, as its notices always have (issue 29).
func TestAgentTitleIsTheAdapters(t *testing.T) {
	for agent, want := range map[string]string{"": "Claude", config.AgentClaude: "Claude", config.AgentCodex: "Codex"} {
		if got := agentTitle(config.Project{Agent: agent}); got != want {
			t.Errorf("agentTitle(%q) = %q, want %q", agent, got, want)
		}
	}
}
