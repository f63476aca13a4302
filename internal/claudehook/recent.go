package claudehook

import (
	"encoding/json"
	"strings"
)

// ToolEvent is one tool call of a transcript and how it went.
type ToolEvent struct {
	ID     string
	Name   string
	Status string // running, done, error
}

// Activity is what a transcript's tail says a session did: the recent
// assistant text (newest last), the tool calls, how many prompts people
// gave, and whether the newest of them was interrupted.
type Activity struct {
	Output      []string
	Tools       []ToolEvent
	Turns       int
	Interrupted bool
}

// interruptedMark starts the user entry Claude Code writes on Escape.
const interruptedMark = "[Request interrupted by user"

// Recent reads the last MiB of a transcript: at most lines lines of
// assistant text, and the tool calls in order. Subagent lines are left out.
func Recent(path string, lines int) (Activity, error) {
	raw, _, err := tailLines(path, tailMax)
	if err != nil {
		return Activity{}, err
	}
	var a Activity
	index := map[string]int{}
	for _, l := range raw {
		var e Entry
		if json.Unmarshal(l, &e) != nil || e.IsSidechain {
			continue
		}
		switch e.Type {
		case "assistant":
			for _, b := range e.Blocks() {
				switch b.Type {
				case "text":
					a.Output = append(a.Output, strings.Split(strings.TrimRight(b.Text, "\n"), "\n")...)
				case "tool_use":
					index[b.ID] = len(a.Tools)
					a.Tools = append(a.Tools, ToolEvent{ID: b.ID, Name: b.Name, Status: "running"})
				}
			}
		case "user":
			var results []struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
				IsError   bool   `json:"is_error"`
			}
			_ = json.Unmarshal(e.Message.Content, &results)
			human := true
			for _, r := range results {
				if r.Type != "tool_result" {
					continue
				}
				human = false
				if i, ok := index[r.ToolUseID]; ok {
					a.Tools[i].Status = "done"
					if r.IsError {
						a.Tools[i].Status = "error"
					}
				}
			}
			if !human {
				continue
			}
			text := ""
			for _, b := range e.Blocks() {
				if b.Type == "text" {
					text += b.Text
				}
			}
			switch {
			case strings.HasPrefix(text, interruptedMark):
				a.Interrupted = true
			case text != "" && !strings.HasPrefix(text, "<"):
				a.Turns++
				a.Interrupted = false
			}
		}
	}
	if lines > 0 && len(a.Output) > lines {
		a.Output = a.Output[len(a.Output)-lines:]
	}
	return a, nil
}
