package session

import (
	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/codexhook"
	"github.com/ccbridge/ccbridge/internal/config"
)

// ToolEvent is one tool call of a session's transcript and how it went
// (running, done, error).
type ToolEvent struct{ Name, Status string }

// Activity is what the end of a session's transcript says it did: the
// model's recent text as lines (newest last), its tool calls, the prompts
// people gave, and whether the newest of them was interrupted.
type Activity struct {
	Output      []string
	Tools       []ToolEvent
	Turns       int
	Interrupted bool
}

// Recent reads a session's transcript at path as agent (the name a
// session's status reports; "" is Claude) writes it: Claude Code's
// transcript or Codex's rollout. At most lines lines of text.
func Recent(agent, path string, lines int) (Activity, error) {
	var a Activity
	if agent == config.AgentCodex {
		r, err := codexhook.Recent(path, lines)
		if err != nil {
			return a, err
		}
		a.Output, a.Turns, a.Interrupted = r.Output, r.Turns, r.Interrupted
		for _, t := range r.Tools {
			a.Tools = append(a.Tools, ToolEvent{t.Name, t.Status})
		}
		return a, nil
	}
	r, err := claudehook.Recent(path, lines)
	if err != nil {
		return a, err
	}
	a.Output, a.Turns, a.Interrupted = r.Output, r.Turns, r.Interrupted
	for _, t := range r.Tools {
		a.Tools = append(a.Tools, ToolEvent{t.Name, t.Status})
	}
	return a, nil
}
