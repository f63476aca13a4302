package opened

import (
	"testing"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/state"
)

// A folder opened from a Codex project's channel runs Codex, kept with the
// folder; one opened from the control-panel channel runs the default.
func TestOpenedFolderRunsTheAgentItWasOpenedFrom(t *testing.T) {
	o := From(state.Opened{Path: "/src/tool"}, config.Project{Name: "web", Agent: config.AgentCodex})
	if o.Agent != config.AgentCodex || Project(o).AgentName() != config.AgentCodex {
		t.Errorf("from a Codex project: %+v runs %q", o, Project(o).AgentName())
	}
	if p := Project(From(state.Opened{Path: "/src/tool"}, config.Project{})); p.AgentName() != config.DefaultAgent {
		t.Errorf("from the panel channel: runs %q", p.AgentName())
	}
}
