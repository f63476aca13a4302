package mcp

import (
	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/codexhook"
	"github.com/ccbridge/ccbridge/internal/config"
)

// recent fills a status's recent output, tool calls, turns and an
// interrupt from the session's transcript, read as its agent writes it:
// Claude Code's transcript or Codex's rollout.
func (s *Server) recent(out *StatusOutput, path string, lines int) {
	var (
		output      []string
		turns       int
		interrupted bool
	)
	if out.AgentName == config.AgentCodex {
		a, err := codexhook.Recent(path, lines)
		if err != nil {
			return
		}
		output, turns, interrupted = a.Output, a.Turns, a.Interrupted
		for _, t := range a.Tools {
			out.ToolUseEvents = append(out.ToolUseEvents, ToolUse{ToolName: t.Name, Status: t.Status})
		}
	} else {
		a, err := claudehook.Recent(path, lines)
		if err != nil {
			return
		}
		output, turns, interrupted = a.Output, a.Turns, a.Interrupted
		for _, t := range a.Tools {
			out.ToolUseEvents = append(out.ToolUseEvents, ToolUse{ToolName: t.Name, Status: t.Status})
		}
	}
	out.RecentOutput, out.TurnCount = output, turns
	if interrupted {
		out.Status = "interrupted"
	}
	if out.RecentOutput == nil {
		out.RecentOutput = []string{}
	}
}
