// Package agent is the seam between ccbridge's core and the coding agent a
// pane runs (Claude Code or Codex CLI). What differs per agent sits behind
// Agent: how the TUI's screen reads (input box, busy, a dialog's chrome),
// the key that interrupts a turn, and how a session's process is started
// with ccbridge's hooks registered for it alone. The core picks an Agent
// per session; no front end ever learns which one runs (a test in
// internal enforces that they do not import this package or its adapters).
//
// The hooks' side of the seam is the payload: each agent's hooks run the
// same ccbridge hook binaries, told the agent by a flag on their command
// line (internal/hook), and its transcript is read by its own package
// (claudehook, codexhook).
package agent

import "time"

// Screen is how an agent's TUI reads to a terminal driver. Every function
// takes the visible screen as tmux captures it.
type Screen interface {
	// InputReady: the input box is shown, no dialog, no turn running.
	InputReady(screen string) bool
	// InputBoxShown: the input box, and so no dialog, is on the screen.
	InputBoxShown(screen string) bool
	// InputHolds: the input box starts with text as it was typed.
	InputHolds(screen, text string) bool
	// Busy: a turn is running.
	Busy(screen string) bool
	// InterruptedMark is what the TUI prints when an Escape ended a turn.
	InterruptedMark() string
	// DialogChrome are strings only a dialog shows: no key is sent while
	// one of them is on the screen.
	DialogChrome() []string
}

// Spec is what an agent needs to start one session's process.
type Spec struct {
	Dir    string
	Model  string
	Resume string // the agent's own session id to continue
	// StopHook and PreToolHook are the absolute paths of ccbridge's hook
	// binaries; Rules is the session's policy argument for them.
	StopHook, PreToolHook, Rules string
	PromptTimeout                time.Duration
}

// Agent is one coding agent.
type Agent interface {
	Screen
	// Name is the agent as the config names it ("claude", "codex").
	Name() string
	// Argv is the command line of a session's process.
	Argv(s Spec) []string
}
