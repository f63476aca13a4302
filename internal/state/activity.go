package state

import (
	"fmt"
	"strings"
	"time"
)

// Tool states in an Activity.
const (
	ToolRunning = "running"
	ToolDone    = "done"
	ToolFailed  = "failed"
	ToolWaiting = "waiting" // a permission prompt waits on a person
)

// Activity is one turn of a session whose progress is "live": what the
// hooks saw of it, which the daemon draws into one Discord message, edited
// in place. Keyed by TurnKey(Claude session id, prompt id). The hooks
// write the events; the daemon writes MessageID and Drawn.
type Activity struct {
	SessionKey string         `json:"session_key"`
	Server     string         `json:"server"`
	ChannelID  string         `json:"channel_id"`
	Started    time.Time      `json:"started"`
	Items      []ActivityItem `json:"items,omitempty"`
	// Ended is set when the turn's reply was posted: the message becomes
	// a one-line summary.
	Ended time.Time `json:"ended,omitzero"`
	// Version counts the hooks' changes; Drawn is the version the message
	// shows, so the daemon edits only when there is something new.
	Version   int    `json:"version"`
	Drawn     int    `json:"drawn"`
	MessageID string `json:"message_id,omitempty"`
}

// ActivityItem is a text Claude wrote before a tool call, or a tool call.
type ActivityItem struct {
	Text      string    `json:"text,omitempty"`
	ToolUseID string    `json:"tool_use_id,omitempty"`
	Tool      string    `json:"tool,omitempty"` // as drawn, e.g. "🔧 Bash `ls`"
	Name      string    `json:"name,omitempty"` // the tool's name, e.g. "Bash"
	State     string    `json:"state,omitempty"`
	Start     time.Time `json:"start,omitzero"`
	End       time.Time `json:"end,omitzero"`
}

// Tool finds the item of a tool call.
func (a *Activity) Tool(id string) *ActivityItem {
	for i := range a.Items {
		if a.Items[i].ToolUseID == id {
			return &a.Items[i]
		}
	}
	return nil
}

// Running reports whether a tool call is still going.
func (a *Activity) Running() bool {
	for _, it := range a.Items {
		if it.ToolUseID != "" && (it.State == ToolRunning || it.State == ToolWaiting) {
			return true
		}
	}
	return false
}

// maxActivityText bounds one text item as drawn.
const maxActivityText = 300

// Render draws the activity message at now: the texts and a line per tool
// with its state and elapsed time, or, once the turn ended, one summary
// line. It keeps within limit characters by dropping the oldest lines.
func (a Activity) Render(now time.Time, limit int) string {
	tools, failed := 0, 0
	for _, it := range a.Items {
		if it.ToolUseID != "" {
			tools++
			if it.State == ToolFailed {
				failed++
			}
		}
	}
	if !a.Ended.IsZero() {
		s := fmt.Sprintf("-# ⚙️ %d tool(s) run", tools)
		if failed > 0 {
			s += fmt.Sprintf(", %d failed", failed)
		}
		return s + " · " + a.Ended.Sub(a.Started).Round(time.Second).String()
	}
	var lines []string
	for _, it := range a.Items {
		if it.ToolUseID == "" {
			t := strings.TrimSpace(it.Text)
			if r := []rune(t); len(r) > maxActivityText {
				t = string(r[:maxActivityText]) + "…"
			}
			lines = append(lines, "💬 "+strings.ReplaceAll(t, "\n", " "))
			continue
		}
		end := it.End
		if end.IsZero() {
			end = now
		}
		took := end.Sub(it.Start).Round(time.Second)
		var mark string
		switch it.State {
		case ToolDone:
			mark = "✅ done"
		case ToolFailed:
			mark = "❌ failed"
		case ToolWaiting:
			mark = "✋ waiting on you"
		default:
			mark = "⏳ running"
		}
		lines = append(lines, fmt.Sprintf("%s · %s · %s", it.Tool, mark, took))
	}
	head := fmt.Sprintf("⚙️ **Working** · %s", now.Sub(a.Started).Round(time.Second))
	for {
		s := head + "\n" + strings.Join(lines, "\n")
		if len([]rune(s)) <= limit || len(lines) <= 1 {
			if r := []rune(s); len(r) > limit {
				s = string(r[:limit-1]) + "…"
			}
			return s
		}
		lines = append([]string{"…"}, lines[2:]...)
	}
}

const activityVersion = 1

// OpenActivities opens the live activity records in d.
func OpenActivities(d *Dir) (*Collection[Activity], error) {
	return newCollection[Activity](d, "activities", activityVersion)
}
