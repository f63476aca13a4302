package session

import "strings"

// Screen markers of Claude Code 2.1.328 (claude-code-protocol.md §6.1).
// They decide only whether typing is safe and whether the TUI is up; what
// Claude is doing is learned from hooks.
var dialogMarkers = []string{
	"Do you want to proceed?",
	"Do you want to create ",
	"Do you want to make this edit",
	"Enter to select · ↑/↓ to navigate",
	"Tab/Arrow keys to navigate",
	"Would you like to proceed?",
	"Ready to code?",
	"Exiting worktree session",
	"Do you trust the files in this folder?",
	"Esc to cancel",
}

// DialogOpen reports whether the screen shows a dialog, into which typed
// text would be taken as an answer (Enter picks the highlighted option).
func DialogOpen(screen string) bool {
	for _, m := range dialogMarkers {
		if strings.Contains(screen, m) {
			return true
		}
	}
	return false
}

// InputReady reports whether the screen shows Claude's idle input box: a
// line starting with ❯ between two rules, and no turn running.
func InputReady(screen string) bool {
	if strings.Contains(screen, "esc to interrupt") || DialogOpen(screen) {
		return false
	}
	lines := strings.Split(screen, "\n")
	for i := 1; i+1 < len(lines); i++ {
		if strings.HasPrefix(strings.TrimSpace(lines[i]), "❯") &&
			strings.Contains(lines[i-1], "────") && strings.Contains(lines[i+1], "────") {
			return true
		}
	}
	return false
}

// Busy reports whether the footer says a turn (or a sync hook) is running.
func Busy(screen string) bool { return strings.Contains(screen, "esc to interrupt") }

// LastLines returns the last n non-blank-trailing lines of a screen.
func LastLines(screen string, n int) string {
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Queued reports whether the screen shows messages waiting in Claude
// Code's own queue (typed while a turn ran). Claude Code runs them after
// the turn, but takes a message typed while they wait, just as a turn
// ends, before them: so nothing is typed while any are queued.
func Queued(screen string) bool {
	return strings.Contains(screen, "Queued · ctrl+x ctrl+s to send now") || strings.Contains(screen, "Press up to edit queued messages")
}
