package mcp

import "github.com/ccbridge/ccbridge/internal/session"

// recent fills a status's recent output, tool calls, turns and an
// interrupt from the session's transcript, which the core reads as the
// session's agent writes it.
func (s *Server) recent(out *StatusOutput, path string, lines int) {
	a, err := session.Recent(out.AgentName, path, lines)
	if err != nil {
		return
	}
	out.RecentOutput, out.TurnCount = a.Output, a.Turns
	for _, t := range a.Tools {
		out.ToolUseEvents = append(out.ToolUseEvents, ToolUse{ToolName: t.Name, Status: t.Status})
	}
	if a.Interrupted {
		out.Status = "interrupted"
	}
	if out.RecentOutput == nil {
		out.RecentOutput = []string{}
	}
}
