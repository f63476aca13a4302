package state

import "time"

// Live is where a Claude that ccbridge did not start runs, as its hooks
// (registered globally with install-hooks) saw it, keyed by its Claude
// session id. Socket and Pane are empty for a Claude outside tmux: it can
// be listed, not driven.
type Live struct {
	ClaudeSessionID string `json:"claude_session_id"`
	Server          string `json:"server"`
	Project         string `json:"project"`
	ChannelID       string `json:"channel_id"`
	Cwd             string `json:"cwd"`
	Socket          string `json:"socket,omitempty"` // the user's tmux server, from $TMUX
	Pane            string `json:"pane,omitempty"`   // $TMUX_PANE
	TranscriptPath  string `json:"transcript_path,omitempty"`
	Busy            bool   `json:"busy,omitempty"`
	FirstPrompt     string `json:"first_prompt,omitempty"`
	LastPrompt      string `json:"last_prompt,omitempty"`
	// Ended is set by SessionEnd: the Claude is gone.
	Ended       bool      `json:"ended,omitempty"`
	Started     time.Time `json:"started,omitzero"`
	LastEventAt time.Time `json:"last_event_at,omitzero"`
	// Bound is the key of the ccbridge session (a thread's) that took this
	// Claude over: while set, its hooks post to that session's thread.
	Bound string `json:"bound,omitempty"`
}

// Driveable reports whether ccbridge could type into this Claude.
func (l Live) Driveable() bool { return l.Socket != "" && l.Pane != "" }

const liveVersion = 1
