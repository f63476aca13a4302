package session

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ccbridge/ccbridge/internal/agent"
	"github.com/ccbridge/ccbridge/internal/agent/claude"
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
func (claudeScreen) DialogOpen(s string) bool       { return DialogOpen(s) }
func (claudeScreen) InterruptedMark() string        { return interruptedMark }
func (claudeScreen) DialogChrome() []string         { return dialogChrome }
func (claudeScreen) DialogMark() string             { return "❯" }
func (claudeScreen) DialogTop(l string) bool        { return isRule(l) || strings.Contains(l, "▔▔▔▔") }

// agentFor is the agent adapter of a name the config allows ("" is
// Claude), as the config in use sets it up.
func (m *Manager) agentFor(name string) agent.Agent {
	cfg := m.config()
	if name == config.AgentCodex {
		return codex.Codex{Command: cfg.Codex.Command, Args: cfg.Codex.Args, Environ: cfg.Codex.Env}
	}
	return claude.Claude{Screen: claudeScreen{}, Command: cfg.Claude.Command, Args: cfg.Claude.Args, Environ: cfg.Claude.Env}
}

// agentOf is the agent of the session's pane, as its record names it (set
// when ccbridge started it; a pane taken over is Claude's). A record that
// cannot be read names no agent: guessing Claude would read a Codex pane
// with Claude's screen and guard, under which an Enter approves Codex's
// "1. Yes, proceed". The caller sends nothing then.
func (m *Manager) agentOf(key string) (agent.Agent, error) {
	rec, err := m.opt.Store.Sessions.Get(key)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrAgentUnknown, err)
	}
	return m.agentFor(rec.Agent), nil
}

// ErrAgentUnknown says the session's record cannot be read, so which
// agent's screen and keys its pane has is unknown.
var ErrAgentUnknown = errors.New("the session's agent is unknown (its record cannot be read)")

// checkProgram reports whether the agent's program can be run in a new
// pane (with its configured PATH), naming the config key that sets it.
func (m *Manager) checkProgram(a agent.Agent) error {
	cmd, key, title := a.Program()
	path, ok := a.Env()["PATH"]
	if !ok {
		path = os.Getenv("PATH") // the tmux server inherits the daemon's (tmux.KeepEnv)
	}
	if err := m.opt.FindProgram(cmd, path); err != nil {
		return &CommandError{Command: cmd, Path: path, Err: err, Key: key, Title: title}
	}
	return nil
}

// guardOf is what tmux checks immediately before every key and paste
// ccbridge sends on its own account into a pane of scr's agent: no dialog
// on the visible screen (see tmux.Guard). Enter, a digit or Shift+Tab sent
// into a dialog answers it.
func guardOf(scr agent.Screen) tmux.Guard { return tmux.Guard{Without: scr.DialogChrome()} }

// ErrNotWithAgent says an action drives Claude Code's own keys or slash
// commands and is not built for the session's agent.
var ErrNotWithAgent = errors.New("not possible with this agent yet")

// claudeOnly refuses what only Claude Code's pane can do (its mode cycle,
// its /model): in Codex the same keys toggle Plan mode or open a picker.
func (m *Manager) claudeOnly(key, what string) error {
	a, err := m.agentOf(key)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if a.Name() != config.AgentClaude {
		_, _, title := a.Program()
		return fmt.Errorf("%s of a running %s session: %w (set it in the config and restart the session)", what, title, ErrNotWithAgent)
	}
	return nil
}

// claudeFlags refuses Claude Code's flags a front end added (Target.Args)
// for another agent: dropping them would drop a restriction asked for
// (--disallowedTools). The error names the flags, not their values.
func claudeFlags(a agent.Agent, args []string) error {
	if len(args) == 0 {
		return nil
	}
	var flags []string
	for _, arg := range args {
		if strings.HasPrefix(arg, "--") {
			flags = append(flags, arg)
		}
	}
	_, _, title := a.Program()
	return fmt.Errorf("%s takes none of Claude Code's flags (%s): %w; its own config applies", title, strings.Join(flags, ", "), ErrNotWithAgent)
}
