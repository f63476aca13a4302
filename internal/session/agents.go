package session

import (
	"github.com/ccbridge/ccbridge/internal/agent"
	"github.com/ccbridge/ccbridge/internal/agent/codex"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// claudeScreen is Claude Code's agent.Screen: this package's own screen
// reading (screen.go), which predates the seam.
type claudeScreen struct{}

func (claudeScreen) InputReady(s string) bool       { return InputReady(s) }
func (claudeScreen) InputBoxShown(s string) bool    { return InputBoxShown(s) }
func (claudeScreen) InputHolds(s, text string) bool { return InputHolds(s, text) }
func (claudeScreen) Busy(s string) bool             { return Busy(s) }
func (claudeScreen) InterruptedMark() string        { return interruptedMark }
func (claudeScreen) DialogChrome() []string         { return dialogChrome }

// codexAgent is the Codex adapter as the config sets it up.
func codexAgent(cfg *config.Config) codex.Codex {
	return codex.Codex{Command: cfg.Codex.Command, Args: cfg.Codex.Args}
}

// screenOf is how the session's pane reads: by the agent its record names
// (set when ccbridge started it; a pane taken over is Claude's).
func (m *Manager) screenOf(key string) agent.Screen {
	if rec, err := m.opt.Store.Sessions.Get(key); err == nil && rec.Agent == config.AgentCodex {
		return codexAgent(m.config())
	}
	return claudeScreen{}
}

// guardOf is what tmux checks immediately before every key and paste
// ccbridge sends on its own account into a pane of scr's agent: no dialog
// on the visible screen (see tmux.Guard). Enter, a digit or Shift+Tab sent
// into a dialog answers it.
func guardOf(scr agent.Screen) tmux.Guard { return tmux.Guard{Without: scr.DialogChrome()} }
