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

// /close of an opened folder names the agent's own way to resume its
// conversation: codex resume for Codex (issue 29).
func TestResumeHintIsTheAgents(t *testing.T) {
	for agent, want := range map[string]string{"": "claude --resume x1", config.AgentClaude: "claude --resume x1", config.AgentCodex: "codex resume x1"} {
		if got := resumeHint(config.Project{Agent: agent}, "x1"); got != want {
			t.Errorf("resumeHint(%q) = %q, want %q", agent, got, want)
		}
	}
}
