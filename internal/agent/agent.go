// Package agent is the seam between ccbridge's core and the coding agent a
// pane runs (Claude Code or Codex CLI). What differs per agent sits behind
// Agent: how the TUI's screen reads (input box, busy, a dialog's chrome,
// what an interrupted turn leaves; both agents are interrupted with
// Escape), and how a session's process is started with ccbridge's hooks
// registered for it alone. The core picks an Agent
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
	// DialogOpen: a dialog is up, which typed text would answer.
	DialogOpen(screen string) bool
	// InterruptedMark is what the TUI prints when an Escape ended a turn.
	InterruptedMark() string
	// DialogChrome are strings only a dialog shows: no key is sent while
	// one of them is on the screen.
	DialogChrome() []string
	// DialogMark starts a dialog's highlighted choice ("❯", "›"), and
	// DialogTop reports whether a line above the choices is where the
	// dialog's text begins (excluded): what lies above is not the dialog's.
	DialogMark() string
	DialogTop(line string) bool
}

// Spec is what an agent needs to start one session's process.
type Spec struct {
	Model  string
	Resume string // the agent's own session id to continue
	// StopHook and PreToolHook are the absolute paths of ccbridge's hook
	// binaries; Rules is the session's policy as their argument.
	StopHook, PreToolHook, Rules string
	PromptTimeout                time.Duration
	// Outputs is the session's folder for files sent to the chat
	// ([DISCORD_ATTACH: name]); an agent whose sandbox keeps writes in its
	// workspace is let write there too. SystemPrompt is what ccbridge tells
	// the model beside its own instructions ("" for none).
	Outputs, SystemPrompt string

	// Claude Code only: its permission mode, its inline --settings (the
	// hooks, and the policy as its own permission rules), a front end's
	// own flags, and whether a resumed conversation is forked.
	PermissionMode, Settings string
	Args                     []string
	Fork                     bool
}

// Agent is one coding agent as the config sets it up.
type Agent interface {
	Screen
	// Name is the agent as the config names it ("claude", "codex").
	Name() string
	// Speaker is what chat notices call the agent ("Claude is waiting on
	// a prompt"): the name people use for it in a sentence.
	Speaker() string
	// Program is the command a pane runs, the config key that sets it
	// and the agent's name for people ("Codex CLI"): a missing program is
	// named by its key.
	Program() (command, key, title string)
	// Env is the configured environment of its panes.
	Env() map[string]string
	// Argv is the command line of a session's process.
	Argv(s Spec) []string
}
