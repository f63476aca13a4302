package state

import (
	"fmt"
	"time"
)

// Session is one Claude Code session that ccbridge runs in a tmux pane, keyed
// by the CCBRIDGE_SESSION value the daemon gives the pane.
type Session struct {
	Server    string `json:"server"`
	Project   string `json:"project"`
	ChannelID string `json:"channel_id"`
	ThreadID  string `json:"thread_id,omitempty"`
	Cwd       string `json:"cwd"`
	PaneID    string `json:"pane_id,omitempty"`

	// Set from hook calls.
	ClaudeSessionID string    `json:"claude_session_id,omitempty"`
	TranscriptPath  string    `json:"transcript_path,omitempty"`
	LastEvent       string    `json:"last_event,omitempty"`
	LastEventAt     time.Time `json:"last_event_at,omitzero"`
	LastPromptID    string    `json:"last_prompt_id,omitempty"`
}

// Turn is the outcome of one Claude turn, keyed by TurnKey(session id,
// prompt id). Creating it is the claim that the turn's reply is handled
// exactly once.
type Turn struct {
	SessionKey      string    `json:"session_key,omitempty"`
	ClaudeSessionID string    `json:"claude_session_id"`
	PromptID        string    `json:"prompt_id"`
	Event           string    `json:"event"` // Stop or StopFailure
	Reply           string    `json:"reply"`
	Error           string    `json:"error,omitempty"`
	At              time.Time `json:"at"`
}

// TurnKey names the record of one turn.
func TurnKey(claudeSessionID, promptID string) string {
	return fmt.Sprintf("%s.%s", claudeSessionID, promptID)
}

// Store is the set of collections in a runtime directory.
type Store struct {
	Dir      *Dir
	Sessions *Collection[Session]
	Turns    *Collection[Turn]
}

// Record format versions; bump one when its record changes incompatibly.
const (
	sessionVersion = 1
	turnVersion    = 1
)

// OpenStore opens (creating it if needed) the runtime directory at root and
// its collections.
func OpenStore(root string) (*Store, error) {
	d, err := Open(root)
	if err != nil {
		return nil, err
	}
	s := &Store{Dir: d}
	if s.Sessions, err = newCollection[Session](d, "sessions", sessionVersion); err != nil {
		return nil, err
	}
	if s.Turns, err = newCollection[Turn](d, "turns", turnVersion); err != nil {
		return nil, err
	}
	return s, nil
}

// EnvSession names the environment variable that carries a pane's session
// key from the daemon to the hooks Claude Code runs in that pane.
const EnvSession = "CCBRIDGE_SESSION"
